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

  it("requires the rate-limit headers on errors past the limiter, not on 401 (D-002)", () => {
    const notFound = { error: { code: "NOT_FOUND", message: "No listing SCOM.KE" } }
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks/SCOM.KE", status: 404, headers: rateHeaders, body: notFound })).toEqual([])
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks/SCOM.KE", status: 404, headers: {}, body: notFound }).join()).toMatch(/header/i)
    const authMissing = { error: { code: "AUTH_MISSING", message: "No API key supplied" } }
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 401, headers: {}, body: authMissing })).toEqual([])
  })

  it("requires error.param with MISSING_PARAM (D-086)", () => {
    const url = "/api/v1/partner/market/quotes"
    const missing = (extra: object) => ({ error: { code: "MISSING_PARAM", message: "symbol or symbols is required", ...extra } })
    expect(v.check({ method: "GET", url, status: 400, headers: rateHeaders, body: missing({ param: "symbol", params: ["symbol", "symbols"] }) })).toEqual([])
    expect(v.check({ method: "GET", url, status: 400, headers: rateHeaders, body: missing({ params: ["symbol", "symbols"] }) }).length).toBeGreaterThan(0)
  })

  it("requires country-suffixed symbols on stock items (D-080)", () => {
    const item = (symbol: string) => ({
      ...{ id: symbol, symbol, name: "Safaricom PLC", slug: "safaricom", exchange: "NSE", exchangeMic: "XNAI", currency: "KES", sector: null },
      ...{ assetType: "STOCK", listingStatus: "ACTIVE", price: 28.5, usdPrice: 0.2206, change: 0.35, changePct: 0.0124, open: 28.15 },
      ...{ dayHigh: 28.6, dayLow: 28.1, previousClose: 28.15, volume: 1, logoUrl: null, lastPriceUpdate: null, bid: null, ask: null },
      ...{ asOf: null, stale: false, dataQuality: { delayedBySeconds: 900, refreshTargetSeconds: 900, staleAfterSeconds: 1800, source: "x" } }
    })
    const page = (symbol: string) => ({ ...envelope, stocks: [item(symbol)], count: 1, totalCount: 1 })
    expect(v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 200, headers: rateHeaders, body: page("SCOM.KE") })).toEqual([])
    for (const wrong of ["SCOM", "SCOM.NSE"]) {
      expect(v.check({ method: "GET", url: "/api/v1/partner/stocks", status: 200, headers: rateHeaders, body: page(wrong) }).length, wrong).toBeGreaterThan(0)
    }
  })

  it("answers /market/quotes as one object for symbol and an array plus not_found for symbols (D-042)", () => {
    const url = "/api/v1/partner/market/quotes"
    const meta = { requested: 1, count: 0, maxSymbols: 50, exchange: null, asOf: "2026-01-05T09:30:00.000Z" }
    expect(v.check({ method: "GET", url, status: 200, headers: rateHeaders, body: { data: [], not_found: ["XYZ.KE"], meta } })).toEqual([])
    expect(v.check({ method: "GET", url, status: 200, headers: rateHeaders, body: { data: [], notFound: [], meta } }).length).toBeGreaterThan(0)
    expect(
      v.check({ method: "GET", url, status: 200, headers: rateHeaders, body: { quotes: [], count: 0, notFound: [], asOf: meta.asOf } }).length
    ).toBeGreaterThan(0)
  })

  it("checks control-API answers against spec/control.yaml", () => {
    const control = makeValidator(CONTROL_PATH, CONTROL_MOUNTS)
    const clock = { now: "2026-11-23T08:00:00.000Z", mode: "manual" }
    expect(control.check({ method: "GET", url: "/_sim/clock", status: 200, headers: {}, body: clock })).toEqual([])
    expect(control.check({ method: "GET", url: "/_sim/clock", status: 200, headers: {}, body: { now: 5 } }).length).toBeGreaterThan(0)
    expect(control.check({ method: "GET", url: "/_sim/nowhere", status: 200, headers: {}, body: null }).join()).toMatch(/no contract operation/)
  })
})
