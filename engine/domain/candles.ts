/**
 * Candles: the pure arithmetic of price history. Groups the feed's steps (one per open 900 s refresh instant) into
 * candles of an interval, resolves the date windows the history endpoints accept, and grades a series' coverage.
 * Pure: time comes in as arguments. Does not own the steps (sim/market-feed.ts) nor the wire shapes
 * (app/price-history.ts).
 *
 * A step at instant `at` moves the price from `before` to `price`; a candle holds the steps whose instants fall in
 * its period: open = the price before its first step, close = the price after its last, high and low over both
 * (D-241). So a candle exists only where the exchange was open, consecutive candles join (a candle opens at the
 * previous one's close), and the newest candle's close is the latest published price.
 */
import { type ApiFailure, fail } from "./errors.ts"

export const DAY_MS = 86_400_000
export type CandleInterval = "15m" | "1h" | "1d" | "1w" | "1mo"
export const INTRADAY: ReadonlyArray<CandleInterval> = ["15m", "1h"]

export interface PriceStep {
  readonly at: number
  readonly before: number
  readonly price: number
  readonly volume: number
}

export interface Bar {
  /** Start of the period (UTC): the 15-minute or hour slot, 00:00 of the day, the Monday of the week, the 1st of the month. */
  readonly start: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: number
  /** Instant of the last step in the bar. */
  readonly lastAt: number
}

/** Start of the period of `interval` containing `at`. Weeks start on Monday; days and months are UTC. */
export const periodStart = (at: number, interval: CandleInterval): number => {
  switch (interval) {
    case "15m":
      return Math.floor(at / 900_000) * 900_000
    case "1h":
      return Math.floor(at / 3_600_000) * 3_600_000
    case "1d":
      return Math.floor(at / DAY_MS) * DAY_MS
    case "1w": {
      const day = Math.floor(at / DAY_MS)
      // 1970-01-01 was a Thursday: (day + 3) % 7 days have passed since Monday.
      return (day - ((((day + 3) % 7) + 7) % 7)) * DAY_MS
    }
    case "1mo": {
      const d = new Date(at)
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
    }
  }
}

/** Candles of `interval` from steps in time order; periods without a step have no candle. */
export const aggregate = (steps: ReadonlyArray<PriceStep>, interval: CandleInterval): Array<Bar> => {
  const bars: Array<Bar> = []
  let current: { start: number; open: number; high: number; low: number; close: number; volume: number; lastAt: number } | undefined
  for (const s of steps) {
    const start = periodStart(s.at, interval)
    if (current === undefined || current.start !== start) {
      if (current !== undefined) bars.push(current)
      current = { start, open: s.before, high: Math.max(s.before, s.price), low: Math.min(s.before, s.price), close: s.price, volume: 0, lastAt: s.at }
    }
    current.high = Math.max(current.high, s.before, s.price)
    current.low = Math.min(current.low, s.before, s.price)
    current.close = s.price
    current.volume += s.volume
    current.lastAt = s.at
  }
  if (current !== undefined) bars.push(current)
  return bars
}

/** `YYYY-MM-DD` of an instant (UTC). */
export const utcDate = (at: number): string => new Date(at).toISOString().slice(0, 10)

/** The same UTC day `months` calendar months earlier (clamped to the month's last day: 31 Mar - 1 month = 28/29 Feb). */
export const monthsBefore = (day: number, months: number): number => {
  const d = new Date(day)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth() - months
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  return Date.UTC(y, m, Math.min(d.getUTCDate(), last))
}

/** An inclusive window of whole UTC days: `from` and `to` are the 00:00 instants of its first and last day. */
export interface DayWindow {
  readonly from: number
  readonly to: number
}

/** Days in a window, both ends counted. */
export const daysIn = (w: DayWindow): number => Math.round((w.to - w.from) / DAY_MS) + 1

/**
 * The window a request asks for: `to` defaults to today, `from` to `defaultDays` - 1 days before `to` (so the default
 * window is `defaultDays` long); `from` after `to`, or more than `maxDays` days, is 400 VALIDATION_ERROR on `from`.
 */
export const resolveWindow = (
  asked: { readonly from?: number | undefined; readonly to?: number | undefined },
  today: number,
  defaultDays: number,
  maxDays: number
): DayWindow | ApiFailure => {
  const to = asked.to ?? today
  const from = asked.from ?? to - (defaultDays - 1) * DAY_MS
  if (from > to) return fail("VALIDATION_ERROR", `from (${utcDate(from)}) must not be after to (${utcDate(to)})`, { param: "from" })
  const window = { from, to }
  if (daysIn(window) > maxDays) {
    return fail("VALIDATION_ERROR", `the window from ${utcDate(from)} to ${utcDate(to)} covers ${daysIn(window)} days; at most ${maxDays}`, {
      param: "from",
      max: maxDays
    })
  }
  return window
}

/** Coverage and quality of a series (CandlesMeta's grading fields; D-244). */
export interface Quality {
  readonly ohlcQuality: "full" | "partial" | "close_only"
  readonly ohlcAvailable: boolean
  readonly ohlcCoveragePct: number
  readonly flatCandlePct: number
  readonly volumeAvailable: boolean
  readonly volumeCoveragePct: number
  readonly volumeStatus: "available" | "partial" | "unavailable"
  readonly zeroVolumePct: number
  readonly qualityStatus: "good" | "degraded" | "poor"
  readonly qualityIssues: Array<string>
  readonly recommendedChartType: "candlestick" | "line"
}

const pct = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part * 10_000) / whole) / 100)

/**
 * Every simulated candle has a real open, high, low and volume (the feed captures every open refresh), so coverage is
 * all or nothing; what varies is how many candles are flat (open = high = low = close). Half or more flat, the series
 * is `degraded` and drawn as a line; no candle at all is `poor`.
 */
export const gradeBars = (bars: ReadonlyArray<Bar>): Quality => {
  const n = bars.length
  const flat = bars.filter((b) => b.open === b.high && b.high === b.low && b.low === b.close).length
  const zero = bars.filter((b) => b.volume === 0).length
  const flatCandlePct = pct(flat, n)
  const issues: Array<string> = []
  if (n === 0) issues.push("no_data")
  if (n > 0 && flatCandlePct >= 50) issues.push("flat_candles")
  const qualityStatus = n === 0 ? "poor" : issues.length > 0 ? "degraded" : "good"
  return {
    ohlcQuality: n === 0 ? "close_only" : "full",
    ohlcAvailable: n > 0,
    ohlcCoveragePct: n === 0 ? 0 : 100,
    flatCandlePct,
    volumeAvailable: n > 0,
    volumeCoveragePct: n === 0 ? 0 : 100,
    volumeStatus: n === 0 ? "unavailable" : "available",
    zeroVolumePct: pct(zero, n),
    qualityStatus,
    qualityIssues: issues,
    recommendedChartType: qualityStatus === "good" ? "candlestick" : "line"
  }
}
