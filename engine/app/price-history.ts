/**
 * PriceHistoryService: charts of a listing (`GET /stocks/{symbol}/candles`, `/stocks/{symbol}/history`,
 * `/market/ohlcv` and its `/market-data` alias; D-088, D-089, D-090, D-241, D-244). Every candle is built from the
 * MarketFeed's published steps, the same path quotes read, so a chart and a quote never disagree: the newest
 * candle's close is the quote's price at the same instant, and nothing younger than the 15-minute delay appears.
 * Owns the windows, the answers and their meta. Does not own the path or pins (sim/market-feed.ts), the candle
 * arithmetic (domain/candles.ts), nor symbol resolution (app/market.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { findExchange } from "../domain/calendar.ts"
import {
  aggregate,
  type Bar,
  type CandleInterval,
  DAY_MS,
  type DayWindow,
  gradeBars,
  INTRADAY,
  monthsBefore,
  resolveWindow,
  utcDate
} from "../domain/candles.ts"
import { type ApiFailure, liftFailure } from "../domain/errors.ts"
import type { Instrument } from "../domain/instruments.ts"
import { price4ToWire } from "../domain/money.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { MarketFeed } from "../sim/market-feed.ts"
import { Symbols } from "./symbols.ts"
import type { Principal } from "./principal.ts"

/** Longest windows (days, both ends counted) and default lengths (D-088, D-090). */
export const MAX_DAILY_DAYS = 366
export const MAX_INTRADAY_DAYS = 31
export const DEFAULT_DAILY_DAYS = 366
export const DEFAULT_INTRADAY_DAYS = 6
export const MAX_OHLCV_DAYS = 365

export type HistoryPeriod = "1W" | "1M" | "1MO" | "3MO" | "6MO" | "1Y" | "2Y" | "5Y"
export type OhlcvTimeframe = "1D" | "1W" | "1M"

export interface CandlesQuery {
  readonly interval?: CandleInterval | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly adjustment?: "raw" | undefined
  readonly exchange?: string | undefined
}

export interface OhlcvQuery {
  readonly symbol: string
  readonly exchange?: string | undefined
  readonly timeframe?: OhlcvTimeframe | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
}

/** First day of a named period ending on `today` (`1W` is the last 7 days, months are calendar months). */
export const periodFrom = (period: Exclude<HistoryPeriod, "1M">, today: number): number => {
  switch (period) {
    case "1W":
      return today - 6 * DAY_MS
    case "1MO":
      return monthsBefore(today, 1)
    case "3MO":
      return monthsBefore(today, 3)
    case "6MO":
      return monthsBefore(today, 6)
    case "1Y":
      return monthsBefore(today, 12)
    case "2Y":
      return monthsBefore(today, 24)
    case "5Y":
      return monthsBefore(today, 60)
  }
}

const nullable = (bar: Bar) => ({ open: price4ToWire(bar.open), high: price4ToWire(bar.high), low: price4ToWire(bar.low), close: price4ToWire(bar.close) })

export class PriceHistoryService extends Context.Service<
  PriceHistoryService,
  {
    readonly candles: (principal: Principal, symbol: string, query: CandlesQuery) => Effect.Effect<Schemas["CandlesResponse"], ApiFailure>
    readonly history: (symbol: string, period: HistoryPeriod, exchange?: string) => Effect.Effect<Schemas["PriceHistoryResponse"], ApiFailure>
    readonly ohlcv: (query: OhlcvQuery) => Effect.Effect<Schemas["OhlcvResponse"], ApiFailure>
  }
>()("sokoni/PriceHistoryService") {
  static readonly make = Effect.gen(function* () {
    const feed = yield* MarketFeed
    const clock = yield* EngineClock
    const symbols = yield* Symbols
    // Request ids of the OHLCV meta count this engine's answers; they draw nothing from the seeded generator, so a
    // chart read leaves every other id of a run as it was (E-120).
    let requests = 0

    /** The bars of a window as published now, and the observation instant of the newest (null without bars). */
    const barsOf = (instrument: Instrument, window: DayWindow, interval: CandleInterval, now: number) =>
      Effect.gen(function* () {
        const end = window.to + DAY_MS - 1
        const steps = yield* feed.steps(instrument, window.from, end, now)
        const bars = aggregate(steps, interval)
        const published = yield* feed.observe(instrument, now)
        const last = bars.at(-1)
        // The newest bar is observed at the latest publication when the window reaches it (an end-of-day pass after
        // the bar's last step), else at its own last step.
        const asOf = last === undefined ? null : published.asOf <= end ? published.asOf : last.lastAt
        return { bars, asOf }
      })

    const candles = Effect.fn("PriceHistoryService.candles")(function* (principal: Principal, symbol: string, query: CandlesQuery) {
      const instrument = yield* liftFailure(symbols.resolve(symbol, query.exchange))
      const interval = query.interval ?? "1d"
      const intraday = INTRADAY.includes(interval)
      const now = yield* clock.nowHere()
      const today = Math.floor(now / DAY_MS) * DAY_MS
      const window = yield* liftFailure(
        resolveWindow(query, today, intraday ? DEFAULT_INTRADAY_DAYS : DEFAULT_DAILY_DAYS, intraday ? MAX_INTRADAY_DAYS : MAX_DAILY_DAYS)
      )
      const { bars, asOf } = yield* barsOf(instrument, window, interval, now)
      const quality = gradeBars(bars)
      const published = yield* feed.observe(instrument, now)
      const answer: Schemas["CandlesResponse"] = {
        symbol: instrument.symbol,
        name: instrument.name,
        exchange: instrument.exchange,
        currency: findExchange(instrument.exchange)?.currency ?? "USD",
        interval,
        adjustment: "raw",
        candles: bars.map((b) => ({
          timestamp: isoAt(b.start),
          ...nullable(b),
          volume: b.volume,
          ohlcAvailable: true,
          volumeAvailable: true
        })),
        meta: {
          from: utcDate(window.from),
          to: utcDate(window.to),
          count: bars.length,
          source: intraday ? "delayed_intraday" : "delayed_eod",
          asOf: asOf === null ? null : isoAt(asOf),
          ...quality,
          adjusted: false,
          sandbox: principal.environment === "sandbox",
          coverageStartsAt: utcDate(feed.coverageStart),
          coverageEndsAt: utcDate(published.asOf),
          historyConfidence: bars.length === 0 ? "low" : window.from < feed.coverageStart ? "medium" : "high"
        }
      }
      return answer
    })

    const history = Effect.fn("PriceHistoryService.history")(function* (symbol: string, asked: HistoryPeriod, exchange?: string) {
      const instrument = yield* liftFailure(symbols.resolve(symbol, exchange))
      const period = asked === "1M" ? "1MO" : asked
      const now = yield* clock.nowHere()
      const today = Math.floor(now / DAY_MS) * DAY_MS
      const { bars, asOf } = yield* barsOf(instrument, { from: periodFrom(period, today), to: today }, "1d", now)
      const answer: Schemas["PriceHistoryResponse"] = {
        symbol: instrument.symbol,
        exchange: instrument.exchange,
        currency: findExchange(instrument.exchange)?.currency ?? "USD",
        period,
        candles: bars.map((b) => ({ date: utcDate(b.start), ...nullable(b), price: price4ToWire(b.close), volume: b.volume })),
        count: bars.length,
        asOf: asOf === null ? null : isoAt(asOf)
      }
      return answer
    })

    const ohlcv = Effect.fn("PriceHistoryService.ohlcv")(function* (query: OhlcvQuery) {
      const instrument = yield* liftFailure(symbols.resolve(query.symbol, query.exchange))
      const timeframe = query.timeframe ?? "1D"
      const interval: CandleInterval = timeframe === "1D" ? "1d" : timeframe === "1W" ? "1w" : "1mo"
      const now = yield* clock.nowHere()
      const window = yield* liftFailure(resolveWindow(query, Math.floor(now / DAY_MS) * DAY_MS, MAX_OHLCV_DAYS, MAX_OHLCV_DAYS))
      const { bars } = yield* barsOf(instrument, window, interval, now)
      const requestId = `req_${String(++requests).padStart(4, "0")}`
      const answer: Schemas["OhlcvResponse"] = {
        data: bars.map((b) => ({ timestamp: isoAt(b.start), ...nullable(b), volume: b.volume })),
        meta: {
          request_id: requestId,
          timestamp: isoAt(now),
          exchange: instrument.exchange,
          symbol: instrument.symbol,
          timeframe,
          interval: interval as "1d" | "1w" | "1mo",
          from: utcDate(window.from),
          to: utcDate(window.to),
          count: bars.length,
          ohlc_available: bars.length > 0
        }
      }
      return answer
    })

    return PriceHistoryService.of({ candles, history, ohlcv })
  })

  static readonly layer = Layer.effect(PriceHistoryService, PriceHistoryService.make)
}
