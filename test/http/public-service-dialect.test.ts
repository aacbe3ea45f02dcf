/**
 * Two dialects, one engine (issue 24 item 1, E-361..E-365). A trading client written in the public service's dialect
 * (a sub-account and KYC without Idempotency-Key, the KYC body {status, level}, a webhook registered without a key
 * and verified under x-mystocks-signature, its orders read from the legacy sandbox root; deposit and trade keyed, as
 * the service asks) runs unchanged: against `public-service` every call succeeds and each leniency it relied on is one
 * finding whose count grows; against `spec` it is refused where the spec says, and the findings name each refusal.
 */
import { createHmac } from "node:crypto"
import { afterEach, describe, expect, it } from "vitest"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { tagsFor } from "../support/stores.ts"
import { ADMIN, engineOn, type Reply, type startEngine } from "./harness.ts"

const BASE = "/api/sandbox/v1/partner"
const LEGACY_ROOT = "/api/sandbox/v1"
const HOOK = "https://hooks.broker.test/mystocks"
const SECRET = "whsec_public_dialect_0001"

type Engine = ReturnType<typeof startEngine>
const disposals: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const dispose of disposals.splice(0)) await dispose()
})

const setup = async (dialect: "spec" | "public-service", store: "memory" | "postgres" = "memory") => {
  const receivers = new SimReceivers()
  receivers.script(HOOK)
  const { engine, dispose } = await engineOn(store, { dialect, receivers })
  disposals.push(dispose)
  const partner = await engine.newPartner()
  return { engine, partner, receivers, client: publicServiceClient(engine, partner.sandboxKey) }
}

/** The client as the public service's docs and clients write it (facts 1.2, 4.1, 6.1, 11.2, 11.5, 15.1). */
const publicServiceClient = (engine: Engine, apiKey: string) => {
  let keys = 0
  const send = (method: string, path: string, body?: unknown, keyed = false) =>
    engine.call(method, path, {
      headers: { "x-api-key": apiKey, ...(keyed ? { "idempotency-key": `public-key-${++keys}` } : {}) },
      body,
      // The contract has no legacy root: its validator would read the spec's 404 there as a partner operation's.
      unchecked: path.startsWith(`${LEGACY_ROOT}/`) && !path.startsWith(BASE)
    })
  return {
    registerWebhook: () => send("POST", `${BASE}/webhooks`, { url: HOOK, events: ["order.filled"], secret: SECRET }),
    createAccount: (externalId: string) => send("POST", `${BASE}/users`, { externalId, displayName: "Amina W.", email: `${externalId}@broker.test` }),
    assertKyc: (userId: string) => send("POST", `${BASE}/users/${userId}/kyc`, { status: "VERIFIED", level: "BASIC", reference: "kyc-001" }),
    deposit: (userId: string) => send("POST", `${BASE}/users/${userId}/deposit`, { amount: 500 }, true),
    trade: async (userId: string) => {
      const quote = await send("GET", `${BASE}/quote/SCOM?side=BUY&quantity=10&subAccountId=${userId}`)
      return send("POST", `${BASE}/users/${userId}/trade`, { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: quote.body.quoteId }, true)
    },
    orders: (userId: string) => send("GET", `${LEGACY_ROOT}/users/${userId}/orders`),
    /** The recovery lookup of facts 4.4: the client then looks for accounts[] or data[]. */
    findAccount: (externalId: string) => send("GET", `${BASE}/users?externalId=${externalId}`),
    /** The receiver's check: HMAC-SHA256 of the raw body, hex, under x-mystocks-signature. */
    verifies: (delivery: { headers: Readonly<Record<string, string>>; body: string }) =>
      delivery.headers["x-mystocks-signature"] === createHmac("sha256", SECRET).update(delivery.body).digest("hex")
  }
}

const fill = async (engine: Engine, orderId: string) => {
  expect((await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`)).status).toBe(200)
  await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
}

interface Listed {
  kind: string
  operation: string
  message: string
  count: number
  partner: string | null
}
const findingsOf = async (engine: Engine) => {
  const r = await engine.call("GET", "/_sim/findings", { headers: { authorization: `Bearer ${ADMIN}` } })
  expect(r.status).toBe(200)
  return r.body as { dialect: string; findings: Array<Listed> }
}
const byKind = (findings: ReadonlyArray<Listed>) => findings.map((f) => `${f.kind} ${f.operation}`).sort()
const refusal = (r: Reply) => [r.status, r.body?.error?.code]

const STORES = process.env.DATABASE_URL === undefined ? (["memory"] as const) : (["memory", "postgres"] as const)

for (const store of STORES)
  describe(`a public-service client's trading flow on ${store}`, tagsFor(store), () => {
    it("--dialect public-service serves it, every call succeeding, each leniency one finding whose count grows", async () => {
      const { engine, partner, receivers, client } = await setup("public-service", store)
      expect((await client.registerWebhook()).status).toBe(201)
      const orderIds: Array<string> = []
      for (const externalId of ["cust-1", "cust-2"]) {
        const created = await client.createAccount(externalId)
        expect(created.status).toBe(201)
        const userId = created.body.userId as string
        const found = await client.findAccount(externalId)
        expect(found.body.users.map((u: { userId: string }) => u.userId)).toEqual([userId])
        expect((await client.assertKyc(userId)).body).toMatchObject({ kycStatus: "VERIFIED", kycLevel: "BASIC" })
        expect((await client.deposit(userId)).status).toBe(200)
        const trade = await client.trade(userId)
        expect(trade.status).toBe(202)
        await fill(engine, trade.body.orderId)
        const orders = await client.orders(userId)
        expect(orders.status).toBe(200)
        expect(orders.body.orders.map((o: { orderId: string; status: string }) => [o.orderId, o.status])).toEqual([[trade.body.orderId, "FILLED"]])
        orderIds.push(trade.body.orderId)
      }
      const deliveries = receivers.take().filter((d) => d.url === HOOK)
      expect(deliveries.map((d) => JSON.parse(d.body).data.orderId)).toEqual(orderIds)
      expect(deliveries.every(client.verifies)).toBe(true)

      const { dialect, findings } = await findingsOf(engine)
      expect(dialect).toBe("public-service")
      expect(byKind(findings)).toEqual([
        "dialect.kyc-status-level assertSubAccountKyc",
        "dialect.legacy-sandbox-root listSubAccountOrders",
        "dialect.missing-idempotency-key assertSubAccountKyc",
        "dialect.missing-idempotency-key createSubAccount",
        "dialect.missing-idempotency-key createWebhook",
        "dialect.signature-header createWebhook",
        "dialect.users-list-key listSubAccounts"
      ])
      expect(findings.every((f) => f.partner === partner.partnerId)).toBe(true)
      const count = (kind: string, operation: string) => findings.find((f) => f.kind === kind && f.operation === operation)?.count
      expect(count("dialect.missing-idempotency-key", "createSubAccount")).toBe(2)
      expect(count("dialect.missing-idempotency-key", "createWebhook")).toBe(1)
      expect(findings.find((f) => f.operation === "createSubAccount")?.message).toMatch(
        /^POST \/users without Idempotency-Key: the spec requires it \(400 MISSING_IDEMPOTENCY_KEY\); accepted as the public service does/
      )
    })

    it("--dialect spec (the default) refuses it where the spec says, and the findings name each refusal", async () => {
      const { engine, partner, receivers, client } = await setup("spec", store)
      expect(refusal(await client.registerWebhook())).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
      expect(refusal(await client.createAccount("cust-1"))).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
      // The steps after need what the spec's way gives: the account and the webhook made with a key, by the test.
      const keyed = (path: string, body: unknown, key: string) =>
        engine.call("POST", `${BASE}${path}`, { headers: { "x-api-key": partner.sandboxKey, "idempotency-key": key }, body })
      const userId = (await keyed("/users", { externalId: "cust-1", displayName: "A", email: "a@broker.test" }, "spec-key-user")).body.userId as string
      expect((await keyed("/webhooks", { url: HOOK, events: ["order.filled"], secret: SECRET }, "spec-key-hook")).status).toBe(201)
      expect(refusal(await client.assertKyc(userId))).toEqual([400, "MISSING_PARAM"])
      expect((await engine.admin("POST", `/_sim/users/${userId}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC" })).status).toBe(200)
      expect((await client.deposit(userId)).status).toBe(200)
      const trade = await client.trade(userId)
      expect(trade.status).toBe(202)
      await fill(engine, trade.body.orderId)
      expect(refusal(await client.orders(userId))).toEqual([404, "NOT_FOUND"])
      const delivered = receivers.take().filter((d) => d.url === HOOK)
      expect(delivered).toHaveLength(1)
      // The receiver written for the public service refuses the spec's delivery: no x-mystocks-signature on it.
      expect(client.verifies(delivered[0] as (typeof delivered)[number])).toBe(false)

      const { dialect, findings } = await findingsOf(engine)
      expect(dialect).toBe("spec")
      expect(byKind(findings)).toEqual([
        "dialect.kyc-status-level assertSubAccountKyc",
        "dialect.legacy-sandbox-root listSubAccountOrders",
        "dialect.missing-idempotency-key assertSubAccountKyc",
        "dialect.missing-idempotency-key createSubAccount",
        "dialect.missing-idempotency-key createWebhook",
        "dialect.signature-header createWebhook"
      ])
      // The legacy root is refused before any credential is read; the finding still names the partner whose key it was.
      expect(findings.every((f) => f.partner === partner.partnerId)).toBe(true)
      const message = (operation: string, kind: string) => findings.find((f) => f.operation === operation && f.kind === kind)?.message
      expect(message("createSubAccount", "dialect.missing-idempotency-key")).toMatch(
        /^POST \/users without Idempotency-Key: refused, the spec requires it \(400 MISSING_IDEMPOTENCY_KEY\); the public service accepts it/
      )
      expect(message("listSubAccountOrders", "dialect.legacy-sandbox-root")).toMatch(
        /^GET \/api\/sandbox\/v1\/users\/\{userId\}\/orders .*refused 404 NOT_FOUND/
      )
      expect(message("assertSubAccountKyc", "dialect.kyc-status-level")).toMatch(/refused 400 MISSING_PARAM/)
      expect(message("createWebhook", "dialect.signature-header")).toMatch(/signed under x-service-signature only/)
    })
  })

describe("--dialect public-service", () => {
  it("still asks an Idempotency-Key of deposit, withdraw and trade, as the public service does, with no finding", async () => {
    const { engine, partner } = await setup("public-service")
    const sb = (path: string, body: unknown) => engine.call("POST", `${BASE}${path}`, { headers: { "x-api-key": partner.sandboxKey }, body })
    const userId = (await sb("/users", { externalId: "cust-9", displayName: "B", email: "b@broker.test" })).body.userId
    expect(refusal(await sb(`/users/${userId}/deposit`, { amount: 5 }))).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
    expect(refusal(await sb(`/users/${userId}/withdraw`, { amount: 5 }))).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
    expect(refusal(await sb(`/users/${userId}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_x" }))).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
    expect(byKind((await findingsOf(engine)).findings)).toEqual(["dialect.missing-idempotency-key createSubAccount"])
  })
})

describe("--dialect spec (the default)", () => {
  it("records nothing about sub-account, KYC and order calls made the spec's way", async () => {
    const { engine, partner } = await setup("spec")
    const keyed = (path: string, body: unknown, key: string) =>
      engine.call("POST", `${BASE}${path}`, { headers: { "x-api-key": partner.sandboxKey, "idempotency-key": key }, body })
    const userId = (await keyed("/users", { externalId: "c", displayName: "C", email: "c@broker.test" }, "spec-key-0001")).body.userId
    expect((await keyed(`/users/${userId}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC" }, "spec-key-0002")).status).toBe(200)
    expect((await engine.call("GET", `${BASE}/users/${userId}/orders`, { headers: { "x-api-key": partner.sandboxKey } })).status).toBe(200)
    expect((await findingsOf(engine)).findings).toEqual([])
  })
})

describe("a sandbox register with no Authorization (facts 3.1)", () => {
  it("--dialect public-service answers it as the service's quick start shows: a new partner, its sandbox key, 100,000 USD", async () => {
    const { engine } = await setup("public-service")
    const register = await engine.call("POST", `${LEGACY_ROOT}/register`, { body: { businessName: "Broker Ltd", email: "ops@broker.test" } })
    expect(register.status).toBe(201)
    expect(register.body).toMatchObject({ message: "Sandbox account created.", walletBalance: 100000, currency: "USD", existing: false })
    const wallet = await engine.call("GET", `${BASE}/wallet`, { headers: { authorization: `Bearer ${register.body.apiKey}` } })
    expect([wallet.status, wallet.body.balance]).toEqual([200, 100000])
    const { findings } = await findingsOf(engine)
    expect(findings.map((f) => [f.kind, f.operation, f.partner])).toEqual([["dialect.register-without-token", "registerSandbox", null]])
    expect(findings[0]?.message).toMatch(
      /^POST \/api\/sandbox\/v1\/register without Authorization: the spec registers with the portal's ID token \(401 AUTH_MISSING\); accepted/
    )
  })

  it("--dialect spec refuses it 401 AUTH_MISSING, and the finding names it", async () => {
    const { engine } = await setup("spec")
    const register = await engine.call("POST", `${LEGACY_ROOT}/register`, { body: { businessName: "Broker Ltd", email: "ops@broker.test" } })
    expect(refusal(register)).toEqual([401, "AUTH_MISSING"])
    const { findings } = await findingsOf(engine)
    expect(findings.map((f) => [f.kind, f.operation, f.partner])).toEqual([["dialect.register-without-token", "registerSandbox", null]])
    expect(findings[0]?.message).toMatch(/refused 401 AUTH_MISSING/)
  })
})

describe("in both dialects", () => {
  for (const dialect of ["spec", "public-service"] as const) {
    it(`tells a public-service client under ${dialect} that a MARKET trade with no quote is refused in both`, async () => {
      const { engine, partner } = await setup(dialect)
      const headers = { "x-api-key": partner.sandboxKey, "idempotency-key": "trade-without-quote" }
      const trade = await engine.call("POST", `${BASE}/trade`, { headers, body: { symbol: "SCOM.KE", type: "BUY", quantity: 1 } })
      expect(refusal(trade)).toEqual([400, "QUOTE_REQUIRED"])
      const { findings } = await findingsOf(engine)
      expect(findings.map((f) => [f.kind, f.operation, f.partner])).toEqual([["dialect.trade-without-quote", "placeTrade", partner.partnerId]])
      expect(findings[0]?.message).toContain("in both dialects")
    })
  }
})
