/**
 * A retention drop (E-400) reads what its partition has expired, not the whole collection, whatever the table held
 * when the session planned it (E-522). The apply function plans its statements once per session (E-470): a session
 * that first drops while `documents` is empty, as every engine on a new database does, kept a plan that scanned an
 * index of every row of the collection (all partners' quotes) on every later quote. Counted by the index scans' own
 * and the table's sequential scans' tuples in the transaction (pg_stat_get_xact_tuples_returned), on a temporary
 * database.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { APPLY } from "../../engine/store/pg-batch.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL

/** Tuples `documents` and its indexes returned in this transaction so far: by scans of the table and of each index. */
const TUPLES_RETURNED = `SELECT (pg_stat_get_xact_tuples_returned('documents'::regclass) +
  (SELECT sum(pg_stat_get_xact_tuples_returned(indexrelid)) FROM pg_index WHERE indrelid = 'documents'::regclass))::int AS n`

/** The batch's drop of partition `p`'s expired quotes, up to 4, as the store sends it. */
const drop = (p: string) => ["drop:documents", JSON.stringify([{ k: "drop:documents", p, u: 1_000, l: 4, c: "quotes" }])]

describe.skipIf(adminUrl === undefined)("retention drops on postgres", onPostgres, () => {
  it.live(
    "a drop planned on an empty table reads no row of other partitions once they hold thousands",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(adminUrl ?? "")
          // The store migrates the database and creates its functions, then closes.
          yield* Effect.scoped(Layer.build(PostgresStoreLayer(url)))
          const sql = yield* PgClient.makeClient({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
          const read = yield* sql.withTransaction(
            Effect.gen(function* () {
              // The session's first drop plans the statement, on an empty table.
              yield* sql.unsafe(APPLY.call, drop("p:sandbox"))
              yield* sql.unsafe(`INSERT INTO documents (collection, id, partition, sort_key, sort_order, insert_seq, body, keep_until)
                SELECT 'quotes', 'q' || g, 'other:sandbox', 'k', 'k', g, '{}', 5 FROM generate_series(1, 3000) g`)
              const before = yield* sql.unsafe<{ readonly n: number }>(TUPLES_RETURNED)
              yield* sql.unsafe(APPLY.call, drop("p:sandbox"))
              const after = yield* sql.unsafe<{ readonly n: number }>(TUPLES_RETURNED)
              return Number(after[0]?.n) - Number(before[0]?.n)
            })
          )
          // The other partition's 3,000 expired quotes are not this drop's to read.
          assert.isAtMost(read, 4)
        }).pipe(Effect.orDie)
      ),
    60_000
  )
})
