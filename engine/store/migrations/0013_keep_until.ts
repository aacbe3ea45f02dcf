/**
 * Retention (E-400): every table that holds documents records when the API can no longer return one (`keep_until`,
 * engine-clock ms, NULL when kept), and `dropExpired` finds a partition's earliest by a partial index.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

const TABLES = ["documents", "orders", "ledger_balances", "ledger_entries", "wallet_transactions", "idempotency_receipts"]

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  for (const table of TABLES) {
    yield* sql.unsafe(`ALTER TABLE ${table} ADD COLUMN keep_until bigint`)
    const key = table === "documents" ? "collection, partition, keep_until" : "partition, keep_until"
    yield* sql.unsafe(`CREATE INDEX ${table}_keep_idx ON ${table} (${key}) WHERE keep_until IS NOT NULL`)
  }
})
