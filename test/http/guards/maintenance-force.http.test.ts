/**
 * Maintenance, outage and sandbox force headers through HTTP (issue 9, item 7), every answer checked against the
 * contract by the harness (forced answers included, D-018 revised): `PUT /_sim/maintenance` full / read_only / outage /
 * off with mode, endsAt, statusPage and Retry-After, and the partial outage of named operations (D-320); the control
 * API never refused; a 503 never consumes an
 * Idempotency-Key; force headers honoured on every served sandbox operation, ignored in production, counted by the
 * rate limiter and answered before idempotency.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ROUTES } from "../../../engine/http/routes/index.ts"
import { ADMIN, type Reply, startEngine } from "../harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const PROD = "/api/v1/partner"
const PAGE = "https://status.example.com"

describe("maintenance and force headers over HTTP", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  beforeEach(async () => {
    engine = startEngine()
    keys = await engine.newPartner()
  })
  afterEach(() => engine.dispose())

  const sandbox = (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) =>
    engine.call(method, `${SANDBOX}${path}`, { ...init, headers: { "x-api-key": keys.sandboxKey, ...init.headers } })
  const setMode = (body: unknown) => engine.admin("PUT", "/_sim/maintenance", body)
  const placeTrade = async (key: string) => {
    const q = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1")
    expect(q.status).toBe(200)
    return sandbox("POST", "/trade", { headers: { "idempotency-key": key }, body: { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.body.quoteId } })
  }
  const expect503 = (r: Reply, code: string, retryAfter: string) => {
    expect(r.status).toBe(503)
    expect(r.body.error.code).toBe(code)
    expect(r.headers.get("retry-after")).toBe(retryAfter)
  }

  it("starts off; GET /_sim/maintenance reads the mode; the control API needs the admin token", async () => {
    expect((await engine.admin("GET", "/_sim/maintenance")).body).toEqual({ mode: "off", endsAt: null, statusPage: PAGE })
    const anonymous = await engine.call("PUT", "/_sim/maintenance", { body: { mode: "full" } })
    expect(anonymous.status).toBe(401)
    expect((await sandbox("GET", "/stocks?limit=1")).status).toBe(200)
  })

  it("full: every partner and public request answers 503 MAINTENANCE with mode, statusPage and Retry-After 60; the control API still works", async () => {
    const set = await setMode({ mode: "full", statusPage: "https://status.sokoni.test/incidents/1" })
    expect(set.status).toBe(200)
    expect(set.body).toEqual({ mode: "full", endsAt: null, statusPage: "https://status.sokoni.test/incidents/1" })
    const read = await sandbox("GET", "/stocks?limit=1")
    expect503(read, "MAINTENANCE", "60")
    expect(read.body.error).toEqual({
      code: "MAINTENANCE",
      message: "planned maintenance: the API is unavailable",
      mode: "full",
      statusPage: "https://status.sokoni.test/incidents/1"
    })
    // Refused before authentication: even a request without a key gets the maintenance answer.
    expect503(await engine.call("GET", `${PROD}/stocks`), "MAINTENANCE", "60")
    expect503(await engine.call("GET", "/api/v1/status"), "MAINTENANCE", "60")
    expect((await engine.admin("GET", "/_sim/clock")).status).toBe(200)
    expect((await engine.admin("GET", "/_sim/maintenance")).body.mode).toBe("full")
  })

  it("read_only: reads served, writes refused with endsAt and Retry-After to it; the refused write's key stays free", async () => {
    const q = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1")
    const set = await setMode({ mode: "read_only", endsAt: "2026-11-23T08:10:00.000Z" })
    expect(set.body).toEqual({ mode: "read_only", endsAt: "2026-11-23T08:10:00.000Z", statusPage: PAGE })
    expect((await sandbox("GET", "/stocks?limit=1")).status).toBe(200)
    const trade = { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.body.quoteId }
    const refused = await sandbox("POST", "/trade", { headers: { "idempotency-key": "ro-trade-0001" }, body: trade })
    expect503(refused, "MAINTENANCE", "600")
    expect(refused.body.error).toMatchObject({ mode: "read_only", endsAt: "2026-11-23T08:10:00.000Z", statusPage: PAGE })
    expect(refused.body.error.message).toBe("planned maintenance: the API is read-only")
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 30 })
    expect((await sandbox("POST", "/trade", { headers: { "idempotency-key": "ro-trade-0001" }, body: trade })).headers.get("retry-after")).toBe("570")
    expect((await setMode({ mode: "off" })).body).toEqual({ mode: "off", endsAt: null, statusPage: PAGE })
    const placed = await sandbox("POST", "/trade", { headers: { "idempotency-key": "ro-trade-0001" }, body: trade })
    expect(placed.status).toBe(202)
    expect(placed.headers.get("idempotent-replayed")).toBeNull()
  })

  it("outage: 503 SERVICE_UNAVAILABLE with Retry-After 30 (or to endsAt); nothing processed, the key is not stored", async () => {
    await setMode({ mode: "outage" })
    const q = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1")
    expect503(q, "SERVICE_UNAVAILABLE", "30")
    expect(q.body.error.message).toContain("safe to resend")
    await setMode({ mode: "outage", endsAt: "2026-11-23T08:00:45.000Z" })
    expect503(await sandbox("GET", "/stocks"), "SERVICE_UNAVAILABLE", "45")
    expect503(await sandbox("POST", "/trade", { headers: { "idempotency-key": "outage-trade-01" }, body: {} }), "SERVICE_UNAVAILABLE", "45")
    await setMode({ mode: "off" })
    const placed = await placeTrade("outage-trade-01")
    expect(placed.status).toBe(202)
    expect(placed.headers.get("idempotent-replayed")).toBeNull()
  })

  it("partial outage (D-320): only the named operations answer 503 SERVICE_UNAVAILABLE, in both environments; the rest is served; /sla says partial_outage", async () => {
    const live = (method: string, path: string) => engine.call(method, `${PROD}${path}`, { headers: { "x-api-key": keys.liveKey } })
    const set = await setMode({ mode: "outage", operations: ["getQuote", "placeTrade"] })
    expect(set.body).toEqual({ mode: "outage", endsAt: null, statusPage: PAGE, operations: ["getQuote", "placeTrade"] })
    expect((await engine.admin("GET", "/_sim/maintenance")).body.operations).toEqual(["getQuote", "placeTrade"])
    expect503(await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1"), "SERVICE_UNAVAILABLE", "30")
    expect503(await live("GET", "/quote/SCOM?side=BUY&quantity=1"), "SERVICE_UNAVAILABLE", "30")
    const refused = await sandbox("POST", "/trade", { headers: { "idempotency-key": "partial-trade-1" }, body: {} })
    expect503(refused, "SERVICE_UNAVAILABLE", "30")
    expect(refused.headers.get("x-ratelimit-limit")).toBeNull()
    expect((await sandbox("GET", "/stocks?limit=1")).status).toBe(200)
    expect((await live("GET", "/wallet")).status).toBe(200)
    expect((await sandbox("POST", "/users", { headers: { "idempotency-key": "partial-user-1" }, body: { externalId: "during-outage" } })).status).toBe(201)
    const sla = await sandbox("GET", "/sla")
    expect([sla.status, sla.body.status]).toEqual([200, "partial_outage"])
    // Setting the mode again replaces the scope: a whole outage has none.
    expect((await setMode({ mode: "outage" })).body).toEqual({ mode: "outage", endsAt: null, statusPage: PAGE })
    expect503(await sandbox("GET", "/stocks?limit=1"), "SERVICE_UNAVAILABLE", "30")
    expect((await setMode({ mode: "off" })).body).toEqual({ mode: "off", endsAt: null, statusPage: PAGE })
    // The refused trade's key was not stored: it places the trade now.
    expect((await placeTrade("partial-trade-1")).status).toBe(202)
  })

  it("refuses a partial outage's bad operations (400 VALIDATION_ERROR, param operations) and changes nothing", async () => {
    const outageOnly = { code: "VALIDATION_ERROR", message: "`operations` scopes an outage: send it with mode outage only", param: "operations" }
    // The contract's minItems, maxItems and uniqueItems refuse these (E-313).
    const none = { code: "VALIDATION_ERROR", message: "operations must be a list of at least 1 item, got []", param: "operations" }
    const tooMany = (got: string) => ({
      code: "VALIDATION_ERROR",
      message: `operations must be a list of at most 200 items, got ${got}`,
      param: "operations",
      max: 200
    })
    const twice = (items: string, got: string) => ({
      code: "VALIDATION_ERROR",
      message: `operations must be a list without repeats (items ${items} are the same), got ${got}`,
      param: "operations"
    })
    const shown = (names: ReadonlyArray<string>) => `${JSON.stringify(names).slice(0, 57)}...`
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [{ mode: "full", operations: ["getQuote"] }, outageOnly],
      [{ mode: "read_only", operations: ["getQuote"] }, outageOnly],
      [{ mode: "outage", operations: [] }, none],
      // 201 names are too many whatever they are; 200 are not, so these 200 are refused for their repeats
      [{ mode: "outage", operations: Array.from({ length: 201 }, () => "getQuote") }, tooMany(shown(Array(201).fill("getQuote")))],
      [{ mode: "outage", operations: Array.from({ length: 200 }, () => "getQuote") }, twice("198 and 199", shown(Array(200).fill("getQuote")))],
      [
        { mode: "outage", operations: ["getQuote", "noSuchOperation", "getSimClock"] },
        {
          code: "VALIDATION_ERROR",
          message: "not operations of the partner contract: noSuchOperation, getSimClock",
          param: "operations",
          invalid: ["noSuchOperation", "getSimClock"]
        }
      ],
      [{ mode: "outage", operations: ["getQuote", "getQuote"] }, twice("0 and 1", '["getQuote","getQuote"]')]
    ]
    for (const [body, error] of cases) {
      const r = await setMode(body)
      expect([r.status, r.body.error], JSON.stringify(body).slice(0, 80)).toEqual([400, error])
    }
    const typed = await setMode({ mode: "outage", operations: [42] })
    expect([typed.status, typed.body.error.code]).toEqual([400, "INVALID_TYPE"])
    expect((await engine.admin("GET", "/_sim/maintenance")).body).toEqual({ mode: "off", endsAt: null, statusPage: PAGE })
  })

  it("refuses a bad mode, a past or malformed endsAt, a bad statusPage (400 VALIDATION_ERROR) and a missing mode (400 MISSING_PARAM)", async () => {
    for (const body of [
      { mode: "down" },
      { mode: "full", endsAt: "2026-11-23T07:59:59.000Z" },
      { mode: "full", endsAt: "2026-11-23T08:00:00.000Z" },
      { mode: "full", endsAt: "tomorrow" },
      { mode: "full", statusPage: "not a url" }
    ]) {
      const r = await setMode(body)
      expect(r.status, JSON.stringify(body)).toBe(400)
      expect(r.body.error.code).toBe("VALIDATION_ERROR")
    }
    const past = { code: "VALIDATION_ERROR", message: "`endsAt` must be after the engine's current time", param: "endsAt" }
    expect((await setMode({ mode: "full", endsAt: "2026-11-23T08:00:00.000Z" })).body.error).toEqual(past)
    expect((await setMode({ mode: "off", endsAt: "2026-11-23T07:00:00.000Z" })).body.error).toEqual(past)
    expect((await setMode({ mode: "read_only", endsAt: "tomorrow" })).body.error).toEqual({
      code: "VALIDATION_ERROR",
      message: 'endsAt must be a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z), got "tomorrow"',
      param: "endsAt"
    })
    expect((await setMode({})).body.error.code).toBe("MISSING_PARAM")
    expect((await engine.admin("GET", "/_sim/maintenance")).body.mode).toBe("off")
  })

  it("off announces no end: an endsAt sent with it is checked, then dropped, and not shown", async () => {
    await setMode({ mode: "full", endsAt: "2026-11-23T09:00:00.000Z" })
    const off = await setMode({ mode: "off", endsAt: "2026-11-23T10:00:00.000Z" })
    expect([off.status, off.body]).toEqual([200, { mode: "off", endsAt: null, statusPage: PAGE }])
    expect((await engine.admin("GET", "/_sim/maintenance")).body).toEqual({ mode: "off", endsAt: null, statusPage: PAGE })
    expect((await sandbox("GET", "/stocks?limit=1")).status).toBe(200)
  })

  it("honours the force headers on every served sandbox operation (each answer valid for that operation)", async () => {
    const sandboxRoutes = ROUTES.filter((r) => r.mount === "partner" && r.environments.includes("sandbox"))
    expect(sandboxRoutes.length).toBeGreaterThan(3)
    for (const route of sandboxRoutes) {
      const path = route.path.replace(/\{[^}]+\}/g, "SCOM")
      const r = await sandbox(route.method, path, { headers: { "x-sandbox-force-status": "500", "idempotency-key": "never-used-0001" } })
      expect(r.status, route.operationId).toBe(500)
      expect(r.body.error.code).toBe("INTERNAL_ERROR")
      expect(r.headers.get("x-ratelimit-limit")).toBe("300")
    }
  })

  it("forced answers: 429 and 503 carry Retry-After, a code alone its own status, production ignores the headers, nothing is processed", async () => {
    const limited = await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-status": "429" } })
    expect(limited.status).toBe(429)
    expect(limited.body.error.code).toBe("RATE_LIMITED")
    expect(limited.headers.get("retry-after")).toBe("1")
    const unavailable = await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-status": "503" } })
    expect503(unavailable, "SERVICE_UNAVAILABLE", "1")
    const q = await sandbox("GET", "/quote/SCOM?side=BUY&quantity=1")
    const trade = { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.body.quoteId }
    const poor = await sandbox("POST", "/trade", {
      headers: { "x-sandbox-force-error": "INSUFFICIENT_FUNDS", "idempotency-key": "forced-trade-01" },
      body: trade
    })
    expect(poor.status).toBe(400)
    expect(poor.body.error.code).toBe("INSUFFICIENT_FUNDS")
    // The forced answer neither placed the order nor used the key: the same key then places it.
    const placed = await sandbox("POST", "/trade", { headers: { "idempotency-key": "forced-trade-01" }, body: trade })
    expect(placed.status).toBe(202)
    expect(placed.headers.get("idempotent-replayed")).toBeNull()
    const notDeclared = await sandbox("GET", "/stocks", { headers: { "x-sandbox-force-status": "502" } })
    expect(notDeclared.status).toBe(400)
    expect(notDeclared.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "X-Sandbox-Force-Status" })
    const prod = await engine.call("GET", `${PROD}/stocks?limit=1`, { headers: { "x-api-key": keys.liveKey, "x-sandbox-force-status": "500" } })
    expect(prod.status).toBe(200)
    // Forced answers are counted like any other.
    const before = Number(limited.headers.get("x-ratelimit-remaining"))
    expect(Number(unavailable.headers.get("x-ratelimit-remaining"))).toBe(before - 1)
  })

  it("the admin token is required to set the mode, and a wrong one is refused", async () => {
    const wrong = await engine.call("PUT", "/_sim/maintenance", { headers: { authorization: "Bearer nope" }, body: { mode: "full" } })
    expect(wrong.status).toBe(401)
    expect(wrong.body.error.code).toBe("AUTH_INVALID")
    expect((await engine.call("GET", "/_sim/maintenance", { headers: { authorization: `Bearer ${ADMIN}` } })).body.mode).toBe("off")
  })
})
