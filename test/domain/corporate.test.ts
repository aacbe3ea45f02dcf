/**
 * The integer arithmetic of corporate actions (D-303): a split loses no unit and no value (whole units plus a
 * fraction paid in cash), a dividend and cash in lieu round once, and rescaled cost-basis units keep their ratio.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { cashInLieuCents, dividendCents, scaleUnits, splitUnits } from "../../engine/domain/corporate.ts"

describe("corporate action arithmetic", () => {
  it("property: a split keeps every old unit as whole new units plus a fraction below one new unit", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), (units, from, to) => {
        const s = splitUnits(units, from, to)
        expect(s.units * from + s.fraction).toBe(units * to)
        expect(s.fraction).toBeGreaterThanOrEqual(0)
        expect(s.fraction).toBeLessThan(from)
      })
    )
  })

  it("splits, consolidates and issues bonus units as the ratios say", () => {
    expect(splitUnits(100, 1, 2)).toEqual({ units: 200, fraction: 0 })
    expect(splitUnits(200, 3, 1)).toEqual({ units: 66, fraction: 2 })
    expect(splitUnits(7, 10, 11)).toEqual({ units: 7, fraction: 7 })
  })

  it("converts a dividend and a fraction to USD cents, rounding half up once", () => {
    // 100 x KES 1.50 at 129.25 KES/USD = USD 1.16054...
    expect(dividendCents(100, 15_000, 129_250_000)).toBe(116)
    // 7 x 1.50 / 129.25 = 0.08123...
    expect(dividendCents(7, 15_000, 129_250_000)).toBe(8)
    // 2/3 of a new unit after a 1-for-3 consolidation of a KES 20 share: 2 x 20 / 1 = KES 40 = USD 0.3094...
    expect(cashInLieuCents(2, 1, 200_000, 129_250_000)).toBe(31)
    // Half a cent rounds up: 1 unit of USD 0.005 at rate 1.
    expect(dividendCents(1, 50, 1_000_000)).toBe(1)
  })

  it("property: rescaled units keep their ratio, reduced", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), (units, from, to) => {
        const r = scaleUnits(units, 1, from, to)
        expect(r.units * from).toBe(units * to * r.per)
        const back = scaleUnits(r.units, r.per, to, from)
        expect(back).toEqual({ units, per: 1 })
      })
    )
  })
})
