/**
 * Price alerts (D-053, D-076): created on production with a full key (sandbox 403), at most 200 active, evaluated by
 * the engine at each 900 s refresh that publishes a price captured while the exchange was open (D-243);
 * `price.alert` fires once for a one-shot alert (then DISARMED) and once per crossing for a repeating one; deleted
 * alerts stop. The rules in detail: the refusals of a create (a symbol not listed on the exchange named, param symbol
 * and both named, while a malformed symbol and an unknown exchange keep their own codes; a threshold with more than 4
 * decimals, or 0 and below through the service; the 201st active alert, with its message; a data key, through the
 * service), the delete's message, an alert's id (alt_ and 16 characters) and the 404 naming an unknown one; a
 * DISARMED alert is done (not counted against the 200, not looked at again: its lastPriceLocal stays and no job runs
 * for it); `?state=` lists each state's alerts only; the list's pages (newest first, a cursor bound to its state
 * filter); an alert created after its exchange closed is not evaluated before the next session's first publication.
 * The state machine itself is tested pure. Every answer is checked against the contract.
 */
import type { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type CreateAlert, PriceAlertService } from "../../engine/app/price-alerts/service.ts"
import type { Principal } from "../../engine/app/principal.ts"
import { observeAlert } from "../../engine/domain/price-alert.ts"
import { eventsOf, failureOf, LIVE, SANDBOX } from "./accounts-kit.ts"
import { MONDAY_OPEN, type Reply, startEngine } from "./harness.ts"

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

let keySeq = 0

/** A partner with a production key and helpers for its price alerts. */
const setup = async () => {
  const engine = startEngine()
  engines.push(engine)
  // enterprise: the 200-alert test makes more calls a minute than a starter partner may
  const created = await engine.admin("POST", "/_sim/partners", { businessName: "Alert Rules", email: "alerts@rules.test", tier: "enterprise" })
  expect(created.status).toBe(201)
  const keys = created.body as { partnerId: string; liveKey: string }
  const live = (method: string, path: string, body?: unknown) =>
    engine.call(method, `${LIVE}${path}`, {
      headers: { "x-api-key": keys.liveKey, ...(method === "GET" ? {} : { "idempotency-key": `alert-rule-${++keySeq}` }) },
      body
    })
  const create = async (body: Record<string, unknown>) => {
    const r = await live("POST", "/price-alerts", body)
    expect(r.status, JSON.stringify(r.body)).toBe(201)
    return r.body as { alertId: string; lastPriceLocal: number }
  }
  const alert = async (alertId: string) => (await live("GET", `/price-alerts/${alertId}`)).body
  const listed = async (query: string) => (await live("GET", `/price-alerts${query}`)).body.data.map((a: { alertId: string }) => a.alertId)
  /** Moves the clock; answers how many scheduled jobs ran on the way. */
  const advance = async (body: { seconds: number } | { to: string }) => {
    const r = await engine.admin("POST", "/_sim/clock/advance", body)
    expect(r.status).toBe(200)
    return r.body.jobsRun as number
  }
  const scomPrice = async () => (await live("GET", "/stocks/SCOM.KE")).body.price as number
  const fired = async () => (await eventsOf(engine)).filter((e) => e.event === "price.alert").map((e) => e.data)
  /** The service itself, past the gateway, as a production caller with `keyKind`. */
  const principal = (keyKind: Principal["keyKind"]): Principal => ({
    partnerId: keys.partnerId,
    environment: "production",
    keyKind,
    tier: "starter",
    markupBps: 0,
    partition: `${keys.partnerId}:production`
  })
  const service = <A, E>(f: (s: PriceAlertService["Service"]) => Effect.Effect<A, E>) => engine.runtime.runPromiseExit(PriceAlertService.use(f))
  return { engine, live, create, alert, listed, advance, scomPrice, fired, principal, service }
}

const expectError = (r: Reply, status: number, error: Record<string, unknown>) =>
  expect([r.status, r.body?.error], JSON.stringify(r.body)).toEqual([status, error])

/** A price well above `price`, with the 2 decimals a pin takes. */
const tripled = (price: number) => Math.round(price * 300) / 100

const SCOM_ABOVE = (threshold: number): CreateAlert => ({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold })

describe("price alerts", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  let n = 0
  beforeEach(async () => {
    engine = startEngine()
    const r = await engine.admin("POST", "/_sim/partners", { businessName: "Alert Co", email: "alerts@acme.test", tier: "enterprise" })
    keys = r.body
  })
  afterEach(() => engine.dispose())

  const live = (method: string, path: string, body?: unknown) =>
    engine.call(method, `${LIVE}${path}`, {
      headers: { "x-api-key": keys.liveKey, ...(method === "GET" ? {} : { "idempotency-key": `alert-key-${++n}` }) },
      body
    })
  const scomPrice = async () => (await live("GET", "/stocks/SCOM.KE")).body.price as number
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
  const fired = async () => (await eventsOf(engine)).filter((e) => e.event === "price.alert")

  it("creates an ARMED alert on production only", async () => {
    const price = await scomPrice()
    const r = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 25, clientAlertId: "mine-1" })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 25, currency: "KES", repeat: false, state: "ARMED" })
    expect(r.body).toMatchObject({ clientAlertId: "mine-1", lastPriceLocal: price, triggerCount: 0, lastTriggeredAt: null })
    const sandbox = await engine.call("POST", `${SANDBOX}/price-alerts`, {
      headers: { "x-api-key": keys.sandboxKey, "idempotency-key": "alert-sandbox-1" },
      body: { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 25 }
    })
    expect(sandbox.status).toBe(403)
    const wrongExchange = await live("POST", "/price-alerts", { symbol: "SCOM.KE", exchange: "JSE", condition: "above", threshold: 25 })
    expect([wrongExchange.status, wrongExchange.body.error.code]).toEqual([400, "VALIDATION_ERROR"])
  })

  it("fires a one-shot alert once, at the first refresh past the threshold, then DISARMED", async () => {
    const price = await scomPrice()
    const created = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2, clientAlertId: "half" })
    const untouched = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "below", threshold: price / 2 })
    await advance(899)
    expect(await fired()).toEqual([])
    await advance(1)
    const events = await fired()
    expect(events).toHaveLength(1)
    expect(events[0]?.partition).toBe(`${keys.partnerId}:production`)
    expect(events[0]?.data).toMatchObject({ alertId: created.body.alertId, clientAlertId: "half", state: "DISARMED", triggerCount: 1, repeat: false })
    expect(events[0]?.data.triggeredAt).toBe(new Date(MONDAY_OPEN + 900_000).toISOString())
    await advance(3 * 900)
    expect(await fired()).toHaveLength(1)
    expect((await live("GET", `/price-alerts/${created.body.alertId}`)).body).toMatchObject({ state: "DISARMED", triggerCount: 1 })
    expect((await live("GET", `/price-alerts/${untouched.body.alertId}`)).body).toMatchObject({ state: "ARMED", triggerCount: 0 })
  })

  it("keeps a repeating alert TRIGGERED while the price stays past the threshold: one event, not one per refresh", async () => {
    const price = await scomPrice()
    const created = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2, repeat: true })
    await advance(4 * 900)
    expect((await fired()).map((e) => e.data.state)).toEqual(["TRIGGERED"])
    expect((await live("GET", `/price-alerts/${created.body.alertId}`)).body).toMatchObject({ state: "TRIGGERED", triggerCount: 1 })
  })

  it("does not look while the exchange is closed, and fires when the session's first delayed price is published (09:15)", async () => {
    // NSE closes at 15:00 Nairobi (12:00 UTC) and opens at 09:00 (06:00 UTC)
    await advance(4.5 * 3600)
    const price = await scomPrice()
    await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    await advance(17 * 3600)
    expect(await fired()).toEqual([])
    await advance(3600)
    const events = await fired()
    expect(events).toHaveLength(1)
    // the 09:00 (06:00 UTC) opening refresh is published at 06:15 UTC; at 06:00 only yesterday's close is shown
    expect(events[0]?.data.triggeredAt).toBe("2026-11-24T06:15:00.000Z")
  })

  it("stops a deleted alert, lists the live ones newest first, and answers 404 after deletion", async () => {
    const price = await scomPrice()
    const a = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    await advance(1)
    const b = await live("POST", "/price-alerts", { symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 })
    expect((await live("GET", "/price-alerts")).body.data.map((x: { alertId: string }) => x.alertId)).toEqual([b.body.alertId, a.body.alertId])
    const deleted = await live("DELETE", `/price-alerts/${a.body.alertId}`)
    expect(deleted.body).toEqual({ alertId: a.body.alertId, deleted: true, message: expect.any(String) })
    expect((await live("GET", `/price-alerts/${a.body.alertId}`)).status).toBe(404)
    await advance(2 * 900)
    expect(await fired()).toEqual([])
    expect((await live("GET", "/price-alerts?state=ARMED")).body.data.map((x: { alertId: string }) => x.alertId)).toEqual([b.body.alertId])
    const other = await engine.newPartner()
    const foreign = await engine.call("GET", `${LIVE}/price-alerts/${b.body.alertId}`, { headers: { "x-api-key": other.liveKey } })
    expect(foreign.status).toBe(404)
  })

  it("refuses the 201st active alert", async () => {
    for (let i = 0; i < 200; i++) {
      const r = await live("POST", "/price-alerts", { symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 })
      expect(r.status).toBe(201)
    }
    const over = await live("POST", "/price-alerts", { symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 })
    expect([over.status, over.body.error.code, over.body.error.limit]).toEqual([400, "VALIDATION_ERROR", 200])
  })
})

describe("POST /price-alerts refusals", () => {
  it("a symbol not listed on the exchange named is a 400 naming both, param symbol; a malformed symbol or unknown exchange keeps its code", async () => {
    const s = await setup()
    expectError(await s.live("POST", "/price-alerts", { symbol: "ZZZZ", exchange: "NSE", condition: "above", threshold: 1 }), 400, {
      code: "VALIDATION_ERROR",
      message: "symbol ZZZZ is not listed on NSE",
      param: "symbol"
    })
    // listed, but elsewhere
    expectError(await s.live("POST", "/price-alerts", { symbol: "SCOM", exchange: "jse", condition: "above", threshold: 1 }), 400, {
      code: "VALIDATION_ERROR",
      message: "symbol SCOM is not listed on jse",
      param: "symbol"
    })
    const malformed = await s.live("POST", "/price-alerts", { symbol: "bad!sym", exchange: "NSE", condition: "above", threshold: 1 })
    expect([malformed.status, malformed.body.error.code, malformed.body.error.param]).toEqual([400, "INVALID_SYMBOL", "symbol"])
    const unknown = await s.live("POST", "/price-alerts", { symbol: "SCOM", exchange: "XXX", condition: "above", threshold: 1 })
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
  })

  it("a threshold with more than 4 decimals is a 400, param threshold (and 0 or below, through the service)", async () => {
    const s = await setup()
    const refusal = { code: "VALIDATION_ERROR", message: "threshold must be positive with at most 4 decimals", param: "threshold" }
    expectError(await s.live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 20.12345 }), 400, refusal)
    for (const threshold of [0, -1]) {
      expect(failureOf(await s.service((a) => a.create(s.principal("full"), SCOM_ABOVE(threshold)))), String(threshold)).toEqual(refusal)
    }
    // 4 decimals are taken
    expect((await s.live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 20.1234 })).body.threshold).toBe(20.1234)
    expect(await s.listed("")).toHaveLength(1)
  })

  it("a data key may neither create nor delete an alert: FORBIDDEN, naming the full key it needs", async () => {
    const s = await setup()
    expect(failureOf(await s.service((a) => a.create(s.principal("data"), SCOM_ABOVE(1))))).toEqual({
      code: "FORBIDDEN",
      message: "creating a price alert needs a full pk_live_ key"
    })
    const kept = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 1 })
    expect(failureOf(await s.service((a) => a.remove(s.principal("data"), kept.alertId)))).toEqual({
      code: "FORBIDDEN",
      message: "deleting a price alert needs a full pk_live_ key"
    })
    expect(await s.listed("")).toEqual([kept.alertId])
  })
})

describe("DELETE /price-alerts/{alertId}", () => {
  it("answers the alert, deleted: true and the message a partner shows", async () => {
    const s = await setup()
    const a = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 1 })
    const r = await s.live("DELETE", `/price-alerts/${a.alertId}`)
    expect([r.status, r.body]).toEqual([200, { alertId: a.alertId, deleted: true, message: "Price alert deleted." }])
  })
})

describe("a DISARMED alert is done", () => {
  it("is not looked at again: its lastPriceLocal stays the price that fired it and no job runs for it", async () => {
    const s = await setup()
    const price = await s.scomPrice()
    const oneShot = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    // the first refresh (08:15) looks at it and it fires
    expect(await s.advance({ seconds: 900 })).toBe(1)
    const [event] = await s.fired()
    expect(event).toMatchObject({ alertId: oneShot.alertId, state: "DISARMED", triggerCount: 1 })
    // a pinned price published at 08:45 moves what a live alert would see
    expect((await s.engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: tripled(price) })).status).toBe(200)
    expect(await s.advance({ to: "2026-11-23T09:30:00.000Z" })).toBe(0)
    expect(await s.scomPrice()).toBe(tripled(price))
    expect(await s.alert(oneShot.alertId)).toMatchObject({ state: "DISARMED", triggerCount: 1, lastPriceLocal: event.price })
    expect(await s.fired()).toHaveLength(1)
  })

  it("does not count against the 200 active alerts; the 201st active one is refused with its message and limit", async () => {
    const s = await setup()
    const price = await s.scomPrice()
    await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    await s.advance({ seconds: 900 })
    expect((await s.fired()).map((e) => e.state)).toEqual(["DISARMED"])
    // 200 active besides the DISARMED one
    for (let i = 0; i < 200; i++) await s.create({ symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 })
    expectError(await s.live("POST", "/price-alerts", { symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 }), 400, {
      code: "VALIDATION_ERROR",
      message: "at most 200 active price alerts",
      limit: 200
    })
  })
})

describe("GET /price-alerts?state=", () => {
  it("lists each state's alerts only", async () => {
    const s = await setup()
    const price = await s.scomPrice()
    const disarmed = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    const triggered = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2, repeat: true })
    const armed = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "below", threshold: price / 2 })
    await s.advance({ seconds: 900 })
    expect(await s.listed("?state=DISARMED")).toEqual([disarmed.alertId])
    expect(await s.listed("?state=TRIGGERED")).toEqual([triggered.alertId])
    expect(await s.listed("?state=ARMED")).toEqual([armed.alertId])
    expect((await s.listed("")).sort()).toEqual([disarmed.alertId, triggered.alertId, armed.alertId].sort())
  })
})

describe("evaluation only from captures made while the exchange was open", () => {
  it("an alert created after NSE's close (12:00 UTC) is not evaluated until the next session's first publication (06:15 UTC)", async () => {
    const s = await setup()
    await s.advance({ to: "2026-11-23T12:20:00.000Z" })
    const price = await s.scomPrice()
    const a = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price / 2 })
    // pinned now, taken at the next opening refresh (06:00), published at 06:15
    expect((await s.engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: tripled(price) })).status).toBe(200)
    await s.advance({ to: "2026-11-24T06:14:59.000Z" })
    expect(await s.fired()).toEqual([])
    expect(await s.alert(a.alertId)).toMatchObject({ state: "ARMED", triggerCount: 0, lastPriceLocal: a.lastPriceLocal })
    await s.advance({ to: "2026-11-24T06:15:00.000Z" })
    const events = await s.fired()
    expect(events).toHaveLength(1)
    expect(events[0]).toMatchObject({ alertId: a.alertId, triggeredAt: "2026-11-24T06:15:00.000Z", asOf: "2026-11-24T06:00:00.000Z" })
    expect(events[0].price).toBe(tripled(price))
  })
})

describe("an alert's id", () => {
  it("is alt_ and 16 characters, and names the alert for GET", async () => {
    const s = await setup()
    const a = await s.create({ symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 1 })
    expect(a.alertId).toMatch(/^alt_[0-9a-z]{16}$/)
    expect((await s.alert(a.alertId)).alertId).toBe(a.alertId)
  })
})

describe("GET /price-alerts/{alertId} of an unknown alert", () => {
  it("is a 404 naming the alert", async () => {
    const s = await setup()
    expectError(await s.live("GET", "/price-alerts/alt_nope"), 404, { code: "NOT_FOUND", message: "price alert alt_nope was not found" })
  })
})

describe("GET /price-alerts pages", () => {
  it("newest first across pages, and a cursor is bound to the state filter it was issued for", async () => {
    const s = await setup()
    const made: Array<string> = []
    for (let i = 0; i < 3; i++) {
      made.push((await s.create({ symbol: "KCB", exchange: "NSE", condition: "below", threshold: 1 })).alertId)
      await s.advance({ seconds: 1 })
    }
    const first = await s.live("GET", "/price-alerts?limit=2")
    expect([first.status, first.body.data.map((a: { alertId: string }) => a.alertId), first.body.hasMore]).toEqual([200, [made[2], made[1]], true])
    const second = await s.live("GET", `/price-alerts?limit=2&cursor=${first.body.nextCursor}`)
    expect([second.status, second.body.data.map((a: { alertId: string }) => a.alertId), second.body.hasMore, second.body.nextCursor]).toEqual([
      200,
      [made[0]],
      false,
      null
    ])
    const armed = await s.live("GET", "/price-alerts?limit=1&state=ARMED")
    expect(armed.body.hasMore).toBe(true)
    const replayed = await s.live("GET", `/price-alerts?limit=1&cursor=${armed.body.nextCursor}`)
    expect([replayed.status, replayed.body.error?.code, replayed.body.error?.param]).toEqual([400, "VALIDATION_ERROR", "cursor"])
  })
})

describe("the alert state machine (pure)", () => {
  const above = { condition: "above" as const, threshold: 100, repeat: true }
  it("fires on reaching the threshold, stays TRIGGERED past it and re-arms on the way back", () => {
    expect(observeAlert("ARMED", above, 99)).toEqual({ state: "ARMED", fired: false })
    expect(observeAlert("ARMED", above, 100)).toEqual({ state: "TRIGGERED", fired: true })
    expect(observeAlert("TRIGGERED", above, 120)).toEqual({ state: "TRIGGERED", fired: false })
    expect(observeAlert("TRIGGERED", above, 99)).toEqual({ state: "ARMED", fired: false })
  })
  it("disarms a one-shot alert for good, and reads below the other way", () => {
    expect(observeAlert("ARMED", { ...above, repeat: false }, 150)).toEqual({ state: "DISARMED", fired: true })
    expect(observeAlert("DISARMED", above, 150)).toEqual({ state: "DISARMED", fired: false })
    const below = { condition: "below" as const, threshold: 100, repeat: false }
    expect(observeAlert("ARMED", below, 101)).toEqual({ state: "ARMED", fired: false })
    expect(observeAlert("ARMED", below, 100)).toEqual({ state: "DISARMED", fired: true })
  })
})
