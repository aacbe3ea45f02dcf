/** The generic tables (documents, counters, the event log, due jobs). Frozen: a change to the schema is a new migration. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE documents (
    collection text NOT NULL,
    id text NOT NULL,
    partition text NOT NULL,
    sort_key text NOT NULL,
    sort_order text COLLATE "C" NOT NULL,
    insert_seq bigint NOT NULL,
    body text,
    PRIMARY KEY (collection, id)
  )`
  yield* sql`CREATE INDEX documents_list_idx ON documents (collection, partition, sort_order, insert_seq)`
  yield* sql`CREATE SEQUENCE documents_insert_seq`
  yield* sql`CREATE TABLE counters (
    name text PRIMARY KEY,
    value bigint NOT NULL
  )`
  yield* sql`CREATE TABLE events (
    partition text NOT NULL,
    position bigint NOT NULL,
    event_id text NOT NULL,
    name text NOT NULL,
    timestamp bigint NOT NULL,
    payload text,
    PRIMARY KEY (partition, position)
  )`
  yield* sql`CREATE TABLE jobs (
    seq bigint PRIMARY KEY,
    kind text NOT NULL,
    due_at bigint NOT NULL,
    payload text
  )`
  yield* sql`CREATE INDEX jobs_due_idx ON jobs (due_at, seq)`
})
