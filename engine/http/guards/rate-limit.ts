/**
 * Rate limiter: a one-minute sliding window per partner and environment (a full key and its data keys share it),
 * limits per tier, and the X-RateLimit-* headers on every authenticated response. Owns the windows (in memory: a
 * restart forgets them, which the spec's 60 s window makes harmless). Time comes from the EngineClock.
 */
import { Context, Effect, Layer } from "effect"
import type { Environment, Tier } from "../../app/principal.ts"
import { getOrCreate } from "../../domain/maps.ts"

export const WINDOW_MS = 60_000
/** Production limits per tier (spec Limits); sandbox applies 300 (see decisions: the spec says 300 and 100). */
export const TIER_LIMITS: Record<Tier, number> = { starter: 100, growth: 500, enterprise: 2_000 }
export const SANDBOX_LIMIT = 300

export const limitFor = (tier: Tier, environment: Environment) => (environment === "sandbox" ? SANDBOX_LIMIT : TIER_LIMITS[tier])

export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Unix seconds when the window next frees a slot. */
  readonly reset: number
  readonly retryAfterSeconds: number
}

export const rateHeaders = (d: RateDecision): Record<string, string> => ({
  "x-ratelimit-limit": String(d.limit),
  "x-ratelimit-remaining": String(d.remaining),
  "x-ratelimit-reset": String(d.reset)
})

export class RateLimiter extends Context.Service<RateLimiter, { readonly take: (bucket: string, limit: number, now: number) => Effect.Effect<RateDecision> }>()(
  "sokoni/RateLimiter"
) {
  static readonly make = Effect.sync(() => {
    const windows = new Map<string, Array<number>>()
    const take = (bucket: string, limit: number, now: number) =>
      Effect.sync((): RateDecision => {
        const hits = getOrCreate(windows, bucket, (): Array<number> => [])
        while (hits.length > 0 && (hits[0] as number) <= now - WINDOW_MS) hits.shift()
        const allowed = hits.length < limit
        if (allowed) hits.push(now)
        const oldest = hits[0] ?? now
        const resetMs = oldest + WINDOW_MS
        return {
          allowed,
          limit,
          remaining: Math.max(0, limit - hits.length),
          reset: Math.ceil(resetMs / 1000),
          retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetMs - now) / 1000))
        }
      })
    return RateLimiter.of({ take })
  })

  static readonly layer = Layer.effect(RateLimiter, RateLimiter.make)

  /** Admits everything and still reports the tier's headers: for benchmarks (`serve --rate-limit off`) only. */
  static readonly layerOff = Layer.succeed(
    RateLimiter,
    RateLimiter.of({
      take: (_bucket, limit, now) =>
        Effect.succeed({ allowed: true, limit, remaining: limit, reset: Math.ceil((now + WINDOW_MS) / 1000), retryAfterSeconds: 0 })
    })
  )
}
