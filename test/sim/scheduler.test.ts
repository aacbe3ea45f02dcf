/**
 * The scheduler and the clock seams on virtual time: jobs run in (dueAt, seq) order, exactly once, at their due
 * time; `advance` stops at each; the background loop runs them as Effect's clock (TestClock here) moves.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Scheduler } from "../../engine/sim/scheduler.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { Store } from "../../engine/store/port.ts"

const T0 = Date.parse("2026-11-23T08:00:00.000Z")

const layerFor = (mode: "manual" | "system" | "follow", start?: number) =>
  Scheduler.layer.pipe(Layer.provideMerge(Layer.mergeAll(MemoryStoreLayer, EngineClock.layer(mode, start))))

/** Sets the TestClock before the layers are built, so the clock seams start from T0. */
const startingAtT0 = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.andThen(TestClock.setTime(T0), effect)

/** Registers a job kind that records (payload, time it ran). */
const recorder = Effect.gen(function* () {
  const scheduler = yield* Scheduler
  const clock = yield* EngineClock
  const ran: Array<string> = []
  yield* scheduler.register("record", Schema.String, (_tx, payload) => Effect.map(clock.now, (now) => void ran.push(`${String(payload)}@${now - T0}`)))
  const at = (ms: number, payload: string) =>
    Effect.flatMap(Effect.service(Store), (store) => store.transact((tx) => scheduler.schedule(tx, "record", T0 + ms, payload)))
  return { ran, at, scheduler, clock }
})

describe("scheduler on a manual clock", () => {
  it.effect("advance runs due jobs in (dueAt, seq) order, each at its own due time, and stops at the target", () =>
    Effect.gen(function* () {
      const { ran, at, scheduler, clock } = yield* recorder
      yield* at(5_000, "b")
      yield* at(1_000, "a")
      yield* at(5_000, "c")
      yield* at(90_000, "later")
      const result = yield* scheduler.advance({ seconds: 60 })
      assert.deepStrictEqual(ran, ["a@1000", "b@5000", "c@5000"])
      assert.strictEqual(result.jobsRun, 3)
      assert.strictEqual(yield* clock.now, T0 + 60_000)
      yield* scheduler.advance({ seconds: 60 })
      assert.deepStrictEqual(ran.at(-1), "later@90000")
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )

  it.effect("refuses to move the clock backwards", () =>
    Effect.gen(function* () {
      const { scheduler } = yield* recorder
      const error = yield* Effect.flip(scheduler.advance({ to: T0 - 1 }))
      assert.strictEqual((error as { code?: string }).code, "VALIDATION_ERROR")
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )

  it.effect("moves a failing job to deadJobs instead of retrying it forever", () =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const store = yield* Store
      yield* scheduler.register("boom", Schema.Null, () => Effect.fail("nope"))
      yield* store.transact((tx) => scheduler.schedule(tx, "boom", T0, null))
      const result = yield* scheduler.advance({ seconds: 1 })
      assert.strictEqual(result.jobsRun, 1)
      const dead = yield* store.transact((tx) => tx.list("deadJobs", { partition: "global", limit: 10, order: "asc" }))
      assert.strictEqual(dead.length, 1)
      assert.isTrue((yield* store.transact((tx) => tx.nextJob))._tag === "None")
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )
})

describe("a job's stored payload is checked against its kind's shape before its handler runs", () => {
  it.effect("a payload that does not fit goes to deadJobs as a StoreError naming the job; the handler never sees it, later jobs run", () =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const store = yield* Store
      const seen: Array<string> = []
      yield* scheduler.register("greet", Schema.Struct({ name: Schema.String }), (_tx, { name }) => Effect.sync(() => void seen.push(name)))
      const bad = yield* store.transact((tx) => scheduler.schedule(tx, "greet", T0 + 1_000, { name: 42 }))
      yield* store.transact((tx) => scheduler.schedule(tx, "greet", T0 + 2_000, { name: "ada", addedLater: true }))
      const result = yield* scheduler.advance({ seconds: 5 })
      assert.deepStrictEqual(seen, ["ada"])
      assert.strictEqual(result.jobsRun, 2)
      const dead = yield* store.read((tx) => tx.list("deadJobs", { partition: "global", limit: 10, order: "asc" }))
      assert.deepStrictEqual(
        dead.map((d) => d.id),
        [String(bad.seq)]
      )
      const error = String((dead[0]?.body as { error?: unknown } | undefined)?.error)
      assert.include(error, "StoreError")
      assert.include(error, `job ${bad.seq} (greet) does not have the payload its handler takes`)
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )
})

describe("scheduler on Effect's clock (system mode, driven by TestClock)", () => {
  it.effect("the background loop runs a job once virtual time passes its due time", () =>
    Effect.gen(function* () {
      const { ran, at, scheduler } = yield* recorder
      yield* at(30_000, "x")
      const loop = yield* Effect.forkChild(scheduler.loop(1_000))
      yield* TestClock.adjust("29 seconds")
      assert.deepStrictEqual(ran, [])
      yield* TestClock.adjust("2 seconds")
      assert.deepStrictEqual(ran, ["x@30000"])
      yield* Fiber.interrupt(loop)
    }).pipe(Effect.provide(layerFor("system")), startingAtT0)
  )

  it.effect("follow mode is Effect's clock plus an offset that grows when advanced", () =>
    Effect.gen(function* () {
      const clock = yield* EngineClock
      assert.strictEqual(yield* clock.now, T0 + 3_600_000)
      yield* TestClock.adjust("10 seconds")
      assert.strictEqual(yield* clock.now, T0 + 3_610_000)
      yield* clock.moveTo(T0 + 7_200_000)
      assert.strictEqual(yield* clock.now, T0 + 7_200_000)
    }).pipe(Effect.provide(layerFor("follow", T0 + 3_600_000)), startingAtT0)
  )
})

describe("process-local timers (E-130)", () => {
  /** A timer that records `name@time-since-T0` when it runs. */
  const timerAt = (ms: number, name: string, ran: Array<string>) =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const clock = yield* EngineClock
      return yield* scheduler.timer(
        T0 + ms,
        Effect.map(clock.now, (now) => void ran.push(`${name}@${now - T0}`))
      )
    })

  it.effect("advance runs timers at their own due time, in time order with jobs (a job first at a tie), not counted as jobs", () =>
    Effect.gen(function* () {
      const { ran, at, scheduler } = yield* recorder
      yield* at(15_000, "job15")
      yield* at(40_000, "job40")
      yield* timerAt(15_000, "timer15", ran)
      yield* timerAt(5_000, "timer5", ran)
      yield* timerAt(70_000, "timer70", ran)
      const result = yield* scheduler.advance({ seconds: 60 })
      assert.deepStrictEqual(ran, ["timer5@5000", "job15@15000", "timer15@15000", "job40@40000"])
      assert.strictEqual(result.jobsRun, 2)
      yield* scheduler.advance({ seconds: 10 })
      assert.deepStrictEqual(ran.at(-1), "timer70@70000")
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )

  it.effect("a cancelled timer never runs; a timer may set the next one, which runs in the same advance", () =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const clock = yield* EngineClock
      const ran: Array<string> = []
      const cancel = yield* timerAt(1_000, "cancelled", ran)
      yield* cancel
      const beat = (n: number): Effect.Effect<void> =>
        Effect.asVoid(
          scheduler.timer(
            T0 + n * 15_000,
            Effect.andThen(
              Effect.map(clock.now, (now) => void ran.push(`beat@${now - T0}`)),
              Effect.suspend(() => beat(n + 1))
            )
          )
        )
      yield* beat(1)
      yield* scheduler.advance({ seconds: 50 })
      assert.deepStrictEqual(ran, ["beat@15000", "beat@30000", "beat@45000"])
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )

  it.effect("a failing timer is logged and does not stop the walk", () =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const ran: Array<string> = []
      yield* scheduler.timer(T0 + 1_000, Effect.die("boom"))
      yield* timerAt(2_000, "after", ran)
      yield* scheduler.advance({ seconds: 5 })
      assert.deepStrictEqual(ran, ["after@2000"])
    }).pipe(Effect.provide(layerFor("manual", T0)))
  )

  it.effect("the background loop runs a timer once Effect's clock passes its due time", () =>
    Effect.gen(function* () {
      const { ran, scheduler } = yield* recorder
      yield* timerAt(15_000, "beat", ran)
      const loop = yield* Effect.forkChild(scheduler.loop(250))
      yield* TestClock.adjust("14 seconds")
      assert.deepStrictEqual(ran, [])
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(ran, ["beat@15000"])
      yield* Fiber.interrupt(loop)
    }).pipe(Effect.provide(layerFor("system")), startingAtT0)
  )
})
