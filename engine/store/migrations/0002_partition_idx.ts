/** deletePartition finds a partition and its children (`p/...`) by range in byte order: `p/` <= child < `p0`. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX documents_partition_idx ON documents ((partition COLLATE "C"))`
})
