/**
 * The store's migrations, in order, loaded by PgMigrator from this record (static imports, so the bundle in dist/
 * carries them: no file system lookup at run time). Each is frozen once merged: a schema change is a new file.
 */
import { PgMigrator } from "@effect/sql-pg"
import storeTables from "./0001_store_tables.ts"
import partitionIdx from "./0002_partition_idx.ts"
import idSequences from "./0003_id_sequences.ts"
import sqlHelpers from "./0004_sql_helpers.ts"
import orders from "./0005_orders.ts"
import ledgerBalances from "./0006_ledger_balances.ts"
import ledgerEntries from "./0007_ledger_entries.ts"
import walletTransactions from "./0008_wallet_transactions.ts"
import idempotencyReceipts from "./0009_idempotency_receipts.ts"
import eventIds from "./0010_event_ids.ts"
import jobPartitions from "./0011_job_partitions.ts"
import documentVersions from "./0012_document_versions.ts"
import keepUntil from "./0013_keep_until.ts"
import lighterChecks from "./0014_lighter_checks.ts"
import fewerIndexes from "./0015_fewer_indexes.ts"

export const migrations = PgMigrator.fromRecord({
  "0001_store_tables": storeTables,
  "0002_partition_idx": partitionIdx,
  "0003_id_sequences": idSequences,
  "0004_sql_helpers": sqlHelpers,
  "0005_orders": orders,
  "0006_ledger_balances": ledgerBalances,
  "0007_ledger_entries": ledgerEntries,
  "0008_wallet_transactions": walletTransactions,
  "0009_idempotency_receipts": idempotencyReceipts,
  "0010_event_ids": eventIds,
  "0011_job_partitions": jobPartitions,
  "0012_document_versions": documentVersions,
  "0013_keep_until": keepUntil,
  "0014_lighter_checks": lighterChecks,
  "0015_fewer_indexes": fewerIndexes
})
