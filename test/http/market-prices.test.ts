/**
 * `PUT /_sim/market/prices/{symbol}` (D-240): the operator sets a listing's exchange price now; the API shows it
 * only once the 15-minute delay has passed since the exchange's refresh captured it, everywhere a price is read
 * (stock item, tradeable quote, informational quotes, the stock list, price alerts). Every answer is checked against
 * the contracts by the harness.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { eventsOf, LIVE } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { adminUrl, withDatabase } from "./node-server-kit.ts"
import { expectError, type PartnerEngine, partnerEngine, SANDBOX } from "./reference-support.ts"
import { onPostgres } from "../support/stores.ts"

let p: PartnerEngine
beforeEach(async () => {
  p = await partnerEngine()
})
afterEach(() => p.dispose())

const setPrice = (symbol: string, body: unknown) => p.engine.admin("PUT", `/_sim/market/prices/${symbol}`, body)
const advanceTo = async (iso: string) => expect((await p.engine.admin("POST", "/_sim/clock/advance", { to: iso })).status).toBe(200)
/** The price of SCOM.KE as every read of it shows it now; they must agree. */
const shown = async () => {
  const item = (await p.get("/stocks/SCOM.KE")).body
  const quote = (await p.get("/quote/SCOM.KE")).body
  const informational = (await p.get("/market/quotes?symbol=SCOM.KE")).body.data
  const listed = (await p.get("/stocks?exchange=NSE&limit=200")).body.stocks.find((s: any) => s.symbol === "SCOM.KE")
  expect([quote.price, informational.price, listed.price]).toEqual([item.price, item.price, item.price])
  expect([informational.asOf, listed.asOf]).toEqual([item.asOf, item.asOf])
  return { price: item.price as number, asOf: item.asOf as string }
}

describe("PUT /_sim/market/prices/{symbol}", () => {
  it("answers when the exchange takes the price and when the API shows it, and the API shows it then, not before", async () => {
    await advanceTo("2026-11-23T08:05:00.000Z")
    const before = await shown()
    const r = await setPrice("SCOM", { price: 31.5 })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({
      symbol: "SCOM.KE",
      exchange: "NSE",
      currency: "KES",
      price: 31.5,
      setAt: "2026-11-23T08:05:00.000Z",
      effectiveAt: "2026-11-23T08:15:00.000Z",
      visibleFrom: "2026-11-23T08:30:00.000Z"
    })
    expect(await shown()).toEqual(before)
    await advanceTo("2026-11-23T08:29:59.999Z")
    expect((await shown()).price).not.toBe(31.5)
    await advanceTo("2026-11-23T08:30:00.000Z")
    expect(await shown()).toEqual({ price: 31.5, asOf: "2026-11-23T08:15:00.000Z" })
    // it holds
    await advanceTo("2026-11-24T10:00:00.000Z")
    expect((await shown()).price).toBe(31.5)
  })

  it("set while the exchange is closed is taken at the next opening refresh", async () => {
    await advanceTo("2026-11-23T13:00:00.000Z")
    const r = await setPrice("SCOM.KE", { price: 20.25 })
    expect([r.body.effectiveAt, r.body.visibleFrom]).toEqual(["2026-11-24T06:00:00.000Z", "2026-11-24T06:15:00.000Z"])
    await advanceTo("2026-11-24T06:14:59.000Z")
    expect((await shown()).price).not.toBe(20.25)
    await advanceTo("2026-11-24T06:15:00.000Z")
    expect((await shown()).price).toBe(20.25)
  })

  it("fires a price alert on the pinned price at the refresh that publishes it, not at the one that captures it", async () => {
    const live = (method: string, path: string, body?: unknown) =>
      p.engine.call(method, `${LIVE}${path}`, { headers: { "x-api-key": p.keys.liveKey, "idempotency-key": `k-${path}-${method}` }, body })
    const price = (await shown()).price
    const pinned = Math.round(price * 300) / 100
    const alert = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: price * 2 })
    expect(alert.status).toBe(201)
    await advanceTo("2026-11-23T08:05:00.000Z")
    expect((await setPrice("SCOM.KE", { price: pinned })).status).toBe(200)
    await advanceTo("2026-11-23T08:29:59.000Z")
    const alerts = async () => (await eventsOf(p.engine)).filter((e) => e.event === "price.alert")
    expect(await alerts()).toEqual([])
    await advanceTo("2026-11-23T08:30:00.000Z")
    const fired = await alerts()
    expect(fired).toHaveLength(1)
    expect(fired[0]!.data).toMatchObject({ price: pinned, triggeredAt: "2026-11-23T08:30:00.000Z", asOf: "2026-11-23T08:15:00.000Z" })
  })

  it("refuses a bad price or symbol with the contract's errors, and changes nothing", async () => {
    const before = await shown()
    expectError(await setPrice("SCOM.KE", { price: 0 }), 400, "VALIDATION_ERROR")
    expectError(await setPrice("SCOM.KE", { price: -3 }), 400, "VALIDATION_ERROR")
    expectError(await setPrice("SCOM.KE", { price: 1.23456 }), 400, "VALIDATION_ERROR", "price")
    expectError(await setPrice("SCOM.KE", { price: 1e12 }), 400, "VALIDATION_ERROR", "price")
    expect((await setPrice("SCOM.KE", { price: "12" })).status).toBe(400)
    expect((await setPrice("SCOM.KE", {})).status).toBe(400)
    expectError(await setPrice("ZZZZ", { price: 10 }), 404, "NOT_FOUND")
    expectError(await setPrice("bad!sym", { price: 10 }), 400, "INVALID_SYMBOL", "symbol")
    expectError(
      await setPrice("SCOM.KE", { price: 100_000_000.0001 }),
      400,
      "VALIDATION_ERROR",
      "price",
      /^price must be above 0 and at most 100000000, with at most 4 decimals$/
    )
    const anonymous = await p.engine.call("PUT", "/_sim/market/prices/SCOM.KE", { body: { price: 10 } })
    expect(anonymous.status).toBe(401)
    await advanceTo("2026-11-23T09:00:00.000Z")
    const later = await shown()
    expect(later.price).not.toBe(10)
    expect(later.asOf).not.toBe(before.asOf)
  })

  it("takes a price of 100000000, the largest its arithmetic keeps exact", async () => {
    const r = await setPrice("EQTY.KE", { price: 100_000_000 })
    expect([r.status, r.body.price]).toEqual([200, 100_000_000])
  })
})

describe.skipIf(adminUrl === undefined)(adminUrl === undefined ? "pins on postgres (skipped: set DATABASE_URL)" : "pins on postgres", onPostgres, () => {
  it("fire an alert after the delay, and charts and quotes agree, as on memory", async () => {
    await withDatabase(adminUrl ?? "", async (databaseUrl) => {
      const engine = startEngine({ databaseUrl })
      try {
        const keys = await engine.newPartner()
        const live = (method: string, path: string, body?: unknown) =>
          engine.call(method, `${LIVE}${path}`, { headers: { "x-api-key": keys.liveKey, "idempotency-key": `pg-${method}-${path}` }, body })
        const alert = await live("POST", "/price-alerts", { symbol: "SCOM", exchange: "NSE", condition: "above", threshold: 99 })
        expect(alert.status).toBe(201)
        await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-23T08:05:00.000Z" })
        expect((await engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: 120 })).body.visibleFrom).toBe("2026-11-23T08:30:00.000Z")
        await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-23T08:29:00.000Z" })
        expect((await eventsOf(engine)).filter((e) => e.event === "price.alert")).toEqual([])
        await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-23T08:30:00.000Z" })
        expect((await eventsOf(engine)).filter((e) => e.event === "price.alert").map((e) => e.data.price)).toEqual([120])
        const get = (path: string) => engine.call("GET", `${SANDBOX}${path}`, { headers: { "x-api-key": keys.sandboxKey } })
        const chart = (await get("/stocks/SCOM.KE/candles?interval=15m")).body
        expect(chart.candles.at(-1)).toMatchObject({ timestamp: "2026-11-23T08:15:00.000Z", close: 120 })
        expect((await get("/quote/SCOM.KE")).body.price).toBe(120)
      } finally {
        await engine.dispose()
      }
    })
  }, 60_000)
})
