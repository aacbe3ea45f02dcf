/**
 * Webhook endpoints through the gateway (every answer checked against the contract by the harness): registration
 * rules and their 400s (plain http to a loopback address only, no other scheme to it), the list oldest first (on
 * postgres too with DATABASE_URL), update, delete, the signed test event (200 on 2xx only; 502 with httpStatus, a 1xx
 * or a 300 included) and its message, delivery records and their pagination (exactly `limit` records is one page),
 * and isolation between partners.
 */
import { createHmac } from "node:crypto"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { parse } from "yaml"
import { afterEach, describe, expect, it } from "vitest"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { engineOn, startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const LIVE = "/api/v1/partner"
const SECRET = "whsec_0123456789abcdef"
const URL_OK = "https://hooks.acme.test/in"

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})
/** Postgres runs only with DATABASE_URL: there a list without `order: "asc"` is newest first. */
const stores = process.env.DATABASE_URL === undefined ? (["memory"] as const) : (["memory", "postgres"] as const)

const setup = async () => {
  const receivers = new SimReceivers()
  const engine = startEngine({ receivers })
  engines.push(engine)
  const partner = await engine.newPartner()
  let n = 0
  const as = (base: string, key: string) => ({
    write: (method: string, path: string, body?: unknown) =>
      engine.call(method, `${base}${path}`, { headers: { "x-api-key": key, "idempotency-key": `idem-key-${++n}` }, body }),
    read: (path: string) => engine.call("GET", `${base}${path}`, { headers: { "x-api-key": key } })
  })
  const sandbox = as(SANDBOX, partner.sandboxKey)
  const register = async (url: string, events: ReadonlyArray<string>) => {
    const r = await sandbox.write("POST", "/webhooks", { url, events, secret: SECRET })
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body.id as string
  }
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  // write and read: the sandbox's
  return { engine, receivers, partner, sandbox, live: as(LIVE, partner.liveKey), write: sandbox.write, read: sandbox.read, register, advance }
}

const errorOf = (r: { status: number; body: any }) => [r.status, r.body.error.code, r.body.error.param]

describe("POST /webhooks", () => {
  it("registers an HTTPS URL and never returns the secret", async () => {
    const { sandbox } = await setup()
    const r = await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled", "trade.settled"], secret: SECRET })
    expect(r.status).toBe(201)
    expect(r.body).toEqual({ id: expect.stringMatching(/^wh_/), url: URL_OK, events: ["order.filled", "trade.settled"], status: "active" })
    expect(JSON.stringify(r.body)).not.toContain(SECRET)
    expect((await sandbox.read("/webhooks")).body).toEqual({ webhooks: [r.body] })
  })

  it("accepts plain http only to a loopback address (simulation, E-070)", async () => {
    const { sandbox } = await setup()
    for (const url of ["http://127.0.0.1:8080/hook", "http://localhost/x", "http://[::1]:9/x"]) {
      expect((await sandbox.write("POST", "/webhooks", { url, events: ["order.filled"], secret: SECRET })).status).toBe(201)
    }
    const r = await sandbox.write("POST", "/webhooks", { url: "http://hooks.acme.test/x", events: ["order.filled"], secret: SECRET })
    expect(errorOf(r)).toEqual([400, "VALIDATION_ERROR", "url"])
  })

  it("refuses bad inputs with 400 in the envelope and writes nothing", async () => {
    const { sandbox, engine, partner } = await setup()
    const cases: Array<[unknown, string, string | undefined]> = [
      [{ url: "ftp://x.test/a", events: ["order.filled"], secret: SECRET }, "VALIDATION_ERROR", "url"],
      [{ url: "not a url", events: ["order.filled"], secret: SECRET }, "VALIDATION_ERROR", "url"],
      [{ url: URL_OK, events: ["order.exploded"], secret: SECRET }, "VALIDATION_ERROR", "events"],
      [{ url: URL_OK, events: [], secret: SECRET }, "VALIDATION_ERROR", "events"],
      [{ url: URL_OK, events: ["order.filled", "order.filled"], secret: SECRET }, "VALIDATION_ERROR", "events"],
      [{ url: URL_OK, events: ["order.filled"], secret: "fifteen-chars-x" }, "VALIDATION_ERROR", "secret"]
    ]
    for (const [body, code, param] of cases) expect(errorOf(await sandbox.write("POST", "/webhooks", body)), JSON.stringify(body)).toEqual([400, code, param])
    for (const body of [
      { url: URL_OK, events: ["order.filled"] },
      { events: ["order.filled"], secret: SECRET },
      { url: URL_OK, events: "order.filled", secret: SECRET }
    ]) {
      expect((await sandbox.write("POST", "/webhooks", body)).status).toBe(400)
    }
    const noKey = await engine.call("POST", `${SANDBOX}/webhooks`, {
      headers: { "x-api-key": partner.sandboxKey },
      body: { url: URL_OK, events: ["order.filled"], secret: SECRET }
    })
    expect(errorOf(noKey)).toEqual([400, "MISSING_IDEMPOTENCY_KEY", undefined])
    expect((await sandbox.read("/webhooks")).body).toEqual({ webhooks: [] })
  })

  it("allows 16-character secrets and at most 20 registrations per partition", async () => {
    const { sandbox, live } = await setup()
    for (let i = 0; i < 20; i++)
      expect((await sandbox.write("POST", "/webhooks", { url: `${URL_OK}/${i}`, events: ["order.filled"], secret: "sixteen-chars-xx" })).status).toBe(201)
    const over = await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })
    expect(over.status).toBe(400)
    expect(over.body.error).toMatchObject({ code: "VALIDATION_ERROR", limit: 20 })
    expect((await sandbox.read("/webhooks")).body.webhooks).toHaveLength(20)
    // Production is another partition.
    expect((await live.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).status).toBe(201)
    expect((await live.read("/webhooks")).body.webhooks).toHaveLength(1)
  })

  it("accepts a loopback address over plain http only: another scheme to a loopback host is refused like any non-HTTPS URL", async () => {
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
  for (const store of stores)
    it(`lists the registrations oldest first (${store})`, tagsFor(store), async () => {
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

describe("PATCH and DELETE /webhooks/{id}", () => {
  it("updates url, events, secret and status; refuses an empty or bad body; 404 for unknown or another partner's id", async () => {
    const { sandbox, live, engine } = await setup()
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).body.id
    const r = await sandbox.write("PATCH", `/webhooks/${id}`, {
      url: "https://other.test/h",
      events: ["kyc.updated"],
      secret: "a-new-secret-of-20ch",
      status: "disabled"
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ id, url: "https://other.test/h", events: ["kyc.updated"], status: "disabled" })
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { status: "active" })).body.status).toBe("active")
    expect(errorOf(await sandbox.write("PATCH", `/webhooks/${id}`, {}))).toEqual([400, "VALIDATION_ERROR", undefined])
    expect(errorOf(await sandbox.write("PATCH", `/webhooks/${id}`, { url: "http://x.test" }))).toEqual([400, "VALIDATION_ERROR", "url"])
    expect(errorOf(await sandbox.write("PATCH", `/webhooks/${id}`, { events: ["nope"] }))).toEqual([400, "VALIDATION_ERROR", "events"])
    expect(errorOf(await sandbox.write("PATCH", `/webhooks/${id}`, { secret: "short" }))).toEqual([400, "VALIDATION_ERROR", "secret"])
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { status: "paused" })).status).toBe(400)
    expect(errorOf(await sandbox.write("PATCH", "/webhooks/wh_unknown", { status: "active" }))).toEqual([404, "NOT_FOUND", undefined])
    expect(errorOf(await live.write("PATCH", `/webhooks/${id}`, { status: "active" }))).toEqual([404, "NOT_FOUND", undefined])
    const other = await engine.newPartner()
    const otherCall = await engine.call("PATCH", `${SANDBOX}/webhooks/${id}`, {
      headers: { "x-api-key": other.sandboxKey, "idempotency-key": "other-partner-1" },
      body: { status: "active" }
    })
    expect(otherCall.status).toBe(404)
    expect((await sandbox.read("/webhooks")).body.webhooks[0]).toMatchObject({ url: "https://other.test/h", status: "active" })
  })

  it("deletes once; then 404 everywhere", async () => {
    const { sandbox, live } = await setup()
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).body.id
    expect((await live.write("DELETE", `/webhooks/${id}`)).status).toBe(404)
    const r = await sandbox.write("DELETE", `/webhooks/${id}`)
    expect(r.status).toBe(200)
    expect(r.body.message).toContain(id)
    expect((await sandbox.read("/webhooks")).body).toEqual({ webhooks: [] })
    for (const reply of [
      await sandbox.write("DELETE", `/webhooks/${id}`),
      await sandbox.write("POST", `/webhooks/${id}/test`),
      await sandbox.read(`/webhooks/${id}/deliveries`)
    ])
      expect(errorOf(reply)).toEqual([404, "NOT_FOUND", undefined])
    // A deleted registration frees its place among the 20.
    expect((await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).status).toBe(201)
  })
})

describe("POST /webhooks/{id}/test", () => {
  it("sends a signed test.event to that webhook only and reports 200 on 2xx", async () => {
    const { sandbox, receivers } = await setup()
    receivers.script(URL_OK, [{ status: 204, latencyMs: 12 }])
    receivers.script("https://bystander.test/h")
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["test.event"], secret: SECRET })).body.id
    await sandbox.write("POST", "/webhooks", { url: "https://bystander.test/h", events: ["test.event"], secret: SECRET })
    const r = await sandbox.write("POST", `/webhooks/${id}/test`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      success: true,
      eventId: expect.stringMatching(/^evt_/),
      message: "Test event delivered",
      webhookId: id,
      url: URL_OK,
      httpStatus: 204
    })
    const [sent, ...rest] = receivers.take()
    expect(rest).toEqual([])
    expect(sent?.url).toBe(URL_OK)
    const body = JSON.parse(sent?.body ?? "{}")
    expect(body).toEqual({
      eventId: r.body.eventId,
      event: "test.event",
      timestamp: "2026-11-23T08:00:00.000Z",
      data: { webhookId: id, message: expect.any(String), test: true },
      isSandbox: true
    })
    expect(sent?.headers["x-service-signature"]).toBe(
      createHmac("sha256", SECRET)
        .update(sent?.body ?? "")
        .digest("hex")
    )
    const list = await sandbox.read(`/webhooks/${id}/deliveries`)
    expect(list.body.deliveries).toEqual([
      {
        deliveryId: expect.stringMatching(/^dlv_/),
        event: "test.event",
        statusCode: 204,
        success: true,
        latencyMs: 12,
        attempts: 1,
        deliveredAt: "2026-11-23T08:00:00.000Z",
        eventId: r.body.eventId,
        nextAttemptAt: null
      }
    ])
  })

  it("answers 502 WEBHOOK_TEST_FAILED with httpStatus on non-2xx, null when unreachable or too slow; production has no isSandbox", async () => {
    const { live, receivers } = await setup()
    receivers.script(URL_OK, [{ status: 500 }, { latencyMs: 8_000 }, { status: 301 }])
    const id = (await live.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).body.id
    const failed = await live.write("POST", `/webhooks/${id}/test`)
    expect(failed.status).toBe(502)
    expect(failed.body.error).toMatchObject({ code: "WEBHOOK_TEST_FAILED", httpStatus: 500, eventId: expect.stringMatching(/^evt_/) })
    expect((await live.write("POST", `/webhooks/${id}/test`)).body.error).toMatchObject({ code: "WEBHOOK_TEST_FAILED", httpStatus: null })
    expect((await live.write("POST", `/webhooks/${id}/test`)).body.error).toMatchObject({ httpStatus: 301 })
    const sent = receivers.take()
    expect(sent.map((s) => JSON.parse(s.body).isSandbox)).toEqual([undefined, undefined, undefined])
    const unreachable = (await live.write("POST", "/webhooks", { url: "https://nobody.test/h", events: ["order.filled"], secret: SECRET })).body.id
    const r = await live.write("POST", `/webhooks/${unreachable}/test`)
    expect(r.body.error).toMatchObject({ code: "WEBHOOK_TEST_FAILED", httpStatus: null, message: "the endpoint is unreachable" })
    const records = (await live.read(`/webhooks/${id}/deliveries`)).body.deliveries
    // Same instant: ordered by id (creation time, then id), so compare as a set.
    expect(records.map((d: any) => JSON.stringify([d.success, d.statusCode, d.latencyMs])).sort()).toEqual([
      "[false,301,0]",
      "[false,500,0]",
      "[false,null,null]"
    ])
  })

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

describe("GET /webhooks/{id}/deliveries", () => {
  it("pages newest first with a cursor; refuses bad limits and cursors", async () => {
    const { sandbox, receivers, engine } = await setup()
    receivers.script(URL_OK)
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).body.id
    const eventIds: Array<string> = []
    for (let i = 0; i < 3; i++) {
      eventIds.push((await sandbox.write("POST", `/webhooks/${id}/test`)).body.eventId)
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    }
    const first = await sandbox.read(`/webhooks/${id}/deliveries?limit=2`)
    expect(first.body).toMatchObject({ count: 2, hasMore: true })
    expect(first.body.deliveries.map((d: any) => d.eventId)).toEqual([eventIds[2], eventIds[1]])
    const second = await sandbox.read(`/webhooks/${id}/deliveries?limit=2&cursor=${first.body.nextCursor}`)
    expect(second.body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
    expect(second.body.deliveries.map((d: any) => d.eventId)).toEqual([eventIds[0]])
    expect((await sandbox.read(`/webhooks/${id}/deliveries`)).body.count).toBe(3)
    for (const q of ["limit=0", "limit=101", "limit=x", "cursor=garbage"]) expect((await sandbox.read(`/webhooks/${id}/deliveries?${q}`)).status, q).toBe(400)
    const other = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })).body.id
    expect((await sandbox.read(`/webhooks/${other}/deliveries?cursor=${first.body.nextCursor}`)).status).toBe(400)
    expect((await sandbox.read(`/webhooks/${other}/deliveries`)).body).toEqual({ deliveries: [], count: 0, hasMore: false, nextCursor: null })
    expect((await sandbox.read("/webhooks/wh_nope/deliveries")).status).toBe(404)
  })

  it("does not list a delivery before its first attempt", async () => {
    const { sandbox, receivers, engine, partner } = await setup()
    receivers.script(URL_OK)
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["wallet.credited"], secret: SECRET })).body.id
    await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 5 })
    expect((await sandbox.read(`/webhooks/${id}/deliveries`)).body.count).toBe(0)
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    expect((await sandbox.read(`/webhooks/${id}/deliveries`)).body.deliveries[0]).toMatchObject({ event: "wallet.credited", attempts: 1, success: true })
  })

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

describe("rate limits", () => {
  it("webhook callbacks and test sends do not count toward the partner's rate limit", async () => {
    const { sandbox, receivers, engine, partner } = await setup()
    receivers.script(URL_OK, [], { status: 500 })
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["wallet.credited"], secret: SECRET })).body.id
    const remaining = async () => Number((await sandbox.read("/webhooks")).headers.get("x-ratelimit-remaining"))
    const before = await remaining()
    for (let i = 0; i < 5; i++) await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 1 })
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 40 })
    expect(receivers.take()).toHaveLength(15)
    expect(await remaining()).toBe(before - 1)
    expect((await sandbox.write("POST", `/webhooks/${id}/test`)).status).toBe(502)
    expect(await remaining()).toBe(before - 3)
  })
})

describe("the rules' details", () => {
  it("accepts every catalogue event name of the contract (aliases and test.event included), and only those", async () => {
    const spec = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8"))
    const names: Array<string> = spec.components.schemas.EventName.enum
    expect(names.length).toBeGreaterThan(20)
    const { sandbox } = await setup()
    const r = await sandbox.write("POST", "/webhooks", { url: URL_OK, events: names, secret: SECRET })
    expect(r.status).toBe(201)
    expect(r.body.events).toEqual(names)
    for (const name of names) {
      const typo = `${name}x`
      expect((await sandbox.write("POST", "/webhooks", { url: URL_OK, events: [typo], secret: SECRET })).body.error.invalid).toEqual([typo])
    }
  })

  it("says what is wrong", async () => {
    const { sandbox, receivers } = await setup()
    const message = async (body: unknown) => (await sandbox.write("POST", "/webhooks", body)).body.error.message as string
    expect(await message({ url: "http://example.test/x", events: ["order.filled"], secret: SECRET })).toBe(
      "url must use HTTPS (plain http is accepted only for a loopback address)"
    )
    expect(await message({ url: "::", events: ["order.filled"], secret: SECRET })).toBe("url must be an absolute HTTPS URL")
    expect(await message({ url: URL_OK, events: [], secret: SECRET })).toBe("events must be a list of at least 1 item, got []")
    expect(await message({ url: URL_OK, events: ["a.b", "c.d"], secret: SECRET })).toBe("unknown events: a.b, c.d")
    expect(await message({ url: URL_OK, events: ["order.filled", "order.filled"], secret: SECRET })).toBe(
      'events must be a list without repeats (items 0 and 1 are the same), got ["order.filled","order.filled"]'
    )
    expect(await message({ url: URL_OK, events: ["order.filled"], secret: "x" })).toBe("secret must be at least 16 characters long")
    for (let i = 0; i < 20; i++) await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["order.filled"], secret: SECRET })
    expect(await message({ url: URL_OK, events: ["order.filled"], secret: SECRET })).toBe("at most 20 webhooks per partner and environment")
    const id = (await sandbox.read("/webhooks")).body.webhooks[0].id
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, {})).body.error.message).toBe("give at least one of url, events, secret, status")
    expect((await sandbox.write("PATCH", "/webhooks/wh_x", { status: "active" })).body.error.message).toBe("no webhook wh_x")
    receivers.script(URL_OK, [{ status: 500 }, { latencyMs: 9_000 }])
    expect((await sandbox.write("POST", `/webhooks/${id}/test`)).body.error.message).toBe("the endpoint answered 500")
    expect((await sandbox.write("POST", `/webhooks/${id}/test`)).body.error.message).toBe("the endpoint did not answer within 8 s")
    const sent = receivers.take()
    expect(sent[0]?.headers).toEqual({
      "content-type": "application/json",
      "user-agent": "Sokoni-Webhooks/1",
      "x-service-signature": expect.stringMatching(/^[0-9a-f]{64}$/)
    })
    expect(sent[0]?.url).toBe(URL_OK)
  })

  it("PATCH changes only what it names; a disabled webhook gets no new deliveries", async () => {
    const { sandbox, receivers, engine, partner } = await setup()
    receivers.script("https://new.test/h")
    const id = (await sandbox.write("POST", "/webhooks", { url: URL_OK, events: ["wallet.credited"], secret: SECRET })).body.id
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { url: "https://new.test/h" })).body).toEqual({
      id,
      url: "https://new.test/h",
      events: ["wallet.credited"],
      status: "active"
    })
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { events: ["kyc.updated", "wallet.credited"] })).body.url).toBe("https://new.test/h")
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { secret: "another-secret-0123" })).body.events).toEqual(["kyc.updated", "wallet.credited"])
    await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 1 })
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    const [got] = receivers.take()
    expect(got?.headers["x-service-signature"]).toBe(
      createHmac("sha256", "another-secret-0123")
        .update(got?.body ?? "")
        .digest("hex")
    )
    expect((await sandbox.write("PATCH", `/webhooks/${id}`, { status: "disabled" })).body.status).toBe("disabled")
    await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 1 })
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    expect(receivers.take()).toEqual([])
  })
})
