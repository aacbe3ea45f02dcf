/**
 * Webhook delivery on the virtual clock, through the HTTP API (every answer checked against the contract), on the
 * memory store and (DATABASE_URL set) on PostgreSQL, the delivery rules included: attempts at the scheduled offsets with one eventId, all six
 * failing recorded as failed, the 8 s rule, deleted webhooks completing, the count of exhausted deliveries that
 * disables a webhook (started again by a PATCH to active only, D-055), signatures verified receiver-side with
 * node:crypto (not engine code).
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { DISABLE_AFTER, RETRY_DELAYS_MS, signatureHeaderNames } from "../../engine/events/webhook-delivery.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { MONDAY_OPEN, startEngine } from "../http/harness.ts"
import { tagsFor } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const SECRET = "whsec_0123456789abcdef"
/** Cumulative offsets of the six attempts: 0, then 5 s, 30 s, 5 min, 30 min, 2 h after the previous one. */
const OFFSETS_S = [0, 5, 35, 335, 2135, 9335]

const verify = (secret: string, body: string, signature: string) => {
  const expected = createHmac("sha256", secret).update(body).digest()
  const given = Buffer.from(signature, "hex")
  return given.length === expected.length && timingSafeEqual(given, expected)
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const databases = async (): Promise<Array<string | undefined>> => {
  const admin = process.env.DATABASE_URL
  if (admin === undefined || admin === "") return [undefined]
  return [undefined, admin]
}

const setup = async (admin: string | undefined, options: { webhookSignatureHeaders?: ReadonlyArray<string> } = {}) => {
  const receivers = new SimReceivers()
  let databaseUrl: string | undefined
  if (admin !== undefined) {
    const scope = Effect.runSync(Scope.make())
    databaseUrl = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(admin), Scope.Scope, scope))
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  }
  const engine = startEngine({ receivers, ...(databaseUrl === undefined ? {} : { databaseUrl }), ...options })
  cleanups.push(() => engine.dispose())
  const partner = await engine.newPartner()
  const key = { "x-api-key": partner.sandboxKey }
  let n = 0
  const write = (method: string, path: string, body?: unknown) =>
    engine.call(method, `${SANDBOX}${path}`, { headers: { ...key, "idempotency-key": `key-${++n}-${path.length}x` }, body })
  const read = (path: string) => engine.call("GET", `${SANDBOX}${path}`, { headers: key })
  const register = async (url: string, events: Array<string> = ["wallet.credited"]) => {
    const r = await write("POST", "/webhooks", { url, events, secret: SECRET })
    expect(r.status).toBe(201)
    return r.body.id as string
  }
  const credit = async () => {
    const r = await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 10 })
    expect(r.status).toBe(200)
  }
  /** Moves the clock `seconds` on (0: runs what is due now), running each due job at its own time. */
  const advance = async (seconds: number) => {
    const now = Date.parse((await engine.admin("GET", "/_sim/clock")).body.now)
    const r = await engine.admin("POST", "/_sim/clock/advance", { to: new Date(now + seconds * 1000).toISOString() })
    expect(r.status).toBe(200)
  }
  return { engine, receivers, partner, write, read, register, credit, advance }
}

for (const admin of await databases())
  describe(`webhook delivery (store ${admin === undefined ? "memory" : "postgres"})`, tagsFor(admin === undefined ? "memory" : "postgres"), () => {
    const store = admin === undefined ? "memory" : "postgres"

    it(`${store}: a receiver failing k times then answering 2xx gets the event on attempt k+1 at the scheduled offsets, one eventId`, async () => {
      const w = await setup(admin)
      const ids: Array<string> = []
      for (let k = 0; k <= 5; k++) {
        const url = `https://hooks.acme.test/k${k}`
        w.receivers.script(
          url,
          Array.from({ length: k }, (_, i) => (i % 2 === 0 ? { status: 500 } : { latencyMs: 9_000 }))
        )
        ids.push(await w.register(url))
      }
      await w.credit()
      await w.advance(3 * 3600)
      const received = w.receivers.take()
      for (let k = 0; k <= 5; k++) {
        const got = received.filter((r) => r.url === `https://hooks.acme.test/k${k}`)
        expect(got.map((r) => (r.at - MONDAY_OPEN) / 1000)).toEqual(OFFSETS_S.slice(0, k + 1))
        const envelopes = got.map((r) => JSON.parse(r.body))
        expect(new Set(envelopes.map((e) => e.eventId)).size).toBe(1)
        expect(envelopes[0]).toMatchObject({ event: "wallet.credited", isSandbox: true, data: { currency: "USD" } })
        expect(Object.keys(envelopes[0])).toEqual(["eventId", "event", "timestamp", "data", "isSandbox"])
        expect(got.at(-1)?.result).toEqual({ kind: "answered", status: 200, latencyMs: 0 })
        const list = await w.read(`/webhooks/${ids[k]}/deliveries`)
        expect(list.body.deliveries).toEqual([
          {
            deliveryId: expect.stringMatching(/^dlv_/),
            event: "wallet.credited",
            statusCode: 200,
            success: true,
            latencyMs: 0,
            attempts: k + 1,
            deliveredAt: new Date(MONDAY_OPEN + (OFFSETS_S[k] ?? 0) * 1000).toISOString(),
            eventId: envelopes[0].eventId,
            nextAttemptAt: null
          }
        ])
      }
    })

    it(`${store}: all six attempts failing is recorded as failed, and nothing is sent after the sixth`, async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/down", [], { status: 503 })
      const id = await w.register("https://hooks.acme.test/down")
      await w.credit()
      await w.advance(5)
      let list = await w.read(`/webhooks/${id}/deliveries`)
      expect(list.body.deliveries[0]).toMatchObject({
        attempts: 2,
        success: false,
        statusCode: 503,
        nextAttemptAt: new Date(MONDAY_OPEN + 35_000).toISOString()
      })
      await w.advance(24 * 3600)
      expect(w.receivers.take().map((r) => (r.at - MONDAY_OPEN) / 1000)).toEqual(OFFSETS_S)
      list = await w.read(`/webhooks/${id}/deliveries`)
      expect(list.body.deliveries[0]).toMatchObject({ attempts: 6, success: false, statusCode: 503, nextAttemptAt: null })
      await w.advance(24 * 3600)
      expect(w.receivers.take()).toEqual([])
    })

    it(`${store}: flipping any byte of the body breaks the signature receiver-side`, async () => {
      const w = await setup(admin, { webhookSignatureHeaders: ["X-MyStocks-Signature"] })
      w.receivers.script("https://hooks.acme.test/sig")
      await w.register("https://hooks.acme.test/sig")
      await w.credit()
      await w.advance(0)
      const [got] = w.receivers.take()
      if (got === undefined) throw new Error("nothing delivered")
      const signature = got.headers["x-service-signature"] ?? ""
      expect(got.headers["x-mystocks-signature"]).toBe(signature)
      expect(got.headers["content-type"]).toBe("application/json")
      expect(verify(SECRET, got.body, signature)).toBe(true)
      expect(verify("another-secret-of-16", got.body, signature)).toBe(false)
      const bytes = Buffer.from(got.body)
      for (let i = 0; i < bytes.length; i++) {
        const flipped = Buffer.from(bytes)
        flipped[i] = (flipped[i] ?? 0) ^ 0x01
        expect(verify(SECRET, flipped.toString("latin1"), signature), `byte ${i}`).toBe(false)
      }
    })
  })

for (const { admin, store } of (await databases()).map((admin) => ({ admin, store: admin === undefined ? "memory" : "postgres" })))
  describe(`webhook delivery rules (${store})`, tagsFor(store), () => {
    it("an answer after 8 s is a failed attempt; a redirect is not followed and counts as non-2xx", async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/slow", [{ latencyMs: 8_000 }, { status: 302 }, { latencyMs: 7_999 }])
      const id = await w.register("https://hooks.acme.test/slow")
      await w.credit()
      await w.advance(40)
      const got = w.receivers.take()
      expect(got.map((r) => r.result)).toEqual([
        { kind: "timeout" },
        { kind: "answered", status: 302, latencyMs: 0 },
        { kind: "answered", status: 200, latencyMs: 7_999 }
      ])
      const list = await w.read(`/webhooks/${id}/deliveries`)
      expect(list.body.deliveries[0]).toMatchObject({ attempts: 3, success: true, latencyMs: 7_999 })
    })

    it("a deleted webhook's in-flight delivery completes, and new events no longer go to it", async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/gone", [{ status: 500 }])
      const id = await w.register("https://hooks.acme.test/gone")
      await w.credit()
      await w.advance(0)
      expect((await w.write("DELETE", `/webhooks/${id}`)).status).toBe(200)
      expect((await w.read(`/webhooks/${id}/deliveries`)).status).toBe(404)
      await w.credit()
      await w.advance(10)
      const got = w.receivers.take()
      expect(got.map((r) => [(r.at - MONDAY_OPEN) / 1000, r.result.kind === "answered" ? r.result.status : null])).toEqual([
        [0, 500],
        [5, 200]
      ])
    })

    it("only subscribed events of the webhook's own partition are delivered; aliases are their own events", async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/alias")
      await w.register("https://hooks.acme.test/alias", ["trade.settled", "quote.expired"])
      await w.credit()
      const q = await w.read("/quote/SCOM.KE?side=BUY&quantity=1")
      expect(q.status).toBe(200)
      await w.advance(61)
      const got = w.receivers.take().map((r) => JSON.parse(r.body).event)
      expect(got).toEqual(["quote.expired"])
    })

    it("alias events go to the subscribers of those names: trade.settled / trade.rejected carry order.filled's / order.rejected's payload, as their own events", async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/legacy")
      w.receivers.script("https://hooks.acme.test/current")
      await w.register("https://hooks.acme.test/legacy", ["trade.settled", "trade.rejected"])
      await w.register("https://hooks.acme.test/current", ["order.filled", "order.rejected"])
      const trade = async (key: string) => {
        const q = await w.read("/quote/SCOM.KE?side=BUY&quantity=1")
        expect(q.status).toBe(200)
        const r = await w.engine.call("POST", `${SANDBOX}/trade`, {
          headers: { "x-api-key": w.partner.sandboxKey, "idempotency-key": key },
          body: { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId: q.body.quoteId }
        })
        expect(r.status).toBe(202)
        return r.body.orderId as string
      }
      const filled = await trade("alias-trade-01")
      expect((await w.engine.admin("POST", `/_sim/desk/orders/${filled}/fill`, {})).status).toBe(200)
      const rejected = await trade("alias-trade-02")
      const rejection = { rejectionCode: "LIQUIDITY_UNAVAILABLE", rejectionReason: "no seller" }
      expect((await w.engine.admin("POST", `/_sim/desk/orders/${rejected}/reject`, rejection)).status).toBe(200)
      await w.advance(0)
      const got = w.receivers.take().map((r) => ({ url: r.url, ...JSON.parse(r.body) }))
      const at = (url: string, event: string) => got.filter((g) => g.url === `https://hooks.acme.test/${url}` && g.event === event)
      expect(got).toHaveLength(4)
      for (const [current, alias, orderId] of [
        ["order.filled", "trade.settled", filled],
        ["order.rejected", "trade.rejected", rejected]
      ] as const) {
        const [main] = at("current", current)
        const [legacy] = at("legacy", alias)
        expect(main?.data.orderId).toBe(orderId)
        expect(legacy?.data).toEqual(main?.data)
        expect(legacy?.eventId).not.toBe(main?.eventId)
      }
    })

    it("20 consecutive exhausted deliveries disable the webhook; PATCH status active re-enables it", async () => {
      const w = await setup(admin)
      w.receivers.script("https://hooks.acme.test/dead", [], { unreachable: true })
      const id = await w.register("https://hooks.acme.test/dead")
      for (let i = 0; i < 20; i++) await w.credit()
      await w.advance(3 * 3600)
      const list = await w.read("/webhooks")
      expect(list.body.webhooks).toEqual([expect.objectContaining({ id, status: "disabled" })])
      await w.credit()
      await w.advance(10)
      expect(w.receivers.take()).toHaveLength(120)
      const patched = await w.write("PATCH", `/webhooks/${id}`, { status: "active" })
      expect(patched.body.status).toBe("active")
      await w.credit()
      await w.advance(0)
      expect(w.receivers.take()).toHaveLength(1)
    })
  })

describe("the failure count of D-055", () => {
  /** Long enough for every retry of a delivery to run out. */
  const ALL_RETRIES_SECONDS = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) / 1000 + 60

  it("PATCH status active starts it again; a PATCH of anything else keeps it", async () => {
    const { receivers, write, read, register, credit, advance } = await setup(undefined)
    /** `count` wallet.credited events, each delivered (and, to a failing receiver, retried to the end). */
    const credits = async (count: number) => {
      for (let i = 0; i < count; i++) await credit()
      await advance(ALL_RETRIES_SECONDS)
    }
    const statusOf = async (id: string) => ((await read("/webhooks")).body.webhooks as Array<{ id: string; status: string }>).find((w) => w.id === id)?.status
    receivers.script("https://reset.test/h", [], { status: 500 })
    receivers.script("https://kept.test/h", [], { status: 500 })
    const reset = await register("https://reset.test/h", ["wallet.credited"])
    const kept = await register("https://kept.test/h", ["wallet.credited"])
    await credits(DISABLE_AFTER - 1)
    expect([await statusOf(reset), await statusOf(kept)]).toEqual(["active", "active"])
    // both one exhausted delivery away from being disabled
    expect((await write("PATCH", `/webhooks/${reset}`, { status: "active" })).status).toBe(200)
    expect((await write("PATCH", `/webhooks/${kept}`, { events: ["wallet.credited", "order.filled"] })).status).toBe(200)
    await credits(1)
    expect(await statusOf(reset)).toBe("active")
    expect(await statusOf(kept)).toBe("disabled")
  })
})

describe("signatureHeaderNames (serve --webhook-signature-header, E-210)", () => {
  it("lower-cases, drops repeats and the spec's own name, keeps the order given", () => {
    expect(signatureHeaderNames([])).toEqual([])
    expect(signatureHeaderNames(["X-MyStocks-Signature", "x-service-signature", "x-mystocks-signature", " X-Other-Sig "])).toEqual([
      "x-mystocks-signature",
      "x-other-sig"
    ])
  })

  it("refuses a name that is not an HTTP token, and the headers a delivery sets itself", () => {
    for (const bad of ["", "x signature", "x:sig", "si\tg", "é-sig"]) expect(signatureHeaderNames([bad]), bad).toHaveProperty("problem")
    for (const reserved of ["Content-Type", "content-length", "User-Agent", "host"])
      expect(signatureHeaderNames(["x-ok", reserved]), reserved).toEqual({ problem: expect.stringContaining("sets that header itself") })
  })
})
