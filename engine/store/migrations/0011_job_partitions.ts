/** A job's partition (its payload's `partition`, when it names one) as a column: whose jobs are due, in plain SQL. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE jobs ADD COLUMN partition text`
  yield* sql`UPDATE jobs SET partition = sokoni_json_text(payload::jsonb, 'partition') WHERE payload IS NOT NULL`
})
