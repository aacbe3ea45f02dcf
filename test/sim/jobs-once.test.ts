/**
 * Every due job runs exactly once, whoever drives the clock (issue #22 item 8, E-277): the background loop racing an
 * advance in one process, and two processes advancing over one store. Each job books its successor in its own
 * transaction, so a job run twice would multiply its chain; the tests count runs and the chains left queued.
 * Runs on the memory store and, with DATABASE_URL, on PostgreSQL (two pools on one database stand for two processes).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option, Schema, type Scope } from "effect"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Scheduler } from "../../engine/sim/scheduler.ts"
import { makeMemoryStore } from "../../engine/store/memory.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store, type StoreError } from "../../engine/store/port.ts"
import { PostgresStoreLayer } from "../../engine/store/postgres.ts"
import { onPostgres } from "../support/stores.ts"

const T0 = Date.parse("2026-11-23T08:00:00.000Z")
const EVERY_MS = 15 * 60_000
const CHAINS = 20
const HOURS = 6
/** Each chain runs at T0 + 15 min, + 30 min, ... up to T0 + 6 h inclusive. */
const EXPECTED_RUNS = CHAINS * ((HOURS * 3_600_000) / EVERY_MS)

type StoreService = Store["Service"]

/** Two handles on one store: the same instance in memory, two pools on one database on PostgreSQL. */
const memoryPair = Effect.map(makeMemoryStore, (store): readonly [StoreService, StoreService] => [store, store])

const postgresPair = (admin: string): Effect.Effect<readonly [StoreService, StoreService], StoreError, Scope.Scope> =>
  Effect.gen(function* () {
    const url = yield* withTemporaryDatabase(admin)
    const open = Effect.map(Layer.build(PostgresStoreLayer(url)), (context) => context.mapUnsafe.get(Store.key) as StoreService)
    const first = yield* open
    const second = yield* open
    return [first, second] as const
  })

/** A driver (a process's scheduler on its own manual clock at T0) whose `tick` job records its run and books the next. */
const driver = (store: StoreService, runs: Array<string>) =>
  Effect.gen(function* () {
    const scheduler = yield* Scheduler
    yield* scheduler.register("tick", Schema.Struct({ chain: Schema.Number, dueAt: Schema.Number }), (tx, { chain, dueAt }) => {
      runs.push(`${chain}@${dueAt}`)
      // A chain that multiplied (a job run twice books two successors) would grow without end: stop it, so the test
      // fails on its counts instead of timing out.
      if (runs.length > 2 * EXPECTED_RUNS) return Effect.void
      return Effect.asVoid(scheduler.schedule(tx, "tick", dueAt + EVERY_MS, { chain, dueAt: dueAt + EVERY_MS }))
    })
    return scheduler
  }).pipe(Effect.provide(Scheduler.layer.pipe(Layer.provide(EngineClock.layer("manual", T0)))), Effect.provideService(Store, store))

const armChains = (store: StoreService, scheduler: Scheduler["Service"]) =>
  store.transact((tx) =>
    Effect.forEach(
      Array.from({ length: CHAINS }, (_, chain) => chain),
      (chain) => scheduler.schedule(tx, "tick", T0 + EVERY_MS, { chain, dueAt: T0 + EVERY_MS })
    )
  )

/** The jobs left queued: one successor per chain when every job ran once. */
const queued = (store: StoreService) =>
  store.transact((tx) =>
    Effect.gen(function* () {
      let count = 0
      for (;;) {
        const next = yield* tx.nextJob
        if (Option.isNone(next)) return count
        yield* tx.deleteJob(next.value.seq)
        count++
      }
    })
  )

const assertEachRanOnce = (runs: ReadonlyArray<string>) => {
  assert.strictEqual(new Set(runs).size, runs.length, "a job ran twice")
  assert.strictEqual(runs.length, EXPECTED_RUNS)
}

const suite = (name: string, pair: Effect.Effect<readonly [StoreService, StoreService], StoreError, Scope.Scope>) =>
  describe(name, () => {
    it.live("the background loop racing an advance runs each due job once; each chain keeps one successor", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const [store] = yield* pair
          const runs: Array<string> = []
          const scheduler = yield* driver(store, runs)
          yield* armChains(store, scheduler)
          let advancing = true
          // What the background loop does on each poll (run what is due by the clock the advance is moving), as
          // often as the runtime lets it, until the advance is over.
          const loop = Effect.whileLoop({
            while: () => advancing,
            body: () => Effect.andThen(scheduler.runDue, Effect.yieldNow),
            step: () => {}
          })
          const advance = scheduler.advance({ seconds: HOURS * 3600 }).pipe(Effect.ensuring(Effect.sync(() => (advancing = false))))
          const [result] = yield* Effect.all([advance, loop], { concurrency: 2 })
          assertEachRanOnce(runs)
          assert.strictEqual(result.jobsRun, EXPECTED_RUNS, "the advance waits for the loop's pass and then runs the rest itself")
          assert.strictEqual(yield* queued(store), CHAINS)
        })
      )
    )

    it.live("two processes advancing over one store run each due job once", () =>
      Effect.scoped(
        Effect.gen(function* () {
          const [storeA, storeB] = yield* pair
          const runs: Array<string> = []
          const a = yield* driver(storeA, runs)
          const b = yield* driver(storeB, runs)
          yield* armChains(storeA, a)
          const results = yield* Effect.all([a.advance({ seconds: HOURS * 3600 }), b.advance({ seconds: HOURS * 3600 })], { concurrency: 2 })
          assertEachRanOnce(runs)
          assert.strictEqual(results[0].jobsRun + results[1].jobsRun, EXPECTED_RUNS)
          assert.strictEqual(yield* queued(storeA), CHAINS)
        })
      )
    )
  })

suite("every due job runs once (memory store)", memoryPair)

const adminUrl = process.env.DATABASE_URL
describe.skipIf(adminUrl === undefined)("postgres", onPostgres, () => {
  suite("every due job runs once (postgres store)", postgresPair(adminUrl ?? ""))
})
