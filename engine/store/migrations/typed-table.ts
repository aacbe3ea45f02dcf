/**
 * What every typed table of migrations 0005..0009 starts with: the columns the adapter reads documents by (as in
 * `documents`, less the collection), and how a collection's rows move there from `documents`. Used only by those
 * migrations: it is frozen with them (a later change to the tables is a new migration, not an edit here).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The generic columns. `partition` compares in "C" (byte) order: one index serves lists (partition, then sort order)
 * and deletePartition's range of child partitions (`p/` <= child < `p0`).
 */
export const GENERIC_COLUMNS = `
  id text PRIMARY KEY,
  partition text COLLATE "C" NOT NULL,
  partner_id text,
  environment text,
  sort_key text NOT NULL,
  sort_order text COLLATE "C" NOT NULL,
  insert_seq bigint NOT NULL,
  shape_version smallint NOT NULL DEFAULT 1,
  body text`

/** The list index of `table`. */
export const listIndex = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE INDEX ${table}_list_idx ON ${table} (partition, sort_order, insert_seq)`))

/**
 * Moves the rows of `collection` from `documents` into `table`, each typed column given as a SQL expression of the
 * body (`b`, jsonb) and the row (`d`), then deletes them from `documents`.
 */
export const moveRows = (collection: string, table: string, typed: Record<string, string>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const names = Object.keys(typed)
    yield* sql.unsafe(
      `INSERT INTO ${table} (id, partition, partner_id, environment, sort_key, sort_order, insert_seq, shape_version, body${names.map((n) => `, ${n}`).join("")})
       SELECT d.id, d.partition, sokoni_partner_of(d.partition), sokoni_environment_of(d.partition), d.sort_key, d.sort_order,
              d.insert_seq, 1, d.body${names.map((n) => `, ${typed[n]}`).join("")}
       FROM documents AS d, LATERAL (SELECT d.body::jsonb AS b) AS parsed
       WHERE d.collection = $1`,
      [collection]
    )
    yield* sql.unsafe(`DELETE FROM documents WHERE collection = $1`, [collection])
  })

/** Adds a CHECK that new writes obey at once; rows moved in that break it are reported, not refused (the start goes on). */
export const addCheck = (table: string, constraint: string, check: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${table} ADD CONSTRAINT ${constraint} CHECK (${check}) NOT VALID`)
    yield* sql.unsafe(`DO $$ BEGIN
      ALTER TABLE ${table} VALIDATE CONSTRAINT ${constraint};
    EXCEPTION WHEN check_violation THEN
      RAISE WARNING 'sokoni: rows written before % hold % (kept; new writes are checked)', '${constraint}', '${table}';
    END $$`)
  })
