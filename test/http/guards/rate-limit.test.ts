/**
 * The sliding window of the rate limiter, edge by edge: a hit leaves the window exactly 60 s later, remaining and
 * reset follow the oldest hit, retryAfter is at least 1 s; the tier limits; the headers; and the `off` layer.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { limitFor, type RateDecision, RateLimiter, rateHeaders, SANDBOX_LIMIT, TIER_LIMITS, WINDOW_MS } from "../../../engine/http/guards/rate-limit.ts"

const T0 = 1_800_000_000_000

type Take = (bucket: string, limit: number, now: number) => Effect.Effect<RateDecision>
const withLimiter = <A>(f: (take: Take) => Effect.Effect<A>) => Effect.runSync(Effect.flatMap(RateLimiter.make, (l) => f(l.take)))

describe("rate limiter", () => {
  it("has a one-minute window and the spec's tier limits", () => {
    expect(WINDOW_MS).toBe(60_000)
    expect(TIER_LIMITS).toEqual({ starter: 100, growth: 500, enterprise: 2_000 })
    expect(SANDBOX_LIMIT).toBe(300)
    expect(limitFor("starter", "production")).toBe(100)
    expect(limitFor("growth", "production")).toBe(500)
    expect(limitFor("enterprise", "production")).toBe(2_000)
    expect(limitFor("starter", "sandbox")).toBe(300)
    expect(limitFor("enterprise", "sandbox")).toBe(300)
  })

  it("a compressed window (load profiles) slides the same way at its own length", () => {
    const [a, b, refused, freed] = Effect.runSync(
      Effect.flatMap(RateLimiter.makeWith(5_000), ({ take }) =>
        Effect.gen(function* () {
          const a = yield* take("p:production", 2, T0)
          const b = yield* take("p:production", 2, T0 + 1_000)
          const refused = yield* take("p:production", 2, T0 + 4_999)
          const freed = yield* take("p:production", 2, T0 + 5_000)
          return [a, b, refused, freed]
        })
      )
    )
    expect([a?.allowed, b?.allowed, refused?.allowed, freed?.allowed]).toEqual([true, true, false, true])
    expect(refused).toEqual({ allowed: false, limit: 2, remaining: 0, reset: Math.ceil((T0 + 5_000) / 1000), retryAfterSeconds: 1 })
    // the oldest hit left at T0 + 5 s; the one at T0 + 1 s is now the oldest
    expect(freed?.reset).toBe(Math.ceil((T0 + 6_000) / 1000))
  })

  it("counts down remaining, then refuses with retryAfter to the oldest hit's expiry", () => {
    const decisions = withLimiter((take) =>
      Effect.gen(function* () {
        const a = yield* take("p:sandbox", 2, T0)
        const b = yield* take("p:sandbox", 2, T0 + 10_000)
        const c = yield* take("p:sandbox", 2, T0 + 20_500)
        return [a, b, c]
      })
    )
    expect(decisions[0]).toEqual({ allowed: true, limit: 2, remaining: 1, reset: Math.ceil((T0 + WINDOW_MS) / 1000), retryAfterSeconds: 0 })
    expect(decisions[1]).toEqual({ allowed: true, limit: 2, remaining: 0, reset: Math.ceil((T0 + WINDOW_MS) / 1000), retryAfterSeconds: 0 })
    // oldest hit at T0 frees its slot at T0 + 60 s: 39.5 s from now, rounded up
    expect(decisions[2]).toEqual({ allowed: false, limit: 2, remaining: 0, reset: Math.ceil((T0 + WINDOW_MS) / 1000), retryAfterSeconds: 40 })
  })

  it("frees a slot exactly 60 s after a hit, not a millisecond earlier", () => {
    const [before, at] = withLimiter((take) =>
      Effect.gen(function* () {
        yield* take("b", 1, T0)
        const before = yield* take("b", 1, T0 + WINDOW_MS - 1)
        const at = yield* take("b", 1, T0 + WINDOW_MS)
        return [before, at] as const
      })
    )
    expect(before.allowed).toBe(false)
    expect(before.retryAfterSeconds).toBe(1)
    expect(at.allowed).toBe(true)
    expect(at.remaining).toBe(0)
    expect(at.reset).toBe(Math.ceil((T0 + 2 * WINDOW_MS) / 1000))
  })

  it("drops every expired hit, not only the first", () => {
    const d = withLimiter((take) =>
      Effect.gen(function* () {
        yield* take("b", 3, T0)
        yield* take("b", 3, T0 + 1)
        yield* take("b", 3, T0 + 2)
        return yield* take("b", 3, T0 + WINDOW_MS + 5)
      })
    )
    expect(d.allowed).toBe(true)
    expect(d.remaining).toBe(2)
    expect(d.reset).toBe(Math.ceil((T0 + WINDOW_MS + 5 + WINDOW_MS) / 1000))
  })

  it("a refused request takes no slot, and retryAfter is never below 1 s", () => {
    const ds = withLimiter((take) =>
      Effect.gen(function* () {
        yield* take("b", 1, T0)
        const r1 = yield* take("b", 1, T0 + WINDOW_MS - 200)
        const r2 = yield* take("b", 1, T0 + WINDOW_MS - 100)
        const ok = yield* take("b", 1, T0 + WINDOW_MS)
        return [r1, r2, ok] as const
      })
    )
    expect(ds[0]).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 })
    expect(ds[1]).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 })
    expect(ds[2]).toMatchObject({ allowed: true, remaining: 0 })
  })

  it("keeps one window per bucket", () => {
    const [a, b] = withLimiter((take) =>
      Effect.gen(function* () {
        yield* take("one", 1, T0)
        return [yield* take("one", 1, T0), yield* take("two", 1, T0)] as const
      })
    )
    expect(a.allowed).toBe(false)
    expect(b).toMatchObject({ allowed: true, remaining: 0 })
  })

  it("rounds reset up to whole seconds", () => {
    const d = withLimiter((take) => take("r", 5, T0 + 1))
    expect(d.reset).toBe(Math.ceil((T0 + 1 + WINDOW_MS) / 1000))
    expect(d.reset).toBe((T0 + WINDOW_MS) / 1000 + 1)
  })

  it("writes the three X-RateLimit headers as strings", () => {
    expect(rateHeaders({ allowed: true, limit: 100, remaining: 42, reset: 1_800_000_060, retryAfterSeconds: 0 })).toEqual({
      "x-ratelimit-limit": "100",
      "x-ratelimit-remaining": "42",
      "x-ratelimit-reset": "1800000060"
    })
  })

  it("layerOff admits everything and reports the full limit", () => {
    const ds = Effect.runSync(
      Effect.gen(function* () {
        const l = yield* RateLimiter
        const out = []
        for (let i = 0; i < 5; i++) out.push(yield* l.take("b", 2, T0 + 1))
        return out
      }).pipe(Effect.provide(RateLimiter.layerOff))
    )
    for (const d of ds) expect(d).toEqual({ allowed: true, limit: 2, remaining: 2, reset: Math.ceil((T0 + 1 + WINDOW_MS) / 1000), retryAfterSeconds: 0 })
  })
})
