/**
 * One test per defect of the old HTTP layer (before the contract-typed rebuild): each test names what the old
 * engine did. In-process, on a manual clock; every partner answer is checked against spec/openapi.yaml by the
 * harness. The node:http limits and process life cycle are in node-server.test.ts.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { TradingService } from "../../engine/app/trading/service.ts"
import { fail } from "../../engine/domain/errors.ts"
import { Gateway } from "../../engine/http/gateway.ts"
import { partnerRoute, type Route } from "../../engine/http/route.ts"
import { controlRoutes } from "../../engine/http/routes/control.ts"
import type { RouteServices } from "../../engine/http/routes/index.ts"
import { orderRoutes, TradeBody } from "../../engine/http/routes/orders.ts"
import { quoteRoutes } from "../../engine/http/routes/quotes.ts"
import { engineLayer } from "../../engine/runtime.ts"
import { engineLog } from "../support/engine-log.ts"
import { ADMIN, engineRequest, MONDAY_OPEN, type Reply, startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"

const expectEnvelope = (reply: Reply, status: number, code: string, param?: string) => {
  expect(reply.status).toBe(status)
  expect(reply.body).toMatchObject({ error: { code, message: expect.any(String) } })
  if (param !== undefined) expect(reply.body.error.param).toBe(param)
}

describe("defects of the old HTTP layer", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  beforeEach(async () => {
    engine = startEngine()
    keys = await engine.newPartner()
  })
  afterEach(() => engine.dispose())

  const sandbox = (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown; rawBody?: string } = {}) =>
    engine.call(method, `${SANDBOX}${path}`, { ...init, headers: { "x-api-key": keys.sandboxKey, ...init.headers } })
  const quote = async (query: string) => {
    const r = await sandbox("GET", `/quote/SCOM?${query}`)
    expect(r.status).toBe(200)
    return r.body as { quoteId: string; quantity: number | null; cashValue: number | null; side: string | null }
  }
  const trade = (key: string, body: unknown, headers: Record<string, string> = {}) =>
    sandbox("POST", "/trade", { body, headers: { "idempotency-key": key, ...headers } })
  const orders = async () => (await sandbox("GET", "/orders")).body as { count: number; orders: Array<{ orderId: string; quantity: number }> }
  const deskQueue = async () => ((await engine.admin("GET", "/_sim/desk/queue")).body as { orders: Array<unknown> }).orders
  const eventLines = async () =>
    String((await engine.admin("GET", "/_sim/trace")).body)
      .split("\n")
      .filter((l) => l.includes('"kind":"event"'))

  // Old engine: any content type other than application/json answered 415, and that 415 was stored under the
  // Idempotency-Key, so the client's corrected retry with the same key got the 415 replayed.
  it("reads a text/plain body as JSON (no 415), and its key replays that very answer", async () => {
    const q = await quote("side=BUY&quantity=10")
    const body = JSON.stringify({ symbol: "SCOM", type: "BUY", quantity: 10, quoteId: q.quoteId })
    const first = await sandbox("POST", "/trade", { rawBody: body, headers: { "content-type": "text/plain", "idempotency-key": "plain-key-001" } })
    expect(first.status).toBe(202)
    expect(first.body).toMatchObject({ symbol: "SCOM.KE", type: "BUY", quantity: 10, status: "PENDING", quoteId: q.quoteId })
    expect(first.headers.get("idempotent-replayed")).toBeNull()
    const retry = await sandbox("POST", "/trade", { rawBody: body, headers: { "content-type": "application/json", "idempotency-key": "plain-key-001" } })
    expect(retry.status).toBe(202)
    expect(retry.body).toEqual(first.body)
    expect(retry.headers.get("idempotent-replayed")).toBe("true")
    expect((await orders()).count).toBe(1)
  })

  it("stores nothing under the key of a text/plain body that is not JSON: the corrected retry is processed", async () => {
    const bad = await sandbox("POST", "/trade", {
      rawBody: "symbol=SCOM&type=BUY",
      headers: { "content-type": "text/plain", "idempotency-key": "plain-key-002" }
    })
    expectEnvelope(bad, 400, "VALIDATION_ERROR")
    expect(bad.body.error.message).toBe("the request body is not valid JSON")
    const q = await quote("side=BUY&quantity=2")
    const fixed = await trade("plain-key-002", { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: q.quoteId })
    expect(fixed.status).toBe(202)
    expect(fixed.headers.get("idempotent-replayed")).toBeNull()
    expect(fixed.body.quantity).toBe(2)
  })

  // Old engine: JSON.parse recursed through a 5,000-deep body and the request died with a 500 (stack overflow in
  // the decoder), after the key had been taken.
  it("refuses a 5,000-deep body with 400 VALIDATION_ERROR, places nothing, and lets the key be used again", async () => {
    const q = await quote("side=BUY&quantity=3")
    const eventsBefore = await eventLines()
    for (const rawBody of ["[".repeat(5000) + "]".repeat(5000), `${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`]) {
      const r = await sandbox("POST", "/trade", { rawBody, headers: { "idempotency-key": "deep-key-0001" } })
      expectEnvelope(r, 400, "VALIDATION_ERROR")
      expect(r.body.error.message).toBe("the JSON body is nested deeper than 32 levels")
    }
    expect((await orders()).count).toBe(0)
    expect(await deskQueue()).toEqual([])
    expect(await eventLines()).toEqual(eventsBefore)
    const retry = await trade("deep-key-0001", { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: q.quoteId })
    expect(retry.status).toBe(202)
    expect(retry.headers.get("idempotent-replayed")).toBeNull()
    expect((await orders()).count).toBe(1)
    expect(await deskQueue()).toHaveLength(1)
  })

  // Old engine: validation errors had no `param`, numbers sent as strings were coerced (or VALIDATION_ERROR), an
  // impossible date rolled over (2026-02-30 became 2026-03-02), and enums were compared case-insensitively.
  it("names the parameter of every validation error, and uses INVALID_TYPE for wrong types", async () => {
    expectEnvelope(await sandbox("GET", "/stocks?limit=abc"), 400, "INVALID_TYPE", "limit")
    expectEnvelope(await sandbox("GET", "/orders?limit=abc"), 400, "INVALID_TYPE", "limit")
    expectEnvelope(await sandbox("GET", "/quote/SCOM?quantity=ten"), 400, "INVALID_TYPE", "quantity")
    const q = await quote("side=BUY&quantity=1")
    expectEnvelope(await trade("types-key-001", { symbol: "SCOM", type: "BUY", quantity: "1", quoteId: q.quoteId }), 400, "INVALID_TYPE", "quantity")
    expectEnvelope(await trade("types-key-002", { symbol: 5, type: "BUY", quantity: 1, quoteId: q.quoteId }), 400, "INVALID_TYPE", "symbol")
    expectEnvelope(await trade("types-key-003", { symbol: "SCOM", type: "BUY", cashValue: "5", quoteId: q.quoteId }), 400, "INVALID_TYPE", "cashValue")
  })

  it("always names the missing parameter of MISSING_PARAM", async () => {
    expectEnvelope(await sandbox("POST", "/trade", { headers: { "idempotency-key": "missing-key-01" } }), 400, "MISSING_PARAM", "body")
    expectEnvelope(await trade("missing-key-02", {}), 400, "MISSING_PARAM", "symbol")
    expectEnvelope(await trade("missing-key-03", { symbol: "SCOM", quantity: 1 }), 400, "MISSING_PARAM", "type")
    expectEnvelope(await engine.admin("POST", "/_sim/partners", { businessName: "Partner" }), 400, "MISSING_PARAM", "email")
  })

  it("refuses dates that are not on the calendar", async () => {
    expectEnvelope(await sandbox("GET", "/orders?from=2026-02-30"), 400, "VALIDATION_ERROR", "from")
    expectEnvelope(await sandbox("GET", "/orders?to=2026-02-29"), 400, "VALIDATION_ERROR", "to")
    expectEnvelope(await sandbox("GET", "/orders?from=2026-11-23T08:00:00"), 400, "VALIDATION_ERROR", "from")
    expect((await sandbox("GET", "/orders?from=2026-02-28&to=2028-02-29")).status).toBe(200)
  })

  it("refuses lower-case enums", async () => {
    const q = await quote("side=BUY&quantity=1")
    expectEnvelope(await trade("enum-key-0001", { symbol: "SCOM", type: "buy", quantity: 1, quoteId: q.quoteId }), 400, "VALIDATION_ERROR", "type")
    expectEnvelope(await sandbox("GET", "/orders?status=filled"), 400, "VALIDATION_ERROR", "status")
    expectEnvelope(await sandbox("GET", "/quote/SCOM?side=buy"), 400, "VALIDATION_ERROR", "side")
    expectEnvelope(await sandbox("GET", "/stocks?assetType=stock"), 400, "VALIDATION_ERROR", "assetType")
    expect((await orders()).count).toBe(0)
  })

  // Old engine: a quote bound only the symbol; any quantity, cashValue or side could be traded on it, and a quote
  // could be asked for an account that did not exist.
  it("binds a quantity quote to its quantity and side: a cashValue order, another quantity or the other side is 409", async () => {
    const q = await quote("side=BUY&quantity=10")
    expect(q).toMatchObject({ side: "BUY", quantity: 10, cashValue: null })
    expectEnvelope(await trade("bind-key-0001", { symbol: "SCOM", type: "BUY", cashValue: 500, quoteId: q.quoteId }), 409, "QUOTE_ORDER_MISMATCH", "quantity")
    expectEnvelope(await trade("bind-key-0002", { symbol: "SCOM", type: "BUY", quantity: 11, quoteId: q.quoteId }), 409, "QUOTE_ORDER_MISMATCH", "quantity")
    expectEnvelope(await trade("bind-key-0003", { symbol: "SCOM", type: "SELL", quantity: 10, quoteId: q.quoteId }), 409, "QUOTE_ORDER_MISMATCH", "side")
    expectEnvelope(await trade("bind-key-0004", { symbol: "KCB", type: "BUY", quantity: 10, quoteId: q.quoteId }), 409, "QUOTE_ORDER_MISMATCH", "symbol")
    expect((await orders()).count).toBe(0)
    // the refused orders did not use the quote up
    const ok = await trade("bind-key-0005", { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: q.quoteId })
    expect(ok.status).toBe(202)
    expect(ok.body.quantity).toBe(10)
  })

  it("answers 404 for a quote on a sub-account that does not exist", async () => {
    expectEnvelope(await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1&subAccountId=usr_missing"), 404, "NOT_FOUND", "subAccountId")
  })

  it("shows the quantity a cashValue quote buys, and an order on it gets exactly that quantity", async () => {
    const q = await quote("side=BUY&cashValue=500")
    expect(q.cashValue).toBe(500)
    expect(Number.isSafeInteger(q.quantity)).toBe(true)
    expect(q.quantity).toBeGreaterThan(0)
    expectEnvelope(await trade("cash-key-0001", { symbol: "SCOM", type: "BUY", cashValue: 499, quoteId: q.quoteId }), 409, "QUOTE_ORDER_MISMATCH", "cashValue")
    expectEnvelope(
      await trade("cash-key-0002", { symbol: "SCOM", type: "BUY", quantity: q.quantity, quoteId: q.quoteId }),
      409,
      "QUOTE_ORDER_MISMATCH",
      "cashValue"
    )
    const order = await trade("cash-key-0003", { symbol: "SCOM", type: "BUY", cashValue: 500, quoteId: q.quoteId })
    expect(order.status).toBe(202)
    expect(order.body.quantity).toBe(q.quantity)
    expect((await orders()).orders.map((o) => o.quantity)).toEqual([q.quantity])
  })

  // Old engine: a forced sandbox 500 went through the idempotency store like any answer, so the retry without the
  // force header replayed the 500.
  it("stores no forced answer under the key: the retry without the force header is processed", async () => {
    const q = await quote("side=BUY&quantity=4")
    const body = { symbol: "SCOM", type: "BUY", quantity: 4, quoteId: q.quoteId }
    const forced500 = await trade("forced-key-01", body, { "x-sandbox-force-status": "500" })
    expectEnvelope(forced500, 500, "INTERNAL_ERROR")
    const forced409 = await trade("forced-key-01", body, { "x-sandbox-force-error": "STALE_QUOTE" })
    expectEnvelope(forced409, 409, "STALE_QUOTE")
    expect((await orders()).count).toBe(0)
    const real = await trade("forced-key-01", body)
    expect(real.status).toBe(202)
    expect(real.headers.get("idempotent-replayed")).toBeNull()
    const replay = await trade("forced-key-01", body)
    expect(replay.headers.get("idempotent-replayed")).toBe("true")
    expect(replay.body).toEqual(real.body)
  })
})

/**
 * A real handler 5xx, on the gateway with a stub placeTrade: the first call dies (500 INTERNAL_ERROR), the second
 * fails with SERVICE_UNAVAILABLE (503), the third runs the real trade. Old engine: the 500 was stored and replayed.
 */
describe("5xx answers of a handler are never stored under an Idempotency-Key", () => {
  it("runs the handler again on each retry until it answers below 500, then replays that answer", async () => {
    let calls = 0
    const flaky = partnerRoute("placeTrade", 202, {
      body: TradeBody,
      handle: ({ body, principal }) => {
        calls++
        if (calls === 1) return Effect.die(new Error("boom"))
        if (calls === 2) return Effect.fail(fail("SERVICE_UNAVAILABLE", "the desk is away"))
        return TradingService.use((t) => t.trade(principal, "master", body))
      }
    })
    const routes: ReadonlyArray<Route<RouteServices>> = [flaky, ...orderRoutes.filter((r) => r.operationId !== "placeTrade"), ...quoteRoutes, ...controlRoutes]
    const log = engineLog()
    const config = { store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN, logger: log.logger } as const
    const runtime = ManagedRuntime.make(Layer.provide(Gateway.layer({ adminToken: ADMIN }, routes), engineLayer(config)))
    try {
      const handle = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
        const request = engineRequest(method, path, { "content-type": "application/json", ...headers }, body === undefined ? undefined : JSON.stringify(body))
        const response = await runtime.runPromise(Gateway.use((g) => g.handle(request)))
        return { ...response, json: JSON.parse(response.body) }
      }
      const partner = await handle("POST", "/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: "Flaky", email: "f@f.test" })
      expect(partner.status).toBe(201)
      const key = { "x-api-key": partner.json.sandboxKey as string }
      const q = await handle("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=5`, key)
      expect(q.status).toBe(200)
      const body = { symbol: "SCOM", type: "BUY", quantity: 5, quoteId: q.json.quoteId }
      const headers = { ...key, "idempotency-key": "flaky-key-001" }

      const { value: died, lines } = await log.during(() => handle("POST", `${SANDBOX}/trade`, headers, body))
      expect(died.status).toBe(500)
      expect(died.json.error.code).toBe("INTERNAL_ERROR")
      // the defect is logged, at ERROR, with the operation's name and the defect as its cause
      expect(lines.map((l) => [l.level, ...l.message])).toEqual([["ERROR", "unexpected failure in placeTrade"]])
      expect(lines[0]?.text).toContain("Error: boom")
      const unavailable = await handle("POST", `${SANDBOX}/trade`, headers, body)
      expect(unavailable.status).toBe(503)
      expect(unavailable.json.error.code).toBe("SERVICE_UNAVAILABLE")
      expect(unavailable.headers["idempotent-replayed"]).toBeUndefined()
      const placed = await handle("POST", `${SANDBOX}/trade`, headers, body)
      expect(placed.status).toBe(202)
      expect(placed.headers["idempotent-replayed"]).toBeUndefined()
      expect(calls).toBe(3)
      const replay = await handle("POST", `${SANDBOX}/trade`, headers, body)
      expect(replay.status).toBe(202)
      expect(replay.headers["idempotent-replayed"]).toBe("true")
      expect(replay.json).toEqual(placed.json)
      expect(calls).toBe(3)
    } finally {
      await runtime.dispose()
    }
  })
})
