/**
 * engine/http/query.ts: every decoder's accepted and refused inputs at their boundaries, with the exact code,
 * `param` and message, so that deleting a line or flipping a condition of the module fails a test here.
 */
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { bound, decimal, decimalAtMost, decodeParams, integer, oneOf, optional, required, text } from "../../engine/http/query.ts"

/** The failure as plain data (code, message, extras), or a clear mismatch when the decoder succeeded. */
const failure = (value: unknown) => {
  expect(value).toBeInstanceOf(ApiFailure)
  const f = value as ApiFailure
  return { code: f.code, message: f.message, extras: f.extras }
}

describe("text", () => {
  it("returns any non-empty string as sent", () => {
    expect(text("a", "symbol")).toBe("a")
    expect(text(" ", "symbol")).toBe(" ")
  })
  it("refuses the empty string with VALIDATION_ERROR naming the parameter", () => {
    expect(failure(text("", "cursor"))).toEqual({ code: "VALIDATION_ERROR", message: "cursor must not be empty", extras: { param: "cursor" } })
  })
})

describe("integer", () => {
  const limit = integer({ min: 1, max: 200 })
  it("accepts whole numbers within the inclusive bounds", () => {
    expect(limit("1", "limit")).toBe(1)
    expect(limit("200", "limit")).toBe(200)
    expect(limit("57", "limit")).toBe(57)
    expect(limit("007", "limit")).toBe(7)
  })
  it("refuses values just outside the bounds with VALIDATION_ERROR and the range", () => {
    expect(failure(limit("0", "limit"))).toEqual({ code: "VALIDATION_ERROR", message: "limit must be from 1 to 200, got 0", extras: { param: "limit" } })
    expect(failure(limit("201", "limit"))).toEqual({ code: "VALIDATION_ERROR", message: "limit must be from 1 to 200, got 201", extras: { param: "limit" } })
    expect(failure(limit("-1", "limit")).code).toBe("VALIDATION_ERROR")
  })
  it("names open ends of a half-bounded range", () => {
    expect(integer({ min: 1 })("999999999999999", "quantity")).toBe(999_999_999_999_999)
    expect(failure(integer({ min: 1 })("0", "quantity")).message).toBe("quantity must be from 1 to ∞, got 0")
    expect(integer({ max: 5 })("-100", "n")).toBe(-100)
    expect(integer({ max: 5 })("5", "n")).toBe(5)
    expect(failure(integer({ max: 5 })("6", "n")).message).toBe("n must be from -∞ to 5, got 6")
  })
  it("accepts any whole number without bounds, negative ones too", () => {
    expect(integer()("-42", "n")).toBe(-42)
    expect(integer()("0", "n")).toBe(0)
    expect(integer({})("123456789012345", "n")).toBe(123_456_789_012_345)
  })
  it("refuses what is not a whole number of at most 15 digits with INVALID_TYPE", () => {
    for (const raw of ["abc", "", "1.5", "1e3", " 1", "1 ", "1a", "a1", "+1", "--1", "1234567890123456", "0x10", "١"]) {
      expect(failure(limit(raw, "limit")), raw).toEqual({
        code: "INVALID_TYPE",
        message: `limit must be a whole number, got ${JSON.stringify(raw)}`,
        extras: { param: "limit" }
      })
    }
  })
})

describe("decimalAtMost", () => {
  const amount = decimalAtMost(1_000_000)
  it("accepts numbers up to the maximum, inclusive", () => {
    expect(amount("1000000", "amount")).toBe(1_000_000)
    expect(amount("999999.99", "amount")).toBe(999_999.99)
    expect(amount("-5", "amount")).toBe(-5)
  })
  it("refuses a number above the maximum with VALIDATION_ERROR naming the parameter", () => {
    expect(failure(amount("1000000.01", "amount"))).toEqual({
      code: "VALIDATION_ERROR",
      message: "amount must be at most 1000000",
      extras: { param: "amount" }
    })
  })
  it("keeps INVALID_TYPE for what is not a number at all", () => {
    expect(failure(amount("lots", "amount"))).toEqual({ code: "INVALID_TYPE", message: 'amount must be a number, got "lots"', extras: { param: "amount" } })
  })
})

describe("decimal", () => {
  it("accepts finite decimals with up to 15 integer and 12 fraction digits", () => {
    expect(decimal("500", "cashValue")).toBe(500)
    expect(decimal("0.5", "cashValue")).toBe(0.5)
    expect(decimal("-2.25", "cashValue")).toBe(-2.25)
    expect(decimal("123456789012345.123456789012", "cashValue")).toBe(Number("123456789012345.123456789012"))
  })
  it("refuses anything else with INVALID_TYPE", () => {
    for (const raw of ["abc", "", "1.", ".5", "1e5", "1,5", " 1", "1 ", "x1.5", "1.5x", "1.1234567890123", "1234567890123456", "NaN", "Infinity"]) {
      expect(failure(decimal(raw, "cashValue")), raw).toEqual({
        code: "INVALID_TYPE",
        message: `cashValue must be a number, got ${JSON.stringify(raw)}`,
        extras: { param: "cashValue" }
      })
    }
  })
})

describe("oneOf", () => {
  const side = oneOf(["BUY", "SELL"])
  it("accepts exactly the listed values", () => {
    expect(side("BUY", "side")).toBe("BUY")
    expect(side("SELL", "side")).toBe("SELL")
  })
  it("is case-exact: lower case and padded values are refused with the list", () => {
    for (const raw of ["buy", "Buy", "BUY ", "", "BUYSELL"]) {
      expect(failure(side(raw, "side")), raw).toEqual({ code: "VALIDATION_ERROR", message: "side must be one of BUY, SELL", extras: { param: "side" } })
    }
  })
})

describe("bound", () => {
  const from = bound("from")
  const to = bound("to")
  it("turns a date into the start (from) or the last millisecond (to) of its UTC day", () => {
    expect(from("2026-02-28", "from")).toBe(Date.UTC(2026, 1, 28))
    expect(to("2026-02-28", "to")).toBe(Date.UTC(2026, 2, 1) - 1)
    expect(from("2024-02-29", "from")).toBe(Date.UTC(2024, 1, 29))
    expect(from("2026-01-31", "from")).toBe(Date.UTC(2026, 0, 31))
    expect(from("2026-12-31", "from")).toBe(Date.UTC(2026, 11, 31))
    expect(from("2026-01-01", "from")).toBe(Date.UTC(2026, 0, 1))
  })
  it("refuses dates that are not on the calendar", () => {
    for (const raw of ["2026-02-30", "2026-02-29", "2026-04-31", "2026-00-10", "2026-13-01", "2026-01-00", "2026-01-32"]) {
      expect(failure(from(raw, "from")), raw).toEqual({
        code: "VALIDATION_ERROR",
        message: `from ${raw} is not a date on the calendar`,
        extras: { param: "from" }
      })
    }
  })
  it("takes timezone-aware date-times as they are, for both edges", () => {
    expect(from("2026-11-23T08:00:00Z", "from")).toBe(Date.UTC(2026, 10, 23, 8))
    expect(to("2026-11-23T08:00:00Z", "to")).toBe(Date.UTC(2026, 10, 23, 8))
    expect(from("2026-11-23T08:30Z", "from")).toBe(Date.UTC(2026, 10, 23, 8, 30))
    expect(from("2026-11-23T08:00:00.123456789Z", "from")).toBe(Date.UTC(2026, 10, 23, 8, 0, 0, 123))
    expect(from("2026-11-23T11:00:00+03:00", "from")).toBe(Date.UTC(2026, 10, 23, 8))
    expect(from("2026-11-23T23:59:59-01:00", "from")).toBe(Date.UTC(2026, 10, 24, 0, 59, 59))
  })
  it("refuses date-times without a zone, and text that is neither form", () => {
    for (const raw of [
      "2026-11-23T08:00:00",
      "2026-11-23 08:00:00Z",
      "x2026-11-23",
      "2026-11-23x",
      "2026-11-23T08:00:00.1234567890Z",
      "2026-11-23T08Z",
      "yesterday",
      ""
    ]) {
      expect(failure(from(raw, "from")), raw).toEqual({
        code: "VALIDATION_ERROR",
        message: "from must be a date (YYYY-MM-DD) or a timezone-aware date-time",
        extras: { param: "from" }
      })
    }
  })
  it("refuses date-times whose date or time does not exist, at each field's first invalid value", () => {
    for (const raw of ["2026-02-30T00:00:00Z", "2026-11-23T24:00:00Z", "2026-11-23T23:60:00Z", "2026-11-23T23:59:60Z", "2026-13-01T00:00Z"]) {
      expect(failure(to(raw, "to")), raw).toEqual({ code: "VALIDATION_ERROR", message: `to ${raw} is not a real date-time`, extras: { param: "to" } })
    }
    expect(to("2026-11-23T23:59:59Z", "to")).toBe(Date.UTC(2026, 10, 23, 23, 59, 59))
  })
})

describe("decodeParams", () => {
  const spec = { symbol: required(text), limit: optional(integer({ min: 1, max: 200 })), side: optional(oneOf(["BUY", "SELL"])) }
  const from = (values: Record<string, string>) => (name: string) => values[name]

  it("decodes every named parameter; absent optional ones are present as undefined", () => {
    const out = decodeParams(spec, from({ symbol: "SCOM", limit: "5", ignored: "x" }))
    expect(out).toStrictEqual({ symbol: "SCOM", limit: 5, side: undefined })
    expect(Object.keys(out)).toEqual(["symbol", "limit", "side"])
  })
  it("refuses a missing required parameter with MISSING_PARAM and its name", () => {
    expect(failure(decodeParams(spec, from({ limit: "5" })))).toEqual({ code: "MISSING_PARAM", message: "symbol is required", extras: { param: "symbol" } })
  })
  it("reports the first failure in the order the spec lists the parameters", () => {
    expect(failure(decodeParams(spec, from({ symbol: "S", limit: "abc", side: "buy" }))).extras).toEqual({ param: "limit" })
    expect(failure(decodeParams(spec, from({ symbol: "S", limit: "2", side: "buy" }))).extras).toEqual({ param: "side" })
    expect(failure(decodeParams(spec, from({ limit: "abc" }))).code).toBe("MISSING_PARAM")
  })
  it("decodes nothing for an empty spec", () => {
    expect(decodeParams({}, () => "x")).toStrictEqual({})
  })
})
