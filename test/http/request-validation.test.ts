/**
 * Requests are validated from the contract itself (E-310..E-313): a MARKET order's `expiresAt` is a date-time like a
 * LIMIT one's (the hand-written body schema let anything through); lengths count characters as JSON Schema does (an
 * emoji is one); the control API's closed bodies refuse an unknown field, while the partner API's open ones ignore it;
 * two different keys in `Authorization` and `x-api-key` are refused (E-314). Every answer is checked against the
 * contract by the harness.
 */
import { describe, expect, it } from "vitest"
import { freshTraders } from "./accounts-kit.ts"
import { ADMIN } from "./harness.ts"

const setup = freshTraders(500)

const errorOf = (r: { status: number; body: any }) => [r.status, r.body?.error?.code, r.body?.error?.param]
const EMOJI = "😀" // one character, two UTF-16 code units

describe("a trade body is judged by the contract whatever its orderType", () => {
  it("refuses expiresAt that is no date-time on a MARKET order as on a LIMIT one, and books nothing", async () => {
    const s = await setup()
    const quote = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const before = await s.balances()
    const market = await s.place({ type: "BUY", quantity: 1, quoteId: quote.quoteId, expiresAt: "x" })
    const limit = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 1, limitPrice: 1, timeInForce: "GTD", expiresAt: "x" })
    expect(errorOf(market)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(market.body.error).toEqual(limit.body.error)
    expect(market.body.error.message).toBe('expiresAt must be a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z), got "x"')
    expect(await s.balances()).toEqual(before)
    // The quote was not spent by the refusal: the same order without the bad field goes through.
    expect((await s.place({ type: "BUY", quantity: 1, quoteId: quote.quoteId })).status).toBe(202)
  })

  it("names the field first and the alternatives after: no symbol is MISSING_PARAM symbol, even with no quantity", async () => {
    const s = await setup()
    const r = await s.p.sb("POST", `/users/${s.id}/trade`, { type: "BUY" })
    expect(errorOf(r)).toEqual([400, "MISSING_PARAM", "symbol"])
    const typed = await s.place({ type: "BUY", quantity: "1" })
    expect(errorOf(typed)).toEqual([400, "INVALID_TYPE", "quantity"])
    expect(typed.body.error.message).toBe('quantity has the wrong type: expected integer, got "1"')
  })
})

describe("string lengths count characters, as JSON Schema does", () => {
  // Both layers count alike: the contract (Ajv) and the route's decoder, whose limit was UTF-16 units before E-310.
  it("takes a clientOrderId of 64 emoji (128 UTF-16 units) and refuses 65", async () => {
    const s = await setup()
    const at = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const accepted = await s.place({ type: "BUY", quantity: 1, quoteId: at.quoteId, clientOrderId: EMOJI.repeat(64) })
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
    expect(accepted.body.clientOrderId).toBe(EMOJI.repeat(64))
    const over = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const refused = await s.place({ type: "BUY", quantity: 1, quoteId: over.quoteId, clientOrderId: EMOJI.repeat(65) })
    expect(errorOf(refused)).toEqual([400, "VALIDATION_ERROR", "clientOrderId"])
    expect(refused.body.error.message).toMatch(/^clientOrderId must be at most 64 characters long, got "😀/)
  })
})

describe("unknown fields", () => {
  it("are refused where the contract closes the body (the control API), naming the field", async () => {
    const s = await setup()
    const r = await s.engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: 20, currency: "KES" })
    expect(errorOf(r)).toEqual([400, "VALIDATION_ERROR", "currency"])
    expect(r.body.error.message).toBe("currency is not a field this operation takes")
  })

  it("are ignored where it leaves the body open (the partner API)", async () => {
    const s = await setup()
    const q = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    expect((await s.place({ type: "BUY", quantity: 1, quoteId: q.quoteId, comment: "extra" })).status).toBe(202)
  })
})

describe("an optional body", () => {
  it("may be left out where the contract says requestBody.required: false (a desk fill at the desk's price)", async () => {
    const s = await setup()
    const q = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const orderId = await s.placed({ type: "BUY", quantity: 1, quoteId: q.quoteId })
    const filled = await s.engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`)
    expect([filled.status, filled.body.orderId, filled.body.status]).toEqual([200, orderId, "FILLED"])
  })
})

describe("the API key in two headers", () => {
  it("refuses two different keys with 401 AUTH_INVALID, and serves the same key sent in both", async () => {
    const s = await setup()
    const other = await s.engine.newPartner()
    const call = (authorization: string, apiKey: string) =>
      s.engine.call("GET", "/api/sandbox/v1/partner/stocks?limit=1", { headers: { authorization: `Bearer ${authorization}`, "x-api-key": apiKey } })
    const mixed = await call(other.sandboxKey, s.p.keys.sandboxKey)
    expect(errorOf(mixed)).toEqual([401, "AUTH_INVALID", undefined])
    expect(mixed.body.error.message).toMatch(/different keys/)
    // Refused before any partner is looked up: neither partner's window counted it.
    expect(mixed.headers.get("x-ratelimit-remaining")).toBeNull()
    expect((await call(s.p.keys.sandboxKey, s.p.keys.sandboxKey)).status).toBe(200)
    // The admin token of the control API is not an API key: it is still read from Authorization alone.
    expect((await s.engine.call("GET", "/_sim/clock", { headers: { authorization: `Bearer ${ADMIN}`, "x-api-key": "anything" } })).status).toBe(200)
  })
})
