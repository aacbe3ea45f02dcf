/**
 * Price history: `GET /stocks/{symbol}/candles`, `/stocks/{symbol}/history`, `/market/ohlcv` and its `/market-data`
 * alias (D-088, D-089, D-090, D-241, D-244). Charts come from the path quotes read: the newest candle's close is the
 * quote's price at the same instant, every interval agrees with the 15-minute candles it is made of, candles exist
 * only where the exchange was open, nothing younger than the 15-minute delay appears, and a pin shows in a chart when
 * it shows in a quote. The harness checks every answer against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { findExchange, isOpen } from "../../engine/domain/calendar.ts"
import { PROD, expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

const NSE = findExchange("NSE")!
const DAY = 86_400_000
const at = (iso: string) => Date.parse(iso)
/** Whether the exchange is open at some 15-minute instant of the UTC day starting at `day`. */
const tradesOn = (day: number) => Array.from({ length: 96 }, (_, i) => day + i * 900_000).some((t) => isOpen(NSE, t))

let p: PartnerEngine
beforeEach(async () => {
  p = await partnerEngine()
})
afterEach(() => p.dispose())

const advanceTo = async (iso: string) => expect((await p.engine.admin("POST", "/_sim/clock/advance", { to: iso })).status).toBe(200)
const ok = async (path: string, key?: string, base?: string) => {
  const r = await p.get(path, key, base)
  expect(r.status, JSON.stringify(r.body)).toBe(200)
  return r.body
}
/** The daily candle a set of finer candles makes. */
const merge = (cs: ReadonlyArray<any>) => ({
  open: cs[0].open,
  high: Math.max(...cs.map((c) => c.high)),
  low: Math.min(...cs.map((c) => c.low)),
  close: cs.at(-1).close,
  volume: cs.reduce((s, c) => s + c.volume, 0)
})

describe("GET /stocks/{symbol}/candles", () => {
  it("answers a year of daily candles by default, only on trading days, each opening at the previous close", async () => {
    const r = await ok("/stocks/SCOM/candles")
    expect(r).toMatchObject({ symbol: "SCOM.KE", name: expect.any(String), exchange: "NSE", currency: "KES", interval: "1d", adjustment: "raw" })
    expect(r.meta).toMatchObject({
      from: "2025-11-23",
      to: "2026-11-23",
      count: r.candles.length,
      source: "delayed_eod",
      ohlcQuality: "full",
      ohlcAvailable: true,
      ohlcCoveragePct: 100,
      volumeAvailable: true,
      volumeStatus: "available",
      zeroVolumePct: 0,
      qualityStatus: "good",
      qualityIssues: [],
      recommendedChartType: "candlestick",
      adjusted: false,
      sandbox: true,
      coverageEndsAt: "2026-11-23",
      historyConfidence: "high"
    })
    expect(r.meta.coverageStartsAt < "2021-11-23").toBe(true)
    // about 261 weekdays a year less NSE's 9-12 public holidays on weekdays; each candle's day is one it trades on
    expect(r.candles.length).toBeGreaterThan(245)
    expect(r.candles.length).toBeLessThan(263)
    for (const [i, c] of r.candles.entries()) {
      const day = at(c.timestamp)
      expect(day % DAY).toBe(0)
      expect(tradesOn(day), c.timestamp).toBe(true)
      expect(c.high).toBeGreaterThanOrEqual(Math.max(c.open, c.close))
      expect(c.low).toBeLessThanOrEqual(Math.min(c.open, c.close))
      expect([c.ohlcAvailable, c.volumeAvailable, c.volume > 0]).toEqual([true, true, true])
      if (i > 0) expect(c.open).toBe(r.candles[i - 1].close)
    }
  })

  it("ends with the quote: the newest candle's close and asOf are the quote's at the same instant, as time passes", async () => {
    for (const now of ["2026-11-23T08:00:00.000Z", "2026-11-23T10:37:00.000Z", "2026-11-23T19:00:00.000Z", "2026-11-25T06:20:00.000Z"]) {
      await advanceTo(now)
      const item = await ok("/stocks/SCOM.KE")
      for (const interval of ["15m", "1h", "1d", "1w", "1mo"]) {
        const r = await ok(`/stocks/SCOM.KE/candles?interval=${interval}`)
        expect(r.candles.at(-1).close, `${interval} at ${now}`).toBe(item.price)
        expect(r.meta.asOf).toBe(item.asOf)
        expect(at(r.candles.at(-1).timestamp)).toBeLessThanOrEqual(at(now) - 900_000)
      }
      const day = (await ok("/stocks/SCOM.KE/candles?interval=1d")).candles.at(-1)
      expect([day.open, day.high, day.low, day.volume]).toEqual([item.open, item.dayHigh, item.dayLow, item.volume])
      expect(item.previousClose).toBe(day.open)
    }
  })

  it("defaults intraday windows to the last 6 days and daily ones to the last 366", async () => {
    await advanceTo("2026-11-25T10:00:00.000Z")
    for (const interval of ["15m", "1h"]) {
      expect((await ok(`/stocks/SCOM.KE/candles?interval=${interval}`)).meta).toMatchObject({ from: "2026-11-20", to: "2026-11-25" })
    }
    expect((await ok("/stocks/SCOM.KE/candles?interval=1w")).meta).toMatchObject({ from: "2025-11-25", to: "2026-11-25" })
    expect((await ok("/stocks/SCOM.KE/candles?interval=15m&to=2026-11-10")).meta).toMatchObject({ from: "2026-11-05", to: "2026-11-10" })
  })

  it("builds every interval from the same 15-minute candles, which sit on the session's refresh instants", async () => {
    await advanceTo("2026-11-27T20:00:00.000Z")
    const q = "from=2026-11-23&to=2026-11-27"
    const m15 = (await ok(`/stocks/SCOM.KE/candles?interval=15m&${q}`)).candles
    expect(m15).toHaveLength(5 * 24)
    for (const c of m15) expect(isOpen(NSE, at(c.timestamp)), c.timestamp).toBe(true)
    for (const [interval, key] of [
      ["1h", (t: number) => Math.floor(t / 3_600_000)],
      ["1d", (t: number) => Math.floor(t / DAY)],
      ["1w", () => 0]
    ] as const) {
      const groups = new Map<number, Array<any>>()
      for (const c of m15) groups.set(key(at(c.timestamp)), [...(groups.get(key(at(c.timestamp))) ?? []), c])
      const coarse = (await ok(`/stocks/SCOM.KE/candles?interval=${interval}&${q}`)).candles
      expect(
        coarse.map((c: any) => ({ open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume })),
        interval
      ).toEqual([...groups.values()].map(merge))
    }
    const week = (await ok(`/stocks/SCOM.KE/candles?interval=1w&${q}`)).candles
    expect(week.map((c: any) => c.timestamp)).toEqual(["2026-11-23T00:00:00.000Z"])
    const months = (await ok("/stocks/SCOM.KE/candles?interval=1mo&from=2026-01-15&to=2026-11-27")).candles
    expect(months.map((c: any) => c.timestamp.slice(0, 10))).toEqual(Array.from({ length: 11 }, (_, i) => `2026-${String(i + 1).padStart(2, "0")}-01`))
  })

  it("dates a past window at its newest candle's last step, and says medium confidence for a window reaching before the coverage", async () => {
    const week = await ok("/stocks/SCOM.KE/candles?interval=1h&from=2026-11-16&to=2026-11-20")
    expect(week.meta).toMatchObject({ asOf: "2026-11-20T11:45:00.000Z", source: "delayed_intraday", count: 5 * 6, historyConfidence: "high" })
    const start = at((await ok("/stocks/SCOM.KE/candles?from=2015-01-01&to=2015-01-01")).meta.coverageStartsAt)
    const iso = (t: number) => new Date(t).toISOString().slice(0, 10)
    const straddling = await ok(`/stocks/SCOM.KE/candles?from=${iso(start - 30 * DAY)}&to=${iso(start + 30 * DAY)}`)
    expect(straddling.meta.count).toBeGreaterThan(15)
    expect(straddling.meta.historyConfidence).toBe("medium")
    expect(at(straddling.candles[0].timestamp)).toBeGreaterThanOrEqual(start)
  })

  it("has no candle while the exchange is closed: none on a weekend, none after the close, none in the future", async () => {
    await advanceTo("2026-11-29T12:00:00.000Z")
    const weekend = await ok("/stocks/SCOM.KE/candles?interval=15m&from=2026-11-28&to=2026-11-29")
    expect(weekend.candles).toEqual([])
    expect(weekend.meta).toMatchObject({ count: 0, asOf: null, ohlcAvailable: false, qualityStatus: "poor", recommendedChartType: "line" })
    expect(weekend.meta.historyConfidence).toBe("low")
    const friday = (await ok("/stocks/SCOM.KE/candles?interval=15m&from=2026-11-27&to=2026-11-27")).candles
    expect(friday.at(-1).timestamp).toBe("2026-11-27T11:45:00.000Z")
    expect((await ok("/stocks/SCOM.KE/candles?from=2026-12-01&to=2026-12-31")).candles).toEqual([])
    const before = await ok("/stocks/SCOM.KE/candles?from=2015-01-01&to=2015-12-31")
    expect([before.meta.count, before.meta.historyConfidence]).toEqual([0, "low"])
  })

  it("shows a pinned price once the quote does, and leaves the published past alone", async () => {
    await advanceTo("2026-11-23T08:05:00.000Z")
    const earlier = (await ok("/stocks/SCOM.KE/candles?interval=15m&from=2026-11-23&to=2026-11-23")).candles
    await p.engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: 40 })
    await advanceTo("2026-11-23T08:29:00.000Z")
    expect((await ok("/stocks/SCOM.KE/candles?interval=15m&from=2026-11-23&to=2026-11-23")).candles.at(-1).close).not.toBe(40)
    await advanceTo("2026-11-23T08:30:00.000Z")
    const later = (await ok("/stocks/SCOM.KE/candles?interval=15m&from=2026-11-23&to=2026-11-23")).candles
    expect(later.at(-1)).toMatchObject({ timestamp: "2026-11-23T08:15:00.000Z", close: 40 })
    expect(later.slice(0, earlier.length)).toEqual(earlier)
    expect((await ok("/stocks/SCOM.KE")).price).toBe(40)
  })

  it("says sandbox false on production, with the same candles", async () => {
    const sandbox = await ok("/stocks/SCOM.KE/candles?interval=1h")
    const production = await ok("/stocks/SCOM.KE/candles?interval=1h", p.keys.liveKey, PROD)
    expect(production.meta.sandbox).toBe(false)
    expect(production.candles).toEqual(sandbox.candles)
  })

  it("refuses bad windows, intervals, adjustments and symbols with the contract's errors", async () => {
    expectError(await p.get("/stocks/SCOM.KE/candles?from=2026-11-20&to=2026-11-19"), 400, "VALIDATION_ERROR", "from")
    expectError(await p.get("/stocks/SCOM.KE/candles?from=2025-11-22&to=2026-11-23"), 400, "VALIDATION_ERROR", "from")
    expect((await p.get("/stocks/SCOM.KE/candles?from=2025-11-23&to=2026-11-23")).status).toBe(200)
    expectError(await p.get("/stocks/SCOM.KE/candles?interval=15m&from=2026-10-22&to=2026-11-22"), 400, "VALIDATION_ERROR", "from")
    expect((await p.get("/stocks/SCOM.KE/candles?interval=1h&from=2026-10-23&to=2026-11-22")).status).toBe(200)
    expectError(await p.get("/stocks/SCOM.KE/candles?adjustment=split"), 400, "VALIDATION_ERROR", "adjustment")
    expectError(await p.get("/stocks/SCOM.KE/candles?interval=2h"), 400, "VALIDATION_ERROR", "interval")
    expectError(await p.get("/stocks/SCOM.KE/candles?from=2026-02-30"), 400, "VALIDATION_ERROR", "from")
    expect((await p.get("/stocks/SCOM.KE/candles?from=2026-02-30")).body.error.message).toBe(
      'from must be a date on the calendar (YYYY-MM-DD), got "2026-02-30"'
    )
    expectError(await p.get("/stocks/SCOM.KE/candles?to=2026-11-23T00:00:00Z"), 400, "VALIDATION_ERROR", "to")
    expectError(await p.get("/stocks/bad!sym/candles"), 400, "INVALID_SYMBOL", "symbol")
    expectError(await p.get("/stocks/ZZZZ/candles"), 404, "NOT_FOUND")
    expectError(await p.get("/stocks/SCOM/candles?exchange=XXX"), 400, "UNKNOWN_EXCHANGE", "exchange")
  })
})

describe("GET /stocks/{symbol}/history", () => {
  it("answers daily points over a named period, equal to the daily candles, price = close, 1M as 1MO", async () => {
    await advanceTo("2026-11-25T14:00:00.000Z")
    const h = await ok("/stocks/SCOM.KE/history?period=3MO")
    expect(h).toMatchObject({ symbol: "SCOM.KE", exchange: "NSE", currency: "KES", period: "3MO", count: h.candles.length })
    const candles = (await ok("/stocks/SCOM.KE/candles?from=2026-08-25&to=2026-11-25")).candles
    expect(h.candles).toEqual(
      candles.map((c: any) => ({ date: c.timestamp.slice(0, 10), open: c.open, high: c.high, low: c.low, close: c.close, price: c.close, volume: c.volume }))
    )
    const item = await ok("/stocks/SCOM.KE")
    expect([h.candles.at(-1).price, h.asOf]).toEqual([item.price, item.asOf])
    const month = await ok("/stocks/SCOM.KE/history?period=1M")
    expect(month).toEqual({ ...(await ok("/stocks/SCOM.KE/history?period=1MO")), period: "1MO" })
    expect(month.period).toBe("1MO")
    expect(month.candles[0].date).toBe("2026-10-26") // 25 Oct 2026 is a Sunday
    expect((await ok("/stocks/SCOM.KE/history?period=1W")).candles.map((c: any) => c.date)).toEqual([
      "2026-11-19",
      "2026-11-20",
      "2026-11-23",
      "2026-11-24",
      "2026-11-25"
    ])
    // each period's first day, Wednesday 25 Nov 2026 back by calendar months (weekends have no point)
    for (const [period, first] of [
      ["6MO", "2026-05-25"],
      ["1Y", "2025-11-25"],
      ["2Y", "2024-11-25"]
    ] as const) {
      expect((await ok(`/stocks/SCOM.KE/history?period=${period}`)).candles[0].date, period).toBe(first)
    }
    const year = await ok("/stocks/SCOM.KE/history")
    expect([year.period, year.candles[0].date]).toEqual(["1Y", "2025-11-25"])
  })

  it("reaches five years back", async () => {
    const h = await ok("/stocks/NPN.ZA/history?period=5Y")
    expect(h.candles[0].date).toBe("2021-11-23")
    expect(h.count).toBeGreaterThan(5 * 255)
  })

  it("refuses an unknown period and a bad symbol", async () => {
    expectError(await p.get("/stocks/SCOM.KE/history?period=2W"), 400, "VALIDATION_ERROR", "period")
    expectError(await p.get("/stocks/bad!sym/history"), 400, "INVALID_SYMBOL")
    expectError(await p.get("/stocks/ZZZZ/history"), 404, "NOT_FOUND")
  })
})

describe("GET /market/ohlcv (and /market-data/ohlcv)", () => {
  it("answers end-of-day bars of the last 365 days by default, with the snake_case meta, the same as candles", async () => {
    const r = await ok("/market/ohlcv?symbol=SCOM")
    expect(r.meta).toMatchObject({
      timestamp: "2026-11-23T08:00:00.000Z",
      exchange: "NSE",
      symbol: "SCOM.KE",
      timeframe: "1D",
      interval: "1d",
      from: "2025-11-24",
      to: "2026-11-23",
      count: r.data.length,
      ohlc_available: true
    })
    expect(r.meta.request_id).toMatch(/^req_/)
    const candles = (await ok("/stocks/SCOM.KE/candles?from=2025-11-24&to=2026-11-23")).candles
    expect(r.data).toEqual(candles.map((c: any) => ({ timestamp: c.timestamp, open: c.open, high: c.high, low: c.low, close: c.close, volume: c.volume })))
    const alias = await ok("/market-data/ohlcv?symbol=SCOM")
    expect(alias.data).toEqual(r.data)
    expect(alias.meta.request_id).not.toBe(r.meta.request_id)
  })

  it("answers weekly and monthly bars", async () => {
    const weeks = await ok("/market/ohlcv?symbol=SCOM.KE&timeframe=1W&from=2026-11-02&to=2026-11-23")
    expect(weeks.data.map((b: any) => b.timestamp.slice(0, 10))).toEqual(["2026-11-02", "2026-11-09", "2026-11-16", "2026-11-23"])
    expect(weeks.meta).toMatchObject({ timeframe: "1W", interval: "1w", count: 4 })
    const months = await ok("/market/ohlcv?symbol=SCOM.KE&exchange=NSE&timeframe=1M&from=2026-09-01&to=2026-11-23")
    expect(months.meta).toMatchObject({ timeframe: "1M", interval: "1mo", count: 3 })
    const future = await ok("/market/ohlcv?symbol=SCOM.KE&from=2026-12-01&to=2026-12-31")
    expect([future.data, future.meta.count, future.meta.ohlc_available]).toEqual([[], 0, false])
  })

  it("refuses a missing symbol, a window over 365 days or reversed, and a bad timeframe", async () => {
    for (const base of ["/market/ohlcv", "/market-data/ohlcv"]) {
      expectError(await p.get(base), 400, "MISSING_PARAM", "symbol")
      expectError(await p.get(`${base}?symbol=SCOM&from=2025-11-23&to=2026-11-23`), 400, "VALIDATION_ERROR", "from")
      expectError(await p.get(`${base}?symbol=SCOM&from=2026-11-23&to=2026-11-01`), 400, "VALIDATION_ERROR", "from")
      expectError(await p.get(`${base}?symbol=SCOM&timeframe=1H`), 400, "VALIDATION_ERROR", "timeframe")
      expectError(await p.get(`${base}?symbol=b@d`), 400, "INVALID_SYMBOL")
      expectError(await p.get(`${base}?symbol=ZZZZ`), 404, "NOT_FOUND")
    }
  })
})
