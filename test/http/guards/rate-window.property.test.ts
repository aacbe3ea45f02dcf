/**
 * The sliding window, randomized (fast-check): for any sequence of requests (random gaps on the clock, random limit),
 * no 60 s window ever holds more admitted requests than the limit, and a request is refused only when the 60 s
 * before it already hold `limit` admitted ones (the window is exact, not approximate). Run on the in-process windows
 * and, with DATABASE_URL, on the PostgreSQL windows taken from two separate pools as two engine processes would.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decide, RateLimiter, WINDOW_MS } from "../../../engine/http/guards/rate-limit.ts"
import { makePgRateWindow } from "../../../engine/store/pg-rate-window.ts"
import { withTemporaryDatabase } from "../../../engine/store/pg-temp-db.ts"
import { PostgresClientLayer } from "../../../engine/store/postgres.ts"
import { onPostgres } from "../../support/stores.ts"

const T0 = 1_800_000_000_000

/** Requests as (gap since the previous one in ms, which process sends it). */
const requests = fc.array(
  fc.record({ gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 70_000 })), via: fc.nat(1) }),
  {
    minLength: 1,
    maxLength: 60
  }
)

/** Checks a run: `admitted[i]` says whether the request at `times[i]` was admitted. */
const checkRun = (times: ReadonlyArray<number>, admitted: ReadonlyArray<boolean>, limit: number) => {
  const kept = times.filter((_, i) => admitted[i])
  times.forEach((t, i) => {
    const inWindow = kept.filter((k) => k > t - WINDOW_MS && k <= t).length
    // Never more than the limit in the window ending at any request...
    expect(inWindow).toBeLessThanOrEqual(limit)
    // ...and a refusal only when the window before it is full.
    if (!admitted[i]) expect(inWindow).toBe(limit)
  })
}

const timesOf = (reqs: ReadonlyArray<{ gap: number }>) => {
  let t = T0
  return reqs.map((r) => (t += r.gap))
}

describe("sliding window (property)", () => {
  it("in process: never more than the limit in any 60 s window, refusals only when full", () => {
    fc.assert(
      fc.property(requests, fc.integer({ min: 1, max: 8 }), (reqs, limit) => {
        const limiter = Effect.runSync(RateLimiter.make)
        const times = timesOf(reqs)
        const admitted = times.map((t) => Effect.runSync(limiter.take("p:production", limit, t)).allowed)
        checkRun(times, admitted, limit)
      }),
      { numRuns: 300 }
    )
  })

  it("decide: remaining, reset and Retry-After follow the oldest hit", () => {
    expect(decide(true, 3, T0, 5, T0 + 1_500)).toEqual({
      allowed: true,
      limit: 5,
      remaining: 2,
      reset: Math.ceil((T0 + WINDOW_MS) / 1000),
      retryAfterSeconds: 0
    })
    expect(decide(false, 5, T0, 5, T0 + 59_001)).toEqual({
      allowed: false,
      limit: 5,
      remaining: 0,
      reset: Math.ceil((T0 + WINDOW_MS) / 1000),
      retryAfterSeconds: 1
    })
    expect(decide(false, 5, T0, 5, T0 + 10_000).retryAfterSeconds).toBe(50)
    expect(decide(true, 1, null, 5, T0).reset).toBe(Math.ceil((T0 + WINDOW_MS) / 1000))
    expect(decide(true, 9, T0, 5, T0).remaining).toBe(0)
  })

  const adminUrl = process.env.DATABASE_URL
  it.skipIf(adminUrl === undefined)(
    "in PostgreSQL, from two pools: never more than the limit in any 60 s window, refusals only when full",
    { ...onPostgres, timeout: 120_000 },
    async () => {
      const scope = Effect.runSync(Scope.make())
      try {
        const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(adminUrl ?? ""), scope))
        const windowOn = () =>
          Effect.runPromise(
            Scope.provide(Layer.build(PostgresClientLayer(url)), scope).pipe(Effect.flatMap((context) => Effect.provideContext(makePgRateWindow, context)))
          )
        const first = await windowOn()
        const windows = [first, await windowOn()]
        let run = 0
        await fc.assert(
          fc.asyncProperty(requests, fc.integer({ min: 1, max: 6 }), async (reqs, limit) => {
            const bucket = `p${++run}:production`
            const times = timesOf(reqs)
            const admitted: Array<boolean> = []
            for (const [i, t] of times.entries()) {
              const taken = await Effect.runPromise((windows[reqs[i]?.via ?? 0] ?? first).take(bucket, limit, WINDOW_MS, t))
              admitted.push(taken.allowed)
            }
            checkRun(times, admitted, limit)
          }),
          { numRuns: 25 }
        )
        // Concurrent takes of one bucket from both pools at one instant admit exactly the limit.
        const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => Effect.runPromise((windows[i % 2] ?? first).take("burst", 7, WINDOW_MS, T0))))
        expect(burst.filter((t) => t.allowed)).toHaveLength(7)
        expect(Math.max(...burst.map((t) => t.used))).toBe(7)
      } finally {
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }
    }
  )
})
