/**
 * The gateway's guards in their order (maintenance > auth > environment > rate limit > data key > sandbox force >
 * decode > idempotency), answer by answer, on an in-process engine with a manual clock (gateway-kit.ts): maintenance
 * before auth, the rate limit (the 429 message and Retry-After, which answers carry the X-RateLimit-* headers),
 * environments and data keys, the ipAllowlist and OAuth scopes, a rate-limit or idempotency backend that went away,
 * the sandbox force headers, and idempotent replay and conflicts.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { partnerRoute } from "../../engine/http/route.ts"
import { ROUTES } from "../../engine/http/routes/index.ts"
import { StoreError } from "../../engine/store/port.ts"
import { expectError, makeEngine, noRateHeaders, PROD, SANDBOX } from "./gateway-kit.ts"
import { MONDAY_OPEN } from "./harness.ts"

describe("gateway guards", () => {
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
      // subAccountId: the contract requires it, and the contract validates every route's query (E-310)
      const sandbox = await engine.send("GET", `${SANDBOX}/test-tools/orders?subAccountId=usr_any`, { "x-api-key": keys.sandboxKey }, undefined, gw)
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
      const { value: answers, lines: logged } = await engine.log.during(async () => [
        await engine.send("GET", "/api/v1/status", {}, undefined, gw),
        await engine.send("GET", `${SANDBOX}/stocks`, { "x-api-key": keys.sandboxKey }, undefined, gw)
      ])
      for (const r of answers) {
        expectError(r, 503, "SERVICE_UNAVAILABLE", message)
        expect(r.headers["retry-after"]).toBe("1")
      }
      // and the outage is logged, once a request, with the store's error
      expect(logged.map((l) => [l.level, ...l.message])).toEqual([
        ["ERROR", "rate-limit windows unavailable", unreachable],
        ["ERROR", "rate-limit windows unavailable", unreachable]
      ])
    })

    it("the idempotency store unreachable: 500 INTERNAL_ERROR, and the handler never ran", async () => {
      const gw = await engine.buildOn({ idempotency: { execute: () => Effect.fail(unreachable), executeUnkeyed: () => Effect.fail(unreachable) } })
      const body = JSON.stringify({ externalId: "idem-down-1", email: "down@p.test" })
      const { value: r, lines: logged } = await engine.log.during(() =>
        engine.send("POST", `${SANDBOX}/users`, { "x-api-key": keys.sandboxKey, "idempotency-key": "idem-down-0001" }, body, gw)
      )
      expectError(r, 500, "INTERNAL_ERROR", "unexpected failure; safe to retry")
      expect(logged.map((l) => [l.level, ...l.message])).toEqual([["ERROR", "store failure in the gateway", unreachable]])
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
})
