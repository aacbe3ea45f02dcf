/**
 * Unit tests of engine/domain/transfer.ts: the USD amount's precision and the partner-reported local leg
 * (recorded as given, the missing half derived, the reference rate only for a bare localCurrency).
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { transferAmounts } from "../../engine/domain/transfer.ts"

const refused = (input: Parameters<typeof transferAmounts>[0]) => {
  const r = transferAmounts(input)
  expect(r).toBeInstanceOf(ApiFailure)
  return r as ApiFailure
}

describe("transferAmounts", () => {
  it("takes a positive USD amount with at most 2 decimals", () => {
    expect(transferAmounts({ amount: 12.34 })).toEqual({ cents: 1234, local: null })
    expect(transferAmounts({ amount: 0.01 })).toEqual({ cents: 1, local: null })
    for (const amount of [0, -1, 1.001, Number.NaN]) {
      const f = refused({ amount })
      expect(f.code).toBe("VALIDATION_ERROR")
      expect(f.extras?.param).toBe("amount")
      expect(f.message).toBe("amount must be a positive USD amount with at most 2 decimals")
    }
  })

  it("needs localCurrency with localAmount or fxRate", () => {
    for (const input of [
      { amount: 1, localAmount: 100 },
      { amount: 1, fxRate: 100 }
    ]) {
      const f = refused(input)
      expect(f.extras?.param).toBe("localCurrency")
      expect(f.message).toBe("localCurrency is required with localAmount or fxRate")
    }
  })

  it("records both numbers as given", () => {
    expect(transferAmounts({ amount: 500, localAmount: 655000, localCurrency: "KES", fxRate: 1310 })).toEqual({
      cents: 50000,
      local: { amount4: 6_550_000_000, currency: "KES", rate: 1_310_000_000 }
    })
    // inconsistent numbers are the partner's to report: kept
    expect(transferAmounts({ amount: 1, localAmount: 5, localCurrency: "KES", fxRate: 7 })).toEqual({
      cents: 100,
      local: { amount4: 50_000, currency: "KES", rate: 7_000_000 }
    })
  })

  it("derives the local amount from the rate, rounded half away from zero to the local cent", () => {
    // 10.01 USD x 129.255 = 1293.84255 -> 1293.84
    expect(transferAmounts({ amount: 10.01, localCurrency: "KES", fxRate: 129.255 })).toEqual({
      cents: 1001,
      local: { amount4: 12_938_400, currency: "KES", rate: 129_255_000 }
    })
    // 0.01 x 0.5 = 0.005 -> 0.01
    expect(transferAmounts({ amount: 0.01, localCurrency: "XOF", fxRate: 0.5 })).toMatchObject({ local: { amount4: 100 } })
  })

  it("derives the rate from the local amount, to 6 decimals", () => {
    // 4650.5 / 3 = 1550.1666666... -> 1550.166667
    expect(transferAmounts({ amount: 3, localCurrency: "NGN", localAmount: 4650.5 })).toEqual({
      cents: 300,
      local: { amount4: 46_505_000, currency: "NGN", rate: 1_550_166_667 }
    })
  })

  it("uses the reference rate for a bare localCurrency, and refuses a currency without one", () => {
    expect(transferAmounts({ amount: 2, localCurrency: "ZAR" })).toEqual({ cents: 200, local: { amount4: 357_000, currency: "ZAR", rate: 17_850_000 } })
    const f = refused({ amount: 2, localCurrency: "XYZ" })
    expect(f.extras?.param).toBe("localCurrency")
    expect(f.message).toBe("no reference rate for XYZ: send the fxRate or the localAmount you applied")
  })

  it("refuses too many decimals, non-positive numbers, and a derived rate of zero", () => {
    expect(refused({ amount: 1, localCurrency: "KES", localAmount: 1.00001 }).extras?.param).toBe("localAmount")
    expect(refused({ amount: 1, localCurrency: "KES", localAmount: -1 }).extras?.param).toBe("localAmount")
    expect(refused({ amount: 1, localCurrency: "KES", localAmount: 0 }).message).toBe("localAmount must be positive with at most 4 decimals")
    expect(refused({ amount: 1, localCurrency: "KES", fxRate: 1.0000001 }).extras?.param).toBe("fxRate")
    expect(refused({ amount: 1, localCurrency: "KES", fxRate: 0 }).message).toBe("fxRate must be positive with at most 6 decimals")
    const zero = refused({ amount: 1_000_000, localCurrency: "KES", localAmount: 0.0001 })
    expect(zero.extras?.param).toBe("localAmount")
    expect(zero.message).toBe("localAmount / amount is not a usable rate")
    const huge = refused({ amount: 0.01, localCurrency: "KES", localAmount: 100_000_000_000 })
    expect(huge).toMatchObject({ message: "localAmount / amount is not a usable rate", extras: { param: "localAmount" } })
    const product = refused({ amount: 10_000_000_000, localCurrency: "KES", fxRate: 1_000_000 })
    expect(product).toMatchObject({ message: "amount x fxRate is out of range", extras: { param: "fxRate" } })
    expect(transferAmounts({ amount: 1, localCurrency: "KES", localAmount: 0.0001 })).toMatchObject({ local: { rate: 100 } })
  })
})
