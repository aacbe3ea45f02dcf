/**
 * Planted defects: TEST-ONLY faults `sokoni serve --plant-defect NAME` builds into an engine, so the conformance
 * harness can prove it catches each by name (issue 10: "against our engine with a planted defect ... each caught by
 * name"; E-190). Never on by default: an engine built without `plantDefects` has none, and `serve` prints a warning
 * line for each one it plants.
 * Owns the catalogue of names, the Context reference the two services that plant in place read (TradingService:
 * fee rounding and the quote TTL), and the layer swaps for the other two (the rate limiter, webhook signing).
 * Does not own the faults' code paths: each lives beside the correct code it replaces, guarded by its name.
 */
import { Context, Effect, Layer } from "effect"
import { type RateDecision, RateLimiter } from "../http/guards/rate-limit.ts"

export const PLANTED_DEFECTS = ["fee-rounding", "quote-ttl", "rate-limit-plus-one", "webhook-reserialised"] as const
export type PlantedDefect = (typeof PLANTED_DEFECTS)[number]

export const DEFECT_DESCRIPTIONS: Record<PlantedDefect, string> = {
  "fee-rounding": "an order's base fee is rounded up to the next cent instead of half away from zero (off by a cent)",
  "quote-ttl": "POST /trade no longer checks the quote's expiry (a single-use check remains)",
  "rate-limit-plus-one": "the rate limiter admits limit + 1 requests per window (the headers still count to the limit)",
  "webhook-reserialised": "deliveries are sent with a space after ':' and ',' but signed over the compact re-serialised JSON"
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
