/**
 * engine/http/body.ts: depth counting on raw text (strings, escaped quotes and backslashes skipped), the 32-level
 * limit at its boundary, JSON parsing, and the mapping of Effect Schema issues to the spec's codes with `param`.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { decodeBody, failureOfIssue, isFailure, jsonDepth, MAX_JSON_DEPTH, parseJsonBody } from "../../engine/http/body.ts"
import { TradeBody } from "../../engine/http/routes/orders.ts"

const failure = (value: unknown) => {
  expect(value).toBeInstanceOf(ApiFailure)
  const f = value as ApiFailure
  return { code: f.code, message: f.message, extras: f.extras }
}

const nested = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`

describe("jsonDepth", () => {
  it("counts the deepest nesting of objects and arrays", () => {
    expect(jsonDepth("")).toBe(0)
    expect(jsonDepth("1")).toBe(0)
    expect(jsonDepth("{}")).toBe(1)
    expect(jsonDepth("[]")).toBe(1)
    expect(jsonDepth("[[]]")).toBe(2)
    expect(jsonDepth('[{"a":[1]}]')).toBe(3)
    expect(jsonDepth(nested(40))).toBe(40)
  })
  it("counts siblings once: closing brackets and braces go back up", () => {
    expect(jsonDepth("[][][]")).toBe(1)
    expect(jsonDepth("{}{}")).toBe(1)
    expect(jsonDepth('{"a":{},"b":{}}')).toBe(2)
    expect(jsonDepth("[[],[[]]]")).toBe(3)
    expect(jsonDepth("[{}][{}]")).toBe(2)
    // the deepest part first: a shallower sibling after it must not lower the maximum
    expect(jsonDepth("[[[]],[]]")).toBe(3)
  })
  it("ignores brackets inside strings", () => {
    expect(jsonDepth('{"a":"[[[[{{{{"}')).toBe(1)
    expect(jsonDepth('"]]]]"')).toBe(0)
    expect(jsonDepth('["}}}}",[1]]')).toBe(2)
  })
  it("does not end a string at an escaped quote", () => {
    expect(jsonDepth('{"a":"\\"[[[["}')).toBe(1)
    expect(jsonDepth('["\\"]",[]]')).toBe(2)
  })
  it("ends a string after an escaped backslash", () => {
    // "\\" is a complete string; the brackets after it count
    expect(jsonDepth('["\\\\",[[1]]]')).toBe(3)
    expect(jsonDepth('{"k":"\\\\"}')).toBe(1)
  })
})

describe("parseJsonBody", () => {
  it("reads an absent or blank body as no body", () => {
    expect(parseJsonBody(undefined)).toBeUndefined()
    expect(parseJsonBody("")).toBeUndefined()
    expect(parseJsonBody("  \n\t ")).toBeUndefined()
  })
  it("parses JSON text, surrounding whitespace allowed", () => {
    expect(parseJsonBody(' {"a":1} ')).toEqual({ a: 1 })
    expect(parseJsonBody("null")).toBeNull()
    expect(parseJsonBody("[1,2]")).toEqual([1, 2])
  })
  it("takes exactly 32 levels and refuses 33 before parsing", () => {
    expect(MAX_JSON_DEPTH).toBe(32)
    const ok = parseJsonBody(nested(32))
    expect(isFailure(ok)).toBe(false)
    expect(Array.isArray(ok)).toBe(true)
    expect(failure(parseJsonBody(nested(33)))).toEqual({
      code: "VALIDATION_ERROR",
      message: "the JSON body is nested deeper than 32 levels",
      extras: undefined
    })
    // the depth check comes first: even unterminated, a deep text gets the depth message
    expect(failure(parseJsonBody("[".repeat(5000))).message).toBe("the JSON body is nested deeper than 32 levels")
  })
  it("refuses text that is not JSON", () => {
    for (const text of ["{not json", "{'a':1}", "undefined", "[1,]", "{}x"]) {
      expect(failure(parseJsonBody(text)), text).toEqual({ code: "VALIDATION_ERROR", message: "the request body is not valid JSON", extras: undefined })
    }
  })
  // The last text parsed is remembered (E-410): the same text gives the same value, another text its own, and a refusal
  // is never remembered in place of a value.
  it("remembers the last text's value, and only that text's", () => {
    const first = parseJsonBody('{"symbol":"SCOM.KE","quantity":1}')
    expect(parseJsonBody('{"symbol":"SCOM.KE","quantity":1}')).toBe(first)
    expect(parseJsonBody('{"symbol":"SCOM.KE","quantity":2}')).toEqual({ symbol: "SCOM.KE", quantity: 2 })
    expect(isFailure(parseJsonBody("{not json"))).toBe(true)
    expect(parseJsonBody('{"symbol":"SCOM.KE","quantity":2}')).toEqual({ symbol: "SCOM.KE", quantity: 2 })
    expect(isFailure(parseJsonBody("{not json"))).toBe(true)
    expect(parseJsonBody("")).toBeUndefined()
  })
})

describe("decodeBody", () => {
  it("answers a schema that dies (a defect, not an issue) with VALIDATION_ERROR on the body, never a crash", () => {
    const Boom = Schema.Struct({
      a: Schema.String.check(
        Schema.makeFilter((): boolean => {
          throw new Error("boom")
        })
      )
    })
    expect(failure(decodeBody(Boom, { a: "x" }))).toEqual({ code: "VALIDATION_ERROR", message: "the body failed validation", extras: { param: "body" } })
  })
  const trade = { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: "qt_1" }

  it("returns the decoded value", () => {
    expect(decodeBody(TradeBody, trade)).toEqual(trade)
  })
  it("refuses a missing body as a whole with MISSING_PARAM body", () => {
    expect(failure(decodeBody(TradeBody, undefined))).toEqual({ code: "MISSING_PARAM", message: "this operation needs a JSON body", extras: { param: "body" } })
  })
  it("refuses a body that is not an object with INVALID_TYPE body", () => {
    for (const json of [null, [], [trade], 5, "text", true]) {
      expect(failure(decodeBody(TradeBody, json)), JSON.stringify(json)).toEqual({
        code: "INVALID_TYPE",
        message: "the body must be a JSON object",
        extras: { param: "body" }
      })
    }
  })
  it("maps a missing field to MISSING_PARAM with the field", () => {
    expect(failure(decodeBody(TradeBody, { symbol: "SCOM", quantity: 1 }))).toEqual({
      code: "MISSING_PARAM",
      message: "type is required",
      extras: { param: "type" }
    })
  })
  it("maps a wrong type to INVALID_TYPE with the field", () => {
    const f = failure(decodeBody(TradeBody, { ...trade, quantity: "1" }))
    expect(f.code).toBe("INVALID_TYPE")
    expect(f.extras).toEqual({ param: "quantity" })
    expect(f.message).toBe("quantity has the wrong type: Expected number")
  })
  it("maps refused values (filters, enums) to VALIDATION_ERROR with the field and the first line of the issue", () => {
    expect(failure(decodeBody(TradeBody, { ...trade, quantity: 0 }))).toEqual({
      code: "VALIDATION_ERROR",
      message: "quantity: Expected a value between 1 and 100000000",
      extras: { param: "quantity" }
    })
    expect(failure(decodeBody(TradeBody, { ...trade, type: "buy" }))).toEqual({
      code: "VALIDATION_ERROR",
      message: 'type: Expected "BUY" | "SELL"',
      extras: { param: "type" }
    })
    expect(failure(decodeBody(TradeBody, { ...trade, quantity: 1.5 })).message).toBe("quantity: Expected an integer")
  })
  it("names nested fields by their path, and reports the first issue only", () => {
    const Basket = Schema.Struct({ items: Schema.Array(Schema.Struct({ symbol: Schema.String, quantity: Schema.Number })) })
    expect(
      failure(
        decodeBody(Basket, {
          items: [
            { symbol: "A", quantity: 1 },
            { symbol: 3, quantity: "x" }
          ]
        })
      )
    ).toEqual({
      code: "INVALID_TYPE",
      message: "items.1.symbol has the wrong type: Expected string",
      extras: { param: "items.1.symbol" }
    })
    expect(failure(decodeBody(Basket, { items: [{ quantity: 1 }] }))).toEqual({
      code: "MISSING_PARAM",
      message: "items.0.symbol is required",
      extras: { param: "items.0.symbol" }
    })
    const Deep = Schema.Struct({ a: Schema.Struct({ b: Schema.Struct({ c: Schema.Number }) }) })
    expect(failure(decodeBody(Deep, { a: { b: { c: "x" } } })).extras).toEqual({ param: "a.b.c" })
    const Two = Schema.Struct({ first: Schema.String, second: Schema.String })
    expect(failure(decodeBody(Two, {})).extras).toEqual({ param: "first" })
  })
  it("names the body itself when the issue is on the whole object", () => {
    const Whole = Schema.Struct({ a: Schema.Number }).check(Schema.makeFilter((v) => v.a > 1 || "a must exceed 1"))
    expect(failure(decodeBody(Whole, { a: 0 }))).toEqual({ code: "VALIDATION_ERROR", message: "body: a must exceed 1", extras: { param: "body" } })
  })
})

describe("failureOfIssue", () => {
  it("uses `where` for an issue without a path", () => {
    const exit = Schema.decodeUnknownExit(Schema.Number)("x")
    expect(exit._tag).toBe("Failure")
    const reason = exit._tag === "Failure" ? exit.cause.reasons.find((r) => r._tag === "Fail") : undefined
    const issue = (reason as unknown as { error: { issue: Parameters<typeof failureOfIssue>[0] } }).error.issue
    expect(failure(failureOfIssue(issue, "query"))).toEqual({
      code: "INVALID_TYPE",
      message: "query has the wrong type: Expected number",
      extras: { param: "query" }
    })
  })
})

describe("isFailure", () => {
  it("tells failures from values", () => {
    expect(isFailure(new ApiFailure({ code: "CONFLICT", message: "m" }))).toBe(true)
    expect(isFailure({ code: "CONFLICT", message: "m" })).toBe(false)
    expect(isFailure(undefined)).toBe(false)
  })
})
