/**
 * Rate limiter: an exact one-minute sliding window per partner identity and environment (a full key, its data keys
 * and its OAuth tokens share it, and it survives key rotation, as the bucket is the partnerId), limits per tier
 * (D-001), and the X-RateLimit-* headers on every authenticated response; operations without a key are limited per
 * source IP and operation instead (D-321), with the same windows. Time comes from the EngineClock, so scenarios move
 * the window with the clock.
 * Owns the decision and the in-process windows of the embedded default (memory store: one process, a restart forgets
 * them, which the 60 s window makes harmless). With the postgres store the windows live in the database
 * (store/pg-rate-window.ts) so every engine process on it shares them (E-077).
 */
import { Context, Effect, Layer } from "effect"
import type { Environment, Tier } from "../../app/principal.ts"
import { getOrCreate } from "../../domain/maps.ts"
import { makePgRateWindow } from "../../store/pg-rate-window.ts"
import type { StoreError } from "../../store/port.ts"

export const WINDOW_MS = 60_000
/**
 * Shortest window `serve --rate-window-seconds` accepts. A shorter window is a simulation knob only (E-078): load
 * profiles prove the exact limit in seconds instead of minutes; the API's contract stays 60 s.
 */
export const MIN_WINDOW_MS = 1_000
/** Production limits per tier (spec Limits); sandbox applies 300 (see decisions: the spec says 300 and 100). */
export const TIER_LIMITS: Record<Tier, number> = { starter: 100, growth: 500, enterprise: 2_000 }
export const SANDBOX_LIMIT = 300

export const limitFor = (tier: Tier, environment: Environment) => (environment === "sandbox" ? SANDBOX_LIMIT : TIER_LIMITS[tier])

/**
 * Operations without a partner key (the public status, the portal's ID-token operations, `POST /oauth/token`) are
 * limited per source IP (spec Limits: "OAuth token endpoint | Rate-limited per source IP"; D-002, D-016): this many
 * requests per minute per source address and operation (D-321).
 */
export const SOURCE_IP_LIMIT = 60
/** The source of requests that came without a socket (the in-process `fetch`). */
export const IN_PROCESS_SOURCE = "in-process"

/** The bucket of a request to `operationId` from `address`; an IPv4-mapped IPv6 address counts as its IPv4 one. */
export const sourceBucket = (address: string | undefined, operationId: string): string => {
  const source =
    address === undefined || address === "" ? IN_PROCESS_SOURCE : address.startsWith("::ffff:") && address.includes(".") ? address.slice(7) : address
  return `ip:${source}:${operationId}`
}

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

/** The decision for one request, from the window after the take: `used` hits, the earliest at `oldest`. */
export const decide = (allowed: boolean, used: number, oldest: number | null, limit: number, now: number, windowMs = WINDOW_MS): RateDecision => {
  const resetMs = (oldest ?? now) + windowMs
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - used),
    reset: Math.ceil(resetMs / 1000),
    retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((resetMs - now) / 1000))
  }
}

export class RateLimiter extends Context.Service<
  RateLimiter,
  { readonly take: (bucket: string, limit: number, now: number) => Effect.Effect<RateDecision, StoreError> }
>()("sokoni/RateLimiter") {
  /** In-process windows of `windowMs` (the contract's 60 s unless a load profile compresses it). */
  static readonly makeWith = (windowMs: number) =>
    Effect.sync(() => {
      const windows = new Map<string, Array<number>>()
      const take = (bucket: string, limit: number, now: number) =>
        Effect.sync((): RateDecision => {
          const hits = getOrCreate(windows, bucket, (): Array<number> => [])
          while (hits.length > 0 && (hits[0] as number) <= now - windowMs) hits.shift()
          const allowed = hits.length < limit
          if (allowed) hits.push(now)
          return decide(allowed, hits.length, hits[0] ?? null, limit, now, windowMs)
        })
      // Not widened to the service's type: the in-process windows cannot fail.
      return { take }
    })

  static readonly make = RateLimiter.makeWith(WINDOW_MS)

  /** Windows in PostgreSQL (needs the SqlClient of the postgres store), shared by every engine process on it. */
  static readonly layerPostgresWith = (windowMs: number) =>
    Layer.effect(
      RateLimiter,
      Effect.map(makePgRateWindow, (windows) =>
        RateLimiter.of({
          take: (bucket, limit, now) => Effect.map(windows.take(bucket, limit, windowMs, now), (t) => decide(t.allowed, t.used, t.oldest, limit, now, windowMs))
        })
      )
    )
  static readonly layerPostgres = RateLimiter.layerPostgresWith(WINDOW_MS)

  static readonly layerWith = (windowMs: number) => Layer.effect(RateLimiter, Effect.map(RateLimiter.makeWith(windowMs), RateLimiter.of))
  static readonly layer = RateLimiter.layerWith(WINDOW_MS)

  /** Admits everything and still reports the tier's headers: for benchmarks (`serve --rate-limit off`) only. */
  static readonly layerOff = Layer.succeed(
    RateLimiter,
    RateLimiter.of({
      take: (_bucket, limit, now) =>
        Effect.succeed({ allowed: true, limit, remaining: limit, reset: Math.ceil((now + WINDOW_MS) / 1000), retryAfterSeconds: 0 })
    })
  )
}
