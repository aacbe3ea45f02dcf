/**
 * The control API's operations (spec/control.yaml), each with its validation and its answer: partner bootstrap
 * (name, email, tier default, markup bounds), wallet credit, the clock (exactly one of seconds or to, its bounds),
 * the desk queue, fill and reject, and the trace as NDJSON with its hash. Every answer is checked against the
 * control contract by the harness.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Store } from "../../engine/store/port.ts"
import { type Reply, startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"

const expectError = (r: Reply, status: number, code: string, message?: string) => {
  expect(r.status).toBe(status)
  expect(r.body.error.code).toBe(code)
  if (message !== undefined) expect(r.body.error.message).toBe(message)
}

describe("control API operations", () => {
  let engine: ReturnType<typeof startEngine>
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())

  describe("createSimPartner", () => {
    const partner = (body: Record<string, unknown>) => engine.admin("POST", "/_sim/partners", { businessName: "Acme", email: "a@b.co", ...body })

    it("answers 201 with both keys and the starter tier by default", async () => {
      const r = await partner({})
      expect(r.status).toBe(201)
      expect(r.body).toMatchObject({ businessName: "Acme", email: "a@b.co", tier: "starter" })
      expect(r.body.sandboxKey).toMatch(/^sk_sandbox_/)
      expect(r.body.liveKey).toMatch(/^pk_live_/)
      const live = await engine.call("GET", "/api/v1/partner/stocks", { headers: { "x-api-key": r.body.liveKey } })
      expect(live.headers.get("x-ratelimit-limit")).toBe("100")
    })

    it("stores each key as an active full key of its environment, by its SHA-256 only, with its last four characters", async () => {
      const r = await partner({})
      const stored = await engine.runtime.runPromise(
        Store.use((store) => store.read((tx) => tx.list("apiKeys", { partition: "global", limit: 100, order: "asc" })))
      )
      const { createHash } = await import("node:crypto")
      const recordOf = (raw: string) => stored.find((d) => d.id === createHash("sha256").update(raw).digest("hex"))?.body
      for (const [raw, environment] of [
        [r.body.sandboxKey, "sandbox"],
        [r.body.liveKey, "production"]
      ] as const)
        expect(recordOf(raw)).toEqual({
          keyHash: createHash("sha256").update(raw).digest("hex"),
          partnerId: r.body.partnerId,
          environment,
          kind: "full",
          status: "active",
          last4: raw.slice(-4),
          createdAt: Date.parse("2026-11-23T08:00:00.000Z")
        })
      expect(JSON.stringify(stored)).not.toContain(r.body.liveKey)
    })

    it("keeps the tier given", async () => {
      const r = await partner({ tier: "enterprise" })
      expect(r.body.tier).toBe("enterprise")
      const live = await engine.call("GET", "/api/v1/partner/stocks", { headers: { "x-api-key": r.body.liveKey } })
      expect(live.headers.get("x-ratelimit-limit")).toBe("2000")
    })

    it("validates name, email, tier and markup (0 to 1000 whole bps)", async () => {
      for (const body of [
        { businessName: "A" },
        { email: "not-an-email" },
        { email: "a b@c.de" },
        { tier: "platinum" },
        { markupBps: -1 },
        { markupBps: 1001 },
        { markupBps: 1.5 }
      ])
        expectError(await partner(body), 400, "VALIDATION_ERROR")
      expect((await partner({ businessName: "AB", markupBps: 0 })).status).toBe(201)
      expect((await partner({ markupBps: 1000 })).status).toBe(201)
    })
  })

  describe("creditSimMasterWallet", () => {
    it("credits the master wallet of the environment and refuses a bad amount or environment", async () => {
      const keys = await engine.newPartner()
      const path = `/_sim/partners/${keys.partnerId}/wallet/credit`
      const ok = await engine.admin("POST", path, { environment: "production", amount: 250.5 })
      expect(ok.status).toBe(200)
      // 0 and -5 are refused by the contract (exclusiveMinimum 0, E-313), 1.234 by the wallet's cent rule.
      for (const [amount, message] of [
        [0, "amount must be greater than 0, got 0"],
        [-5, "amount must be greater than 0, got -5"],
        [1.234, "amount must be a positive USD amount with at most 2 decimals"]
      ] as const) {
        const r = await engine.admin("POST", path, { environment: "production", amount })
        expectError(r, 400, "VALIDATION_ERROR", message)
        expect(r.body.error.param).toBe("amount")
      }
      expectError(await engine.admin("POST", path, { environment: "staging", amount: 10 }), 400, "VALIDATION_ERROR")
      expectError(await engine.admin("POST", path, { environment: "sandbox" }), 400, "MISSING_PARAM")
    })
  })

  describe("clock", () => {
    it("reads the manual clock", async () => {
      const r = await engine.admin("GET", "/_sim/clock")
      expect(r.status).toBe(200)
      expect(r.body).toEqual({ now: "2026-11-23T08:00:00.000Z", mode: "manual" })
    })

    it("advances by seconds or to an instant", async () => {
      const bySeconds = await engine.admin("POST", "/_sim/clock/advance", { seconds: 90 })
      expect(bySeconds.status).toBe(200)
      expect(bySeconds.body.now).toBe("2026-11-23T08:01:30.000Z")
      expect(typeof bySeconds.body.jobsRun).toBe("number")
      const to = await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-23T09:00:00.000Z" })
      expect(to.status).toBe(200)
      expect(to.body.now).toBe("2026-11-23T09:00:00.000Z")
      expect((await engine.admin("GET", "/_sim/clock")).body.now).toBe("2026-11-23T09:00:00.000Z")
    })

    it("wants exactly one of seconds or to", async () => {
      for (const body of [{}, { seconds: 1, to: "2026-11-23T09:00:00.000Z" }]) {
        const r = await engine.admin("POST", "/_sim/clock/advance", body)
        expectError(r, 400, "VALIDATION_ERROR", "give exactly one of seconds or to")
        expect(r.body.error.params).toEqual(["seconds", "to"])
      }
    })

    it("bounds seconds to (0, 366 days] and to at most 366 days ahead, a valid date-time", async () => {
      for (const seconds of [0, -1, 366 * 86_400 + 1]) expectError(await engine.admin("POST", "/_sim/clock/advance", { seconds }), 400, "VALIDATION_ERROR")
      const bad = await engine.admin("POST", "/_sim/clock/advance", { to: "next tuesday" })
      expectError(bad, 400, "VALIDATION_ERROR", 'to must be a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z), got "next tuesday"')
      expect(bad.body.error.param).toBe("to")
      const far = await engine.admin("POST", "/_sim/clock/advance", {
        to: new Date(Date.parse("2026-11-23T08:00:00.000Z") + 366 * 86_400_000 + 1).toISOString()
      })
      expectError(far, 400, "VALIDATION_ERROR", "`to` may be at most 366 days ahead")
      expect(far.body.error.param).toBe("to")
      expect((await engine.admin("GET", "/_sim/clock")).body.now).toBe("2026-11-23T08:00:00.000Z")
    })

    it("advances `to` exactly 366 days ahead: the bound is inclusive, as it is for seconds", async () => {
      const edge = new Date(Date.parse("2026-11-23T08:00:00.000Z") + 366 * 86_400_000).toISOString()
      const r = await engine.admin("POST", "/_sim/clock/advance", { to: edge })
      expect([r.status, r.body.now]).toEqual([200, "2027-11-24T08:00:00.000Z"])
      expect((await engine.admin("GET", "/_sim/clock")).body.now).toBe(edge)
    })
  })

  describe("desk", () => {
    const placeOrder = async (key: string, idem: string) => {
      const q = await engine.call("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=3`, { headers: { "x-api-key": key } })
      const r = await engine.call("POST", `${SANDBOX}/trade`, {
        headers: { "x-api-key": key, "idempotency-key": idem },
        body: { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: q.body.quoteId }
      })
      expect(r.status).toBe(202)
      return r.body.orderId as string
    }

    it("queues manual-desk orders, fills one and rejects another, validating their bodies", async () => {
      expect((await engine.admin("GET", "/_sim/desk/queue")).body).toEqual({ orders: [] })
      const keys = await engine.newPartner()
      const first = await placeOrder(keys.sandboxKey, "desk-key-001")
      const second = await placeOrder(keys.sandboxKey, "desk-key-002")
      const queue = await engine.admin("GET", "/_sim/desk/queue")
      expect(queue.body.orders.map((o: { orderId: string }) => o.orderId).sort()).toEqual([first, second].sort())

      for (const body of [{ price: 0 }, { price: -1 }, { quantity: 0 }, { quantity: 1.5 }])
        expectError(await engine.admin("POST", `/_sim/desk/orders/${first}/fill`, body), 400, "VALIDATION_ERROR")
      const filled = await engine.admin("POST", `/_sim/desk/orders/${first}/fill`, {})
      expect(filled.status).toBe(200)
      expect(filled.body.orderId).toBe(first)

      for (const body of [
        { rejectionCode: "", rejectionReason: "x" },
        { rejectionCode: "X", rejectionReason: "" }
      ])
        expectError(await engine.admin("POST", `/_sim/desk/orders/${second}/reject`, body), 400, "VALIDATION_ERROR")
      expectError(await engine.admin("POST", `/_sim/desk/orders/${second}/reject`, { rejectionCode: "X" }), 400, "MISSING_PARAM")
      const rejected = await engine.admin("POST", `/_sim/desk/orders/${second}/reject`, { rejectionCode: "NO_LIQUIDITY", rejectionReason: "none left" })
      expect(rejected.status).toBe(200)
      expect(rejected.body).toMatchObject({ orderId: second, status: "REJECTED" })
      expect((await engine.admin("GET", "/_sim/desk/queue")).body).toEqual({ orders: [] })
    })
  })

  describe("trace", () => {
    it("answers the NDJSON lines, each ending in a newline, and a hash that follows them", async () => {
      // two lines at least: the harness parses a one-line NDJSON body as JSON
      await engine.admin("GET", "/_sim/clock")
      await engine.admin("GET", "/_sim/desk/queue")
      const before = await engine.admin("GET", "/_sim/trace/hash")
      expect(before.status).toBe(200)
      const trace = await engine.admin("GET", "/_sim/trace")
      expect(trace.status).toBe(200)
      expect(trace.headers.get("content-type")).toBe("application/x-ndjson")
      const text = String(trace.body)
      expect(text.endsWith("\n")).toBe(true)
      const lines = text.split("\n").slice(0, -1)
      expect(lines.length).toBe(2)
      expect(lines.map((l) => JSON.parse(l).path)).toEqual(["/_sim/clock", "/_sim/desk/queue"])
      expect(JSON.stringify((await engine.admin("GET", "/_sim/trace/hash")).body)).toBe(JSON.stringify(before.body))
      await engine.admin("GET", "/_sim/clock")
      expect(JSON.stringify((await engine.admin("GET", "/_sim/trace/hash")).body)).not.toBe(JSON.stringify(before.body))
    })

    it("answers only the lines from a position with ?from, and refuses a position below 0", async () => {
      const { lines } = (await engine.admin("GET", "/_sim/trace/hash")).body as { lines: number }
      await engine.admin("GET", "/_sim/clock")
      await engine.admin("GET", "/_sim/desk/queue")
      const since = await engine.admin("GET", `/_sim/trace?from=${lines}`)
      expect(since.status).toBe(200)
      expect(
        String(since.body)
          .split("\n")
          .slice(0, -1)
          .map((l) => JSON.parse(l).path)
      ).toEqual(["/_sim/clock", "/_sim/desk/queue"])
      expect((await engine.admin("GET", "/_sim/trace?from=-1")).status).toBe(400)
    })
  })
})
