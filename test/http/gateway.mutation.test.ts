/**
 * The gateway's pipeline, answer by answer, on an in-process engine with a manual clock: where a path belongs
 * (locate), the header-size limit, the guard order (maintenance > auth > environment > rate limit > data key >
 * sandbox force > decode > idempotency), which answers carry the X-RateLimit-* headers, the 429 message and
 * Retry-After, unknown and unsimulated routes, the control API's admin token, idempotent replay and conflicts,
 * unexpected handler failures, and what goes to the trace.
 */
import { Effect, ManagedRuntime, Ref } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ApiKeys, timeSortKey } from "../../engine/app/docs.ts"
import { hashKey } from "../../engine/app/partners.ts"
import type { EngineRequest } from "../../engine/http/exchange.ts"
import { BASES, CONTROL_ROOT, Gateway, locate, MAX_HEADER_BYTES, PUBLIC_ROOT, SANDBOX_ROOT } from "../../engine/http/gateway.ts"
import { Idempotency } from "../../engine/http/guards/idempotency.ts"
import { Maintenance } from "../../engine/http/guards/maintenance.ts"
import { RateLimiter } from "../../engine/http/guards/rate-limit.ts"
import { partnerRoute, type Route } from "../../engine/http/route.ts"
import { ROUTES, type RouteServices } from "../../engine/http/routes/index.ts"
import { engineLayer } from "../../engine/runtime.ts"
import { Trace } from "../../engine/sim/trace.ts"
import { Store, StoreError } from "../../engine/store/port.ts"
import { ADMIN, MONDAY_OPEN } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const PROD = "/api/v1/partner"

interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly json: any
}

const makeEngine = (adminToken: string | undefined = ADMIN) => {
  const runtime = ManagedRuntime.make(engineLayer({ store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken }))
  let gateway: Gateway["Service"] | undefined
  const send = async (method: string, path: string, headers: Record<string, string | undefined> = {}, body?: string, via?: Gateway["Service"]) => {
    const [pathname = "", search = ""] = path.split("?")
    const request: EngineRequest = {
      method,
      path: pathname,
      query: new URLSearchParams(search),
      search: search === "" ? "" : `?${search}`,
      headers,
      body
    }
    if (gateway === undefined) gateway = await runtime.runPromise(Gateway.use((g) => Effect.succeed(g)))
    const g = via ?? gateway
    const r = await runtime.runPromise(g.handle(request))
    let json: any
    try {
      json = JSON.parse(r.body)
    } catch {
      json = undefined
    }
    return { status: r.status, headers: r.headers, body: r.body, json } satisfies Answer
  }
  const admin = (method: string, path: string, body?: unknown) =>
    send(method, path, { authorization: `Bearer ${ADMIN}` }, body === undefined ? undefined : JSON.stringify(body))
  const newPartner = async (tier = "starter") => {
    const r = await admin("POST", "/_sim/partners", { businessName: "Gate Partner", email: "g@p.test", tier })
    if (r.status !== 201) throw new Error(r.body)
    return r.json as { partnerId: string; sandboxKey: string; liveKey: string }
  }
  const advance = (seconds: number) => admin("POST", "/_sim/clock/advance", { seconds })
  const setMaintenance = (mode: "off" | "full" | "read_only", endsAt: number | null = null) =>
    runtime.runPromise(Maintenance.use((m) => Ref.set(m.state, { mode, endsAt, statusPage: "https://status.test" })))
  const traceLines = async () => (await runtime.runPromise(Trace.use((t) => t.lines))).map((l) => JSON.parse(l))
  const build = (routes: ReadonlyArray<Route<RouteServices>>, options: { adminToken: string | undefined } = { adminToken: ADMIN }) =>
    runtime.runPromise(Gateway.make(options, routes))
  /** A gateway of every route whose rate limiter or idempotency store is `replaced` (a backend that went away). */
  const buildOn = (replaced: { readonly limiter?: RateLimiter["Service"]; readonly idempotency?: Idempotency["Service"] }) =>
    runtime.runPromise(
      Effect.gen(function* () {
        const limiter = replaced.limiter ?? (yield* RateLimiter)
        const idempotency = replaced.idempotency ?? (yield* Idempotency)
        return yield* Gateway.make({ adminToken: ADMIN }, ROUTES).pipe(
          Effect.provideService(RateLimiter, limiter),
          Effect.provideService(Idempotency, idempotency)
        )
      })
    )
  const dataKey = async (partnerId: string) => {
    const raw = "pk_data_test_0123456789abcdef"
    const keyHash = hashKey(raw)
    await runtime.runPromise(
      Store.use((store) =>
        store.transact((tx) =>
          ApiKeys.put(tx, keyHash, "global", timeSortKey(MONDAY_OPEN, keyHash), {
            keyHash,
            partnerId,
            environment: "production",
            kind: "data",
            status: "active",
            last4: raw.slice(-4),
            createdAt: MONDAY_OPEN
          })
        )
      )
    )
    return raw
  }
  return { send, admin, newPartner, advance, setMaintenance, traceLines, build, buildOn, dataKey, dispose: () => runtime.dispose() }
}

const expectError = (a: Answer, status: number, code: string, message?: string) => {
  expect(a.status).toBe(status)
  expect(a.json?.error?.code).toBe(code)
  if (message !== undefined) expect(a.json.error.message).toBe(message)
}
const noRateHeaders = (a: Answer) => {
  expect(a.headers["x-ratelimit-limit"]).toBeUndefined()
  expect(a.headers["x-ratelimit-remaining"]).toBeUndefined()
  expect(a.headers["x-ratelimit-reset"]).toBeUndefined()
}

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
  const prod = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    engine.send(method, `${PROD}${path}`, { "x-api-key": keys.liveKey, ...headers }, body)

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

  describe("maintenance, first guard", () => {
    it("full: every request 503 before auth, Retry-After 60 without an end, no rate-limit headers", async () => {
      await engine.setMaintenance("full")
      const anonymous = await engine.send("GET", `${SANDBOX}/stocks`)
      expectError(anonymous, 503, "MAINTENANCE", "planned maintenance: the API is unavailable")
      expect(anonymous.headers["retry-after"]).toBe("60")
      expect(anonymous.json.error).toMatchObject({ mode: "full", statusPage: "https://status.test" })
      noRateHeaders(anonymous)
      expectError(await engine.send("GET", "/api/v1/status"), 503, "MAINTENANCE")
      expectError(await engine.send("GET", "/nowhere"), 404, "NOT_FOUND")
      await engine.setMaintenance("off")
      expect((await sb("GET", "/stocks")).headers["x-ratelimit-remaining"]).toBe("299")
    })

    it("read_only: reads pass, mutations 503 with Retry-After to endsAt", async () => {
      await engine.setMaintenance("read_only", MONDAY_OPEN + 120_500)
      expect((await sb("GET", "/stocks")).status).toBe(200)
      const trade = await sb("POST", "/trade", { "idempotency-key": "maint-key-1" }, "{}")
      expectError(trade, 503, "MAINTENANCE", "planned maintenance: the API is read-only")
      expect(trade.headers["retry-after"]).toBe("121")
      expect(trade.json.error).toMatchObject({ mode: "read_only", endsAt: "2026-11-23T08:02:00.500Z" })
    })
  })

  describe("rate limit", () => {
    it("production starter: 100 a minute, then 429 with the exact message, Retry-After and headers; frees after 60 s", async () => {
      for (let i = 1; i <= 100; i++) {
        const r = await prod("GET", "/stocks?limit=1")
        expect(r.status).toBe(200)
        if (i === 1 || i === 100) {
          expect(r.headers["x-ratelimit-limit"]).toBe("100")
          expect(r.headers["x-ratelimit-remaining"]).toBe(String(100 - i))
          expect(r.headers["x-ratelimit-reset"]).toBe(String(MONDAY_OPEN / 1000 + 60))
        }
      }
      const refused = await prod("GET", "/stocks?limit=1")
      expectError(refused, 429, "RATE_LIMITED", "rate limit exceeded: tier starter, 100 requests per minute, resets in 60 s")
      expect(refused.json.error.limit).toBe(100)
      expect(refused.headers["retry-after"]).toBe("60")
      expect(refused.headers["x-ratelimit-limit"]).toBe("100")
      expect(refused.headers["x-ratelimit-remaining"]).toBe("0")
      expect(refused.headers["x-ratelimit-reset"]).toBe(String(MONDAY_OPEN / 1000 + 60))
      // a refused request is not processed: a mutation with a bad body still answers 429, not 400
      expectError(await prod("POST", "/trade", { "idempotency-key": "rate-key-01" }, "nope"), 429, "RATE_LIMITED")
      // the sandbox has its own window
      expect((await sb("GET", "/stocks")).headers["x-ratelimit-remaining"]).toBe("299")

      await engine.advance(45)
      const later = await prod("GET", "/stocks?limit=1")
      expectError(later, 429, "RATE_LIMITED", "rate limit exceeded: tier starter, 100 requests per minute, resets in 15 s")
      expect(later.headers["retry-after"]).toBe("15")
      await engine.advance(15)
      const freed = await prod("GET", "/stocks?limit=1")
      expect(freed.status).toBe(200)
      // every hit of the full window was at the same instant, so all of them left it together
      expect(freed.headers["x-ratelimit-remaining"]).toBe("99")
    })

    it("sandbox: 300 a minute whatever the tier, and the message says sandbox", async () => {
      const growth = await engine.newPartner("growth")
      const call = () => engine.send("GET", `${SANDBOX}/stocks?limit=1`, { authorization: `Bearer ${growth.sandboxKey}` })
      for (let i = 0; i < 300; i++) expect((await call()).status).toBe(200)
      const refused = await call()
      expectError(refused, 429, "RATE_LIMITED", "rate limit exceeded: tier sandbox, 300 requests per minute, resets in 60 s")
      expect(refused.json.error.limit).toBe(300)
      const live = await engine.send("GET", `${PROD}/stocks`, { authorization: `Bearer ${growth.liveKey}` })
      expect(live.headers["x-ratelimit-limit"]).toBe("500")
      expect(live.headers["x-ratelimit-remaining"]).toBe("499")
    })

    it("no headers on answers before the key is known", async () => {
      const missing = await engine.send("GET", `${SANDBOX}/stocks`)
      expectError(missing, 401, "AUTH_MISSING", "send your API key as `Authorization: Bearer <key>` or `x-api-key: <key>`")
      noRateHeaders(missing)
      const invalid = await engine.send("GET", `${SANDBOX}/stocks`, { "x-api-key": keys.liveKey })
      expectError(invalid, 401, "AUTH_INVALID")
      noRateHeaders(invalid)
      const pub = await engine.send("GET", "/api/v1/status")
      expect(pub.status).toBe(200)
      noRateHeaders(pub)
    })

    it("headers on every keyed answer: success, decode failure, business failure, forced failure, missing key", async () => {
      const answers = [
        await sb("GET", "/stocks"),
        await sb("GET", "/quote/SCOM?side=SIDEWAYS"),
        await sb("GET", "/quote/NOPE?side=BUY&quantity=1"),
        await sb("GET", "/stocks", { "x-sandbox-force-status": "500" }),
        await sb("POST", "/trade", {}, "{}")
      ]
      expect(answers.map((a) => a.status)).toEqual([200, 400, 404, 500, 400])
      answers.forEach((a, i) => {
        expect(a.headers["x-ratelimit-limit"]).toBe("300")
        expect(a.headers["x-ratelimit-remaining"]).toBe(String(299 - i))
      })
    })
  })

  describe("environments and data keys", () => {
    it("an operation the environment does not have: 403 FORBIDDEN, after auth", async () => {
      const tools = partnerRoute("listTestToolOrders", 200, { handle: () => Effect.succeed({ orders: [] } as never) })
      const gw = await engine.build([tools, ...ROUTES])
      const live = await engine.send("GET", `${PROD}/test-tools/orders`, { "x-api-key": keys.liveKey }, undefined, gw)
      expectError(live, 403, "FORBIDDEN", "listTestToolOrders is not available in the production environment (spec: production unsupported)")
      expectError(await engine.send("GET", `${PROD}/test-tools/orders`, {}, undefined, gw), 401, "AUTH_MISSING")
      const sandbox = await engine.send("GET", `${SANDBOX}/test-tools/orders`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      expect(sandbox.status).toBe(200)
      expect(sandbox.headers["x-ratelimit-remaining"]).toBe("299")
    })

    it("a data key reads market data and nothing else, sharing the partner's window", async () => {
      const data = await engine.dataKey(keys.partnerId)
      const stocks = await engine.send("GET", `${PROD}/stocks`, { "x-api-key": data })
      expect(stocks.status).toBe(200)
      expect(stocks.headers["x-ratelimit-remaining"]).toBe("99")
      const orders = await engine.send("GET", `${PROD}/orders`, { "x-api-key": data })
      expectError(orders, 403, "FORBIDDEN", "data keys are read-only: GET on the market-data families only")
      expect(orders.headers["x-ratelimit-remaining"]).toBe("98")
      const trade = await engine.send("POST", `${PROD}/trade`, { "x-api-key": data, "idempotency-key": "data-key-01" }, "{}")
      expectError(trade, 403, "FORBIDDEN", "data keys are read-only: GET on the market-data families only")
      expect((await prod("GET", "/stocks")).headers["x-ratelimit-remaining"]).toBe("96")
    })
  })

  describe("ipAllowlist and OAuth scopes", () => {
    it("a request from no known address is outside any ipAllowlist, and the refusal says so", async () => {
      const patch = await sb("PATCH", "/settings", { "idempotency-key": "allowlist-key-1" }, JSON.stringify({ ipAllowlist: ["192.0.2.0/24"] }))
      expect(patch.status).toBe(200)
      // `send` gives no remote address, as an in-process request without a socket has none.
      const r = await sb("GET", "/wallet")
      expectError(r, 403, "FORBIDDEN", "requests from an unknown address are outside the partner's ipAllowlist (GET /settings)")
      expect(r.headers["x-ratelimit-limit"]).toBe("300")
    })

    it("an access token without any of an operation's scopes: 403 naming each of them", async () => {
      expect((await engine.admin("POST", `/_sim/partners/${keys.partnerId}/oauth`, { enabled: true })).status).toBe(200)
      const issued = await engine.send(
        "POST",
        `${PROD}/oauth/token`,
        { "content-type": "application/json" },
        JSON.stringify({ grant_type: "client_credentials", client_secret: keys.liveKey, scope: "accounts:read" })
      )
      expect(issued.status).toBe(200)
      // The contract gives each operation one scope at most; a route may name several, any one of which will do.
      const stocks = ROUTES.find((r) => r.operationId === "listStocks")
      if (stocks === undefined) throw new Error("no listStocks route")
      const gw = await engine.build([{ ...stocks, scopes: ["market:read", "trading:write"] }])
      const r = await engine.send("GET", `${PROD}/stocks`, { authorization: `Bearer ${issued.json.access_token}` }, undefined, gw)
      expectError(r, 403, "FORBIDDEN", "the access token's scopes do not include market:read or trading:write, which listStocks needs")
    })
  })

  describe("a backend that went away", () => {
    const unreachable = new StoreError({ message: "connection refused" })

    it("rate-limit windows unreachable: 503 with Retry-After 1, per source IP and per key, nothing processed", async () => {
      const gw = await engine.buildOn({ limiter: { take: () => Effect.fail(unreachable) } })
      const message = "the service is briefly unavailable; nothing was processed, retry shortly"
      for (const r of [
        await engine.send("GET", "/api/v1/status", {}, undefined, gw),
        await engine.send("GET", `${SANDBOX}/stocks`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      ]) {
        expectError(r, 503, "SERVICE_UNAVAILABLE", message)
        expect(r.headers["retry-after"]).toBe("1")
      }
    })

    it("the idempotency store unreachable: 500 INTERNAL_ERROR, and the handler never ran", async () => {
      const gw = await engine.buildOn({ idempotency: { begin: () => Effect.fail(unreachable), complete: () => Effect.void } })
      const body = JSON.stringify({ externalId: "idem-down-1", email: "down@p.test" })
      const r = await engine.send("POST", `${SANDBOX}/users`, { "x-api-key": keys.sandboxKey, "idempotency-key": "idem-down-0001" }, body, gw)
      expectError(r, 500, "INTERNAL_ERROR", "unexpected failure; safe to retry")
      expect((await sb("GET", "/users")).json.count).toBe(0)
    })
  })

  describe("sandbox force", () => {
    it("honoured on the sandbox only, before decoding and the Idempotency-Key, with Retry-After on 429", async () => {
      const forced = await sb("GET", "/quote/SCOM?side=SIDEWAYS", { "x-sandbox-force-status": "404" })
      expectError(forced, 404, "NOT_FOUND", "forced by the X-Sandbox-Force-* request headers (NOT_FOUND)")
      const noKey = await sb("POST", "/trade", { "x-sandbox-force-error": "CONFLICT" }, "nope")
      expectError(noKey, 409, "CONFLICT")
      const limited = await sb("GET", "/stocks", { "x-sandbox-force-status": "429" })
      expectError(limited, 429, "RATE_LIMITED")
      expect(limited.headers["retry-after"]).toBe("1")
      expect(limited.headers["x-ratelimit-limit"]).toBe("300")
      const bad = await sb("GET", "/stocks", { "x-sandbox-force-status": "418" })
      expectError(bad, 400, "VALIDATION_ERROR")
      expect(bad.json.error.param).toBe("X-Sandbox-Force-Status")
      const live = await prod("GET", "/stocks", { "x-sandbox-force-status": "500" })
      expect(live.status).toBe(200)
    })
  })

  describe("idempotency through the gateway", () => {
    const quoteId = async () => (await sb("GET", "/quote/SCOM?side=BUY&quantity=1")).json.quoteId as string
    const tradeBody = (q: string, quantity = 1) => JSON.stringify({ symbol: "SCOM", type: "BUY", quantity, quoteId: q })

    it("the key's presence and length (7 refused, 8 taken), with the rate-limit headers", async () => {
      const q = await quoteId()
      const missing = await sb("POST", "/trade", {}, tradeBody(q))
      expectError(missing, 400, "MISSING_IDEMPOTENCY_KEY")
      expect(missing.headers["x-ratelimit-limit"]).toBe("300")
      const short = await sb("POST", "/trade", { "idempotency-key": "1234567" }, tradeBody(q))
      expectError(short, 400, "VALIDATION_ERROR", "Idempotency-Key must be 8 to 200 characters")
      expect(short.json.error.param).toBe("Idempotency-Key")
      expect(short.headers["x-ratelimit-limit"]).toBe("300")
      const ok = await sb("POST", "/trade", { "idempotency-key": "12345678" }, tradeBody(q))
      expect(ok.status).toBe(202)
    })

    it("replays with Idempotent-Replayed and fresh rate-limit headers; a different body, query or partner is not the same request", async () => {
      const q = await quoteId()
      const first = await sb("POST", "/trade", { "idempotency-key": "replay-key-1" }, tradeBody(q))
      expect(first.status).toBe(202)
      expect(first.headers["idempotent-replayed"]).toBeUndefined()
      const again = await sb("POST", "/trade", { "idempotency-key": "replay-key-1" }, tradeBody(q))
      expect(again.status).toBe(202)
      expect(again.body).toBe(first.body)
      expect(again.headers).toMatchObject({ "content-type": "application/json", "idempotent-replayed": "true", "x-ratelimit-limit": "300" })
      expect(Number(again.headers["x-ratelimit-remaining"])).toBe(Number(first.headers["x-ratelimit-remaining"]) - 1)

      const otherBody = await sb("POST", "/trade", { "idempotency-key": "replay-key-1" }, tradeBody(q, 2))
      expectError(otherBody, 422, "IDEMPOTENCY_KEY_REUSED")
      expect(otherBody.json.error.message).toContain("different request")
      expect(otherBody.headers["x-ratelimit-limit"]).toBe("300")
      const otherQuery = await sb("POST", "/trade?x=1", { "idempotency-key": "replay-key-1" }, tradeBody(q))
      expectError(otherQuery, 422, "IDEMPOTENCY_KEY_REUSED")

      const other = await engine.newPartner()
      const q2 = (await engine.send("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=1`, { "x-api-key": other.sandboxKey })).json.quoteId
      const theirs = await engine.send("POST", `${SANDBOX}/trade`, { "x-api-key": other.sandboxKey, "idempotency-key": "replay-key-1" }, tradeBody(q2))
      expect(theirs.status).toBe(202)
      expect(theirs.headers["idempotent-replayed"]).toBeUndefined()
    })

    it("a business failure below 500 is stored and replayed", async () => {
      const body = JSON.stringify({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_nope" })
      const first = await sb("POST", "/trade", { "idempotency-key": "fail-key-01" }, body)
      expect(first.status).toBeGreaterThanOrEqual(400)
      expect(first.status).toBeLessThan(500)
      const again = await sb("POST", "/trade", { "idempotency-key": "fail-key-01" }, body)
      expect(again.status).toBe(first.status)
      expect(again.body).toBe(first.body)
      expect(again.headers["idempotent-replayed"]).toBe("true")
    })

    it("a GET takes no Idempotency-Key, whatever is sent", async () => {
      const r = await sb("GET", "/orders", { "idempotency-key": "x" })
      expect(r.status).toBe(200)
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
      const r = await engine.send("GET", `${SANDBOX}/stocks`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      expectError(r, 500, "INTERNAL_ERROR", "unexpected failure; safe to retry with the same Idempotency-Key")
      expect(r.headers["x-ratelimit-limit"]).toBe("300")
      expect(calls).toBe(1)
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
