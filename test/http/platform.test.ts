/**
 * Platform surfaces (issue 9, part 8): the audit log (D-060, D-260, E-140) and usage analytics (D-064, E-141), on
 * both stores. Every answer goes through the harness, so it is checked against the contract.
 */
import { Effect, Exit, Logger, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { AuditTrail, type Observed } from "../../engine/app/audit.ts"
import { PartnerService } from "../../engine/app/partners/service.ts"
import { type EngineRequest, type EngineResponse, jsonResponse } from "../../engine/http/exchange.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store, StoreError } from "../../engine/store/port.ts"
import { LIVE, partnerOf, SANDBOX, tradingAccount } from "./accounts-kit.ts"
import { engineOn, MONDAY_OPEN, startEngine } from "./harness.ts"
import { onPostgres, tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL

/** Every document of every collection in the store, as text (to search it for secrets). */
const wholeStore = (engine: ReturnType<typeof startEngine>, partitions: ReadonlyArray<string>) =>
  engine.runtime.runPromise(
    Store.use((store) =>
      store.read((tx) =>
        Effect.forEach(partitions, (partition) => tx.list("auditRecords", { partition, limit: 1_000_000, order: "asc" })).pipe(
          Effect.map((all) => JSON.stringify(all))
        )
      )
    )
  )

for (const store of ["memory", "postgres"] as const) {
  const skip = store === "postgres" && DATABASE_URL === undefined

  describe.skipIf(skip)(`audit log (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
    })
    afterEach(() => dispose())

    const audit = async (query = "", env: "sandbox" | "production" = "sandbox") => {
      const r = await p.call(env, "GET", `/audit${query}`)
      expect(r.status).toBe(200)
      return r.body as { records: Array<Record<string, any>>; count: number; hasMore: boolean; nextCursor: string | null }
    }

    it("records each successful mutation once, newest first, with a masked key and no read, failure or replay", async () => {
      const user = await p.createUser()
      await p.sb("GET", `/users/${user.subAccountId}`)
      const bad = await p.sb("POST", "/users", { externalId: "" })
      expect(bad.status).toBe(400)
      const settings = await p.call("sandbox", "PATCH", "/settings", { markupBps: 10 }, { "idempotency-key": "settings-once-1", "x-request-id": "req-42" })
      expect(settings.status).toBe(200)
      const replay = await p.call("sandbox", "PATCH", "/settings", { markupBps: 10 }, { "idempotency-key": "settings-once-1" })
      expect(replay.headers.get("idempotent-replayed")).toBe("true")
      const page = await audit()
      expect(page.records.map((r) => r.action)).toEqual(["settings.update", "subaccount.create"])
      expect(page.records[0]).toEqual({
        auditId: expect.stringMatching(/^aud_/),
        action: "settings.update",
        actorType: "api_key",
        actorId: `key_****${p.keys.sandboxKey.slice(-4)}`,
        resourceType: "settings",
        resourceId: p.keys.partnerId,
        method: "PATCH",
        path: `${SANDBOX}/settings`,
        statusCode: 200,
        idempotencyKey: "settings-once-1",
        requestId: "req-42",
        createdAt: new Date(MONDAY_OPEN).toISOString()
      })
      expect(page.records[1]).toMatchObject({ resourceType: "sub_account", resourceId: user.subAccountId, method: "POST", statusCode: 201 })
      // the other environment and another partner see none of it
      expect((await audit("", "production")).records).toEqual([])
      const other = await partnerOf(engine)
      expect((await other.call("sandbox", "GET", "/audit")).body.records).toEqual([])
    })

    it("never holds a raw key: not in the answer, not in the store, even when a key is pasted into a header", async () => {
      await p.createUser()
      await p.call("sandbox", "POST", "/users", { externalId: "pasted" }, { "idempotency-key": `oops-${p.keys.sandboxKey}`, "x-request-id": p.keys.liveKey })
      await p.call("production", "POST", "/users", { externalId: "live-1" })
      const issued = await engine.admin("POST", `/_sim/partners/${p.keys.partnerId}/keys`, {})
      expect(issued.status).toBe(201)
      const newKey = issued.body.liveKey as string
      const text =
        JSON.stringify([await audit(), await audit("", "production")]) + (await wholeStore(engine, [p.partition("sandbox"), p.partition("production")]))
      for (const secret of [p.keys.sandboxKey, p.keys.liveKey, newKey]) {
        expect(text).not.toContain(secret)
        expect(text).not.toContain(secret.slice(8))
      }
      const keyIssue = (await audit("?action=key.issue", "production")).records
      expect(keyIssue).toHaveLength(1)
      expect(keyIssue[0]).toMatchObject({ actorType: "system", actorId: "system", resourceType: "key", resourceId: `key_****${newKey.slice(-4)}` })
    })

    it("records key events: the member's sandbox registration and revocation, the data-key rotation, all masked", async () => {
      const token = (await engine.admin("POST", "/_sim/idp/tokens", { uid: "member-7", email: "m7@acme.test" })).body.idToken as string
      const bearer = { authorization: `Bearer ${token}` }
      const applied = await engine.call("POST", `${LIVE}/apply`, { headers: bearer, body: { businessName: "Key Co", email: "k@co.test", country: "KE" } })
      const registered = await engine.call("POST", "/api/sandbox/v1/register", { headers: bearer, body: { businessName: "Key Co", email: "k@co.test" } })
      const approved = (await engine.admin("POST", `/_sim/applications/${applied.body.applicationId}/approve`)).body
      const second = (await engine.admin("POST", `/_sim/partners/${approved.partnerId}/keys`)).body.liveKey as string
      const dataKey = await engine.call("POST", `${LIVE}/api-keys/data-key`, { headers: { "x-api-key": second, "idempotency-key": "rotate-data-1" } })
      expect(dataKey.status).toBe(201)
      const revoked = await engine.call("POST", `${LIVE}/api-keys/revoke`, {
        headers: { ...bearer, "idempotency-key": "revoke-first-1" },
        body: { apiKey: approved.liveKey }
      })
      expect(revoked.status).toBe(200)
      const live = await engine.call("GET", `${LIVE}/audit`, { headers: { "x-api-key": second } })
      expect(live.body.records.map((r: any) => [r.action, r.actorType, r.actorId, r.resourceId])).toEqual([
        ["key.revoke", "portal_member", "member-7", `key_****${approved.liveKey.slice(-4)}`],
        ["key.rotate", "api_key", `key_****${second.slice(-4)}`, `key_****${dataKey.body.dataKey.slice(-4)}`],
        ["key.issue", "system", "system", `key_****${second.slice(-4)}`],
        ["key.issue", "system", "system", `key_****${approved.liveKey.slice(-4)}`]
      ])
      const sandbox = await engine.call("GET", `${SANDBOX}/audit`, { headers: { "x-api-key": registered.body.apiKey } })
      expect(sandbox.body.records.map((r: any) => [r.action, r.actorType, r.resourceId])).toEqual([
        ["key.rotate", "portal_member", `key_****${registered.body.apiKey.slice(-4)}`]
      ])
      const text = JSON.stringify([live.body, sandbox.body])
      for (const secret of [approved.liveKey, second, dataKey.body.dataKey, registered.body.apiKey, token]) expect(text).not.toContain(secret)
    })

    it("names a sandbox registration by the key it issued, whatever else its body holds", async () => {
      const token = (await engine.admin("POST", "/_sim/idp/tokens", { uid: "member-8", email: "m8@acme.test" })).body.idToken as string
      const bearer = { authorization: `Bearer ${token}` }
      expect(
        (await engine.call("POST", `${LIVE}/apply`, { headers: bearer, body: { businessName: "Body Co", email: "b@co.test", country: "KE" } })).status
      ).toBe(201)
      const registered = await engine.call("POST", "/api/sandbox/v1/register", {
        headers: bearer,
        body: { businessName: "Body Co", email: "b@co.test", "": "named-in-the-body" }
      })
      expect(registered.status).toBe(201)
      const records = (await engine.call("GET", `${SANDBOX}/audit`, { headers: { "x-api-key": registered.body.apiKey } })).body.records
      expect(records.map((r: any) => [r.action, r.resourceId])).toEqual([["key.rotate", `key_****${registered.body.apiKey.slice(-4)}`]])
    })

    it("records the operator's and the compliance desk's actions in the partition they touched", async () => {
      const user = await p.createUser()
      await p.credit("sandbox", 50)
      const frozen = await engine.admin("POST", `/_sim/users/${user.subAccountId}/freeze`, { frozen: true, reason: "AML review" })
      expect(frozen.status).toBe(200)
      const records = (await audit()).records
      expect(records.map((r) => [r.action, r.actorType, r.actorId, r.resourceId])).toEqual([
        ["subaccount.freeze", "service_compliance", "compliance", user.subAccountId],
        ["wallet.credit", "system", "system", p.keys.partnerId],
        ["subaccount.create", "api_key", `key_****${p.keys.sandboxKey.slice(-4)}`, user.subAccountId]
      ])
      expect((await audit("", "production")).records).toEqual([])
    })

    it("records the desk's decisions from their events, in the same transaction, with no method or path", async () => {
      const account = await tradingAccount(p, "desk-audit", 500)
      const filled = await account.trade("BUY", 5)
      const rejected = await account.trade("BUY", 5)
      expect((await engine.admin("POST", `/_sim/desk/orders/${filled.orderId}/fill`, {})).status).toBe(200)
      const reject = await engine.admin("POST", `/_sim/desk/orders/${rejected.orderId}/reject`, {
        rejectionCode: "LIQUIDITY_UNAVAILABLE",
        rejectionReason: "Insufficient liquidity"
      })
      expect(reject.status).toBe(200)
      const desk = (await audit("?resourceType=order")).records.filter((r) => r.actorType === "system")
      expect(desk.map((r) => [r.action, r.actorId, r.resourceId, r.method, r.path, r.statusCode])).toEqual([
        ["order.reject", "system", rejected.orderId, null, null, null],
        ["order.fill", "system", filled.orderId, null, null, null]
      ])
    })

    it("records a DAY order's expiry at the close as the system's order.expire; the partner's own cancel is only its order.cancel", async () => {
      const account = await tradingAccount(p, "expiry-audit", 100)
      const place = async () => {
        const r = await p.sb("POST", `/users/${account.id}/trade`, { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 1 })
        expect(r.status).toBe(202)
        return r.body.orderId as string
      }
      const expiring = await place()
      const cancelled = await place()
      expect((await p.sb("DELETE", `/orders/${cancelled}`)).status).toBe(200)
      // NSE closes at 15:00 Nairobi, 12:00 UTC
      expect((await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-23T12:00:00Z" })).status).toBe(200)
      const records = (await audit("?resourceType=order")).records
      expect(records.map((r) => [r.action, r.actorType, r.actorId, r.resourceId, r.method])).toEqual([
        ["order.expire", "system", "system", expiring, null],
        ["order.cancel", "api_key", `key_****${p.keys.sandboxKey.slice(-4)}`, cancelled, "DELETE"],
        ["order.create", "api_key", `key_****${p.keys.sandboxKey.slice(-4)}`, cancelled, "POST"],
        ["order.create", "api_key", `key_****${p.keys.sandboxKey.slice(-4)}`, expiring, "POST"]
      ])
    })

    it("filters by action, resource type and time, pages with a cursor bound to those filters", async () => {
      for (let i = 0; i < 5; i++) {
        await p.createUser()
        await engine.admin("POST", "/_sim/clock/advance", { seconds: 60 })
      }
      await p.call("sandbox", "PATCH", "/settings", { markupBps: 5 })
      expect((await audit("?resourceType=settings")).records.map((r) => r.action)).toEqual(["settings.update"])
      expect((await audit("?action=subaccount.create")).count).toBe(5)
      const start = new Date(MONDAY_OPEN + 60_000).toISOString()
      const end = new Date(MONDAY_OPEN + 180_000).toISOString()
      const windowed = await audit(`?from=${start}&to=${end}`)
      expect(windowed.records.map((r) => r.createdAt)).toEqual([end, new Date(MONDAY_OPEN + 120_000).toISOString(), start])
      const first = await audit("?action=subaccount.create&limit=2")
      expect([first.count, first.hasMore]).toEqual([2, true])
      const second = await audit(`?action=subaccount.create&limit=2&cursor=${first.nextCursor}`)
      const third = await audit(`?action=subaccount.create&limit=2&cursor=${second.nextCursor}`)
      const ids = [...first.records, ...second.records, ...third.records].map((r) => r.auditId)
      expect(new Set(ids).size).toBe(5)
      expect([third.count, third.hasMore, third.nextCursor]).toEqual([1, false, null])
      const crossed = await p.sb("GET", `/audit?limit=2&cursor=${first.nextCursor}`)
      expect([crossed.status, crossed.body.error.code, crossed.body.error.param]).toEqual([400, "VALIDATION_ERROR", "cursor"])
      const reversed = await p.sb("GET", `/audit?from=2026-11-24&to=2026-11-23`)
      expect([reversed.status, reversed.body.error.code, reversed.body.error.param]).toEqual([400, "VALIDATION_ERROR", "from"])
      expect(reversed.body.error.message).toContain("from must not be after to")
      // a window of one instant is not reversed: it holds what happened at that instant
      expect((await audit(`?from=${start}&to=${start}`)).records.map((r) => r.createdAt)).toEqual([start])
      const badDate = await p.sb("GET", "/audit?from=2026-02-30")
      expect([badDate.status, badDate.body.error.param]).toEqual([400, "from"])
      const badLimit = await p.sb("GET", "/audit?limit=201")
      expect([badLimit.status, badLimit.body.error.param]).toEqual([400, "limit"])
    })

    it("lists records made at the same instant newest first, past the ninth and tenth (the audit ID breaks the tie)", async () => {
      const created: Array<string> = []
      for (let i = 0; i < 12; i++) created.push((await p.createUser()).subAccountId)
      const page = await audit()
      expect(page.records.map((r) => r.resourceId)).toEqual(created.toReversed())
      expect(new Set(page.records.map((r) => r.createdAt)).size).toBe(1)
    })

    it("records the operator's suspension and reactivation of a partner in both its environments", async () => {
      for (const status of ["suspended", "active"]) {
        expect((await engine.admin("POST", `/_sim/partners/${p.keys.partnerId}/status`, { status })).status).toBe(200)
      }
      for (const env of ["sandbox", "production"] as const) {
        const records = (await audit("", env)).records
        expect(records.map((r) => [r.action, r.actorType, r.actorId, r.resourceType, r.resourceId])).toEqual([
          ["partner.status", "system", "system", "partner", p.keys.partnerId],
          ["partner.status", "system", "system", "partner", p.keys.partnerId]
        ])
      }
    })

    it("records the compliance desk's unfreeze as subaccount.unfreeze, after its freeze", async () => {
      const user = await p.createUser()
      for (const frozen of [true, false]) {
        expect((await engine.admin("POST", `/_sim/users/${user.subAccountId}/freeze`, { frozen, reason: "AML review" })).status).toBe(200)
      }
      const records = (await audit("?resourceType=sub_account")).records
      expect(records.map((r) => [r.action, r.actorType, r.resourceId])).toEqual([
        ["subaccount.unfreeze", "service_compliance", user.subAccountId],
        ["subaccount.freeze", "service_compliance", user.subAccountId],
        ["subaccount.create", "api_key", user.subAccountId]
      ])
    })

    it("records the operator's credit of the production wallet in production, not in the sandbox", async () => {
      await p.credit("production", 25)
      expect((await audit("", "production")).records.map((r) => [r.action, r.actorType, r.resourceId])).toEqual([["wallet.credit", "system", p.keys.partnerId]])
      expect((await audit()).records).toEqual([])
    })

    it("keeps no empty request id (null), and at most 200 characters of a long one", async () => {
      await p.call("sandbox", "POST", "/users", { externalId: "empty-id" }, { "x-request-id": "" })
      await p.call("sandbox", "POST", "/users", { externalId: "long-id" }, { "x-request-id": "r".repeat(300) })
      const records = (await audit()).records
      expect(records.map((r) => r.requestId)).toEqual(["r".repeat(200), null])
    })

    it("the sandbox reset wipes the sandbox's records and is itself the first record after it", async () => {
      await p.createUser()
      await p.call("production", "POST", "/users", { externalId: "stays" })
      const reset = await p.reset()
      expect(reset.status).toBe(200)
      expect((await audit()).records.map((r) => r.action)).toEqual(["sandbox.reset"])
      expect((await audit("", "production")).records.map((r) => r.action)).toEqual(["subaccount.create"])
    })
  })

  describe.skipIf(skip)(`usage analytics (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
    })
    afterEach(() => dispose())

    it("counts authenticated requests, errors and 429s per day, the default window being the last 7 days", async () => {
      for (let i = 0; i < 3; i++) await p.sb("GET", "/settings")
      await p.sb("GET", "/users/usr_nope")
      await engine.call("GET", `${SANDBOX}/settings`, { headers: { "x-api-key": "sk_sandbox_not_a_key" } })
      const r = await p.sb("GET", "/usage")
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({
        from: "2026-11-17T00:00:00.000Z",
        to: "2026-11-23T23:59:59.999Z",
        granularity: "day",
        environment: "sandbox",
        tier: "starter",
        rateLimitPerMinute: 300,
        totals: { requests: 4, errors: 1, rateLimited: 0, orders: 0, webhookDeliveries: 0 }
      })
      expect(r.body.series).toHaveLength(7)
      expect(r.body.series.at(-1)).toEqual({ periodStart: "2026-11-23T00:00:00.000Z", requests: 4, errors: 1, rateLimited: 0 })
      // the /usage request itself is counted afterwards
      expect((await p.sb("GET", "/usage")).body.totals.requests).toBe(5)
      expect((await p.call("production", "GET", "/usage")).body).toMatchObject({ environment: "production", rateLimitPerMinute: 100, totals: { requests: 0 } })
    })

    it("counts rate-limited answers, buckets by hour, and refuses windows it cannot answer", async () => {
      for (let i = 0; i < 102; i++) await p.call("production", "GET", "/settings")
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 3600 })
      await p.call("production", "GET", "/settings")
      const r = await p.call("production", "GET", "/usage?granularity=hour&from=2026-11-23&to=2026-11-23T10:59:59Z")
      expect(r.body.totals).toMatchObject({ requests: 103, errors: 2, rateLimited: 2 })
      expect(r.body.series.map((b: any) => b.requests)).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 102, 1, 0])
      const tooLong = await p.sb("GET", "/usage?granularity=hour&from=2026-01-01&to=2026-03-01")
      expect([tooLong.status, tooLong.body.error.code]).toEqual([400, "VALIDATION_ERROR"])
      const reversed = await p.sb("GET", "/usage?from=2026-11-23&to=2026-11-22")
      expect(reversed.status).toBe(400)
      const badGranularity = await p.sb("GET", "/usage?granularity=week")
      expect([badGranularity.status, badGranularity.body.error.param]).toEqual([400, "granularity"])
    })

    it("is kept when the reset is refused: only a reset that happened wipes it", async () => {
      await p.sb("GET", "/settings")
      const refused = await engine.call("POST", "/api/sandbox/v1/reset", { headers: { "x-api-key": p.keys.sandboxKey, "x-sandbox-force-status": "500" } })
      expect(refused.status).toBe(500)
      // the read and the refused reset (the /usage request is counted after its answer)
      expect((await p.sb("GET", "/usage")).body.totals).toMatchObject({ requests: 2, errors: 1 })
    })

    it("is wiped with the sandbox by the reset; production's is kept", async () => {
      await p.sb("GET", "/settings")
      await p.call("production", "GET", "/settings")
      await p.reset()
      expect((await p.sb("GET", "/usage")).body.totals.requests).toBe(1)
      expect((await p.call("production", "GET", "/usage")).body.totals.requests).toBe(1)
    })
  })
}

describe.skipIf(DATABASE_URL === undefined)("usage across two engines on one PostgreSQL database", onPostgres, () => {
  it("adds up what each engine counted: a mutation writes its engine's counts, /usage its own", async () => {
    const scope = Effect.runSync(Scope.make())
    const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
    const a = startEngine({ store: "postgres", databaseUrl: url })
    const b = startEngine({ store: "postgres", databaseUrl: url })
    try {
      const keys = await a.newPartner()
      const get = (engine: typeof a, path: string) => engine.call("GET", `${SANDBOX}${path}`, { headers: { "x-api-key": keys.sandboxKey } })
      for (let i = 0; i < 3; i++) await get(a, "/settings")
      await get(b, "/settings")
      await get(b, "/settings")
      const created = await b.call("POST", `${SANDBOX}/users`, {
        headers: { "x-api-key": keys.sandboxKey, "idempotency-key": "two-engines-1" },
        body: { externalId: "e-1" }
      })
      expect(created.status).toBe(201)
      // a's three reads, b's two reads and its mutation (written with its audit record)
      expect((await get(a, "/usage")).body.totals).toMatchObject({ requests: 6, errors: 0 })
      // b's audit record is visible through a
      expect((await get(a, "/audit")).body.records.map((r: any) => r.action)).toEqual(["subaccount.create"])
    } finally {
      await a.dispose()
      await b.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})

describe("usage totals from what the engine keeps", () => {
  it("counts orders created and webhook deliveries made in the window; a webhook's secret never reaches the audit log", async () => {
    const receivers = new SimReceivers()
    const engine = startEngine({ receivers })
    try {
      const p = await partnerOf(engine)
      receivers.script("https://hooks.acme.test/in", [{ status: 200 }])
      const secret = "whsec_platform_0123456789"
      const hook = await p.sb("POST", "/webhooks", { url: "https://hooks.acme.test/in", events: ["wallet.credited"], secret })
      expect(hook.status).toBe(201)
      await p.credit("sandbox", 10)
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
      expect(receivers.take()).toHaveLength(1)
      const account = await tradingAccount(p, "usage-trader", 100)
      await account.trade("BUY", 1)
      const totals = (await p.sb("GET", "/usage")).body.totals
      expect(totals).toMatchObject({ orders: 1, webhookDeliveries: 1 })
      expect((await p.call("production", "GET", "/usage")).body.totals).toMatchObject({ orders: 0, webhookDeliveries: 0 })
      const after = (await p.sb("GET", "/usage?from=2026-11-24&to=2026-11-25")).body.totals
      expect(after).toMatchObject({ orders: 0, webhookDeliveries: 0 })
      const audit = await p.sb("GET", "/audit?resourceType=webhook")
      expect(audit.body.records).toEqual([expect.objectContaining({ action: "webhook.create", resourceId: hook.body.id })])
      expect(JSON.stringify(audit.body)).not.toContain(secret)
    } finally {
      await engine.dispose()
    }
  })
})

describe("the automatic desk in the audit log", () => {
  it("records a fill the desk makes on its own (a job, no request) as the system's", async () => {
    const engine = startEngine({ desk: "auto" })
    try {
      const p = await partnerOf(engine)
      const account = await tradingAccount(p, "auto-desk", 100)
      const order = await account.trade("BUY", 1)
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 10 })
      const records = (await p.sb("GET", "/audit?action=order.fill")).body.records
      expect(records).toEqual([expect.objectContaining({ actorType: "system", resourceId: order.orderId, method: null })])
    } finally {
      await engine.dispose()
    }
  })
})

/**
 * The gateway's hook called directly, for what no exchange over HTTP reaches: an operation without a name in the log,
 * a principal without a credential, a store that refuses the write, and more records than one page may scan.
 */
describe("the audit hook, called directly", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
  })
  afterEach(() => engine.dispose())

  const request = (path: string): EngineRequest => ({
    method: "POST",
    path: `${SANDBOX}${path}`,
    query: new URLSearchParams(),
    search: "",
    headers: {},
    body: "{}"
  })
  const principal = () => engine.runtime.runPromise(PartnerService.use((s) => s.authenticate(p.keys.sandboxKey, "sandbox")))
  const observe = (operationId: string, seen: Observed, response: EngineResponse = jsonResponse(201, { subAccountId: "usr_direct" })) =>
    engine.runtime.runPromise(AuditTrail.use((a) => a.observe(request("/direct"), { route: { operationId, mount: "partner" }, ...seen }, response)))
  const audit = async (query = "") =>
    (await p.sb("GET", `/audit${query}`)).body as { records: Array<Record<string, any>>; count: number; hasMore: boolean; nextCursor: string | null }

  it("logs a mutation of an operation it has no name for under its bare operationId, as resource type other", async () => {
    await observe("someFutureOperation", { principal: await principal() })
    expect((await audit()).records.map((r) => [r.action, r.resourceType, r.resourceId, r.actorType])).toEqual([
      ["someFutureOperation", "other", null, "api_key"]
    ])
  })

  it("names a principal that carries no credential as an api_key actor 'unknown'", async () => {
    const { credential: _, ...bare } = await principal()
    await observe("createSubAccount", { principal: bare })
    expect((await audit()).records.map((r) => [r.action, r.actorType, r.actorId, r.resourceId])).toEqual([
      ["subaccount.create", "api_key", "unknown", "usr_direct"]
    ])
  })

  /** Runs `effect` in the engine, answering what it logged at level Error. */
  const errorsLogged = async <A, E>(effect: Effect.Effect<A, E, any>) => {
    const errors: Array<string> = []
    const collector = Logger.make((options) => {
      if (options.logLevel === "Error") errors.push(JSON.stringify(options.message))
    })
    const exit = await engine.runtime.runPromise(Effect.exit(effect).pipe(Effect.provide(Logger.layer([collector]))))
    return { exit, errors }
  }

  it("never fails: a record the store refuses is dropped and the operator's log says so, the exchange still answered", async () => {
    const seen: Observed = { route: { operationId: "createSubAccount", mount: "partner" }, principal: await principal() }
    const { exit, errors } = await errorsLogged(
      Effect.gen(function* () {
        const store = yield* Store
        const refusing = Store.of({ ...store, transact: () => Effect.fail(new StoreError({ message: "the database is down" })) })
        const trail = yield* AuditTrail.make.pipe(Effect.provideService(Store, refusing))
        return yield* trail.observe(request("/users"), seen, jsonResponse(201, { subAccountId: "usr_lost" }))
      })
    )
    expect(Exit.isSuccess(exit)).toBe(true)
    expect(errors).toEqual([expect.stringContaining("could not record the exchange in the audit log")])
    expect((await audit()).records).toEqual([])
  })

  it("leaves out, with no error logged, what it does not record: an unnamed control action, a caller with no partner, a target that is gone", async () => {
    const claims = Buffer.from(JSON.stringify({ sub: "member-without-application" })).toString("base64url")
    const exchanges: Array<[EngineRequest, Observed]> = [
      [request("/_sim/clock/advance"), { route: { operationId: "advanceSimClock", mount: "control" } }],
      [request("/apply"), { route: { operationId: "applyForPartnerAccess", mount: "partner" } }],
      [
        { ...request("/register"), headers: { authorization: `Bearer eyJhbGciOiJFZERTQSJ9.${claims}.sig` } },
        { route: { operationId: "registerSandbox", mount: "sandboxRoot" } }
      ],
      [request("/_sim/users/usr_gone/freeze"), { route: { operationId: "freezeSimSubAccount", mount: "control" }, params: { userId: "usr_gone" } }]
    ]
    for (const [sent, seen] of exchanges) {
      const { exit, errors } = await errorsLogged(AuditTrail.use((a) => a.observe(sent, seen, jsonResponse(200, {}))))
      expect([seen.route?.operationId, Exit.isSuccess(exit), errors]).toEqual([seen.route?.operationId, true, []])
    }
    expect((await audit()).records).toEqual([])
  })

  it("scans at most 1000 records per request: a page of none that has more, whose cursor finds the older match", async () => {
    const seen = { principal: await principal() }
    await observe("updatePartnerSettings", seen, jsonResponse(200, { partnerId: p.keys.partnerId }))
    for (let i = 0; i < 1000; i++) await observe("createSubAccount", seen)
    const first = await audit("?action=settings.update")
    expect([first.count, first.hasMore, typeof first.nextCursor]).toEqual([0, true, "string"])
    const second = await audit(`?action=settings.update&cursor=${first.nextCursor}`)
    expect(second.records.map((r) => [r.action, r.resourceId])).toEqual([["settings.update", p.keys.partnerId]])
    expect([second.hasMore, second.nextCursor]).toEqual([false, null])
  })
})
