/**
 * The sandbox force headers on EVERY sandbox operation of the contract (issue 9, item 7; D-018 revised): each
 * operation served on the sandbox partner base or the sandbox root (an operation the contract has but the engine does
 * not serve yet answers its "not simulated yet" 404, and is walked as soon as it is served), forced to each error status it declares that a
 * force can give, answers exactly that status with the status's default code, valid against that operation's own
 * responses (the harness checks every answer), with Retry-After on 429 and 503 and the rate-limit headers when the
 * caller is keyed; forcing a code alone answers the code's own status. Nothing is processed: the whole walk, mutations
 * included, commits no event and moves no money. Production ignores the headers (one operation per family checked).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { PARTNER_OPERATIONS } from "../../../engine/contract/catalogue.gen.ts"
import { DEFAULT_CODE } from "../../../engine/http/guards/sandbox-force.ts"
import { ROUTES } from "../../../engine/http/routes/index.ts"
import { LIVE, SANDBOX } from "../accounts-kit.ts"
import { startEngine } from "../harness.ts"

const SANDBOX_ROOT = "/api/sandbox/v1"

/** Every operation the contract offers on the sandbox (partner base and sandbox root). */
const sandboxOperations = PARTNER_OPERATIONS.filter(
  (o) => (o.mount === "partner" && (o.environments as ReadonlyArray<string>).includes("sandbox")) || o.mount === "sandboxRoot"
)

describe("sandbox force headers on every sandbox operation", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  beforeEach(async () => {
    engine = startEngine()
    keys = await engine.newPartner()
  })
  afterEach(() => engine.dispose())

  const events = async () =>
    String((await engine.admin("GET", "/_sim/trace")).body)
      .split("\n")
      .filter((l) => l.includes('"kind":"event"')).length
  const urlOf = (mount: string, path: string) => `${mount === "sandboxRoot" ? SANDBOX_ROOT : SANDBOX}${path.replace(/\{[^}]+\}/g, "SCOM")}`

  it("an operation of the contract not served yet answers its 'not simulated yet' 404 whatever is forced; the walk below takes the rest", async () => {
    const served = new Set(ROUTES.map((r) => r.operationId))
    expect(sandboxOperations.length).toBeGreaterThan(50)
    for (const op of sandboxOperations.filter((o) => !served.has(o.operationId))) {
      const r = await engine.call(op.method, urlOf(op.mount, op.path), {
        headers: { "x-api-key": keys.sandboxKey, "x-sandbox-force-status": "500" },
        unchecked: true
      })
      expect([r.status, r.body.error.code], op.operationId).toEqual([404, "NOT_FOUND"])
      expect(r.body.error.message).toContain("not simulated yet")
    }
  })

  it("forces each declared error status on each operation, valid for it; nothing is processed", { timeout: 120_000 }, async () => {
    const before = await events()
    const wallet = (await engine.call("GET", `${SANDBOX}/wallet`, { headers: { "x-api-key": keys.sandboxKey } })).body
    let sent = 0
    let forced = 0
    const served = new Set(ROUTES.map((r) => r.operationId))
    for (const op of sandboxOperations.filter((o) => served.has(o.operationId))) {
      const forceable = op.statuses.filter((s) => s >= 400 && DEFAULT_CODE[s] !== undefined)
      expect(forceable.length, op.operationId).toBeGreaterThan(0)
      const keyed = op.security.some((k) => k.startsWith("apiKey") || k.startsWith("oauth") || k.startsWith("dataKey"))
      for (const status of forceable) {
        // The sandbox window is 300 a minute: move on a minute before it fills (the forced answers are counted).
        if (++sent % 250 === 0) expect((await engine.admin("POST", "/_sim/clock/advance", { seconds: 61 })).status).toBe(200)
        const r = await engine.call(op.method, urlOf(op.mount, op.path), {
          headers: { "x-api-key": keys.sandboxKey, "x-sandbox-force-status": String(status), "idempotency-key": `forced-${op.operationId}` }
        })
        const what = `${op.operationId} forced ${status}`
        expect([r.status, r.body?.error?.code], what).toEqual([status, DEFAULT_CODE[status]])
        expect(r.body.error.message, what).toContain("forced by the X-Sandbox-Force-* request headers")
        if (status === 429 || status === 503) expect(r.headers.get("retry-after"), what).toBe("1")
        if (keyed) expect(r.headers.get("x-ratelimit-limit"), what).toBe("300")
        forced++
      }
      // A code alone answers with its own status (here the catalogue's 500 INTERNAL_ERROR, declared everywhere).
      if (op.statuses.includes(500)) {
        const r = await engine.call(op.method, urlOf(op.mount, op.path), {
          headers: { "x-api-key": keys.sandboxKey, "x-sandbox-force-error": "INTERNAL_ERROR" }
        })
        expect([r.status, r.body.error.code], `${op.operationId} forced INTERNAL_ERROR`).toEqual([500, "INTERNAL_ERROR"])
        sent++
      }
    }
    expect(forced).toBeGreaterThan(sandboxOperations.length)
    expect(await events()).toBe(before)
    expect((await engine.call("GET", `${SANDBOX}/wallet`, { headers: { "x-api-key": keys.sandboxKey } })).body).toEqual(wallet)
  })

  it("production ignores the headers: the operation runs as if they were not sent", async () => {
    for (const path of ["/stocks?limit=1", "/wallet", "/orders", "/webhooks", "/users"]) {
      const r = await engine.call("GET", `${LIVE}${path}`, { headers: { "x-api-key": keys.liveKey, "x-sandbox-force-status": "500" } })
      expect(r.status, path).toBe(200)
    }
  })
})
