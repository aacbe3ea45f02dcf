/**
 * Event ids never repeat (E-291), and the database holds the log to it: a unique index on `event_id`. Databases
 * written before E-291 may hold repeats (a restart with the same seed handed out the same ids): those rows are kept
 * and marked `repeated_id` (every one but the first of an id, by time then position), outside the index.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN repeated_id boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE events SET repeated_id = true FROM (
    SELECT partition, position, row_number() OVER (PARTITION BY event_id ORDER BY timestamp, partition, position) AS nth FROM events
  ) AS ranked
  WHERE ranked.nth > 1 AND events.partition = ranked.partition AND events.position = ranked.position`
  yield* sql`CREATE UNIQUE INDEX events_event_id_key ON events (event_id) WHERE NOT repeated_id`
  // deletePartition finds a partition and its children by range in byte order, as on the other tables.
  yield* sql`CREATE INDEX events_partition_idx ON events ((partition COLLATE "C"))`
})
