/**
 * The response validator (spec/validator.ts) catches what it must: a wrong body, a missing required header, an
 * undeclared status, an unknown route; and accepts a conforming answer.
 */
import { describe, expect, it } from "vitest"
import { CONTROL_MOUNTS, CONTROL_PATH, makeValidator } from "../../spec/validator.ts"

const v = makeValidator()
const rateHeaders = { "x-ratelimit-limit": "300", "x-ratelimit-remaining": "299", "x-ratelimit-reset": "1795424460" }
const envelope = { stocks: [], count: 0, totalCount: 0, hasMore: false, nextCursor: null }

describe("response validator", () => {
  it("matches concrete URLs on every base to contract operations, literal segments first", () => {
    expect(v.match("GET", "/api/sandbox/v1/partner/orders/blotter")?.pathTemplate).toBe("/orders/blotter")
    expect(v.match("GET", "/api/v1/partner/orders/ord_123")?.pathTemplate).toBe("/orders/{orderId}")
    expect(v.match("GET", "/api/v1/status")?.pathTemplate).toBe("/status")
    expect(v.match("GET", "/api/v1/partner/nope")).toBeUndefined()
  })

  it("accepts a conforming answer", () => {
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks?limit=1", status: 200, headers: rateHeaders, body: envelope })).toEqual([])
  })

  it("rejects a deliberately wrong body", () => {
    const problems = v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 200, headers: rateHeaders, body: { ...envelope, count: "zero" } })
    expect(problems.some((p) => p.includes("/count"))).toBe(true)
    const noEnvelope = v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 401, headers: {}, body: { message: "nope" } })
    expect(noEnvelope.length).toBeGreaterThan(0)
  })

  it("rejects a missing required header and an undeclared status", () => {
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 200, headers: {}, body: envelope }).join()).toMatch(/header/i)
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 418, headers: {}, body: null }).join()).toMatch(/not declared/)
  })

  it("checks control-API answers against spec/control.yaml", () => {
    const control = makeValidator(CONTROL_PATH, CONTROL_MOUNTS)
    const clock = { now: "2026-11-23T08:00:00.000Z", mode: "manual" }
    expect(control.check({ method: "GET", url: "/_sim/clock", status: 200, headers: {}, body: clock })).toEqual([])
    expect(control.check({ method: "GET", url: "/_sim/clock", status: 200, headers: {}, body: { now: 5 } }).length).toBeGreaterThan(0)
    expect(control.check({ method: "GET", url: "/_sim/nowhere", status: 200, headers: {}, body: null }).join()).toMatch(/no contract operation/)
  })
})
