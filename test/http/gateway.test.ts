/**
 * The gateway's guarantees: every failure in the spec's envelope with the right status, the guard order, and no
 * write on any refused request.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { INSTRUMENTS } from "../../engine/domain/instruments.ts"
import { type Reply, startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const PROD = "/api/v1/partner"

const expectEnvelope = (reply: Reply, status: number, code: string) => {
  expect(reply.status).toBe(status)
  expect(reply.body).toMatchObject({ error: { code, message: expect.any(String) } })
  expect(reply.body.error.message.length).toBeGreaterThan(5)
}

describe("gateway", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { sandboxKey: string; liveKey: string }
  beforeEach(async () => {
    engine = startEngine()
    keys = await engine.newPartner()
  })
  afterEach(() => engine.dispose())

  const sandbox = (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {}) =>
    engine.call(method, `${SANDBOX}${path}`, { ...init, headers: { "x-api-key": keys.sandboxKey, ...init.headers } })

  it("serves the stock list with the pagination envelope on both bases", async () => {
    const s = await sandbox("GET", "/stocks?limit=3")
    expect(s.status).toBe(200)
    expect(s.body).toMatchObject({ count: 3, hasMore: true, totalCount: INSTRUMENTS.length })
    expect(typeof s.body.nextCursor).toBe("string")
    const p = await engine.call("GET", `${PROD}/stocks`, { headers: { authorization: `Bearer ${keys.liveKey}` } })
    expect(p.status).toBe(200)
    expect(p.headers.get("x-ratelimit-limit")).toBe("100")
    expect(s.headers.get("x-ratelimit-limit")).toBe("300")
  })

  it("serves the public status document without a key", async () => {
    const status = await engine.call("GET", "/api/v1/status")
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({ status: "operational", version: "1", timestamp: "2026-11-23T08:00:00.000Z" })
  })

  it("answers 401 AUTH_MISSING without a key", async () => {
    expectEnvelope(await engine.call("GET", `${SANDBOX}/stocks`), 401, "AUTH_MISSING")
  })

  it("answers 401 AUTH_INVALID for a sandbox key on the production base, and for an unknown key", async () => {
    expectEnvelope(await engine.call("GET", `${PROD}/stocks`, { headers: { "x-api-key": keys.sandboxKey } }), 401, "AUTH_INVALID")
    expectEnvelope(await engine.call("GET", `${SANDBOX}/stocks`, { headers: { "x-api-key": "sk_sandbox_nope" } }), 401, "AUTH_INVALID")
  })

  it("routes by the contract: /orders/blotter is getOrderBlotter, not getOrder; listStocks lives on the partner bases only", async () => {
    const blotter = await engine.call("GET", `${PROD}/orders/blotter`, { headers: { "x-api-key": keys.liveKey }, unchecked: true })
    expect(blotter.status).toBe(200)
    expect(blotter.body.ordering).toBe("createdAt_desc")
    for (const path of ["/api/v1/stocks", "/api/sandbox/v1/stocks"]) {
      const r = await engine.call("GET", path, { headers: { "x-api-key": keys.liveKey }, unchecked: true })
      expect(r.status).toBe(404)
      expect(r.body.error.message).not.toMatch(/listStocks/)
    }
  })

  it("counts and labels keyed refusals too: an environment's FORBIDDEN carries the headers, an unknown path over the limit is 429", async () => {
    const forbidden = await sandbox("GET", "/orders/ord_x")
    expectEnvelope(forbidden, 403, "FORBIDDEN")
    expect(forbidden.headers.get("x-ratelimit-remaining")).toBe("299")
    for (let i = 0; i < 100; i++) await engine.call("GET", `${PROD}/nowhere`, { headers: { "x-api-key": keys.liveKey }, unchecked: true })
    const over = await engine.call("GET", `${PROD}/nowhere`, { headers: { "x-api-key": keys.liveKey }, unchecked: true })
    expect(over.status).toBe(429)
    expect(over.headers.get("retry-after")).not.toBeNull()
  })

  it("answers 404 NOT_FOUND for unknown paths, inside and outside the bases", async () => {
    expectEnvelope(await sandbox("GET", "/no-such-thing"), 404, "NOT_FOUND")
    expectEnvelope(await engine.call("GET", "/nowhere"), 404, "NOT_FOUND")
  })

  it("refuses bad requests with the envelope and writes nothing", async () => {
    const quote = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=10")
    expect(quote.status).toBe(200)
    const trade = { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: quote.body.quoteId }
    expectEnvelope(await sandbox("POST", "/trade", { body: trade }), 400, "MISSING_IDEMPOTENCY_KEY")
    expectEnvelope(await sandbox("POST", "/trade", { rawBody: "{not json", headers: { "idempotency-key": "key-00000001" } }), 400, "VALIDATION_ERROR")
    expectEnvelope(await sandbox("POST", "/trade", { body: { symbol: "SCOM" }, headers: { "idempotency-key": "key-00000002" } }), 400, "MISSING_PARAM")
    expectEnvelope(await sandbox("GET", "/stocks?limit=0"), 400, "VALIDATION_ERROR")
    expectEnvelope(await sandbox("GET", "/quote/!!"), 400, "INVALID_SYMBOL")
    expectEnvelope(await sandbox("GET", "/orders?cursor=bogus"), 400, "VALIDATION_ERROR")
    const orders = await sandbox("GET", "/orders")
    expect(orders.body).toMatchObject({ orders: [], count: 0, hasMore: false, nextCursor: null })
    const trace = await engine.admin("GET", "/_sim/trace")
    expect(String(trace.body)).not.toContain('"kind":"event"')
    // the quote was not consumed by any refused request
    const ok = await sandbox("POST", "/trade", { body: trade, headers: { "idempotency-key": "key-00000003" } })
    expect(ok.status).toBe(202)
  })

  it("replays a repeated Idempotency-Key and refuses its reuse for another request", async () => {
    const quote = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=10")
    const trade = { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: quote.body.quoteId }
    const headers = { "idempotency-key": "same-key-123" }
    const first = await sandbox("POST", "/trade", { body: trade, headers })
    const again = await sandbox("POST", "/trade", { body: trade, headers })
    expect(first.status).toBe(202)
    expect(again.status).toBe(202)
    expect(again.body).toEqual(first.body)
    expect(again.headers.get("idempotent-replayed")).toBe("true")
    expectEnvelope(await sandbox("POST", "/trade", { body: { ...trade, quantity: 11 }, headers }), 422, "IDEMPOTENCY_KEY_REUSED")
    expect((await sandbox("GET", "/orders")).body.count).toBe(1)
  })

  it("honours the sandbox force headers on the sandbox base only", async () => {
    const forced = await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-error": "INSUFFICIENT_FUNDS" } })
    expectEnvelope(forced, 400, "INSUFFICIENT_FUNDS")
    const status = await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-status": "503" } })
    expectEnvelope(status, 503, "SERVICE_UNAVAILABLE")
    expect(status.headers.get("retry-after")).toBe("1")
    expectEnvelope(await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-status": "418" } }), 400, "VALIDATION_ERROR")
    const prod = await engine.call("GET", `${PROD}/stocks`, { headers: { "x-api-key": keys.liveKey, "x-sandbox-force-error": "INSUFFICIENT_FUNDS" } })
    expect(prod.status).toBe(200)
  })

  it("keeps environments apart: a sandbox order is invisible on production", async () => {
    const quote = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1")
    const order = await sandbox("POST", "/trade", {
      body: { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: quote.body.quoteId },
      headers: { "idempotency-key": "iso-key-001" }
    })
    expect(order.status).toBe(202)
    const prod = await engine.call("GET", `${PROD}/orders/${order.body.orderId}`, { headers: { "x-api-key": keys.liveKey } })
    expectEnvelope(prod, 404, "NOT_FOUND")
  })

  it("refuses a BUY the production wallet (0 USD) cannot pay", async () => {
    const headers = { "x-api-key": keys.liveKey }
    const quote = await engine.call("GET", `${PROD}/quote/SCOM?side=BUY&quantity=1`, { headers })
    const r = await engine.call("POST", `${PROD}/trade`, {
      headers: { ...headers, "idempotency-key": "prod-key-01" },
      body: { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: quote.body.quoteId }
    })
    expectEnvelope(r, 400, "INSUFFICIENT_FUNDS")
  })

  it("protects the control API with the admin token", async () => {
    expectEnvelope(await engine.call("GET", "/_sim/clock"), 401, "AUTH_MISSING")
    expectEnvelope(await engine.call("GET", "/_sim/clock", { headers: { authorization: "Bearer wrong" } }), 401, "AUTH_INVALID")
    expect((await engine.admin("GET", "/_sim/clock")).body).toEqual({ now: "2026-11-23T08:00:00.000Z", mode: "manual" })
  })
})
