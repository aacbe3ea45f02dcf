/**
 * Write transactions' connections kept open between attempts (E-436): a committed attempt's connection waits in its
 * next, empty transaction, which holds no lock and no snapshot; a failed attempt's writes are undone and its
 * connection is not kept; closing the store leaves no transaction open; a connection leaves its chain now and then, so
 * the server learns what it wrote. Seen from a second session, in
 * pg_stat_activity and pg_locks, on a temporary database.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Exit, Layer, Option, Redacted, Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { CHAIN_LIMIT, KEPT_APPLICATION_NAME, MAX_KEPT } from "../../engine/store/pg-chained.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store, StoreError } from "../../engine/store/port.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL

interface Session {
  readonly state: string
  readonly holdsSnapshot: boolean
  readonly locks: number
}

/** The store's sessions on `url` other than the observer's own, as the server sees them. */
const sessionsOf = (observer: PgClient.PgClient) =>
  observer<Session>`
    SELECT a.state, a.backend_xmin IS NOT NULL AS "holdsSnapshot",
      (SELECT count(*)::int FROM pg_locks l WHERE l.pid = a.pid AND l.locktype <> 'virtualxid') AS locks
    FROM pg_stat_activity a WHERE a.datname = current_database() AND a.pid <> pg_backend_pid()`.pipe(Effect.orDie)

/** A second session on `url`: the store's sessions as the server sees them. */
const observerOn = (url: string) => PgClient.makeClient({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)

/** The postgres store on `url`, closed with the test's scope, or with `scope` when the test closes it itself. */
const storeOn = (url: string, scope?: Scope.Scope) =>
  Effect.map(scope === undefined ? Layer.build(PostgresStoreLayer(url)) : Layer.buildWithScope(PostgresStoreLayer(url), scope), (built) =>
    Context.get(built, Store)
  )

describe.skipIf(adminUrl === undefined)("postgres write transactions' kept connections", onPostgres, () => {
  it.live(
    "a committed attempt leaves at most MAX_KEPT sessions in an empty transaction, holding no lock nor snapshot; closing the store ends them",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(adminUrl ?? "")
          const observer = yield* observerOn(url)
          const scope = yield* Scope.make()
          const store = yield* storeOn(url, scope)
          // Two partitions at once, then one after another: both connections of the first round are kept.
          const write = (partition: string, i: number) =>
            store.transact((tx) => tx.put("c", { id: `${partition}-${i}`, partition, sortKey: String(i), body: { i } }))
          yield* Effect.all([write("p:sandbox", 0), write("q:sandbox", 0)], { concurrency: 2 })
          for (let i = 1; i < 5; i++) yield* write("p:sandbox", i)

          const open = (yield* sessionsOf(observer)).filter((s) => s.state === "idle in transaction")
          assert.isAtLeast(open.length, 1)
          assert.isAtMost(open.length, MAX_KEPT)
          for (const session of open) assert.deepStrictEqual(session, { state: "idle in transaction", holdsSnapshot: false, locks: 0 })
          // They are the store's own connections (E-521), not the pool's.
          const names = yield* observer<{ readonly name: string }>`
            SELECT application_name AS name FROM pg_stat_activity
            WHERE datname = current_database() AND state = 'idle in transaction'`.pipe(Effect.orDie)
          assert.deepStrictEqual(
            names.map((n) => n.name),
            open.map(() => KEPT_APPLICATION_NAME)
          )
          // What they committed is seen by another session.
          const rows = yield* observer<{ readonly n: number }>`SELECT count(*)::int AS n FROM documents WHERE collection = 'c'`.pipe(Effect.orDie)
          assert.strictEqual(rows[0]?.n, 6)

          yield* Scope.close(scope, Exit.void)
          const after = yield* sessionsOf(observer)
          assert.deepStrictEqual(
            after.filter((s) => s.state.includes("transaction")),
            []
          )
        })
      ),
    60_000
  )

  it.live(
    "an attempt that fails on a kept connection leaves nothing written, and the next one commits",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(adminUrl ?? "")
          const store = yield* storeOn(url)
          const put = (id: string) => (tx: Parameters<Parameters<typeof store.transact>[0]>[0]) =>
            tx.put("c", { id, partition: "p:sandbox", sortKey: id, body: {} })
          yield* store.transact(put("first"))
          const failed = yield* Effect.exit(
            store.transact((tx) => Effect.andThen(put("undone")(tx), Effect.fail(new StoreError({ message: "the work gives up" }))))
          )
          assert.isTrue(Exit.isFailure(failed))
          yield* store.transact(put("second"))
          const seen = (id: string) => store.read((tx) => Effect.map(tx.get("c", id), Option.isSome))
          assert.deepStrictEqual([yield* seen("first"), yield* seen("undone"), yield* seen("second")], [true, false, true])
        })
      ),
    60_000
  )

  it.live(
    "a connection chains at most CHAIN_LIMIT commits in a row: its writes reach the activity counts autovacuum goes by",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(adminUrl ?? "")
          const observer = yield* observerOn(url)
          const store = yield* storeOn(url)
          const write = (i: number) => store.transact((tx) => tx.put("c", { id: `d${i}`, partition: "p:sandbox", sortKey: String(i), body: { i } }))
          // Twice the limit, a second apart: a session sends its counts when idle outside a transaction, at most once a
          // second, so the second time it leaves its chain it sends at least what the first chain wrote. The second is
          // PostgreSQL's own rate limit, not the machine's speed: a busy machine only makes the pause longer, never too
          // short (the stress run, `.ci/run` beside two busy loops, passes with it).
          for (let i = 0; i <= CHAIN_LIMIT; i++) yield* write(i)
          yield* Effect.sleep("1100 millis")
          for (let i = CHAIN_LIMIT + 1; i <= 2 * CHAIN_LIMIT + 1; i++) yield* write(i)
          // Read until they arrive (the server's statistics are read a moment after they are sent; a busy server may
          // hold them back up to its idle flush interval of 10 s, so the bound is 30 s).
          const inserted = observer<{ readonly n: number }>`
            SELECT n_tup_ins::int AS n FROM pg_stat_user_tables WHERE relname = 'documents'`.pipe(
            Effect.map((rows) => rows[0]?.n ?? 0),
            Effect.orDie
          )
          let seen = 0
          for (let i = 0; i < 300 && seen < CHAIN_LIMIT; i++) {
            yield* Effect.sleep("100 millis")
            seen = yield* observer.withTransaction(inserted)
          }
          assert.isAtLeast(seen, CHAIN_LIMIT)
        })
      ),
    60_000
  )
})

describe.skipIf(adminUrl === undefined)("a kept connection the server has ended", onPostgres, () => {
  it.live(
    "is dropped, and the transaction that took it runs again on another connection",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(adminUrl ?? "")
          const observer = yield* observerOn(url)
          const store = yield* storeOn(url)
          const write = (id: string) => store.transact((tx) => tx.put("c", { id, partition: "p:sandbox", sortKey: id, body: {} }))
          yield* write("before")
          // The server ends every session of the store, the kept one included, as a restart does: the engine learns
          // it only when it next uses each connection.
          const ended = yield* observer<{ readonly state: string }>`
            SELECT state, pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid()`.pipe(Effect.orDie)
          assert.include(
            ended.map((s) => s.state),
            "idle in transaction"
          )
          yield* write("after")
          const seen = yield* store.read((tx) => Effect.map(tx.get("c", "after"), Option.isSome))
          assert.isTrue(seen)
        })
      ),
    60_000
  )
})
