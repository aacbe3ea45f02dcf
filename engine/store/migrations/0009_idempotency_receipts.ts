/**
 * Idempotency receipts (collection "idempotency": a stored answer per partition and key) in a table of their own.
 * The database holds one receipt per partner, environment and key (UNIQUE, NULLs equal: a receipt of no partner or
 * environment is one per key too).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { GENERIC_COLUMNS, listIndex, moveRows } from "./typed-table.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE idempotency_receipts (${GENERIC_COLUMNS},
    idempotency_key text NOT NULL,
    fingerprint text,
    status integer,
    state text,
    stored_at bigint
  )`)
  yield* listIndex("idempotency_receipts")
  yield* moveRows("idempotency", "idempotency_receipts", {
    idempotency_key: "CASE WHEN starts_with(d.id, d.partition || '|') THEN substr(d.id, length(d.partition) + 2) ELSE d.id END",
    fingerprint: "sokoni_json_text(b, 'fingerprint')",
    status: "sokoni_json_int(b, 'status')::integer",
    state: "sokoni_json_text(b, 'state')",
    stored_at: "sokoni_json_int(b, 'storedAt')"
  })
  yield* sql.unsafe(`ALTER TABLE idempotency_receipts ADD CONSTRAINT idempotency_receipts_key
    UNIQUE NULLS NOT DISTINCT (partner_id, environment, idempotency_key)`)
})
