/**
 * The other collections' rows record the version of their body's shape, as the typed tables' do; and `documents`
 * refuses the collections that now have tables of their own (a row there would be invisible to the adapter).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE documents ADD COLUMN shape_version smallint NOT NULL DEFAULT 1`
  yield* sql`ALTER TABLE documents ADD CONSTRAINT documents_not_typed
    CHECK (collection NOT IN ('orders', 'balances', 'journal', 'walletTxns', 'idempotency'))`
})
