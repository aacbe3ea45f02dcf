/**
 * The engine host's hand-over on `POST /_sim/reset` (E-242), driven directly: a request that arrives while the world
 * is being replaced waits and is answered by the new world; a new world that cannot be built makes the reset answer
 * 503 SERVICE_UNAVAILABLE, and the next request builds it again (with the reset's plan). Then what the host owns
 * beyond that: a second reset while one is under way, the plan's defaults on a system clock, the scheduler's loop of
 * each world (stopped with it), the answers held during a failed hand-over, a defect's 500, and stop().
 */
import { Clock, Duration, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { type EngineHost, makeEngineHost } from "../../engine/http/engine-host.ts"
import type { EngineRequest, EngineResponse } from "../../engine/http/exchange.ts"
import { Trace } from "../../engine/sim/trace.ts"
import { config } from "./node-server-kit.ts"
import { engineRequest } from "./harness.ts"

/** A request as the transport hands it over: the admin token unless `headers` says otherwise; `path` may hold a query. */
const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: "Bearer t" }) =>
  engineRequest(method, path, { "content-type": "application/json", ...headers }, body === undefined ? undefined : JSON.stringify(body), "127.0.0.1")
const bodyOf = (response: EngineResponse) => JSON.parse(response.body) as Record<string, any>
const AT = "2026-12-24T20:30:00.000Z"

/**
 * Effect's Clock for an engine on a system clock (sim/clock.ts: system mode reads Effect's Clock as it is), moved by
 * the test. `advance` wakes the sleeps it passes (the scheduler's loop polls every 250 ms on this clock) and resolves
 * once one goes back to sleep; with `yielding` every read waits one scheduler turn, as a read of a remote time source
 * would, so requests handed over one after another are all under way before any of them goes on; with `dying` a read
 * dies (a defect). EngineConfig has no clock of its own: this one rides into the engine's context on the trace layer.
 */
const testClock = (start: number) => {
  let now = start
  const behaviour = { yielding: false, dying: false }
  const sleepers = new Set<{ readonly until: number; readonly wake: () => void }>()
  let slept = Promise.withResolvers<void>()
  const read = Effect.suspend(() =>
    behaviour.dying ? Effect.die(new Error("the time source is gone")) : behaviour.yielding ? Effect.as(Effect.yieldNow, now) : Effect.succeed(now)
  )
  const nanos = () => BigInt(now) * 1_000_000n
  const clock: Clock.Clock = {
    currentTimeMillisUnsafe: () => now,
    currentTimeMillis: read,
    currentTimeNanosUnsafe: nanos,
    currentTimeNanos: Effect.map(read, (ms) => BigInt(ms) * 1_000_000n),
    monotonicTimeNanosUnsafe: nanos,
    monotonicTimeNanos: Effect.sync(nanos),
    sleep: (duration) =>
      Effect.callback<void>((resume) => {
        const sleeper = { until: now + Duration.toMillis(duration), wake: () => resume(Effect.void) }
        sleepers.add(sleeper)
        slept.resolve()
        return Effect.sync(() => void sleepers.delete(sleeper))
      })
  }
  return {
    clock,
    behaviour,
    /** How many fibers wait on this clock: the scheduler loops of the worlds still running. */
    sleeping: () => sleepers.size,
    advance: (ms: number) => {
      now += ms
      slept = Promise.withResolvers<void>()
      for (const sleeper of [...sleepers])
        if (sleeper.until <= now) {
          sleepers.delete(sleeper)
          sleeper.wake()
        }
      return slept.promise
    }
  }
}

/**
 * The worlds a host builds, seen through their trace layer: how many were built and released (the layer's finalizer
 * ran), what each one's trace holds; `failing(n)` makes the n-th build fail with that error; `holdRecords(n)` makes every
 * exchange wait before its trace line is written, so it stays under way until `releaseRecords`, and resolves once n wait.
 */
const worlds = (
  options: {
    readonly clock?: Clock.Clock
    readonly failing?: (build: number) => unknown
    /** A build that waits for this promise before it completes (a slow store connection). */
    readonly waiting?: (build: number) => Promise<void> | undefined
  } = {}
) => {
  let built = 0
  let released = 0
  const traces: Array<Trace["Service"]> = []
  let held: PromiseWithResolvers<void> | undefined
  let waiting = 0
  let waited = Promise.withResolvers<void>()
  let waitingFor = 0
  const hold = (line: Record<string, unknown>) =>
    Effect.suspend(() => {
      const gate = held
      if (gate === undefined || line.kind !== "http") return Effect.void
      waiting += 1
      if (waiting === waitingFor) waited.resolve()
      return Effect.promise(() => gate.promise)
    })
  const trace = Layer.effect(
    Trace,
    Effect.suspend(() => {
      built += 1
      const failure = options.failing?.(built)
      if (failure !== undefined) return Effect.fail(failure)
      const slow = options.waiting?.(built)
      const ready = slow === undefined ? Effect.void : Effect.promise(() => slow)
      return Effect.andThen(
        ready,
        Effect.acquireRelease(
          Effect.map(Trace.make, (inner) => {
            traces.push(inner)
            return Trace.of({ ...inner, record: (line) => Effect.andThen(hold(line), inner.record(line)) })
          }),
          () =>
            Effect.sync(() => {
              released += 1
            })
        )
      )
    })
  )
  const layer = (options.clock === undefined ? trace : Layer.merge(trace, Layer.succeed(Clock.Clock, options.clock))) as Layer.Layer<Trace, unknown>
  return {
    layer,
    built: () => built,
    released: () => released,
    /** The exchanges world `i` (0: the first) recorded, as `METHOD path status`. */
    exchanges: (i: number) =>
      Effect.runSync(traces[i]?.lines ?? Effect.succeed([]))
        .map((l) => JSON.parse(l))
        .filter((l) => l.kind === "http")
        .map((l) => `${l.method} ${l.path} ${l.status}`),
    holdRecords: (count: number) => {
      held = Promise.withResolvers<void>()
      waiting = 0
      waitingFor = count
      waited = Promise.withResolvers<void>()
      return waited.promise
    },
    releaseRecords: () => {
      held?.resolve()
      held = undefined
    }
  }
}

const answer = (host: EngineHost, r: EngineRequest) => new Promise<EngineResponse>((resolve) => host.handle(r, resolve))
/** The start of the test clocks: not the configured start (a Monday), so the two cannot be mistaken. */
const TUESDAY = Date.parse("2026-11-24T08:00:00.000Z")
const SANDBOX = "/api/sandbox/v1/partner"
const newPartner = async (host: EngineHost) => {
  const made = await answer(host, request("POST", "/_sim/partners", { businessName: "Host Partner", email: "host@p.test" }))
  expect(made.status).toBe(201)
  return bodyOf(made) as { partnerId: string; sandboxKey: string }
}

describe("engine host", () => {
  it("a request arriving during the hand-over waits for the new world", async () => {
    let during: Promise<EngineResponse> | undefined
    let builds = 0
    const counted = Layer.effect(
      Trace,
      Effect.suspend(() => {
        builds += 1
        return Trace.make
      })
    )
    const host = await makeEngineHost(
      { ...config, trace: counted },
      {
        // Called while the old world is still up and the gate closed: a request now must not reach the old world.
        beforeReset: async () => {
          during = new Promise((resolve) => host.handle(request("GET", "/_sim/clock"), resolve))
        }
      }
    )
    try {
      const reset = await new Promise<EngineResponse>((resolve) => host.handle(request("POST", "/_sim/reset", { at: AT }), resolve))
      expect([reset.status, bodyOf(reset)]).toEqual([200, { now: AT, seed: 1, mode: "manual" }])
      const clock = await during
      expect(clock === undefined ? undefined : bodyOf(clock)).toEqual({ now: AT, mode: "manual" })
      // Two worlds, the first and the new one: the waiting request built none of its own.
      expect(builds).toBe(2)
    } finally {
      await host.stop()
    }
  })

  it("a new world that cannot be built: the reset answers 503, the next request builds it again", async () => {
    let builds = 0
    // The trace layer of the second world fails (as a database that went away would); the third builds.
    const flaky = Layer.effect(
      Trace,
      Effect.suspend(() => (++builds === 2 ? Effect.fail(new Error("the trace file's disk is full")) : Trace.make))
    )
    const host = await makeEngineHost({ ...config, trace: flaky })
    try {
      const reset = await new Promise<EngineResponse>((resolve) => host.handle(request("POST", "/_sim/reset", { at: AT }), resolve))
      expect(reset.status).toBe(503)
      expect(reset.headers["retry-after"]).toBe("1")
      expect(bodyOf(reset).error).toMatchObject({ code: "SERVICE_UNAVAILABLE", message: expect.stringContaining("disk is full") })
      const clock = await new Promise<EngineResponse>((resolve) => host.handle(request("GET", "/_sim/clock"), resolve))
      expect([clock.status, bodyOf(clock)]).toEqual([200, { now: AT, mode: "manual" }])
      expect(builds).toBe(3)
    } finally {
      await host.stop()
    }
  })
})

describe("engine host: plans, loops, held answers, stop", () => {
  it("two resets under way together: the second answers 409 CONFLICT; the old world is handed over once, after both", async () => {
    const time = testClock(TUESDAY)
    const w = worlds({ clock: time.clock })
    const handedOver: Array<ReadonlyArray<string>> = []
    const host = await makeEngineHost(
      { ...config, clock: "system", trace: w.layer },
      {
        beforeReset: async () => void handedOver.push(w.exchanges(0).toSorted())
      }
    )
    try {
      // Both are under way before either reads the clock a second time: the first schedules, the second finds it.
      time.behaviour.yielding = true
      const [first, second] = await Promise.all([answer(host, request("POST", "/_sim/reset", {})), answer(host, request("POST", "/_sim/reset", { seed: 2 }))])
      time.behaviour.yielding = false
      expect([first.status, bodyOf(first)]).toEqual([200, { now: "2026-11-24T08:00:00.000Z", seed: 1, mode: "system" }])
      expect([second.status, bodyOf(second)]).toEqual([409, { error: { code: "CONFLICT", message: "a reset is already under way" } }])
      // The old world was handed over once, when both had finished on it; one new world was built, with the first plan.
      expect(handedOver).toEqual([["POST /_sim/reset 200", "POST /_sim/reset 409"]])
      expect(w.built()).toBe(2)
      expect((await answer(host, request("GET", "/_sim/clock"))).status).toBe(200)
      expect(w.exchanges(1)).toEqual(["GET /_sim/clock 200"])
    } finally {
      await host.stop()
    }
  })

  it("on a system clock: the loop runs due jobs by itself; a reset starts at the present and stops the old world's loop; stop() the last", async () => {
    const time = testClock(TUESDAY)
    const w = worlds({ clock: time.clock })
    const host = await makeEngineHost({ ...config, clock: "system", desk: "auto", trace: w.layer })
    try {
      // The scheduler's loop waits for its next poll.
      expect(time.sleeping()).toBe(1)
      const p = await newPartner(host)
      const key = { "x-api-key": p.sandboxKey }
      const quote = bodyOf(await answer(host, request("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=1`, undefined, key)))
      const trade = await answer(
        host,
        request(
          "POST",
          `${SANDBOX}/trade`,
          { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: quote.quoteId },
          { ...key, "idempotency-key": "host-loop-0001" }
        )
      )
      expect([trade.status, bodyOf(trade).status]).toEqual([202, "PENDING"])
      // The auto desk fills 5 s later: the loop polls when the clock passes it, with no request to run it.
      await time.advance(5_000)
      const orders = bodyOf(await answer(host, request("GET", `${SANDBOX}/orders`, undefined, key)))
      expect(orders.orders.map((o: { status: string }) => o.status)).toEqual(["FILLED"])

      // No `at` on a system clock: the new world starts at the clock's present, not at the configured start.
      const reset = await answer(host, request("POST", "/_sim/reset", {}))
      expect(bodyOf(reset)).toEqual({ now: "2026-11-24T08:00:05.000Z", seed: 1, mode: "system" })
      // The old world is released, its loop with it: only the new world's loop waits.
      expect([w.built(), w.released(), time.sleeping()]).toEqual([2, 1, 1])
    } finally {
      await host.stop()
    }
    expect([w.built(), w.released(), time.sleeping()]).toEqual([2, 2, 0])
  })

  it("a failed hand-over answers 503 to the reset only: the others under way keep their answers, a stream is told to reconnect", async () => {
    const time = testClock(TUESDAY)
    const w = worlds({ clock: time.clock, failing: (n) => (n === 2 ? new Error("the store went away\n    at connect (pool.ts:1)") : undefined) })
    const host = await makeEngineHost({ ...config, clock: "system", trace: w.layer })
    try {
      const p = await newPartner(host)
      // Five exchanges under way together (the resets first): none writes its trace line until all five are there.
      const allThere = w.holdRecords(5)
      time.behaviour.yielding = true
      const got: Record<string, EngineResponse> = {}
      const ask = (name: string, r: EngineRequest) =>
        answer(host, r).then((a) => {
          got[name] = a
        })
      const answered = Promise.all([
        ask("reset", request("POST", "/_sim/reset", {})),
        ask("second", request("POST", "/_sim/reset", { seed: 2 })),
        ask("clock", request("GET", "/_sim/clock")),
        ask("take", request("POST", "/_sim/receivers/take", {})),
        // Left out of the wait: the held answers go out together, so it has its answer when the others have theirs.
        void ask("stream", request("GET", `${SANDBOX}/stream`, undefined, { "x-api-key": p.sandboxKey }))
      ])
      await allThere
      time.behaviour.yielding = false
      w.releaseRecords()
      await answered
      const envelope = (a: EngineResponse | undefined) => (a === undefined ? undefined : [a.status, bodyOf(a), a.headers["retry-after"]])
      expect(envelope(got.reset)).toEqual([
        503,
        { error: { code: "SERVICE_UNAVAILABLE", message: "the engine could not start over: the store went away; retry POST /_sim/reset" } },
        "1"
      ])
      expect(envelope(got.second)).toEqual([409, { error: { code: "CONFLICT", message: "a reset is already under way" } }, undefined])
      expect(envelope(got.clock)).toEqual([200, { now: "2026-11-24T08:00:00.000Z", mode: "system" }, undefined])
      expect(envelope(got.take)).toEqual([200, { received: [] }, undefined])
      expect(envelope(got.stream)).toEqual([
        503,
        { error: { code: "SERVICE_UNAVAILABLE", message: "the engine started over while this stream was opening; reconnect" } },
        "1"
      ])
      // The next request builds the new world.
      expect((await answer(host, request("GET", "/_sim/clock"))).status).toBe(200)
      expect(w.built()).toBe(3)
    } finally {
      await host.stop()
    }
  })

  it("a rebuild that fails again answers 503 with its own error's first line; the next request builds again", async () => {
    const errors = new Map([
      [2, new Error("the trace file's disk is full")],
      [3, new Error("still no room on the disk\n    at write (trace.ts:1)")]
    ])
    const w = worlds({ failing: (n) => errors.get(n) })
    const host = await makeEngineHost({ ...config, trace: w.layer })
    try {
      const reset = await answer(host, request("POST", "/_sim/reset", { at: AT }))
      expect([reset.status, bodyOf(reset).error.message]).toEqual([
        503,
        "the engine could not start over: the trace file's disk is full; retry POST /_sim/reset"
      ])
      const again = await answer(host, request("GET", "/_sim/clock"))
      expect([again.status, bodyOf(again), again.headers["retry-after"]]).toEqual([
        503,
        { error: { code: "SERVICE_UNAVAILABLE", message: "the engine could not start over: still no room on the disk; retry POST /_sim/reset" } },
        "1"
      ])
      expect(w.built()).toBe(3)
      const clock = await answer(host, request("GET", "/_sim/clock"))
      expect([clock.status, bodyOf(clock)]).toEqual([200, { now: AT, mode: "manual" }])
      expect(w.built()).toBe(4)
    } finally {
      await host.stop()
    }
  })

  it("stop() after a failed reset has nothing more to release", async () => {
    const w = worlds({ failing: (n) => (n === 2 ? new Error("no disk") : undefined) })
    const host = await makeEngineHost({ ...config, trace: w.layer })
    expect((await answer(host, request("POST", "/_sim/reset", {}))).status).toBe(503)
    await host.stop()
    expect([w.built(), w.released()]).toEqual([2, 1])
  })

  it("stop() during the rebuild after a failed reset waits for it and releases that world, which answers nobody", async () => {
    const third = Promise.withResolvers<void>()
    const w = worlds({ failing: (n) => (n === 2 ? new Error("no disk") : undefined), waiting: (n) => (n === 3 ? third.promise : undefined) })
    const host = await makeEngineHost({ ...config, trace: w.layer })
    expect((await answer(host, request("POST", "/_sim/reset", {}))).status).toBe(503)
    // The next request starts building world 3, which waits; the host is stopped meanwhile.
    const clock = answer(host, request("GET", "/_sim/clock"))
    await Promise.resolve()
    let stoppedAt = 0
    const stopped = host.stop().then(() => {
      stoppedAt = w.built()
    })
    third.resolve()
    await stopped
    expect([stoppedAt, w.built(), w.released()]).toEqual([3, 3, 2])
    const answered = await clock
    expect([answered.status, bodyOf(answered).error]).toEqual([503, { code: "SERVICE_UNAVAILABLE", message: "the engine is stopping; nothing was processed" }])
    // After stop(), nothing is built again for a late request.
    const late = await answer(host, request("GET", "/_sim/clock"))
    expect([late.status, w.built()]).toEqual([503, 3])
  })

  it("stop() during a reset waits for the hand-over, then releases the new world", async () => {
    const w = worlds()
    const host = await makeEngineHost({ ...config, trace: w.layer })
    const order: Array<string> = []
    const reset = answer(host, request("POST", "/_sim/reset", { at: AT })).then((r) => {
      order.push("reset answered")
      return r
    })
    await host.stop()
    order.push("stopped")
    expect([(await reset).status, order]).toEqual([200, ["reset answered", "stopped"]])
    expect([w.built(), w.released()]).toEqual([2, 2])
  })

  it("a request whose handling dies (a defect, not a failure) answers 500 INTERNAL_ERROR", async () => {
    const time = testClock(TUESDAY)
    const host = await makeEngineHost({ ...config, clock: "system", trace: worlds({ clock: time.clock }).layer })
    try {
      time.behaviour.dying = true
      const died = await answer(host, request("GET", "/_sim/clock"))
      time.behaviour.dying = false
      expect([died.status, bodyOf(died)]).toEqual([500, { error: { code: "INTERNAL_ERROR", message: "unexpected failure; safe to retry" } }])
      expect((await answer(host, request("GET", "/_sim/clock"))).status).toBe(200)
    } finally {
      await host.stop()
    }
  })

  it("a memory engine given a database URL (`serve --store memory` with DATABASE_URL set) leaves that database alone", async () => {
    // Nothing listens on port 1: an attempt to wipe it would fail the reset.
    const host = await makeEngineHost({ ...config, databaseUrl: "postgres://sokoni@127.0.0.1:1/elsewhere" })
    try {
      const reset = await answer(host, request("POST", "/_sim/reset", { at: AT }))
      expect([reset.status, bodyOf(reset)]).toEqual([200, { now: AT, seed: 1, mode: "manual" }])
    } finally {
      await host.stop()
    }
  })
})
