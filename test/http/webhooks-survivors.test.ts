/**
 * What engine/app/webhooks.ts decides that the webhook tests did not pin (found by the mutation run): re-enabling a
 * webhook starts its failure count again while other changes keep it (D-055), a test event answered outside 2xx
 * (a 1xx or a 300) fails with 502, the test event's message, and the delivery list's page ends (exactly `limit`
 * records is one page; the cursor continues after the last record shown). Later survivors: a loopback host is
 * accepted over plain http only (ftp:, ws:, file: to it are refused with the HTTPS message), and GET /webhooks lists
 * oldest first (on postgres too when DATABASE_URL is set, where a store list not asked for "asc" is newest first).
 */
import { afterEach, describe, expect, it } from "vitest"
import { DISABLE_AFTER, RETRY_DELAYS_MS } from "../../engine/events/webhook-delivery.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { engineOn, startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const SECRET = "whsec_0123456789abcdef"
const URL_OK = "https://hooks.acme.test/in"
/** Long enough for every retry of a delivery to run out. */
const ALL_RETRIES_SECONDS = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) / 1000 + 60

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})
/** Postgres runs only with DATABASE_URL (the mutation run has none): there a list without `order: "asc"` is newest first. */
const stores = process.env.DATABASE_URL === undefined ? (["memory"] as const) : (["memory", "postgres"] as const)

const setup = async () => {
  const receivers = new SimReceivers()
  const engine = startEngine({ receivers })
  engines.push(engine)
  const partner = await engine.newPartner()
  let n = 0
  const write = (method: string, path: string, body?: unknown) =>
    engine.call(method, `${SANDBOX}${path}`, { headers: { "x-api-key": partner.sandboxKey, "idempotency-key": `idem-key-${++n}` }, body })
  const read = (path: string) => engine.call("GET", `${SANDBOX}${path}`, { headers: { "x-api-key": partner.sandboxKey } })
  const register = async (url: string, events: ReadonlyArray<string>) => {
    const r = await write("POST", "/webhooks", { url, events, secret: SECRET })
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.id as string
  }
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  /** `count` wallet.credited events, each delivered (and, to a failing receiver, retried to the end). */
  const credits = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const r = await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 1 })
      expect(r.status).toBe(200)
    }
    await advance(ALL_RETRIES_SECONDS)
  }
  const statusOf = async (id: string) => ((await read("/webhooks")).body.webhooks as Array<{ id: string; status: string }>).find((w) => w.id === id)?.status
  return { engine, receivers, write, read, register, advance, credits, statusOf }
}

describe("the failure count of D-055", () => {
  it("PATCH status active starts it again; a PATCH of anything else keeps it", async () => {
    const { receivers, write, register, credits, statusOf } = await setup()
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

describe("POST /webhooks/{id}/test", () => {
  it("fails with 502 on an informational or a 300 answer: only 2xx is success", async () => {
    const { receivers, write, register } = await setup()
    receivers.script(URL_OK, [{ status: 199 }, { status: 300 }, { status: 299 }])
    const id = await register(URL_OK, ["order.filled"])
    for (const status of [199, 300]) {
      const r = await write("POST", `/webhooks/${id}/test`)
      expect([r.status, r.body.error?.code, r.body.error?.httpStatus], String(status)).toEqual([502, "WEBHOOK_TEST_FAILED", status])
    }
    const ok = await write("POST", `/webhooks/${id}/test`)
    expect([ok.status, ok.body.httpStatus]).toEqual([200, 299])
  })

  it("sends the test event's message", async () => {
    const { receivers, write, register } = await setup()
    receivers.script(URL_OK)
    const id = await register(URL_OK, ["order.filled"])
    expect((await write("POST", `/webhooks/${id}/test`)).status).toBe(200)
    const [sent] = receivers.take()
    expect(JSON.parse(sent?.body ?? "{}").data).toEqual({ webhookId: id, message: "Test event from Sokoni", test: true })
  })
})

describe("GET /webhooks/{id}/deliveries pages", () => {
  it("exactly `limit` records are one page; the cursor goes on after the last record shown", async () => {
    const { receivers, write, read, register, advance } = await setup()
    receivers.script(URL_OK)
    const id = await register(URL_OK, ["order.filled"])
    const eventIds: Array<string> = []
    for (let i = 0; i < 5; i++) {
      eventIds.push((await write("POST", `/webhooks/${id}/test`)).body.eventId)
      await advance(1)
    }
    const newestFirst = [...eventIds].reverse()
    const whole = await read(`/webhooks/${id}/deliveries?limit=5`)
    expect([whole.body.count, whole.body.hasMore, whole.body.nextCursor]).toEqual([5, false, null])
    const first = await read(`/webhooks/${id}/deliveries?limit=3`)
    expect(first.body.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual(newestFirst.slice(0, 3))
    const second = await read(`/webhooks/${id}/deliveries?limit=3&cursor=${first.body.nextCursor}`)
    expect(second.body.deliveries.map((d: { eventId: string }) => d.eventId)).toEqual(newestFirst.slice(3))
    expect([second.body.hasMore, second.body.nextCursor]).toEqual([false, null])
  })
})

describe("a webhook URL to a loopback address", () => {
  it("is accepted over plain http only: another scheme to a loopback host is refused like any non-HTTPS URL", async () => {
    const { write, read } = await setup()
    for (const url of ["ftp://127.0.0.1/hook", "ws://localhost:8080/hook", "file://localhost/etc/hook"]) {
      const r = await write("POST", "/webhooks", { url, events: ["order.filled"], secret: SECRET })
      expect([r.status, r.body.error], url).toEqual([
        400,
        { code: "VALIDATION_ERROR", message: "url must use HTTPS (plain http is accepted only for a loopback address)", param: "url" }
      ])
    }
    expect((await read("/webhooks")).body.webhooks).toEqual([])
  })
})

describe("GET /webhooks", () => {
  it.each(stores)("lists the registrations oldest first (%s)", async (store) => {
    const { engine, dispose } = await engineOn(store)
    engines.push({ dispose })
    const partner = await engine.newPartner()
    const ids: Array<string> = []
    for (const host of ["first", "second", "third"]) {
      const r = await engine.call("POST", `${SANDBOX}/webhooks`, {
        headers: { "x-api-key": partner.sandboxKey, "idempotency-key": `order-${host}` },
        body: { url: `https://${host}.test/h`, events: ["order.filled"], secret: SECRET }
      })
      expect(r.status, JSON.stringify(r.body)).toBe(201)
      ids.push(r.body.id)
      expect((await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })).status).toBe(200)
    }
    const listed = await engine.call("GET", `${SANDBOX}/webhooks`, { headers: { "x-api-key": partner.sandboxKey } })
    expect(listed.body.webhooks.map((w: { id: string; url: string }) => [w.id, w.url])).toEqual([
      [ids[0], "https://first.test/h"],
      [ids[1], "https://second.test/h"],
      [ids[2], "https://third.test/h"]
    ])
  })
})
