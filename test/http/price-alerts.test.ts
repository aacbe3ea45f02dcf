/**
 * Price alerts (D-053, D-076): created on production with a full key (sandbox 403), at most 200 active, evaluated by
 * the engine at each 900 s refresh that publishes a price captured while the exchange was open (D-243);
 * `price.alert` fires once for a one-shot alert (then DISARMED) and once per crossing for a repeating one; deleted alerts stop. The state machine itself is tested pure.
 * Every answer is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { observeAlert } from "../../engine/domain/price-alert.ts"
import { eventsOf, LIVE, SANDBOX } from "./accounts-kit.ts"
import { MONDAY_OPEN, startEngine } from "./harness.ts"

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
