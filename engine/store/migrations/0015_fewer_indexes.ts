/**
 * Fewer index entries per quote->trade pair (E-520): three indexes that every write of the money path paid for and no
 * statement of the engine reads. `documents_partition_idx` served only a sandbox reset's wipe, which is rare and scans
 * (as the typed tables' wipes already did, E-341); nothing lists idempotency receipts, and the journal is listed only by
 * tests and tools, which `ledger_entries_position_key` (partition, seq) still serves by partition.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX documents_partition_idx`
  yield* sql`DROP INDEX idempotency_receipts_list_idx`
  yield* sql`DROP INDEX ledger_entries_list_idx`
})
