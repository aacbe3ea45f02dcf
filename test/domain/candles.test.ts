/**
 * The candle arithmetic (domain/candles.ts, D-241, D-244): period starts, grouping steps into candles, the windows the
 * history endpoints accept, and the grading of a series. Expected values are written out by hand.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { aggregate, daysIn, gradeBars, monthsBefore, periodStart, type PriceStep, resolveWindow } from "../../engine/domain/candles.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"

const at = (iso: string) => Date.parse(iso)
const day = (iso: string) => at(`${iso}T00:00:00.000Z`)

describe("periodStart", () => {
  it("cuts UTC slots, days, Monday weeks and calendar months", () => {
    const t = at("2026-11-26T10:37:12.345Z") // a Thursday
    expect(new Date(periodStart(t, "15m")).toISOString()).toBe("2026-11-26T10:30:00.000Z")
    expect(new Date(periodStart(t, "1h")).toISOString()).toBe("2026-11-26T10:00:00.000Z")
    expect(new Date(periodStart(t, "1d")).toISOString()).toBe("2026-11-26T00:00:00.000Z")
    expect(new Date(periodStart(t, "1w")).toISOString()).toBe("2026-11-23T00:00:00.000Z")
    expect(new Date(periodStart(t, "1mo")).toISOString()).toBe("2026-11-01T00:00:00.000Z")
    expect(new Date(periodStart(at("2026-11-23T00:00:00.000Z"), "1w")).toISOString()).toBe("2026-11-23T00:00:00.000Z")
    expect(new Date(periodStart(at("2026-11-29T23:59:59.999Z"), "1w")).toISOString()).toBe("2026-11-23T00:00:00.000Z")
    expect(new Date(periodStart(at("1969-12-31T12:00:00.000Z"), "1w")).toISOString()).toBe("1969-12-29T00:00:00.000Z")
  })
})

describe("aggregate", () => {
  const steps: Array<PriceStep> = [
    { at: at("2026-11-23T06:00:00.000Z"), before: 100, price: 104, volume: 5 },
    { at: at("2026-11-23T06:15:00.000Z"), before: 104, price: 98, volume: 7 },
    { at: at("2026-11-23T07:00:00.000Z"), before: 98, price: 99, volume: 1 },
    { at: at("2026-11-24T06:00:00.000Z"), before: 99, price: 97, volume: 2 }
  ]

  it("opens a candle at the price before its first step and closes it after its last, high and low over both", () => {
    expect(aggregate(steps, "1h")).toEqual([
      { start: at("2026-11-23T06:00:00.000Z"), open: 100, high: 104, low: 98, close: 98, volume: 12, lastAt: at("2026-11-23T06:15:00.000Z") },
      { start: at("2026-11-23T07:00:00.000Z"), open: 98, high: 99, low: 98, close: 99, volume: 1, lastAt: at("2026-11-23T07:00:00.000Z") },
      { start: at("2026-11-24T06:00:00.000Z"), open: 99, high: 99, low: 97, close: 97, volume: 2, lastAt: at("2026-11-24T06:00:00.000Z") }
    ])
    expect(aggregate(steps, "1w")).toEqual([{ start: day("2026-11-23"), open: 100, high: 104, low: 97, close: 97, volume: 15, lastAt: steps[3]!.at }])
  })

  it("leaves periods without a step out, and has no candle without steps", () => {
    expect(aggregate(steps, "15m").map((b) => new Date(b.start).toISOString().slice(11, 16))).toEqual(["06:00", "06:15", "07:00", "06:00"])
    expect(aggregate([], "1d")).toEqual([])
  })

  it("gives the same daily candles whether built from steps or from their 15-minute candles (property)", () => {
    const walk = fc.array(fc.record({ gap: fc.integer({ min: 1, max: 200 }), price: fc.integer({ min: 1, max: 1_000 }), volume: fc.nat(50) }), {
      maxLength: 200
    })
    fc.assert(
      fc.property(walk, (moves) => {
        let t = day("2026-11-23")
        let prev = 500
        const path: Array<PriceStep> = moves.map((m) => {
          t += m.gap * 900_000
          const s = { at: t, before: prev, price: m.price, volume: m.volume }
          prev = m.price
          return s
        })
        const fine = aggregate(path, "15m").map((b) => ({ at: b.start, before: b.open, price: b.close, volume: b.volume, high: b.high, low: b.low }))
        const daily = aggregate(path, "1d")
        const fromFine = aggregate(fine, "1d")
        expect(fromFine.map((b) => [b.start, b.open, b.close, b.volume])).toEqual(daily.map((b) => [b.start, b.open, b.close, b.volume]))
        for (const [i, b] of daily.entries()) {
          if (i > 0) expect(b.open).toBe(daily[i - 1]!.close)
          expect(b.high).toBe(Math.max(...fine.filter((f) => periodStart(f.at, "1d") === b.start).map((f) => f.high)))
        }
      }),
      { numRuns: 200 }
    )
  })
})

describe("windows", () => {
  const today = day("2026-11-23")

  it("defaults to a window of the default length ending today, and counts both ends", () => {
    expect(resolveWindow({}, today, 366, 366)).toEqual({ from: day("2025-11-23"), to: today })
    expect(resolveWindow({ to: day("2026-01-10") }, today, 6, 31)).toEqual({ from: day("2026-01-05"), to: day("2026-01-10") })
    expect(resolveWindow({ from: day("2026-11-01") }, today, 6, 31)).toEqual({ from: day("2026-11-01"), to: today })
    expect(daysIn({ from: today, to: today })).toBe(1)
    expect(daysIn({ from: day("2024-02-28"), to: day("2024-03-01") })).toBe(3)
  })

  it("refuses a reversed window and one longer than the limit, naming from", () => {
    const reversed = resolveWindow({ from: day("2026-11-24"), to: today }, today, 6, 31)
    expect(reversed).toBeInstanceOf(ApiFailure)
    expect(reversed).toMatchObject({ code: "VALIDATION_ERROR", extras: { param: "from" } })
    expect(resolveWindow({ from: day("2026-10-23"), to: today }, today, 6, 31)).toBeInstanceOf(ApiFailure)
    expect(resolveWindow({ from: day("2026-10-24"), to: today }, today, 6, 31)).toEqual({ from: day("2026-10-24"), to: today })
    expect(resolveWindow({ from: day("2026-10-23"), to: today }, today, 6, 31)).toMatchObject({ extras: { param: "from", max: 31 } })
  })

  it("goes back calendar months, clamped to the month's last day", () => {
    expect(monthsBefore(day("2026-11-23"), 3)).toBe(day("2026-08-23"))
    expect(monthsBefore(day("2026-03-31"), 1)).toBe(day("2026-02-28"))
    expect(monthsBefore(day("2024-03-31"), 1)).toBe(day("2024-02-29"))
    expect(monthsBefore(day("2026-01-15"), 12)).toBe(day("2025-01-15"))
    expect(monthsBefore(day("2026-11-23"), 60)).toBe(day("2021-11-23"))
  })
})

describe("gradeBars", () => {
  const bar = (open: number, high: number, low: number, close: number, volume = 10) => ({ start: 0, open, high, low, close, volume, lastAt: 0 })

  it("is good with few flat candles, degraded when half or more are flat, poor without candles", () => {
    expect(gradeBars([bar(1, 2, 1, 2), bar(2, 2, 2, 2), bar(2, 3, 1, 1)])).toMatchObject({
      ohlcQuality: "full",
      flatCandlePct: 33.33,
      qualityStatus: "good",
      qualityIssues: [],
      recommendedChartType: "candlestick"
    })
    expect(gradeBars([bar(1, 2, 1, 2), bar(2, 2, 2, 2)])).toMatchObject({
      flatCandlePct: 50,
      qualityStatus: "degraded",
      qualityIssues: ["flat_candles"],
      recommendedChartType: "line"
    })
    expect(gradeBars([])).toEqual({
      ohlcQuality: "close_only",
      ohlcAvailable: false,
      ohlcCoveragePct: 0,
      flatCandlePct: 0,
      volumeAvailable: false,
      volumeCoveragePct: 0,
      volumeStatus: "unavailable",
      zeroVolumePct: 0,
      qualityStatus: "poor",
      qualityIssues: ["no_data"],
      recommendedChartType: "line"
    })
    expect(gradeBars([bar(1, 2, 1, 2, 0), bar(1, 2, 1, 2)]).zeroVolumePct).toBe(50)
  })
})
