/**
 * The store contract on the postgres adapter, in a temporary database created on the server of DATABASE_URL (an
 * admin URL, e.g. postgres://postgres@127.0.0.1:5432/postgres) and dropped afterwards; plus durability across a
 * restart. Without DATABASE_URL the suite is reported as skipped.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Cause, Context, Effect, Exit, Layer, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store, StoreError } from "../../engine/store/port.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { ID_BLOCK_SIZE } from "../../engine/store/pg-id-blocks.ts"
import { eventsContract } from "./events-contract.ts"
import { groupContract } from "./group-contract.ts"
import { nestedContract } from "./nested-contract.ts"
import { prefetchContract } from "./prefetch-contract.ts"
import { retentionContract } from "./retention-contract.ts"
import { storeContract } from "./store-contract.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL

const databaseExists = (url: string, name: string) =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* PgClient.makeClient({ url: Redacted.make(url) })
      const rows = yield* sql`SELECT 1 AS one FROM pg_database WHERE datname = ${name}`
      return rows.length > 0
    })
  ).pipe(Effect.provide(Reactivity.layer))

describe.skipIf(adminUrl === undefined)(adminUrl === undefined ? "postgres store (skipped: set DATABASE_URL to run)" : "postgres store", onPostgres, () => {
  const admin = adminUrl ?? ""

  storeContract("contract on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)))
  nestedContract("nested transactions on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)))
  eventsContract("reading the event log on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)))
  retentionContract("retention on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)))
  prefetchContract("hints on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)))
  groupContract("grouped units on a temporary database", Layer.unwrap(Effect.map(withTemporaryDatabase(admin), PostgresStoreLayer)), true)

  it.live(
    "afterCommit hooks run once the commit is visible to other connections, never before",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(admin)
          const other = yield* PgClient.makeClient({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer))
          const visible = other`SELECT 1 AS one FROM documents WHERE collection = 'c' AND id = 'd'`.pipe(
            Effect.map((rows) => rows.length > 0),
            Effect.orDie
          )
          const seen: Array<string> = []
          yield* Effect.gen(function* () {
            const store = yield* Store
            yield* store.transact((tx) =>
              Effect.gen(function* () {
                yield* tx.put("c", { id: "d", partition: "p", sortKey: "1", body: {} })
                yield* tx.afterCommit(Effect.flatMap(visible, (v) => Effect.sync(() => void seen.push(`hook: ${v}`))))
                seen.push(`work: ${yield* visible}`)
              })
            )
          }).pipe(Effect.provide(PostgresStoreLayer(url)))
          assert.deepStrictEqual(seen, ["work: false", "hook: true"])
        })
      ),
    60_000
  )

  it.live(
    "driver and input failures are StoreErrors; strings PostgreSQL cannot hold are refused without aborting the transaction",
    () =>
      Effect.gen(function* () {
        const unreachable = yield* Effect.exit(Effect.provide(Effect.void, PostgresStoreLayer("postgres://postgres@127.0.0.1:1/nowhere")))
        assert.isTrue(Exit.isFailure(unreachable))
        if (Exit.isFailure(unreachable)) {
          const error = Cause.findErrorOption(unreachable.cause)
          assert.isTrue(Option.isSome(error) && error.value instanceof StoreError)
        }
        yield* Effect.scoped(
          Effect.gen(function* () {
            const url = yield* withTemporaryDatabase(admin)
            yield* Effect.gen(function* () {
              const store = yield* Store
              const outcome = yield* store.transact((tx) =>
                Effect.gen(function* () {
                  const refused: Array<string> = []
                  for (const bad of ["nul\u0000", "lone\ud800"]) {
                    for (const attempt of [
                      tx.put("c", { id: bad, partition: "p", sortKey: "1", body: {} }),
                      tx.put("c", { id: "ok", partition: bad, sortKey: "1", body: {} }),
                      tx.put("c", { id: "ok", partition: "p", sortKey: bad, body: {} }),
                      tx.nextSeq(bad),
                      tx.appendEvent(bad, { eventId: "e", name: "n", timestamp: 1, payload: {} }),
                      tx.scheduleJob({ kind: bad, dueAt: 1, payload: {} })
                    ]) {
                      const exit = yield* Effect.exit(attempt)
                      if (Exit.isFailure(exit)) {
                        const error = Cause.findErrorOption(exit.cause)
                        refused.push(Option.isSome(error) && error.value instanceof StoreError ? "StoreError" : "other")
                      }
                    }
                    assert.isTrue(Option.isNone(yield* tx.get("c", bad)))
                    assert.deepStrictEqual(yield* tx.list("c", { partition: bad, limit: 10, order: "asc" }), [])
                    assert.deepStrictEqual(yield* tx.readEvents(bad, 0, 10), [])
                  }
                  // non-JSON bodies are refused too (memory keeps the reference, JSON cannot hold it)
                  const cyclic: Record<string, unknown> = {}
                  cyclic.self = cyclic
                  const exit = yield* Effect.exit(tx.put("c", { id: "cyclic", partition: "p", sortKey: "1", body: cyclic }))
                  assert.isTrue(Exit.isFailure(exit))
                  // the transaction is still usable and commits
                  yield* tx.put("c", { id: "fine", partition: "p", sortKey: "1", body: { ok: true } })
                  return refused
                })
              )
              assert.deepStrictEqual(
                outcome,
                Array.from({ length: 12 }, () => "StoreError")
              )
              const fine = yield* store.transact((tx) => tx.get("c", "fine"))
              assert.deepStrictEqual(Option.getOrThrow(fine).body, { ok: true })
            }).pipe(Effect.provide(PostgresStoreLayer(url)))
          })
        )
      }),
    60_000
  )

  it.live(
    "jobs, events, documents and counters survive a restart; the temporary database is dropped",
    () =>
      Effect.gen(function* () {
        const url = yield* Effect.scoped(
          Effect.gen(function* () {
            const url = yield* withTemporaryDatabase(admin)
            const before = yield* Effect.gen(function* () {
              const store = yield* Store
              assert.strictEqual(store.kind, "postgres")
              return yield* store.transact((tx) =>
                Effect.all({
                  job: tx.scheduleJob({ kind: "expire-order", dueAt: 1_700_000_060_000, payload: { order: "o-1", b: 1, a: 2 } }),
                  e1: tx.appendEvent("partner-1:sandbox", { eventId: "ev-1", name: "OrderPlaced", timestamp: 1_700_000_000_000, payload: { z: 1, a: 2 } }),
                  e2: tx.appendEvent("partner-1:sandbox", { eventId: "ev-2", name: "OrderFilled", timestamp: 1_700_000_000_001, payload: null }),
                  seq: tx.nextSeq("orders"),
                  put: tx.put("orders", { id: "o-1", partition: "partner-1:sandbox", sortKey: "1700000000000#o-1", body: { y: 1, x: [2] } })
                })
              )
            }).pipe(Effect.provide(PostgresStoreLayer(url)))

            // a new layer (new pool, migrations run again) on the same database: a restart
            yield* Effect.gen(function* () {
              const store = yield* Store
              const after = yield* store.transact((tx) =>
                Effect.all({
                  job: tx.nextJob,
                  events: tx.readEvents("partner-1:sandbox", 0, 10),
                  doc: tx.get("orders", "o-1"),
                  seq: tx.nextSeq("orders"),
                  nextJob: tx.scheduleJob({ kind: "next", dueAt: 1_700_000_070_000, payload: {} }),
                  e3: tx.appendEvent("partner-1:sandbox", { eventId: "ev-3", name: "OrderSettled", timestamp: 1_700_000_000_002, payload: {} })
                })
              )
              assert.deepStrictEqual(after.job, Option.some(before.job))
              assert.strictEqual(JSON.stringify(Option.getOrThrow(after.job).payload), JSON.stringify({ order: "o-1", b: 1, a: 2 }))
              assert.deepStrictEqual(after.events, [before.e1, before.e2])
              assert.strictEqual(JSON.stringify(after.events[0]?.payload), JSON.stringify({ z: 1, a: 2 }))
              assert.deepStrictEqual(Option.getOrThrow(after.doc).body, { y: 1, x: [2] })
              assert.strictEqual(after.seq, before.seq + 1)
              // Job seqs go on growing; the rest of the first store's block of them is skipped (E-435).
              assert.isAbove(after.nextJob.seq, before.job.seq)
              assert.strictEqual(after.e3.position, 3)
            }).pipe(Effect.provide(PostgresStoreLayer(url)))

            assert.isTrue(yield* databaseExists(admin, new URL(url).pathname.slice(1)))
            return url
          })
        )
        assert.isFalse(yield* databaseExists(admin, new URL(url).pathname.slice(1)))
      }),
    60_000
  )

  it.live(
    "two stores on one database draw ids a block at a time: each hands out its own block in order, none twice (E-435)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(admin)
          // Both open in this scope, as two engine processes on one database would be.
          const storeOf = Effect.map(Layer.build(PostgresStoreLayer(url)), (context) => Context.get(context, Store))
          const [a, b] = [yield* storeOf, yield* storeOf]
          const ids = (store: typeof a, count: number) => store.transact((tx) => Effect.forEach(Array.from({ length: count }), () => tx.nextId("auditRecords")))
          assert.deepStrictEqual(yield* ids(a, 3), [1, 2, 3])
          assert.deepStrictEqual(yield* ids(b, 3), [ID_BLOCK_SIZE + 1, ID_BLOCK_SIZE + 2, ID_BLOCK_SIZE + 3])
          assert.deepStrictEqual(yield* ids(a, 2), [4, 5])
          // Past its block, a store draws the next free one.
          const rest = yield* ids(a, ID_BLOCK_SIZE - 3)
          assert.deepStrictEqual(rest.slice(-4), [ID_BLOCK_SIZE - 1, ID_BLOCK_SIZE, 2 * ID_BLOCK_SIZE + 1, 2 * ID_BLOCK_SIZE + 2])
        })
      ),
    60_000
  )

  it.live(
    "bodies and payloads of every JSON kind go through the batch as written: the stored text is their JSON, read back equal (E-437)",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const url = yield* withTemporaryDatabase(admin)
          const store = Context.get(yield* Layer.build(PostgresStoreLayer(url)), Store)
          const bodies: ReadonlyArray<unknown> = [
            { z: 1, a: ['x"y', "é\u0001", { n: null }] },
            ["{", "}"],
            "{not an object}",
            "",
            42,
            null,
            true,
            { postings: [{ account: "a", cents: 1 }], a: "}}" }
          ]
          yield* store.transact((tx) =>
            Effect.gen(function* () {
              for (const [i, body] of bodies.entries()) {
                yield* tx.put("c", { id: `d${i}`, partition: "p:sandbox", sortKey: String(i), body })
                yield* tx.put("orders", { id: `o${i}`, partition: "p:sandbox", sortKey: String(i), body })
              }
              yield* tx.appendEvent("p:sandbox", { eventId: "e1", name: "E", timestamp: 1, payload: bodies[0] })
              yield* tx.appendEvent("p:sandbox", { eventId: "e2", name: "E", timestamp: 2, payload: "}" })
            })
          )
          const side = yield* PgClient.makeClient({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
          for (const [i, body] of bodies.entries()) {
            for (const [table, id] of [
              ["documents", `d${i}`],
              ["orders", `o${i}`]
            ] as const) {
              const rows = yield* side.unsafe<{ readonly body: string | null }>(`SELECT body FROM ${table} WHERE id = $1`, [id]).pipe(Effect.orDie)
              assert.strictEqual(rows[0]?.body, JSON.stringify(body))
            }
            const read = yield* store.read((tx) => tx.get("c", `d${i}`))
            assert.deepStrictEqual(
              Option.map(read, (d) => d.body),
              Option.some(body)
            )
          }
          const events = yield* store.read((tx) => tx.readEvents("p:sandbox", 0, 10))
          assert.deepStrictEqual(
            events.map((e) => e.payload),
            [bodies[0], "}"]
          )
        })
      ),
    60_000
  )
})
