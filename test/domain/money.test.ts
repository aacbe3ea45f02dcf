/**
 * Unit and property tests of engine/domain/money.ts. Every expectation is computed independently: exact rationals
 * on bigint with a rounding routine of our own (quotient/remainder, not the engine's formula), literal tables, or
 * plain string manipulation for the decimal formatting.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  BASE_FEE_BPS,
  bpsOf,
  centsToWire,
  divRound,
  fees,
  formatScaled,
  grossCents,
  grossOfNotional,
  parseScaled,
  price4ToWire,
  quantityForCash,
  rate6ToWire,
  toWireNumber,
  usdPrice4
} from "../../engine/domain/money.ts"

const RUNS = 300
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER)

// ---------------------------------------------------------------------------------------------------------------
// Independent reference arithmetic
// ---------------------------------------------------------------------------------------------------------------

const abs = (v: bigint): bigint => (v < 0n ? -v : v)

/** Exact num/den rounded half away from zero, by quotient and remainder (compare 2*remainder with the divisor). */
const refRound = (num: bigint, den: bigint): bigint => {
  const sign = num < 0n !== den < 0n ? -1n : 1n
  const n = abs(num)
  const d = abs(den)
  let q = n / d
  const r = n % d
  if (2n * r >= d) q += 1n
  return sign * q
}

/** Cents of `quantity` units at `price4` local with `rate6` local per USD: q * (p/10^4) / (r/10^6) * 100 = q*p*10^4/r. */
const refGross = (quantity: number, price4: number, rate6: number): bigint => refRound(BigInt(quantity) * BigInt(price4) * 10_000n, BigInt(rate6))

/** 1/10^4 USD of one unit: (p/10^4) / (r/10^6) * 10^4 = p*10^6/r. */
const refUsdPrice4 = (price4: number, rate6: number): bigint => refRound(BigInt(price4) * 1_000_000n, BigInt(rate6))

const refBps = (gross: bigint, bps: number): bigint => refRound(gross * BigInt(bps), 10_000n)

/** BUY total (gross + base fee + markup fee, each fee rounded on its own) for `q` units. */
const refBuyCost = (q: number, price4: number, rate6: number, markupBps: number): bigint => {
  const gross = refGross(q, price4, rate6)
  return gross + refBps(gross, 75) + (markupBps === 0 ? 0n : refBps(gross, markupBps))
}

/** Largest q >= 0 whose BUY total fits in `cash`, by exponential + binary search on the monotone cost. */
const refQuantityForCash = (cash: number, price4: number, rate6: number, markupBps: number): number => {
  const fits = (q: number) => refBuyCost(q, price4, rate6, markupBps) <= BigInt(cash)
  let hi = 1
  while (fits(hi)) hi *= 2
  let lo = 0 // fits(0) always (cost 0)
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (fits(mid)) lo = mid
    else hi = mid
  }
  return lo
}

/** Decimal text of `value` scaled by 10^decimals, built digit by digit from the integer's own string. */
const refDecimal = (value: bigint, decimals: number): string => {
  const negative = value < 0n
  let digits = abs(value).toString()
  while (digits.length <= decimals) digits = `0${digits}`
  const cut = digits.length - decimals
  const body = decimals === 0 ? digits : `${digits.slice(0, cut)}.${digits.slice(cut)}`
  return negative ? `-${body}` : body
}

/** Shortest JS text of the same decimal: trailing fractional zeros (and a bare dot) removed, "-0" -> "0". */
const shortest = (text: string): string => {
  let t = text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text
  if (t === "-0") t = "0"
  return t
}

// ---------------------------------------------------------------------------------------------------------------
// divRound
// ---------------------------------------------------------------------------------------------------------------

describe("divRound", () => {
  it("rounds half away from zero in every sign combination", () => {
    const table: ReadonlyArray<readonly [bigint, bigint, bigint]> = [
      [5n, 2n, 3n],
      [-5n, 2n, -3n],
      [5n, -2n, -3n],
      [-5n, -2n, 3n],
      [7n, 2n, 4n],
      [-7n, 2n, -4n],
      [1n, 2n, 1n],
      [-1n, 2n, -1n],
      [3n, 2n, 2n],
      [-3n, 2n, -2n],
      [15n, 10n, 2n],
      [-15n, 10n, -2n],
      [25n, 10n, 3n],
      [-25n, 10n, -3n]
    ]
    for (const [n, d, expected] of table) expect(divRound(n, d), `${n}/${d}`).toBe(expected)
  })

  it("rounds non-ties to the nearest integer", () => {
    const table: ReadonlyArray<readonly [bigint, bigint, bigint]> = [
      [1n, 3n, 0n],
      [2n, 3n, 1n],
      [-1n, 3n, 0n],
      [-2n, 3n, -1n],
      [14n, 10n, 1n],
      [16n, 10n, 2n],
      [-14n, 10n, -1n],
      [-16n, 10n, -2n],
      [0n, 7n, 0n],
      [0n, -7n, 0n],
      [12n, 4n, 3n],
      [-12n, 4n, -3n],
      [499n, 1000n, 0n],
      [500n, 1000n, 1n],
      [-500n, 1000n, -1n]
    ]
    for (const [n, d, expected] of table) expect(divRound(n, d), `${n}/${d}`).toBe(expected)
  })

  it("is exact on very large bigints", () => {
    const big = 10n ** 40n
    expect(divRound(big * 3n + 1n, 2n)).toBe((big * 3n) / 2n + 1n) // (3*10^40 + 1)/2 = 1.5*10^40 + 0.5 -> up
    expect(divRound(-(big * 3n + 1n), 2n)).toBe(-((big * 3n) / 2n + 1n))
    expect(divRound(big * 7n - 1n, big)).toBe(7n)
  })

  it("throws on division by zero", () => {
    expect(() => divRound(1n, 0n)).toThrow(RangeError)
    expect(() => divRound(0n, 0n)).toThrow(RangeError)
  })

  it("property: matches the quotient/remainder reference for any signs", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), (n, d) => {
        fc.pre(d !== 0n)
        expect(divRound(n, d)).toBe(refRound(n, d))
      }),
      { numRuns: RUNS }
    )
  })

  it("property: result is within half a unit, and ties land away from zero", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 12n), max: 10n ** 12n }), fc.bigInt({ min: 1n, max: 10n ** 6n }), fc.boolean(), (n, d0, flip) => {
        const d = flip ? -d0 : d0
        const r = divRound(n, d)
        const error2 = abs(2n * (n - r * d)) // 2 * |n - r*d|
        expect(error2 <= abs(d)).toBe(true)
        if (error2 === abs(d)) expect(abs(r * d) > abs(n)).toBe(true)
      }),
      { numRuns: RUNS }
    )
  })

  it("property: exact ties (odd multiple of d/2) always round away from zero", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n }), fc.bigInt({ min: 1n, max: 10n ** 6n }), (k, half) => {
        // n/d = k + 1/2 exactly with d = 2*half, n = (2k+1)*half
        const d = 2n * half
        const n = (2n * k + 1n) * half
        const expected = k >= 0n ? k + 1n : k // away from zero: k+0.5 -> k+1 (k>=0); k+0.5 with k<0 -> k (e.g. -0.5 -> -1 when k=-1)
        expect(divRound(n, d)).toBe(expected)
      }),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// usdPrice4 and grossCents
// ---------------------------------------------------------------------------------------------------------------

describe("usdPrice4", () => {
  it("converts known prices", () => {
    // 18 KES at 129.25 KES/USD = 0.13926499... USD -> 1392.6499... in 1e-4 USD -> 1393
    expect(usdPrice4(180_000, 129_250_000)).toBe(1393)
    // 1 USD at rate 1 is 10000 in 1e-4 USD
    expect(usdPrice4(10_000, 1_000_000)).toBe(10_000)
    // 3900 ZAR at 17.85 = 218.4873949... USD -> 2184873.949... -> 2184874
    expect(usdPrice4(39_000_000, 17_850_000)).toBe(2_184_874)
    // exact tie: 0.00005 local at rate 1 = 0.5 of 1e-4 USD -> 1
    expect(usdPrice4(1, 2_000_000)).toBe(1)
    expect(usdPrice4(1, 2_000_001)).toBe(0)
  })

  it("property: equals the exact rational price*1e6/rate rounded half up", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000_000 }), fc.integer({ min: 1, max: 1_000_000_000 }), (price4, rate6) => {
        const expected = refUsdPrice4(price4, rate6)
        if (expected > MAX_SAFE) expect(() => usdPrice4(price4, rate6)).toThrow(RangeError)
        else expect(usdPrice4(price4, rate6)).toBe(Number(expected))
      }),
      { numRuns: RUNS }
    )
  })
})

describe("grossCents", () => {
  it("converts known amounts", () => {
    // 100 x 18 KES / 129.25 KES/USD = 13.926499... USD = 1392.6499... cents -> 1393
    expect(grossCents(100, 180_000, 129_250_000)).toBe(1393)
    // 1 x 0.005 USD = half a cent -> rounds up to 1 cent
    expect(grossCents(1, 50, 1_000_000)).toBe(1)
    expect(grossCents(1, 49, 1_000_000)).toBe(0)
    // 10 x 3900 ZAR / 17.85 = 2184.8739... USD -> 218487.39 cents -> 218487
    expect(grossCents(10, 39_000_000, 17_850_000)).toBe(218_487)
    expect(grossCents(0, 180_000, 129_250_000)).toBe(0)
  })

  it("rounds once on the total, not per unit", () => {
    // one unit is 0.4 cents (rounds to 0), three units are 1.2 cents (rounds to 1)
    expect(grossCents(1, 40, 1_000_000)).toBe(0)
    expect(grossCents(3, 40, 1_000_000)).toBe(1)
  })

  it("property: equals the exact rational q*p*1e4/rate rounded half up (or throws beyond the safe range)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        (quantity, price4, rate6) => {
          const expected = refGross(quantity, price4, rate6)
          if (expected > MAX_SAFE) expect(() => grossCents(quantity, price4, rate6)).toThrow(RangeError)
          else expect(grossCents(quantity, price4, rate6)).toBe(Number(expected))
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("property: realistic rates never leave the safe range and match the reference", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 100_000, max: 1_000_000_000 }),
        (quantity, price4, rate6) => {
          expect(grossCents(quantity, price4, rate6)).toBe(Number(refGross(quantity, price4, rate6)))
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("property: grossOfNotional(q * p) equals grossCents(q, p) and the exact rational", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 100_000, max: 1_000_000_000 }),
        (quantity, price4, rate6) => {
          const expected = Number(refGross(quantity, price4, rate6))
          expect(grossOfNotional(BigInt(quantity) * BigInt(price4), rate6)).toBe(expected)
        }
      ),
      { numRuns: RUNS }
    )
    // a notional mixing two prices: 1 x 0.0050 + 1 x 0.0001 USD = 0.51 cents -> 1 cent
    expect(grossOfNotional(51n, 1_000_000)).toBe(1)
    expect(grossOfNotional(49n, 1_000_000)).toBe(0)
  })

  it("throws a RangeError when the amount is not a safe integer", () => {
    // 1e6 units at 1e5 local at rate 1e-6: astronomically many cents
    expect(() => grossCents(1_000_000, 1_000_000_000, 1)).toThrow(RangeError)
  })
})

// ---------------------------------------------------------------------------------------------------------------
// fees
// ---------------------------------------------------------------------------------------------------------------

describe("fees", () => {
  it("base fee is 75 bps", () => {
    expect(BASE_FEE_BPS).toBe(75)
  })

  it("rounds the base fee half away from zero", () => {
    expect(fees(10_000, 0)).toEqual({ baseFee: 75, partnerMarkupFee: 0, fee: 75 })
    expect(fees(200, 0).baseFee).toBe(2) // 1.5 -> 2
    expect(fees(66, 0).baseFee).toBe(0) // 0.495 -> 0
    expect(fees(67, 0).baseFee).toBe(1) // 0.5025 -> 1
    expect(fees(0, 0)).toEqual({ baseFee: 0, partnerMarkupFee: 0, fee: 0 })
    expect(fees(1393, 0).baseFee).toBe(10) // 10.4475 -> 10
  })

  it("adds a separately rounded partner markup", () => {
    // gross 1393, markup 50 bps: 6.965 -> 7; base 10.4475 -> 10; total 17
    expect(fees(1393, 50)).toEqual({ baseFee: 10, partnerMarkupFee: 7, fee: 17 })
    // gross 200, markup 25 bps: 0.5 -> 1 (tie away from zero); base 1.5 -> 2
    expect(fees(200, 25)).toEqual({ baseFee: 2, partnerMarkupFee: 1, fee: 3 })
  })

  it("bpsOf rounds a tie away from zero", () => {
    expect(bpsOf(200, 25)).toBe(1)
    expect(bpsOf(199, 25)).toBe(0)
  })

  it("property: baseFee = round(0.75% of gross), fee = baseFee + partnerMarkupFee, markup 0 gives 0", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), fc.integer({ min: 0, max: 1_000 }), (gross, markupBps) => {
        const f = fees(gross, markupBps)
        expect(f.baseFee).toBe(Number(refBps(BigInt(gross), 75)))
        expect(f.partnerMarkupFee).toBe(markupBps === 0 ? 0 : Number(refBps(BigInt(gross), markupBps)))
        expect(f.fee).toBe(f.baseFee + f.partnerMarkupFee)
        expect(fees(gross, 0).partnerMarkupFee).toBe(0)
        expect(fees(gross, 0).fee).toBe(f.baseFee)
      }),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// quantityForCash
// ---------------------------------------------------------------------------------------------------------------

describe("quantityForCash", () => {
  it("finds the largest affordable quantity for a realistic NSE order", () => {
    // SCOM at 18 KES, 129.25 KES/USD, 100 USD: 712 units cost 9990 cents, 713 cost 10004
    expect(quantityForCash(10_000, 180_000, 129_250_000, 0)).toBe(712)
    expect(refBuyCost(712, 180_000, 129_250_000, 0)).toBe(9990n)
    expect(refBuyCost(713, 180_000, 129_250_000, 0)).toBe(10004n)
  })

  it("accounts for the partner markup", () => {
    // with 100 bps markup on top of the base fee, the answer is the largest q with gross + base + markup <= cash
    const q = quantityForCash(10_000, 180_000, 129_250_000, 100)
    expect(refBuyCost(q, 180_000, 129_250_000, 100) <= 10_000n).toBe(true)
    expect(refBuyCost(q + 1, 180_000, 129_250_000, 100) > 10_000n).toBe(true)
    expect(q).toBe(refQuantityForCash(10_000, 180_000, 129_250_000, 100))
  })

  it("returns 0 when not even one unit fits", () => {
    expect(quantityForCash(100, 180_000, 1_000_000, 0)).toBe(0) // one unit costs 18.14 USD
    expect(quantityForCash(0, 180_000, 129_250_000, 0)).toBe(0)
  })

  it("returns the exact answer when the cash is exactly the cost of q units", () => {
    // 1 USD per unit at rate 1, 0 markup: q units cost 100q + round(0.75q). 4 units cost 403 cents.
    expect(refBuyCost(4, 10_000, 1_000_000, 0)).toBe(403n)
    expect(quantityForCash(403, 10_000, 1_000_000, 0)).toBe(4)
    expect(quantityForCash(402, 10_000, 1_000_000, 0)).toBe(3)
  })

  // Regression: an earlier version started counting down from floor(cash / grossCents(1, ...)), a per-unit price
  // already rounded to the cent, and under-bought whenever one unit rounded up by more than the fee.
  it("buys the most units when the one-unit price rounds up (1.6 cents/unit, 10 USD)", () => {
    // 0.016 USD per unit: grossCents(1) = 2, start = 500; but 620 units cost 992 + 7 = 999 cents <= 1000
    expect(refQuantityForCash(1000, 160, 1_000_000, 0)).toBe(620)
    expect(quantityForCash(1000, 160, 1_000_000, 0)).toBe(620) // the old version bought 500
  })

  // Regression: when one unit is worth less than half a cent, grossCents(1, ...) is 0 and the old version returned 0,
  // although many units are affordable (e.g. a 0.20 KES penny stock at 129.25 KES/USD with 100 USD).
  it("buys units worth under half a cent each", () => {
    const expected = refQuantityForCash(10_000, 2_000, 129_250_000, 0)
    expect(expected).toBeGreaterThan(60_000)
    expect(quantityForCash(10_000, 2_000, 129_250_000, 0)).toBe(expected) // actual: 0
  })

  it("property: q fits and q+1 does not, for unit prices of at least one dollar", () => {
    // Restricted to unit prices >= 100 cents, where the rounding of one unit cannot exceed the fee (the regression tests above cover smaller units).
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 1, max: 1_000_000_000 }),
        fc.integer({ min: 1_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 500 }),
        (cash, price4, rate6, markupBps) => {
          fc.pre(refGross(1, price4, rate6) >= 100n)
          const q = quantityForCash(cash, price4, rate6, markupBps)
          expect(Number.isSafeInteger(q) && q >= 0).toBe(true)
          expect(refBuyCost(q, price4, rate6, markupBps) <= BigInt(cash)).toBe(true)
          expect(refBuyCost(q + 1, price4, rate6, markupBps) > BigInt(cash)).toBe(true)
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("property: q fits and q+1 does not, for any unit price", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 100_000 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.integer({ min: 1_000_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 500 }),
        (cash, price4, rate6, markupBps) => {
          const q = quantityForCash(cash, price4, rate6, markupBps)
          expect(refBuyCost(q, price4, rate6, markupBps) <= BigInt(cash)).toBe(true)
          expect(refBuyCost(q + 1, price4, rate6, markupBps) > BigInt(cash)).toBe(true)
        }
      ),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// formatScaled, toWireNumber, parseScaled
// ---------------------------------------------------------------------------------------------------------------

describe("formatScaled", () => {
  it("formats known values", () => {
    expect(formatScaled(0, 2)).toBe("0.00")
    expect(formatScaled(5, 2)).toBe("0.05")
    expect(formatScaled(-5, 2)).toBe("-0.05")
    expect(formatScaled(12345, 2)).toBe("123.45")
    expect(formatScaled(-12345, 4)).toBe("-1.2345")
    expect(formatScaled(1, 6)).toBe("0.000001")
    expect(formatScaled(129_250_000, 6)).toBe("129.250000")
    expect(formatScaled(42, 0)).toBe("42")
    expect(formatScaled(-42, 0)).toBe("-42")
    expect(formatScaled(10n ** 20n + 7n, 4)).toBe("10000000000000000.0007")
  })

  it("property: equals the digit-by-digit reference", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 25n), max: 10n ** 25n }), fc.integer({ min: 0, max: 8 }), (v, decimals) => {
        expect(formatScaled(v, decimals)).toBe(refDecimal(v, decimals))
      }),
      { numRuns: RUNS }
    )
  })

  // A safe integer is written without a BigInt (E-410): the same text as its BigInt, at the edges too.
  it("property: a safe integer number formats as its BigInt does", () => {
    const edges = fc.constantFrom(0, -0, 1, -1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 999_999, -100_000_000)
    fc.assert(
      fc.property(fc.oneof(fc.maxSafeInteger(), edges), fc.integer({ min: 0, max: 8 }), (v, decimals) => {
        expect(formatScaled(v, decimals)).toBe(refDecimal(BigInt(v), decimals))
      }),
      { numRuns: RUNS }
    )
  })
})

describe("toWireNumber", () => {
  it("converts known values", () => {
    expect(centsToWire(1393)).toBe(13.93)
    expect(centsToWire(-5)).toBe(-0.05)
    expect(centsToWire(10)).toBe(0.1)
    expect(centsToWire(0)).toBe(0)
    expect(price4ToWire(1393)).toBe(0.1393)
    expect(rate6ToWire(129_250_000)).toBe(129.25)
    expect(toWireNumber(30, 2)).toBe(0.3) // 0.1 + 0.2 !== 0.3, but 30 cents is exactly the double 0.3
  })

  // A safe integer is divided, not written out and parsed (E-410): the same double as parsing its exact decimal text.
  it("property: a safe integer gives the number its decimal text parses to", () => {
    expect(Object.is(toWireNumber(-0, 2), 0)).toBe(true)
    fc.assert(
      fc.property(fc.maxSafeInteger(), fc.integer({ min: 0, max: 8 }), (v, decimals) => {
        expect(toWireNumber(v, decimals)).toBe(Number(refDecimal(BigInt(v), decimals)))
      }),
      { numRuns: RUNS }
    )
  })

  it("property: cents become exactly the double nearest to cents/100", () => {
    // |cents| < 10^15 keeps every value within 15 significant digits, which doubles represent unambiguously.
    fc.assert(
      fc.property(fc.integer({ min: -(10 ** 15 - 1), max: 10 ** 15 - 1 }), (cents) => {
        const wire = toWireNumber(cents, 2)
        expect(wire).toBe(cents / 100) // IEEE division is correctly rounded: the nearest double to the exact value
        expect(String(wire)).toBe(shortest(refDecimal(BigInt(cents), 2)))
        expect(centsToWire(cents)).toBe(wire)
      }),
      { numRuns: RUNS }
    )
  })

  it("property: small cent amounts print exactly (no binary artefacts)", () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000, max: 10_000_000 }), (cents) => {
        expect(JSON.stringify(centsToWire(cents))).toBe(shortest(refDecimal(BigInt(cents), 2)))
      }),
      { numRuns: RUNS }
    )
  })
})

describe("parseScaled", () => {
  it("parses known values", () => {
    expect(parseScaled(13.93, 2)).toBe(1393)
    expect(parseScaled(0.1, 2)).toBe(10)
    expect(parseScaled(-0.05, 2)).toBe(-5)
    expect(parseScaled(100, 2)).toBe(10_000)
    expect(parseScaled(0, 2)).toBe(0)
    expect(parseScaled(129.25, 6)).toBe(129_250_000)
    expect(parseScaled(0.000001, 6)).toBe(1)
    expect(parseScaled(7, 0)).toBe(7)
  })

  it("rejects more decimals than allowed", () => {
    expect(parseScaled(13.935, 2)).toBeUndefined()
    expect(parseScaled(0.001, 2)).toBeUndefined()
    expect(parseScaled(1.5, 0)).toBeUndefined()
    expect(parseScaled(0.12345, 4)).toBeUndefined()
    expect(parseScaled(0.1 + 0.2, 2)).toBeUndefined() // 0.30000000000000004
  })

  it("rejects non-finite numbers", () => {
    expect(parseScaled(Number.NaN, 2)).toBeUndefined()
    expect(parseScaled(Number.POSITIVE_INFINITY, 2)).toBeUndefined()
    expect(parseScaled(Number.NEGATIVE_INFINITY, 2)).toBeUndefined()
  })

  it("rejects values whose scaled integer is not safe, and exponent notation", () => {
    expect(parseScaled(1e21, 2)).toBeUndefined()
    expect(parseScaled(9_007_199_254_740_991, 2)).toBeUndefined()
    expect(parseScaled(1e-7, 8)).toBeUndefined() // prints as "1e-7"
  })

  it("property: rejects any value with one decimal too many", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1_000_000_000, max: 1_000_000_000 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 5 }),
        (whole, last, decimals) => {
          // whole units, then `decimals` zero digits, then a non-zero digit: decimals+1 significant decimals
          const text = `${whole < 0 ? "-" : ""}${Math.abs(whole)}.${"0".repeat(decimals)}${last}`
          expect(parseScaled(Number(text), decimals)).toBeUndefined()
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("property: parseScaled(toWireNumber(v, d), d) round-trips v", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 6 }).chain((decimals) => fc.tuple(fc.constant(decimals), fc.integer({ min: -(10 ** 15 - 1), max: 10 ** 15 - 1 }))),
        ([decimals, v]) => {
          expect(parseScaled(toWireNumber(v, decimals), decimals)).toBe(v)
        }
      ),
      { numRuns: RUNS }
    )
  })

  it("property: parseScaled(Number(formatScaled(v, d)), d) round-trips with the text", () => {
    fc.assert(
      fc.property(fc.integer({ min: -10_000_000_000, max: 10_000_000_000 }), fc.constantFrom(2, 4, 6), (v, decimals) => {
        const text = formatScaled(v, decimals)
        expect(text).toBe(refDecimal(BigInt(v), decimals))
        expect(parseScaled(Number(text), decimals)).toBe(v)
      }),
      { numRuns: RUNS }
    )
  })
})
