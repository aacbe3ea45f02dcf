/**
 * Partition locks on the postgres adapter (E-320): transactions of different partitions run at the same time, in one
 * process and across two (two store instances on one temporary database, each with its own pool and in-process lock
 * table, as two engine processes have); the same partition, and a global step, still wait; a deadlock between two
 * processes is run again, and only the committed attempt's hooks run. No test waits on a clock: a waiting
 * transaction is seen in pg_locks, and a blocked one would show as the test's timeout.
 */
import { assert, describe, it } from "@effect/vitest"
import { PgClient } from "@effect/sql-pg"
import { Context, Deferred, Effect, Fiber, Layer, Option, Redacted, type Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store, type StoreError, type Tx } from "../../engine/store/port.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL

/** A temporary database and two stores on it: what two engine processes sharing it have. */
const twoProcesses: Effect.Effect<
  { readonly one: Store["Service"]; readonly two: Store["Service"]; readonly waitingLocks: Effect.Effect<number> },
  StoreError,
  Scope.Scope
> = Effect.gen(function* () {
  const url = yield* withTemporaryDatabase(adminUrl ?? "")
  const one = Context.get(yield* Layer.build(PostgresStoreLayer(url)), Store)
  const two = Context.get(yield* Layer.build(PostgresStoreLayer(url)), Store)
  const observer = yield* PgClient.makeClient({ url: Redacted.make(url) }).pipe(Effect.provide(Reactivity.layer), Effect.orDie)
  const waitingLocks = observer<{ readonly n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`.pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.orDie
  )
  return { one, two, waitingLocks }
})

/** Polls until a transaction waits on an advisory lock; the bound only says how long a broken test takes to fail. */
const untilSomeoneWaits = (waitingLocks: Effect.Effect<number>) =>
  Effect.gen(function* () {
    for (let i = 0; i < 3000; i++) {
      if ((yield* waitingLocks) > 0) return
      yield* Effect.sleep("10 millis")
    }
    assert.fail("no transaction ever waited on a partition lock")
  })

/** A transaction that locks `partition`, writes `doc` there, says it is inside, and commits once `release` is done. */
const holding = (store: Store["Service"], partition: string, doc: string, inside: Deferred.Deferred<void>, release: Deferred.Deferred<void>) =>
  store.transact((tx) =>
    Effect.gen(function* () {
      yield* tx.lockPartition(partition)
      yield* tx.put("held", { id: doc, partition, sortKey: doc, body: { doc } })
      yield* Deferred.succeed(inside, undefined)
      yield* Deferred.await(release)
    })
  )

const committed = (store: Store["Service"], doc: string) => store.read((tx) => Effect.map(tx.get("held", doc), Option.isSome))

describe.skipIf(adminUrl === undefined)(adminUrl === undefined ? "partition locks (skipped: set DATABASE_URL to run)" : "partition locks", onPostgres, () => {
  it.live(
    "in one process, a transaction of partition B commits while one of partition A is open",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { one } = yield* twoProcesses
          const inside = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const a = yield* Effect.forkChild(holding(one, "a:sandbox", "a", inside, release))
          yield* Deferred.await(inside)
          // Under one lock for every write this would wait for A for ever (the test's timeout).
          yield* one.transact((tx) =>
            Effect.andThen(tx.lockPartition("b:sandbox"), tx.put("held", { id: "b", partition: "b:sandbox", sortKey: "b", body: {} }))
          )
          assert.isTrue(yield* committed(one, "b"))
          assert.isFalse(yield* committed(one, "a"))
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(a)
          assert.isTrue(yield* committed(one, "a"))
        })
      ),
    60_000
  )

  it.live(
    "across two processes, partition B commits while A is open, and a second transaction of A waits for the first",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { one, two, waitingLocks } = yield* twoProcesses
          const inside = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const first = yield* Effect.forkChild(holding(one, "a:sandbox", "a1", inside, release))
          yield* Deferred.await(inside)
          yield* two.transact((tx) => tx.put("held", { id: "b", partition: "b:sandbox/sub-1", sortKey: "b", body: {} }))
          assert.isTrue(yield* committed(two, "b"))

          // The same partition, from the other process: it reads what the first wrote, so it must run after it.
          const second = yield* Effect.forkChild(
            two.transact((tx) =>
              Effect.gen(function* () {
                const seen = yield* tx.list("held", { partition: "a:sandbox", limit: 10, order: "asc" })
                yield* tx.put("held", { id: "a2", partition: "a:sandbox", sortKey: "a2", body: { saw: seen.map((d) => d.id) } })
              })
            )
          )
          yield* untilSomeoneWaits(waitingLocks)
          assert.isFalse(yield* committed(two, "a2"))
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(first)
          yield* Fiber.join(second)
          const a2 = yield* two.read((tx) => tx.get("held", "a2"))
          assert.deepStrictEqual(Option.getOrThrow(a2).body, { saw: ["a1"] })
        })
      ),
    60_000
  )

  it.live(
    "a global step in another process waits for the partition transaction in flight, then runs",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { one, two, waitingLocks } = yield* twoProcesses
          const inside = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const partner = yield* Effect.forkChild(holding(one, "a:production", "a", inside, release))
          yield* Deferred.await(inside)
          const step = yield* Effect.forkChild(
            two.transact((tx) =>
              Effect.gen(function* () {
                yield* tx.lockPartition("global")
                const seen = yield* tx.get("held", "a")
                yield* tx.put("held", { id: "g", partition: "global", sortKey: "g", body: { sawA: Option.isSome(seen) } })
              })
            )
          )
          yield* untilSomeoneWaits(waitingLocks)
          assert.isFalse(yield* committed(two, "g"))
          yield* Deferred.succeed(release, undefined)
          yield* Fiber.join(partner)
          yield* Fiber.join(step)
          assert.deepStrictEqual(Option.getOrThrow(yield* two.read((tx) => tx.get("held", "g"))).body, { sawA: true })
        })
      ),
    60_000
  )

  it.live(
    "a deadlock between two processes runs the victim again; both commit, and the failed attempt's hooks never run",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { one, two } = yield* twoProcesses
          const firstLocks = [yield* Deferred.make<void>(), yield* Deferred.make<void>()] as const
          const runs: Array<string> = []
          const hooks: Array<string> = []
          // Each locks its own partition, waits until the other holds its own, then asks for the other's: a cycle
          // only PostgreSQL sees (the two in-process tables know nothing of each other).
          const crossing = (store: Store["Service"], name: string, mine: string, theirs: string, index: 0 | 1) =>
            store.transact((tx: Tx) =>
              Effect.gen(function* () {
                const attempt = runs.filter((r) => r === name).length + 1
                runs.push(name)
                yield* tx.lockPartition(mine)
                yield* tx.afterCommit(Effect.sync(() => void hooks.push(`${name} attempt ${attempt}`)))
                if (attempt === 1) {
                  yield* Deferred.succeed(firstLocks[index], undefined)
                  yield* Deferred.await(firstLocks[1 - index]!)
                }
                yield* tx.lockPartition(theirs)
                yield* tx.put("held", { id: name, partition: theirs, sortKey: name, body: {} })
              })
            )
          yield* Effect.all([crossing(one, "x", "x:sandbox", "y:sandbox", 0), crossing(two, "y", "y:sandbox", "x:sandbox", 1)], {
            concurrency: "unbounded"
          })
          assert.strictEqual(runs.length, 3, `runs: ${runs.join(", ")}`)
          const victim = runs[2]!
          assert.deepStrictEqual(hooks.sort(), [victim === "x" ? "x attempt 2" : "x attempt 1", victim === "y" ? "y attempt 2" : "y attempt 1"])
          assert.isTrue(yield* committed(one, "x"))
          assert.isTrue(yield* committed(one, "y"))
        })
      ),
    60_000
  )
})
