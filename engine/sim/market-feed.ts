/**
 * MarketFeed: seeded price paths for the catalogue's instruments, published the way the spec describes: 15 minutes
 * delayed, on a 900 s refresh cadence, moving only while the instrument's exchange is open. Prices can be pinned.
 * Owns: the path (integer arithmetic, one step per open 900 s interval), the published observation, pins.
 * Does not own: listing/filtering (app/market.ts), FX (domain/fx.ts), alert evaluation (later issue).
 *
 * The path starts at `origin` (the run's start, aligned down to 900 s): same seed + same origin = same prices.
 */
import { Context, Effect, Layer } from "effect"
import { findExchange, isOpen } from "../domain/calendar.ts"
import type { Instrument } from "../domain/instruments.ts"
import type { Price4 } from "../domain/money.ts"
import { EngineClock } from "./clock.ts"
import { getOrCreate } from "../domain/maps.ts"

export const REFRESH_SECONDS = 900
export const DELAY_SECONDS = 900
export const STALE_AFTER_SECONDS = 1800
const BUCKET_MS = REFRESH_SECONDS * 1000
/** Largest move of one step, in basis points either way. */
const MAX_STEP_BPS = 30

export interface Observation {
  readonly price: Price4
  readonly open: Price4
  readonly dayHigh: Price4
  readonly dayLow: Price4
  readonly previousClose: Price4
  readonly volume: number
  /** Time of the exchange observation (not of the answer). */
  readonly asOf: number
}

/** 32-bit mix of the seed, the instrument and the step: the path's only source of variation. */
const mix = (seed: number, salt: number, step: number): number => {
  let h = (seed ^ Math.imul(salt, 0x9e3779b1) ^ Math.imul(step + 1, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

const saltOf = (symbol: string): number => {
  let h = 2166136261
  for (let i = 0; i < symbol.length; i++) h = Math.imul(h ^ symbol.charCodeAt(i), 16777619) >>> 0
  return h
}

export class MarketFeed extends Context.Service<
  MarketFeed,
  {
    readonly origin: number
    readonly observe: (instrument: Instrument, now: number) => Effect.Effect<Observation>
    /** Fixes an instrument's published price from now on (scenarios, control API). */
    readonly pin: (symbol: string, price: Price4) => Effect.Effect<void>
  }
>()("sokoni/MarketFeed") {
  static readonly make = (seed: number, start: number) =>
    Effect.sync(() => {
      const origin = Math.floor(start / BUCKET_MS) * BUCKET_MS
      const paths = new Map<string, Array<Price4>>()
      const pins = new Map<string, Price4>()

      /** Path value at the end of bucket `k` (k >= 0), extending the cached path as needed. */
      const pathAt = (instrument: Instrument, k: number): Array<Price4> => {
        const path = getOrCreate(paths, instrument.symbol, () => [instrument.basePrice])
        const exchange = findExchange(instrument.exchange)
        const salt = saltOf(instrument.symbol)
        while (path.length <= k) {
          const step = path.length
          const prev = path[step - 1] as Price4
          const at = origin + step * BUCKET_MS
          if (exchange !== undefined && isOpen(exchange, at)) {
            const bps = (mix(seed, salt, step) % (2 * MAX_STEP_BPS + 1)) - MAX_STEP_BPS
            const next = Number((BigInt(prev) * BigInt(10_000 + bps) + 5_000n) / 10_000n)
            path.push(Math.max(1, next))
          } else {
            path.push(prev)
          }
        }
        return path
      }

      const observe = (instrument: Instrument, now: number) =>
        Effect.sync((): Observation => {
          const published = Math.max(0, Math.floor((now - DELAY_SECONDS * 1000 - origin) / BUCKET_MS))
          const path = pathAt(instrument, published).slice(0, published + 1)
          const pinned = pins.get(instrument.symbol)
          const price = pinned ?? (path[published] as Price4)
          const high = Math.max(price, ...path)
          const low = Math.min(price, ...path)
          return {
            price,
            open: path[0] as Price4,
            dayHigh: high,
            dayLow: low,
            previousClose: instrument.basePrice,
            volume: 1_000 + (mix(seed, saltOf(instrument.symbol), -published - 2) % 250_000),
            asOf: origin + published * BUCKET_MS
          }
        })

      return MarketFeed.of({ origin, observe, pin: (symbol, price) => Effect.sync(() => void pins.set(symbol, price)) })
    })

  /** The path starts at the engine clock's time when the feed is built. */
  static readonly layer = (seed: number) =>
    Layer.effect(
      MarketFeed,
      Effect.gen(function* () {
        const clock = yield* EngineClock
        return yield* MarketFeed.make(seed, yield* clock.now)
      })
    )
}
