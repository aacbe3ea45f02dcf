/**
 * Planted defects: TEST-ONLY faults `sokoni serve --plant-defect NAME` builds into an engine, so the conformance
 * harness can prove it catches each by name (issue 10: "against our engine with a planted defect ... each caught by
 * name"; E-190). Never on by default: an engine built without `plantDefects` has none, and `serve` prints a warning
 * line for each one it plants.
 * Owns the catalogue of names, the Context reference the services that plant in place read (TradingService: fee
 * rounding and the quote TTL; PartnerService: key kinds; WalletService and the ledger: overdraw; WebhookDelivery:
 * retries; StreamService: duplicates), the layer swap for the rate limiter, and the response filter for Retry-After.
 * Does not own the faults' code paths: each lives beside the correct code it replaces, guarded by its name.
 */
import { Context, Effect, Layer } from "effect"
import { type RateDecision, RateLimiter } from "../http/guards/rate-limit.ts"

export const PLANTED_DEFECTS = [
  "fee-rounding",
  "quote-ttl",
  "rate-limit-plus-one",
  "webhook-reserialised",
  "sandbox-key-on-production",
  "overdraw",
  "retry-new-event-id",
  "retry-schedule",
  "stream-duplicate",
  "no-retry-after"
] as const
export type PlantedDefect = (typeof PLANTED_DEFECTS)[number]

export const DEFECT_DESCRIPTIONS: Record<PlantedDefect, string> = {
  "fee-rounding": "an order's base fee is rounded up to the next cent instead of half away from zero (off by a cent)",
  "quote-ttl": "POST /trade no longer checks the quote's expiry (a single-use check remains)",
  "rate-limit-plus-one": "the rate limiter admits limit + 1 requests per window (the headers still count to the limit)",
  "webhook-reserialised": "deliveries are sent with a space after ':' and ',' but signed over the compact re-serialised JSON",
  "sandbox-key-on-production": "the production base accepts a sandbox key (as that partner's production principal)",
  overdraw: "a sub-account withdrawal larger than its balance is executed (the wallet goes negative) instead of INSUFFICIENT_FUNDS",
  "retry-new-event-id": "each retry of a webhook delivery carries a new eventId (a receiver deduplicating by eventId handles it twice)",
  "retry-schedule": "webhook retries come every 5 s (no back-off) instead of after 5 s, 30 s, 5 min, 30 min, 2 h",
  "stream-duplicate": "the event stream sends every event twice, with the same id",
  "no-retry-after": "a 429 carries no Retry-After header"
}

/** retry-schedule: every retry 5 s after the previous attempt (the spec's first delay, then no back-off). */
export const FLAT_RETRY_DELAYS_MS: ReadonlyArray<number> = [5_000, 5_000, 5_000, 5_000, 5_000]

/** retry-new-event-id: the eventId a retry carries instead of the event's own (attempt 2 on). */
export const retriedEventId = (eventId: string, attempt: number) => `${eventId}r${attempt}`

/**
 * no-retry-after: the answer as the engine built it, a 429's Retry-After removed. Applied where responses leave the
 * engine (http/engine-host.ts), as the gateway that sets the header is not to carry test faults.
 */
export const withoutRetryAfterOn429 = <T extends { readonly status: number; readonly headers: Readonly<Record<string, string>> }>(response: T): T => {
  if (response.status !== 429 || !("retry-after" in response.headers)) return response
  const { "retry-after": _dropped, ...headers } = response.headers
  return { ...response, headers }
}

export const isPlantedDefect = (name: string): name is PlantedDefect => (PLANTED_DEFECTS as ReadonlyArray<string>).includes(name)

/** The defects planted in this engine; empty unless `plantDefects` names some. */
export const PlantedDefects = Context.Reference<ReadonlySet<PlantedDefect>>("sokoni/PlantedDefects", { defaultValue: () => new Set() })

export const plantedDefectsLayer = (defects: ReadonlyArray<PlantedDefect>) => Layer.succeed(PlantedDefects, new Set(defects))

/**
 * rate-limit-plus-one: the real limiter asked for limit + 1, answering as if the limit were the contract's (so the
 * headers look right until the request that should have been the first 429).
 */
export const admittingOneMore = <E, R>(real: Layer.Layer<RateLimiter, E, R>): Layer.Layer<RateLimiter, E, R> =>
  Layer.effect(
    RateLimiter,
    Effect.gen(function* () {
      const limiter = yield* RateLimiter
      return RateLimiter.of({
        take: (bucket, limit, now) =>
          Effect.map(limiter.take(bucket, limit + 1, now), (d): RateDecision => ({ ...d, limit, remaining: Math.max(0, d.remaining - 1) }))
      })
    })
  ).pipe(Layer.provide(real))
