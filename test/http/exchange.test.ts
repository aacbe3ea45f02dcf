/**
 * engine/http/exchange.ts: JSON answers with their content type, the serialisation cache (kept per object, none for
 * primitives and null), the error envelope with and without extras, and header merging.
 */
import { describe, expect, it } from "vitest"
import { ApiFailure, fail } from "../../engine/domain/errors.ts"
import { errorResponse, JSON_TYPE, jsonResponse, REMEMBERED_BODY_CHARS, withHeaders } from "../../engine/http/exchange.ts"

describe("exchange", () => {
  it("answers JSON with the content type, extra headers and the value kept", () => {
    const value = { a: 1 }
    const r = jsonResponse(201, value, { "x-one": "1" })
    expect(JSON_TYPE).toBe("application/json")
    expect(r).toEqual({ status: 201, headers: { "content-type": "application/json", "x-one": "1" }, body: '{"a":1}', value })
    expect(jsonResponse(200, [1, 2]).headers).toEqual({ "content-type": "application/json" })
  })

  it("serialises primitives and null without the object cache", () => {
    expect(jsonResponse(200, null).body).toBe("null")
    expect(jsonResponse(200, 5).body).toBe("5")
    expect(jsonResponse(200, "x").body).toBe('"x"')
    expect(jsonResponse(200, true).body).toBe("true")
  })

  it("keeps the text of a large object once serialised (the same object answers the same text)", () => {
    const value: { n: number; pad: string } = { n: 1, pad: "x".repeat(REMEMBERED_BODY_CHARS) }
    const first = jsonResponse(200, value).body
    expect(JSON.parse(first).n).toBe(1)
    value.n = 2
    expect(jsonResponse(200, value).body).toBe(first)
    expect(JSON.parse(jsonResponse(200, { ...value }).body).n).toBe(2)
  })

  it("remembers from REMEMBERED_BODY_CHARS characters up, not below", () => {
    const at = { pad: "x".repeat(REMEMBERED_BODY_CHARS - '{"pad":""}'.length) }
    expect(jsonResponse(200, at).body.length).toBe(REMEMBERED_BODY_CHARS)
    at.pad = "changed"
    expect(jsonResponse(200, at).body.length).toBe(REMEMBERED_BODY_CHARS)
    const below = { pad: "x".repeat(REMEMBERED_BODY_CHARS - 1 - '{"pad":""}'.length) }
    expect(jsonResponse(200, below).body.length).toBe(REMEMBERED_BODY_CHARS - 1)
    below.pad = "changed"
    expect(jsonResponse(200, below).body).toBe('{"pad":"changed"}')
  })

  it("serialises a small object each time it is answered, keeping nothing for it (E-356)", () => {
    const value: { n: number } = { n: 1 }
    expect(jsonResponse(200, value).body).toBe('{"n":1}')
    value.n = 2
    expect(jsonResponse(200, value).body).toBe('{"n":2}')
  })

  it("writes the error envelope with the failure's status and extras", () => {
    const plain = errorResponse(fail("NOT_FOUND", "gone"))
    expect(plain.status).toBe(404)
    expect(JSON.parse(plain.body)).toEqual({ error: { code: "NOT_FOUND", message: "gone" } })
    const extra = errorResponse(fail("VALIDATION_ERROR", "bad", { param: "x" }), { "retry-after": "3" })
    expect(JSON.parse(extra.body)).toEqual({ error: { code: "VALIDATION_ERROR", message: "bad", param: "x" } })
    expect(extra.headers).toEqual({ "content-type": "application/json", "retry-after": "3" })
    expect(errorResponse(new ApiFailure({ code: "VALIDATION_ERROR", message: "big", status: 431 })).status).toBe(431)
  })

  it("merges headers, the later winning, and keeps the rest of the answer", () => {
    const r = withHeaders(jsonResponse(200, { a: 1 }, { "x-a": "1", "x-b": "1" }), { "x-b": "2", "x-c": "3" })
    expect(r.status).toBe(200)
    expect(r.body).toBe('{"a":1}')
    expect(r.headers).toEqual({ "content-type": "application/json", "x-a": "1", "x-b": "2", "x-c": "3" })
  })
})
