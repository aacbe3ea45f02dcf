/** Job seqs and id sequences leave the counters table (E-321): a row there is a lock every partition waits on. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { ID_SEQUENCES } from "../port.ts"
import { sequenceOf } from "../pg-codec.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // Each sequence continues from its counter row, if a database from before kept one.
  for (const name of ["jobs" as const, ...ID_SEQUENCES]) {
    yield* sql.unsafe(`CREATE SEQUENCE ${sequenceOf(name)}`)
    yield* sql.unsafe(`SELECT setval('${sequenceOf(name)}', COALESCE((SELECT value FROM counters WHERE name = '${name}'), 0) + 1, false)`)
  }
})
