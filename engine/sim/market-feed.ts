/**
 * MarketFeed: seeded price paths for the catalogue's instruments, published the way the spec describes: the exchange
 * is observed on the 900 s refresh grid while it is open, plus an end-of-day pass at the close, and every observation
 * is published 15 minutes after it was made. Prices move only while the instrument's exchange is open.
 * Owns: the path (integer arithmetic, one step per open 900 s instant, a seeded history before the run), the
 * captures and what is published at an instant, pins (the operator setting an exchange's price), the intraday steps
 * charts are built from. Does not own: listing/filtering (app/market.ts), candles (domain/candles.ts,
 * app/price-history.ts), FX (domain/fx.ts), alert evaluation (domain/alerts/, app/price-alerts/).
 *
 * Time is cut into 900 s instants `origin + k * 900 s` (k any integer, negative before the run). At an open instant k
 * the path takes one step (or, from a pin's instant on, holds the pinned price: D-240); the value at k is the
 * exchange's price from k until the next step. `path[0]` is the instrument's base price; the history before it is
 * walked backwards with the same seeded steps, so a chart of the past year and a quote come from one path.
 * Same seed + same origin = same prices.
 */
import { Context, Effect, Layer } from "effect"
import { type Exchange, findExchange, isOpen } from "../domain/calendar.ts"
import type { Instrument } from "../domain/instruments.ts"
import type { Price4 } from "../domain/money.ts"
import { EngineClock } from "./clock.ts"
import { type FeedMemory, feedMemory } from "./durable-time.ts"

export const REFRESH_SECONDS = 900
export const DELAY_SECONDS = 900
export const STALE_AFTER_SECONDS = 1800
export const BUCKET_MS = REFRESH_SECONDS * 1000
const DELAY_MS = DELAY_SECONDS * 1000
const DAY_MS = 86_400_000
/** How far the seeded history reaches before the run's origin: the longest history period (5Y) and a week (D-242). */
export const HISTORY_DAYS = 5 * 366 + 7
const HISTORY_BUCKETS = (HISTORY_DAYS * DAY_MS) / BUCKET_MS
/** Largest move of one step, in basis points either way. */
const MAX_STEP_BPS = 30
/** Long histories kept at once (a listing's 5 years is ~175,000 values); older ones are dropped and walked again. */
const MAX_LONG_HISTORIES = 32
/** What a dropped history keeps: two weeks, enough for quotes near the run's start. */
const SHORT_HISTORY_BUCKETS = (14 * DAY_MS) / BUCKET_MS
/** A pin takes effect at the exchange's next open instant; looked for this far ahead (then the next instant). */
const PIN_SEARCH_BUCKETS = (31 * DAY_MS) / BUCKET_MS

export interface Observation {
  readonly price: Price4
  /** Open, high, low and volume of the observation's trading day so far (the day's candle, D-241). */
  readonly open: Price4
  readonly dayHigh: Price4
  readonly dayLow: Price4
  /** The previous trading day's close (the price before the day's first step). */
  readonly previousClose: Price4
  readonly volume: number
  /** Time of the exchange observation (not of the answer): a refresh while open or the end-of-day pass. */
  readonly asOf: number
  /** When the observation was published: `asOf` + the 15-minute delay. */
  readonly publishedAt: number
}

/** One move of the path: at an open instant `at`, from `before` to `price`, with the volume traded in that step. */
export interface Step {
  readonly at: number
  readonly before: Price4
  readonly price: Price4
  readonly volume: number
}

/** What a pin did: the price it set, the exchange instant it takes effect at, and when the API first shows it. */
export interface PinResult {
  /** The instant's index on the feed's path (what a restart replays: durable-time.ts). */
  readonly index: number
  readonly price: Price4
  readonly effectiveAt: number
  readonly visibleFrom: number
}

/** 32-bit mix of the seed, the instrument and the step: the path's only source of variation. */
const mix = (seed: number, salt: number, step: number): number => {
  let h = (seed ^ Math.imul(salt, 0x9e3779b1) ^ Math.imul(step + 1, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x7feb352d) >>> 0
  h = Math.imul(h ^ (h >>> 15), 0x846ca68b) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

const saltOf = (listingId: string): number => {
  let h = 2166136261
  for (let i = 0; i < listingId.length; i++) h = Math.imul(h ^ listingId.charCodeAt(i), 16777619) >>> 0
  return h
}

/** Values indexed by any integer k >= -HISTORY_BUCKETS, filled lazily outwards from 0 (k >= 0) and -1 (k < 0). */
class Line<A> {
  readonly up: Array<A> = []
  readonly down: Array<A> = []
}

export class MarketFeed extends Context.Service<
  MarketFeed,
  {
    readonly origin: number
    /** What the API shows at `now`: the latest observation made at or before `now` - 15 minutes. */
    readonly observe: (instrument: Instrument, now: number) => Effect.Effect<Observation>
    /** The path's steps at open instants in [from, to], as published at `now` (nothing younger than the delay). */
    readonly steps: (instrument: Instrument, from: number, to: number, now: number) => Effect.Effect<ReadonlyArray<Step>>
    /** First instant the feed holds a price for (the start of the seeded history). */
    readonly coverageStart: number
    /** Sets an instrument's exchange price at the engine's now (control API, scenarios); shown after the delay. */
    readonly pin: (instrument: Instrument, price: Price4) => Effect.Effect<PinResult>
    /**
     * A split, reverse split or bonus issue (D-303): from the exchange's next open instant the path continues from its
     * price x ratioFrom / ratioTo (earlier values, charts included, stay raw); shown after the delay like a pin.
     */
    readonly rescale: (instrument: Instrument, ratioFrom: number, ratioTo: number) => Effect.Effect<PinResult>
  }
>()("sokoni/MarketFeed") {
  /** A feed whose pins take effect at `now()` (the layer reads the engine clock; tests may pass any time source). */
  static readonly make = (
    seed: number,
    start: number,
    now: Effect.Effect<number> = Effect.succeed(start),
    options: { readonly maxLongHistories?: number; readonly replay?: Omit<FeedMemory, "origin"> } = {}
  ) =>
    Effect.sync(() => {
      const origin = Math.floor(start / BUCKET_MS) * BUCKET_MS
      const instant = (k: number) => origin + k * BUCKET_MS
      const minK = -HISTORY_BUCKETS
      const opens = new Map<string, Line<boolean>>()
      const paths = new Map<string, Line<Price4>>()
      /** Per listing (its stable id, D-340): instant index -> pinned price, and the earliest pinned index (the path holds from there on). */
      const pins = new Map<string, { readonly at: Map<number, Price4>; first: number }>()
      const observed = new Map<string, { readonly k: number; readonly observation: Observation }>()
      /** Per listing: instant index -> the ratio the price is rescaled by before that instant's step. */
      const scales = new Map<string, Map<number, { readonly ratioFrom: number; readonly ratioTo: number }>>()
      /** Listings whose walk before the run is long, least recently used first (E-121). */
      const longHistories = new Map<string, Line<Price4>>()

      /** Whether the exchange is open at instant k (cached per exchange: the calendar is pure). */
      const openAt = (exchange: Exchange | undefined, k: number): boolean => {
        if (exchange === undefined) return false
        let line = opens.get(exchange.code)
        if (line === undefined) {
          line = new Line<boolean>()
          opens.set(exchange.code, line)
        }
        const [arr, i] = k >= 0 ? [line.up, k] : [line.down, -k - 1]
        while (arr.length <= i) {
          const j = arr === line.up ? arr.length : -arr.length - 1
          arr.push(isOpen(exchange, instant(j)))
        }
        return arr[i] as boolean
      }
      /** An observation is made at every open instant, and at the first closed one after a session (end of day). */
      const capturedAt = (exchange: Exchange | undefined, k: number): boolean => exchange === undefined || openAt(exchange, k) || openAt(exchange, k - 1)

      const bpsAt = (seed: number, salt: number, k: number) => (mix(seed, salt, k) % (2 * MAX_STEP_BPS + 1)) - MAX_STEP_BPS
      const volumeAt = (salt: number, k: number) => 100 + (mix(seed ^ 0x5bd1e995, salt, k) % 20_000)

      /** Path value at instant k (the exchange's price from k to the next step). */
      const priceAt = (instrument: Instrument, k: number): Price4 => {
        let line = paths.get(instrument.id)
        if (line === undefined) {
          line = new Line<Price4>()
          line.up.push(pins.get(instrument.id)?.at.get(0) ?? instrument.basePrice)
          paths.set(instrument.id, line)
        }
        const exchange = findExchange(instrument.exchange)
        const salt = saltOf(instrument.id)
        if (k >= 0) {
          const path = line.up
          const pinned = pins.get(instrument.id)
          const scaled = scales.get(instrument.id)
          while (path.length <= k) {
            const step = path.length
            const ratio = scaled?.get(step)
            const last = path[step - 1] as Price4
            const prev = ratio === undefined ? last : Math.max(1, Math.floor((last * ratio.ratioFrom * 2 + ratio.ratioTo) / (2 * ratio.ratioTo)))
            const pin = pinned?.at.get(step)
            if (pin !== undefined) path.push(pin)
            else if (pinned !== undefined && pinned.first < step) path.push(prev)
            else if (openAt(exchange, step)) {
              const next = Math.floor((prev * (10_000 + bpsAt(seed, salt, step)) + 5_000) / 10_000)
              path.push(Math.max(1, next))
            } else path.push(prev)
          }
          return path[k] as Price4
        }
        // Before the run: walk back from path[0], undoing the step each open instant took.
        const path = line.down
        const i = -k - 1
        while (path.length <= i) {
          const j = -path.length - 1
          const next = (path.length === 0 ? instrument.basePrice : path[path.length - 1]) as Price4
          if (openAt(exchange, j + 1)) {
            const factor = 10_000 + bpsAt(seed, salt, j + 1)
            path.push(Math.max(1, Math.floor((next * 10_000 + Math.floor(factor / 2)) / factor)))
          } else path.push(next)
        }
        if (path.length > SHORT_HISTORY_BUCKETS) {
          // The walk back is a pure function of the seed: a dropped one is walked again when asked for.
          longHistories.delete(instrument.id)
          longHistories.set(instrument.id, line)
          for (const [symbol, old] of longHistories) {
            if (longHistories.size <= (options.maxLongHistories ?? MAX_LONG_HISTORIES)) break
            old.down.length = SHORT_HISTORY_BUCKETS
            longHistories.delete(symbol)
          }
        }
        return path[i] as Price4
      }

      /** The latest capture at or before time `t` (never before the history's start). */
      const captureBefore = (exchange: Exchange | undefined, t: number): number => {
        let k = Math.floor((t - origin) / BUCKET_MS)
        while (k > minK && !capturedAt(exchange, k)) k--
        return Math.max(k, minK)
      }

      const stepAt = (instrument: Instrument, salt: number, k: number): Step => ({
        at: instant(k),
        before: priceAt(instrument, k - 1),
        price: priceAt(instrument, k),
        volume: volumeAt(salt, k)
      })

      const observeAt = (instrument: Instrument, k: number): Observation => {
        const exchange = findExchange(instrument.exchange)
        const salt = saltOf(instrument.id)
        const price = priceAt(instrument, k)
        // The trading day of the observation: that of its last step (an end-of-day capture closes the day before it).
        const last = openAt(exchange, k) ? k : k - 1
        const dayStart = Math.floor(instant(last) / DAY_MS) * DAY_MS
        let open: Price4 = price
        let high: Price4 = price
        let low: Price4 = price
        let volume = 0
        if (openAt(exchange, last)) {
          for (let j = last; j > minK && instant(j) >= dayStart; j--) {
            if (!openAt(exchange, j)) continue
            const s = stepAt(instrument, salt, j)
            open = s.before
            high = Math.max(high, s.before, s.price)
            low = Math.min(low, s.before, s.price)
            volume += s.volume
          }
        }
        return { price, open, dayHigh: high, dayLow: low, previousClose: open, volume, asOf: instant(k), publishedAt: instant(k) + DELAY_MS }
      }

      const observe = (instrument: Instrument, now: number) =>
        Effect.sync((): Observation => {
          const k = captureBefore(findExchange(instrument.exchange), now - DELAY_MS)
          const cached = observed.get(instrument.id)
          if (cached !== undefined && cached.k === k) return cached.observation
          const observation = observeAt(instrument, k)
          observed.set(instrument.id, { k, observation })
          return observation
        })

      const steps = (instrument: Instrument, from: number, to: number, now: number) =>
        Effect.sync((): ReadonlyArray<Step> => {
          const exchange = findExchange(instrument.exchange)
          const salt = saltOf(instrument.id)
          const published = captureBefore(exchange, now - DELAY_MS)
          const first = Math.max(minK + 1, Math.ceil((from - origin) / BUCKET_MS))
          const last = Math.min(published, Math.floor((to - origin) / BUCKET_MS))
          const out: Array<Step> = []
          for (let k = first; k <= last; k++) if (openAt(exchange, k)) out.push(stepAt(instrument, salt, k))
          return out
        })

      /** The exchange's next open instant at or after `t` (or the instant of `t` when none within the search). */
      const nextOpenInstant = (exchange: Exchange | undefined, t: number, least: number) => {
        const from = Math.max(least, Math.ceil((t - origin) / BUCKET_MS))
        let k = from
        while (k < from + PIN_SEARCH_BUCKETS && !openAt(exchange, k)) k++
        return openAt(exchange, k) ? k : from
      }

      const rescaleAt = (instrumentId: string, k: number, ratioFrom: number, ratioTo: number) => {
        const entry = scales.get(instrumentId) ?? new Map<number, { readonly ratioFrom: number; readonly ratioTo: number }>()
        const prior = entry.get(k)
        entry.set(k, prior === undefined ? { ratioFrom, ratioTo } : { ratioFrom: prior.ratioFrom * ratioFrom, ratioTo: prior.ratioTo * ratioTo })
        scales.set(instrumentId, entry)
      }

      const rescale = (instrument: Instrument, ratioFrom: number, ratioTo: number) =>
        Effect.map(now, (t): PinResult => {
          // From instant 1 at the earliest: path[0] is the base price, never rescaled.
          const k = nextOpenInstant(findExchange(instrument.exchange), t, 1)
          rescaleAt(instrument.id, k, ratioFrom, ratioTo)
          const line = paths.get(instrument.id)
          if (line !== undefined && line.up.length > k) line.up.length = k
          observed.delete(instrument.id)
          const price = priceAt(instrument, k)
          return { index: k, price, effectiveAt: instant(k), visibleFrom: instant(k) + DELAY_MS }
        })

      const pinAt = (instrumentId: string, k: number, price: Price4) => {
        const entry = pins.get(instrumentId) ?? { at: new Map<number, Price4>(), first: k }
        entry.at.set(k, price)
        entry.first = Math.min(entry.first, k)
        pins.set(instrumentId, entry)
      }

      const pin = (instrument: Instrument, price: Price4) =>
        Effect.map(now, (t): PinResult => {
          const exchange = findExchange(instrument.exchange)
          const k = nextOpenInstant(exchange, t, Number.NEGATIVE_INFINITY)
          pinAt(instrument.id, k, price)
          // Nothing at or after k can have been published yet; drop any value computed ahead so the pin applies.
          const line = paths.get(instrument.id)
          if (line !== undefined && line.up.length > k) line.up.length = Math.max(1, k)
          if (line !== undefined && k === 0) line.up[0] = price
          observed.delete(instrument.id)
          return { index: k, price, effectiveAt: instant(k), visibleFrom: instant(k) + DELAY_MS }
        })

      // A restarted engine's feed: the marks made before, in the order they were made, before anything is computed.
      for (const mark of options.replay?.rescales ?? []) rescaleAt(mark.instrumentId, mark.k, mark.ratioFrom, mark.ratioTo)
      for (const mark of options.replay?.pins ?? []) pinAt(mark.instrumentId, mark.k, mark.price as Price4)
      return MarketFeed.of({ origin, observe, steps, coverageStart: instant(minK), pin, rescale })
    })

  /**
   * The path starts at the engine clock's time when the feed is first built on its store, and continues from there
   * after a restart, with the pins and rescales made before it (E-298); pins are set at the clock's now.
   */
  static readonly layer = (seed: number) =>
    Layer.effect(
      MarketFeed,
      Effect.gen(function* () {
        const clock = yield* EngineClock
        const memory = yield* feedMemory(yield* clock.nowHere())
        return yield* MarketFeed.make(seed, memory.origin, clock.now, { replay: memory })
      })
    )
}
