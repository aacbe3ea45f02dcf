/**
 * The market clock over HTTP: `GET /market/status`, `/market/exchanges`, `/market/holidays` and their `/market-data`
 * aliases (D-043, D-092, D-093), and `market.status` events on phase changes, appended only for partitions with an
 * active webhook subscribed to them (D-231, D-232). Every answer is checked against the contract by the harness.
 * Expected instants are written by hand from each exchange's local hours (the harness starts on Monday
 * 2026-11-23 08:00Z); the events run on both stores (postgres with DATABASE_URL).
 */
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { holidayWindow } from "../../engine/app/market-calendar.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { eventsOf, storeDocs } from "./accounts-kit.ts"
import { MONDAY_OPEN, startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const LIVE = "/api/v1/partner"
const SECRET = "whsec_0123456789abcdef"
const HOOK = "https://hooks.acme.test/market"
const DATABASE_URL = process.env.DATABASE_URL

type Engine = ReturnType<typeof startEngine>
const engines: Array<Engine> = []
const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
  for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void))
})

const setup = async (options: { start?: number; store?: "memory" | "postgres"; receivers?: SimReceivers } = {}) => {
  let databaseUrl: string | undefined
  if (options.store === "postgres") {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    databaseUrl = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
  }
  const engine = startEngine({
    ...(options.start === undefined ? {} : { start: options.start }),
    ...(options.receivers === undefined ? {} : { receivers: options.receivers }),
    ...(databaseUrl === undefined ? {} : { store: "postgres", databaseUrl })
  })
  engines.push(engine)
  const partner = await engine.newPartner()
  let n = 0
  const get = (path: string, base = SANDBOX, key = partner.sandboxKey) => engine.call("GET", `${base}${path}`, { headers: { "x-api-key": key } })
  const write = (method: string, path: string, body?: unknown, base = SANDBOX, key = partner.sandboxKey) =>
    engine.call(method, `${base}${path}`, { headers: { "x-api-key": key, "idempotency-key": `mc-key-${++n}` }, body })
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  return { engine, partner, get, write, advance }
}

const errorOf = (r: { status: number; body: any }) => [r.status, r.body.error?.code, r.body.error?.param]
const iso = (s: string) => new Date(s).toISOString()

describe("GET /market/status", () => {
  it("maps all 14 exchanges by code with their phase at the engine's now (Monday 08:00Z)", async () => {
    const { get } = await setup()
    const r = await get("/market/status")
    expect(r.status).toBe(200)
    expect(Object.keys(r.body.exchanges).sort()).toEqual(["BRVM", "BSE", "CSE", "DSE", "EGX", "GSE", "JSE", "LUSE", "MSE", "NGX", "NSE", "SEM", "USE", "ZSE"])
    const phases = Object.fromEntries(Object.entries(r.body.exchanges).map(([code, s]: [string, any]) => [code, s.status]))
    // 08:00Z: Nairobi 11:00, Lagos 09:00, Johannesburg 10:00, Accra/Abidjan 08:00, Harare 10:00, Cairo 10:00,
    // Casablanca 08:00 (UTC+0 since 2026-09-20), Port Louis 12:00
    expect(phases).toEqual({
      NSE: "OPEN",
      NGX: "CLOSED",
      JSE: "OPEN",
      GSE: "CLOSED",
      BRVM: "CLOSED",
      ZSE: "OPEN",
      BSE: "OPEN",
      LUSE: "OPEN",
      EGX: "OPEN",
      DSE: "OPEN",
      USE: "OPEN",
      MSE: "OPEN",
      CSE: "CLOSED",
      SEM: "OPEN"
    })
    expect(r.body).toMatchObject({ anyOpen: true, checkedAt: iso("2026-11-23T08:00:00Z"), serverTime: iso("2026-11-23T08:00:00Z") })
    expect(r.body.exchanges.NSE).toEqual({
      exchange: "NSE",
      exchangeMic: "XNAI",
      name: "Nairobi Securities Exchange",
      country: "KE",
      timezone: "Africa/Nairobi",
      isOpen: true,
      status: "OPEN",
      localTime: "2026-11-23T11:00:00.000+03:00",
      opensAt: iso("2026-11-23T06:00:00Z"),
      closesAt: iso("2026-11-23T12:00:00Z"),
      nextOpen: iso("2026-11-24T06:00:00Z"),
      nextClose: iso("2026-11-23T12:00:00Z"),
      holidayName: null
    })
    // before its open, NGX's next open and close are today's
    expect(r.body.exchanges.NGX).toMatchObject({ isOpen: false, nextOpen: iso("2026-11-23T09:00:00Z"), nextClose: iso("2026-11-23T13:30:00Z") })
  })

  it("narrows to one exchange with ?exchange= (any case), on both bases and under the /market-data alias", async () => {
    const { get, partner } = await setup()
    const one = await get("/market/status?exchange=egx")
    expect(Object.keys(one.body.exchanges)).toEqual(["EGX"])
    expect(one.body.exchanges.EGX).toMatchObject({ status: "OPEN", localTime: "2026-11-23T10:00:00.000+02:00", closesAt: iso("2026-11-23T12:30:00Z") })
    expect((await get("/market-data/status?exchange=EGX")).body).toEqual(one.body)
    expect((await get("/market/status?exchange=CSE", LIVE, partner.liveKey)).body.anyOpen).toBe(false)
  })

  it("answers weekends and holidays with no session today and the next one", async () => {
    // Saturday 2026-11-28 10:00Z: every exchange is closed (EGX's weekend is Friday-Saturday)
    const saturday = await setup({ start: Date.parse("2026-11-28T10:00:00Z") })
    const sat = await saturday.get("/market/status")
    expect(sat.body.anyOpen).toBe(false)
    expect(sat.body.exchanges.NSE).toMatchObject({ status: "CLOSED", opensAt: null, closesAt: null, nextOpen: iso("2026-11-30T06:00:00Z") })
    expect(sat.body.exchanges.EGX).toMatchObject({ status: "CLOSED", nextOpen: iso("2026-11-29T08:00:00Z"), nextClose: iso("2026-11-29T12:30:00Z") })
    // Friday 2026-12-25: Christmas in Nairobi, Johannesburg's next session is Monday 28th
    const christmas = await setup({ start: Date.parse("2026-12-25T08:00:00Z") })
    const xmas = await christmas.get("/market/status")
    expect(xmas.body.exchanges.NSE).toMatchObject({ status: "HOLIDAY", isOpen: false, holidayName: "Christmas Day", opensAt: null })
    expect(xmas.body.exchanges.JSE).toMatchObject({ status: "HOLIDAY", nextOpen: iso("2026-12-28T07:00:00Z"), nextClose: iso("2026-12-28T15:00:00Z") })
    // the JSE's early close on Christmas Eve shows in today's close
    const eve = await setup({ start: Date.parse("2026-12-24T08:00:00Z") })
    expect((await eve.get("/market/status?exchange=JSE")).body.exchanges.JSE).toMatchObject({ status: "OPEN", closesAt: iso("2026-12-24T10:00:00Z") })
  })

  it("refuses an unknown exchange with UNKNOWN_EXCHANGE in the envelope", async () => {
    const { get } = await setup()
    expect(errorOf(await get("/market/status?exchange=XYZ"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
    expect(errorOf(await get("/market-data/status?exchange=NSEX"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
    expect(errorOf(await get("/market/status?exchange="))).toEqual([400, "VALIDATION_ERROR", "exchange"])
  })
})

describe("GET /market/exchanges", () => {
  it("lists the 14 exchanges by code, snake_case, with hours, settlement, phase and suffix", async () => {
    const { get } = await setup()
    const r = await get("/market/exchanges")
    expect(r.status).toBe(200)
    expect(r.body.count).toBe(14)
    expect(r.body.data.map((e: any) => e.code)).toEqual(["BRVM", "BSE", "CSE", "DSE", "EGX", "GSE", "JSE", "LUSE", "MSE", "NGX", "NSE", "SEM", "USE", "ZSE"])
    const byCode = new Map<string, any>(r.body.data.map((e: any) => [e.code, e]))
    expect(byCode.get("NSE")).toEqual({
      code: "NSE",
      mic: "XNAI",
      name: "Nairobi Securities Exchange",
      country: "KE",
      currency: "KES",
      timezone: "Africa/Nairobi",
      trading_hours: { open: "09:00", close: "15:00" },
      settlement: { cycle: "T+3", cycleDays: 3 },
      market_status: "OPEN",
      symbol_suffix: ".KE"
    })
    expect(byCode.get("NGX")).toMatchObject({
      mic: "XNSA",
      trading_hours: { open: "10:00", close: "14:30" },
      settlement: { cycle: "T+2", cycleDays: 2 },
      market_status: "CLOSED"
    })
    expect(byCode.get("BRVM")).toMatchObject({ currency: "XOF", timezone: "Africa/Abidjan", symbol_suffix: ".CI" })
    expect(byCode.get("SEM")).toMatchObject({ mic: "XMAU", timezone: "Indian/Mauritius", currency: "MUR", trading_hours: { open: "10:00", close: "13:30" } })
    expect((await get("/market-data/exchanges")).body).toEqual(r.body)
  })

  it("narrows with ?exchange= and refuses unknown codes", async () => {
    const { get } = await setup()
    const one = await get("/market/exchanges?exchange=cse")
    expect(one.body).toMatchObject({ count: 1, data: [{ code: "CSE", mic: "XCAS", currency: "MAD", symbol_suffix: ".MA" }] })
    expect(errorOf(await get("/market/exchanges?exchange=NYSE"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
    expect(errorOf(await get("/market-data/exchanges?exchange=NYSE"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
  })
})

describe("GET /market/holidays", () => {
  it("lists one exchange's closures in a window, by date, with names", async () => {
    const { get } = await setup()
    const r = await get("/market/holidays?exchange=NSE&from=2026-01-01&to=2026-12-31")
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ from: "2026-01-01", to: "2026-12-31", count: 8 })
    expect(r.body.holidays.map((h: any) => [h.date, h.name])).toEqual([
      ["2026-01-01", "New Year's Day"],
      ["2026-03-20", "Eid al-Fitr"],
      ["2026-04-03", "Good Friday"],
      ["2026-04-06", "Easter Monday"],
      ["2026-05-01", "Labour Day"],
      ["2026-06-01", "Madaraka Day"],
      ["2026-10-20", "Mashujaa Day"],
      ["2026-12-25", "Christmas Day"]
    ])
    expect(r.body.holidays[0]).toEqual({ exchange: "NSE", date: "2026-01-01", name: "New Year's Day", type: "CLOSED", closesAt: null })
    expect((await get("/market-data/holidays?exchange=NSE&from=2026-01-01&to=2026-12-31")).body).toEqual(r.body)
  })

  it("lists every exchange by date then exchange, early closes included, defaulting to today + 365 days", async () => {
    const { get } = await setup()
    const r = await get("/market/holidays")
    expect(r.body).toMatchObject({ from: "2026-11-23", to: "2027-11-23" })
    const keys = r.body.holidays.map((h: any) => `${h.date}|${h.exchange}`)
    expect([...keys].sort()).toEqual(keys)
    expect(r.body.count).toBe(keys.length)
    expect(r.body.holidays.every((h: any) => h.date >= "2026-11-23" && h.date <= "2027-11-23")).toBe(true)
    expect(keys[0]).toBe("2026-12-04|GSE") // Farmers' Day, the first closure after Monday 2026-11-23
    const christmasEve = r.body.holidays.filter((h: any) => h.date === "2026-12-24")
    expect(christmasEve).toEqual([{ exchange: "JSE", date: "2026-12-24", name: "Christmas Eve", type: "EARLY_CLOSE", closesAt: "12:00" }])
    const christmas = r.body.holidays.filter((h: any) => h.date === "2026-12-25").map((h: any) => h.exchange)
    expect(christmas).toEqual(["BRVM", "BSE", "DSE", "GSE", "JSE", "LUSE", "MSE", "NGX", "NSE", "SEM", "USE", "ZSE"])
    // EGX's Friday is its weekend: a Sunday holiday is listed, as a trading day
    expect(r.body.holidays.filter((h: any) => h.exchange === "EGX" && h.date === "2027-01-07")).toHaveLength(1)
  })

  it("accepts 366 days and refuses more, a reversed window, an impossible date and an unknown exchange", async () => {
    const { get } = await setup()
    expect((await get("/market/holidays?from=2026-01-01&to=2027-01-01")).status).toBe(200)
    expect(errorOf(await get("/market/holidays?from=2026-01-01&to=2027-01-02"))).toEqual([400, "VALIDATION_ERROR", "to"])
    expect(errorOf(await get("/market/holidays?from=2026-06-01&to=2026-05-31"))).toEqual([400, "VALIDATION_ERROR", "to"])
    expect(errorOf(await get("/market/holidays?from=2026-02-30"))).toEqual([400, "VALIDATION_ERROR", "from"])
    expect(errorOf(await get("/market/holidays?to=2026-13-01"))).toEqual([400, "VALIDATION_ERROR", "to"])
    expect(errorOf(await get("/market/holidays?to=2026-01-00"))).toEqual([400, "VALIDATION_ERROR", "to"])
    const prefixed = await get("/market/holidays?from=x2026-01-01")
    expect(errorOf(prefixed)).toEqual([400, "VALIDATION_ERROR", "from"])
    expect(prefixed.body.error.message).toBe('from must be a date on the calendar (YYYY-MM-DD), got "x2026-01-01"')
    expect(errorOf(await get("/market/holidays?from=2026-01-01T00:00:00Z"))).toEqual([400, "VALIDATION_ERROR", "from"])
    expect(errorOf(await get("/market/holidays?exchange=XYZ"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
    expect(errorOf(await get("/market-data/holidays?exchange=XYZ"))).toEqual([400, "UNKNOWN_EXCHANGE", "exchange"])
  })

  it("holidayWindow: only `from` runs 366 days; only `to` before today starts at `to`", () => {
    const now = Date.parse("2026-11-23T08:00:00Z")
    expect(holidayWindow(now, "2026-01-01", undefined)).toEqual({ from: "2026-01-01", to: "2027-01-01" })
    expect(holidayWindow(now, undefined, "2026-12-31")).toEqual({ from: "2026-11-23", to: "2026-12-31" })
    expect(holidayWindow(now, undefined, "2026-01-01")).toEqual({ from: "2026-01-01", to: "2026-01-01" })
    expect(holidayWindow(now, "2026-05-02", "2026-05-01")).toBeInstanceOf(ApiFailure)
  })
})

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`market.status events (${store})`, tagsFor(store), () => {
    const subscribe = async (s: Awaited<ReturnType<typeof setup>>, events = ["market.status"]) => {
      const r = await s.write("POST", "/webhooks", { url: HOOK, events, secret: SECRET })
      expect(r.status).toBe(201)
      return r.body.id as string
    }
    const marketEvents = async (engine: Engine) => (await eventsOf(engine)).filter((e) => e.event === "market.status")

    it("appends each phase change at its boundary to the subscribed partition, and delivers it", async () => {
      const receivers = new SimReceivers()
      receivers.script(HOOK)
      const s = await setup({ store, receivers })
      const bystander = await s.engine.newPartner()
      await subscribe(s)
      // 08:00Z -> 09:00Z: NGX (10:00 Lagos) and the BRVM (09:00 Abidjan) open, nothing else changes; events of one
      // boundary come in the spec's exchange order
      await s.advance(3600)
      const events = await marketEvents(s.engine)
      expect(events.map((e) => [e.partition, e.data.exchange, e.data.status])).toEqual([
        [`${s.partner.partnerId}:sandbox`, "NGX", "OPEN"],
        [`${s.partner.partnerId}:sandbox`, "BRVM", "OPEN"]
      ])
      expect(events.find((e) => e.data.exchange === "NGX")?.data).toEqual({
        exchange: "NGX",
        status: "OPEN",
        previousStatus: "CLOSED",
        changedAt: iso("2026-11-23T09:00:00Z"),
        nextChangeAt: iso("2026-11-23T13:30:00Z")
      })
      expect(events.every((e) => (e as typeof e & { timestamp: string }).timestamp === iso("2026-11-23T09:00:00Z"))).toBe(true)
      expect(events.some((e) => e.partition.startsWith(bystander.partnerId))).toBe(false)
      const delivered = receivers.take().filter((q) => JSON.parse(q.body).event === "market.status")
      expect(delivered.map((q) => JSON.parse(q.body).data.exchange)).toEqual(["NGX", "BRVM"])
      // 09:00Z -> 09:30Z: Port Louis closes (13:30) and Casablanca opens (09:30, UTC+0)
      await s.advance(1800)
      expect((await marketEvents(s.engine)).slice(2).map((e) => [e.data.exchange, e.data.status, e.data.previousStatus])).toEqual([
        ["CSE", "OPEN", "CLOSED"],
        ["SEM", "CLOSED", "OPEN"]
      ])
    })

    it("announces a holiday at the local midnight it begins and CLOSED at the one it ends", async () => {
      const receivers = new SimReceivers()
      receivers.script(HOOK)
      const s = await setup({ store, receivers, start: Date.parse("2026-12-24T12:00:00Z") })
      await subscribe(s)
      await s.advance(34 * 3600) // to 2026-12-25T22:00Z
      const nse = (await marketEvents(s.engine)).filter((e) => e.data.exchange === "NSE").map((e) => e.data)
      expect(nse).toEqual([
        { exchange: "NSE", status: "HOLIDAY", previousStatus: "CLOSED", changedAt: iso("2026-12-24T21:00:00Z"), nextChangeAt: iso("2026-12-25T21:00:00Z") },
        { exchange: "NSE", status: "CLOSED", previousStatus: "HOLIDAY", changedAt: iso("2026-12-25T21:00:00Z"), nextChangeAt: iso("2026-12-28T06:00:00Z") }
      ])
    })

    it("writes nothing for partners that did not subscribe, and stops once the last subscription goes", async () => {
      const receivers = new SimReceivers()
      receivers.script(HOOK)
      const s = await setup({ store, receivers })
      await subscribe(s, ["order.filled"])
      await s.advance(24 * 3600)
      expect(await marketEvents(s.engine)).toEqual([])
      expect(await storeDocs(s.engine, "marketWatch", "global")).toEqual([])
      const id = await subscribe(s)
      await s.advance(3600)
      const before = (await marketEvents(s.engine)).length
      expect(before).toBeGreaterThan(0)
      expect((await s.write("DELETE", `/webhooks/${id}`)).status).toBe(200)
      await s.advance(24 * 3600)
      expect((await marketEvents(s.engine)).length).toBe(before)
      const [watch] = await storeDocs(s.engine, "marketWatch", "global")
      expect(watch?.body).toMatchObject({ running: false })
      // subscribing again (by updating a webhook's events) starts it again, from the phases of now
      const other = await subscribe(s, ["order.filled"])
      expect((await s.write("PATCH", `/webhooks/${other}`, { events: ["order.filled", "market.status"] })).status).toBe(200)
      await s.advance(24 * 3600)
      const again = (await marketEvents(s.engine)).slice(before)
      expect(again.length).toBeGreaterThan(0)
      expect(again.every((e) => e.data.previousStatus !== e.data.status)).toBe(true)
    })

    it("skips disabled webhooks and suspended partners: only live subscriptions hear of changes", async () => {
      const receivers = new SimReceivers()
      receivers.script(HOOK)
      const s = await setup({ store, receivers })
      const id = await subscribe(s)
      const other = await s.engine.newPartner()
      const live = await s.write("POST", "/webhooks", { url: HOOK, events: ["market.status"], secret: SECRET }, LIVE, other.liveKey)
      expect(live.status).toBe(201)
      expect((await s.write("PATCH", `/webhooks/${id}`, { status: "disabled" })).status).toBe(200)
      await s.advance(3600) // NGX and the BRVM open at 09:00Z
      const partitions = new Set((await marketEvents(s.engine)).map((e) => e.partition))
      expect([...partitions]).toEqual([`${other.partnerId}:production`])
      expect((await s.engine.admin("POST", `/_sim/partners/${other.partnerId}/status`, { status: "suspended" })).status).toBe(200)
      const before = (await marketEvents(s.engine)).length
      await s.advance(24 * 3600)
      expect((await marketEvents(s.engine)).length).toBe(before)
      const [watch] = await storeDocs(s.engine, "marketWatch", "global")
      expect(watch?.body).toMatchObject({ running: false })
    })
  })
}

it("the clock starts where the harness says (guards the hand-written instants above)", () => {
  expect(new Date(MONDAY_OPEN).toISOString()).toBe("2026-11-23T08:00:00.000Z")
})
