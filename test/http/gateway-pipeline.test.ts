/**
 * The gateway's pipeline, answer by answer, on an in-process engine with a manual clock (gateway-kit.ts): where a path
 * belongs (locate), the header-size limit, unknown and unsimulated routes (404 with Allow, before or after the key is
 * asked), the control API's admin token, unexpected handler failures, and what goes to the trace. The guards between
 * them are tested in gateway-guards.test.ts.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { BASES, CONTROL_ROOT, locate, MAX_HEADER_BYTES, PUBLIC_ROOT, SANDBOX_ROOT } from "../../engine/http/gateway.ts"
import { partnerRoute } from "../../engine/http/route.ts"
import { ROUTES } from "../../engine/http/routes/index.ts"
import { expectError, makeEngine, noRateHeaders, SANDBOX } from "./gateway-kit.ts"
import { ADMIN } from "./harness.ts"

describe("locate", () => {
  it("names the bases and roots", () => {
    expect(BASES).toEqual([
      { prefix: "/api/sandbox/v1/partner", environment: "sandbox" },
      { prefix: "/api/v1/partner", environment: "production" }
    ])
    expect([SANDBOX_ROOT, PUBLIC_ROOT, CONTROL_ROOT, MAX_HEADER_BYTES]).toEqual(["/api/sandbox/v1", "/api/v1", "/_sim", 16_384])
  })

  it("maps each surface and the path within it", () => {
    expect(locate("/api/sandbox/v1/partner")).toEqual({ mount: "partner", environment: "sandbox", rest: "/" })
    expect(locate("/api/sandbox/v1/partner/stocks")).toEqual({ mount: "partner", environment: "sandbox", rest: "/stocks" })
    expect(locate("/api/v1/partner")).toEqual({ mount: "partner", environment: "production", rest: "/" })
    expect(locate("/api/v1/partner/orders/o1")).toEqual({ mount: "partner", environment: "production", rest: "/orders/o1" })
    expect(locate("/api/sandbox/v1/partnerx")).toEqual({ mount: "sandboxRoot", environment: "sandbox", rest: "/partnerx" })
    expect(locate("/api/sandbox/v1/register")).toEqual({ mount: "sandboxRoot", environment: "sandbox", rest: "/register" })
    expect(locate("/api/v1/status")).toEqual({ mount: "public", environment: "production", rest: "/status" })
    expect(locate("/api/v1/partnerx")).toEqual({ mount: "public", environment: "production", rest: "/partnerx" })
    expect(locate("/_sim")).toEqual({ mount: "control", environment: "sandbox", rest: "/_sim" })
    expect(locate("/_sim/clock")).toEqual({ mount: "control", environment: "sandbox", rest: "/_sim/clock" })
  })

  it("places nothing else", () => {
    for (const path of ["/", "/api/v1", "/api/sandbox/v1", "/_simx", "/x/_sim/clock", "/x/api/v1/status", "/docs"]) expect(locate(path)).toBeUndefined()
  })
})

describe("gateway pipeline", () => {
  let engine: ReturnType<typeof makeEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  beforeEach(async () => {
    engine = makeEngine()
    keys = await engine.newPartner()
  })
  afterEach(() => engine.dispose())
  const sb = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    engine.send(method, `${SANDBOX}${path}`, { "x-api-key": keys.sandboxKey, ...headers }, body)

  describe("header size", () => {
    it("accepts headers of exactly 16384 bytes and refuses one more with 431", async () => {
      const fill = (n: number) => ({ "x-pad": "a".repeat(n - "x-pad".length), "x-none": undefined })
      const exact = await engine.send("GET", "/api/v1/status", { ...fill(MAX_HEADER_BYTES - "x-none".length) })
      expect(exact.status).toBe(200)
      const over = await engine.send("GET", "/api/v1/status", { ...fill(MAX_HEADER_BYTES - "x-none".length + 1) })
      expect(over.status).toBe(431)
      expect(over.json.error).toEqual({ code: "VALIDATION_ERROR", message: "request headers exceed 16384 bytes" })
    })
  })

  describe("unknown and unsimulated routes", () => {
    it("off every surface: 404 without a key", async () => {
      const r = await engine.send("GET", "/nowhere")
      expectError(r, 404, "NOT_FOUND", "no route GET /nowhere")
      noRateHeaders(r)
    })

    it("on the public root: 404 at once, no key asked", async () => {
      const r = await engine.send("GET", "/api/v1/nope")
      expectError(r, 404, "NOT_FOUND", "no route GET /api/v1/nope: partner routes live under /api/v1/partner and /api/sandbox/v1/partner")
      noRateHeaders(r)
    })

    it("on a partner base: the key is asked first, then 404 with the rate-limit headers", async () => {
      expectError(await engine.send("GET", `${SANDBOX}/nope`), 401, "AUTH_MISSING")
      const r = await sb("GET", "/nope")
      expectError(r, 404, "NOT_FOUND", `no route GET ${SANDBOX}/nope: partner routes live under /api/v1/partner and /api/sandbox/v1/partner`)
      expect(r.headers["x-ratelimit-limit"]).toBe("300")
      expect(r.headers["x-ratelimit-remaining"]).toBe("299")
    })

    it("a contract operation not simulated yet is named, with the caller's rate-limit headers", async () => {
      // every contract operation is served now: an engine built without one route stands in for a gap
      const gw = await engine.build(ROUTES.filter((r) => r.operationId !== "getInvoice"))
      const invoice = await engine.send("GET", `${SANDBOX}/invoices/inv_0001`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      expectError(invoice, 404, "NOT_FOUND", "getInvoice (GET /invoices/{invoiceId}) is in the contract but not simulated yet: see the README")
      expect(invoice.headers["x-ratelimit-limit"]).toBe("300")
    })

    it("a method a served path does not take: 404 with Allow", async () => {
      const r = await sb("DELETE", "/stocks")
      expectError(r, 404, "NOT_FOUND", `DELETE is not an operation of ${SANDBOX}/stocks; it takes GET`)
      expect(r.headers.allow).toBe("GET")
      expect(r.headers["x-ratelimit-limit"]).toBe("300")
    })

    it("a method a contract-only path does not take: the contract's Allow", async () => {
      const r = await sb("DELETE", "/test-tools/orders")
      expectError(r, 404, "NOT_FOUND", `DELETE is not an operation of ${SANDBOX}/test-tools/orders; it takes GET`)
      expect(r.headers.allow).toBe("GET")
    })

    it("a method a contract path does not take, its operation not simulated: the contract's Allow", async () => {
      const gw = await engine.build(ROUTES.filter((r) => r.operationId !== "getInvoice"))
      const r = await engine.send("DELETE", `${SANDBOX}/invoices/inv_0001`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      expectError(r, 404, "NOT_FOUND", `DELETE is not an operation of ${SANDBOX}/invoices/inv_0001; it takes GET`)
      expect(r.headers.allow).toBe("GET")
    })

    it("on the control API: unknown paths and methods answer 404 before the admin token is asked", async () => {
      const unknown = await engine.send("GET", "/_sim/nope")
      expectError(unknown, 404, "NOT_FOUND", "no route GET /_sim/nope: partner routes live under /api/v1/partner and /api/sandbox/v1/partner")
      const wrong = await engine.send("DELETE", "/_sim/clock")
      expectError(wrong, 404, "NOT_FOUND", "DELETE is not an operation of /_sim/clock; it takes GET")
      expect(wrong.headers.allow).toBe("GET")
    })
  })

  describe("control API admin token", () => {
    it("missing, malformed, wrong and right", async () => {
      const missing = "the control API needs `Authorization: Bearer <admin token>`"
      expectError(await engine.send("GET", "/_sim/clock"), 401, "AUTH_MISSING", missing)
      expectError(await engine.send("GET", "/_sim/clock", { authorization: `Basic ${ADMIN}` }), 401, "AUTH_MISSING", missing)
      expectError(await engine.send("GET", "/_sim/clock", { authorization: `Bearer ${ADMIN} extra` }), 401, "AUTH_MISSING", missing)
      expectError(await engine.send("GET", "/_sim/clock", { authorization: `xBearer ${ADMIN}` }), 401, "AUTH_MISSING", missing)
      expectError(await engine.send("GET", "/_sim/clock", { authorization: "Bearer wrong-token" }), 401, "AUTH_INVALID", "wrong admin token")
      expectError(await engine.send("GET", "/_sim/clock", { "x-api-key": ADMIN }), 401, "AUTH_MISSING", missing)
      const ok = await engine.send("GET", "/_sim/clock", { authorization: `bearer   ${ADMIN}` })
      expect(ok.status).toBe(200)
      expect(ok.json).toEqual({ now: "2026-11-23T08:00:00.000Z", mode: "manual" })
      noRateHeaders(ok)
    })

    it("is absent without an admin token, even with one sent", async () => {
      const gw = await engine.build(ROUTES, { adminToken: undefined })
      for (const path of ["/_sim", "/_sim/clock"]) {
        const r = await engine.send("GET", path, { authorization: `Bearer ${ADMIN}` }, undefined, gw)
        expectError(r, 404, "NOT_FOUND", "the control API exists only in simulation mode")
      }
      expect((await engine.send("GET", "/api/v1/status", {}, undefined, gw)).status).toBe(200)
    })

    it("is neither in maintenance nor forced by sandbox headers", async () => {
      await engine.setMaintenance("full")
      const r = await engine.send("GET", "/_sim/clock", { authorization: `Bearer ${ADMIN}`, "x-sandbox-force-status": "500" })
      expect(r.status).toBe(200)
      expectError(await sb("GET", "/stocks"), 503, "MAINTENANCE")
    })
  })

  describe("unexpected handler failures", () => {
    it("a typed failure that is not an ApiFailure answers 500 INTERNAL_ERROR, logged, with the rate-limit headers", async () => {
      let calls = 0
      const broken = partnerRoute("listStocks", 200, {
        handle: () => {
          calls++
          return Effect.fail({ _tag: "StoreError", message: "disk on fire" } as never)
        }
      })
      const gw = await engine.build([broken])
      const { value: r, lines } = await engine.log.during(() => engine.send("GET", `${SANDBOX}/stocks`, { "x-api-key": keys.sandboxKey }, undefined, gw))
      expectError(r, 500, "INTERNAL_ERROR", "unexpected failure; safe to retry with the same Idempotency-Key")
      expect(r.headers["x-ratelimit-limit"]).toBe("300")
      expect(calls).toBe(1)
      // logged once, at ERROR, naming the operation, with the failure as its cause
      expect(lines.map((l) => [l.level, ...l.message])).toEqual([["ERROR", "unexpected failure in listStocks"]])
      expect(lines[0]?.text).toContain("disk on fire")
    })
  })

  describe("trace", () => {
    it("records each exchange with method, path and query, JSON bodies as values, other bodies as text; not the trace reads", async () => {
      await sb("GET", "/stocks?limit=1")
      await sb("POST", "/trade", { "idempotency-key": "trace-key-1" }, "not json")
      await sb("POST", "/trade", { "idempotency-key": "trace-key-2" }, '{"symbol":"SCOM"}')
      await engine.admin("GET", "/_sim/trace")
      await engine.admin("GET", "/_sim/trace/hash")
      const http = (await engine.traceLines()).filter((l) => l.kind === "http")
      const paths = http.map((l) => `${l.method} ${l.path}`)
      expect(paths).toEqual(["POST /_sim/partners", `GET ${SANDBOX}/stocks?limit=1`, `POST ${SANDBOX}/trade`, `POST ${SANDBOX}/trade`])
      expect(http[1]).toMatchObject({ request: null, status: 200, response: { count: 1 } })
      expect(http[2]).toMatchObject({ request: "not json", status: 400, response: { error: { code: "VALIDATION_ERROR" } } })
      expect(http[3].request).toEqual({ symbol: "SCOM" })
      expect(http[3].status).toBe(400)
    })
  })
})
