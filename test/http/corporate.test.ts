/**
 * Dividends and corporate actions over HTTP (D-050, D-096, D-097): what is announced by now, in the documented order,
 * with every filter, pagination across pages, status moving with the clock, and the contract's errors.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { dateMs } from "../../engine/domain/reference/seeded.ts"
import { MONDAY_OPEN } from "./harness.ts"
import { book, expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

const TODAY = "2026-11-23"
const symbols = (items: Array<any>) => [...new Set(items.map((d) => d.symbol))]

describe("dividends", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists the dividends declared by now, newest ex-date first, across pages", async () => {
    expect((await t.get("/dividends?limit=200")).status).toBe(200)
    const items = await t.all("/dividends?limit=200", "dividends")
    const declared = book()
      .dividendsThrough(2027)
      .filter((d) => d.announcedAt <= MONDAY_OPEN)
    expect(items.map((d) => d.dividendId)).toEqual(declared.map((d) => d.dividendId))
    expect(items.length).toBeGreaterThan(10)
    for (let i = 1; i < items.length; i++) expect(`${items[i - 1].exDate}|${items[i - 1].dividendId}` > `${items[i].exDate}|${items[i].dividendId}`).toBe(true)
    expect(await t.all("/dividends?limit=7", "dividends")).toEqual(items)
    const first = await t.get("/dividends")
    expect(first.body.dividends).toEqual(items.slice(0, 50))
    expect(items.some((d) => d.status === "PAID") && items.some((d) => d.status === "CANCELLED")).toBe(true)
  })

  it("filters by exchange, symbol, status and ex-date, and binds the cursor to the filters", async () => {
    expect(symbols(await t.all("/dividends?exchange=JSE&limit=200", "dividends")).every((s) => s.endsWith(".ZA"))).toBe(true)
    const scom = await t.all("/dividends?symbol=SCOM&limit=200", "dividends")
    expect(symbols(scom)).toEqual(["SCOM.KE"])
    expect(await t.all("/dividends?symbol=SCOM.KE&exchange=NSE&limit=200", "dividends")).toEqual(scom)
    for (const status of ["PAID", "CANCELLED", "DECLARED"]) {
      const r = await t.all(`/dividends?status=${status}&limit=200`, "dividends")
      expect(r.every((d) => d.status === status)).toBe(true)
    }
    expect((await t.get("/dividends?status=CANCELLED&limit=200")).body.count).toBeGreaterThan(0)
    const window = await t.all("/dividends?from=2026-01-01&to=2026-06-30&limit=200", "dividends")
    expect(window.length).toBeGreaterThan(0)
    expect(window.every((d) => d.exDate >= "2026-01-01" && d.exDate <= "2026-06-30")).toBe(true)
    const all = await t.all("/dividends?limit=200", "dividends")
    expect(window).toEqual(all.filter((d) => d.exDate >= "2026-01-01" && d.exDate <= "2026-06-30"))
    const day = window[0].exDate
    const onDay = all.filter((d) => d.exDate === day)
    expect(await t.all(`/dividends?from=${day}&to=${day}&limit=200`, "dividends")).toEqual(onDay)
    // Both bounds are inclusive: an instant bound at the ex-date's midnight keeps it.
    expect(await t.all(`/dividends?from=${day}T00:00:00Z&to=${day}T00:00:00Z&limit=200`, "dividends")).toEqual(onDay)
    expect(await t.all(`/dividends?from=${day}T00:00:01Z&to=${day}&limit=200`, "dividends")).toEqual([])
    const page = await t.get("/dividends?limit=2&exchange=NSE")
    expect((await t.get(`/dividends?limit=2&exchange=NSE&cursor=${page.body.nextCursor}`)).status).toBe(200)
    for (const other of ["exchange=JSE", "symbol=SCOM.KE", "status=PAID", "from=2026-01-01", "to=2026-12-31"]) {
      expectError(await t.get(`/dividends?limit=2&${other}&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    }
  })

  it("answers 400 for bad filters", async () => {
    expectError(await t.get("/dividends?symbol=NOPE.KE"), 400, "VALIDATION_ERROR", "symbol", /NOPE\.KE is not listed/)
    expectError(await t.get("/dividends?symbol=x"), 400, "INVALID_SYMBOL", "symbol")
    expectError(await t.get("/dividends?symbol=SCOM.KE&exchange=JSE"), 400, "VALIDATION_ERROR", "symbol")
    expectError(await t.get("/dividends?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange", /^exchange XYZ is not recognised$/)
    expectError(await t.get("/dividends?status=paid"), 400, "VALIDATION_ERROR", "status")
    expectError(await t.get("/dividends?from=2026-02-30"), 400, "VALIDATION_ERROR", "from")
    const reversed = await t.get("/dividends?from=2026-06-01&to=2026-01-01")
    expectError(reversed, 400, "VALIDATION_ERROR", "from", /from is after to/)
    expect(reversed.body.error.params).toEqual(["from", "to"])
    expectError(await t.get("/dividends?limit=201"), 400, "VALIDATION_ERROR", "limit")
  })

  it("answers one dividend by ID once declared, with its stage moving with the exchange's date", async () => {
    const all = await t.all("/dividends?limit=200", "dividends")
    expect((await t.get(`/dividends/${all[3].dividendId}`)).body).toEqual(all[3])
    expectError(await t.get("/dividends/div_nope"), 404, "NOT_FOUND", undefined, /dividend div_nope was not found/)
    const later = book()
      .dividendsThrough(2027)
      .filter((d) => d.announcedAt > MONDAY_OPEN && d.cancelledOn === null)
      .at(-1)!
    expectError(await t.get(`/dividends/${later.dividendId}`), 404, "NOT_FOUND")
    await t.advance((later.announcedAt - MONDAY_OPEN) / 1000)
    const announced = await t.get(`/dividends/${later.dividendId}`)
    expect(announced.body).toMatchObject({ dividendId: later.dividendId, status: "DECLARED", calendarStage: "ANNOUNCED", exDate: later.exDate })
    await t.advance((dateMs(later.exDate) - later.announcedAt) / 1000 + 12 * 3600)
    expect((await t.get(`/dividends/${later.dividendId}`)).body.calendarStage).toBe("EX_DATE_PASSED")
    await t.advance((dateMs(later.recordDate) - dateMs(later.exDate)) / 1000)
    expect((await t.get(`/dividends/${later.dividendId}`)).body.calendarStage).toBe("RECORD_DATE_PASSED")
    await t.advance((dateMs(later.paymentDate) - dateMs(later.recordDate)) / 1000)
    expect((await t.get(`/dividends/${later.dividendId}`)).body).toMatchObject({ status: "PAID", calendarStage: "PAID" })
  })

  it("keeps the calendar to what is still to be paid unless all=true, soonest ex-date first", async () => {
    const upcoming = await t.all("/dividends/calendar?limit=200", "dividends")
    expect(upcoming.every((d) => d.status !== "CANCELLED" && d.paymentDate >= TODAY)).toBe(true)
    const everything = await t.all("/dividends?limit=200", "dividends")
    expect(upcoming).toEqual(
      everything
        .filter((d) => d.status !== "CANCELLED" && d.paymentDate >= TODAY)
        .slice()
        .reverse()
    )
    const all = await t.all("/dividends/calendar?all=true&limit=200", "dividends")
    expect(all).toEqual(everything.slice().reverse())
    expect(await t.all("/dividends/calendar?all=false&limit=200", "dividends")).toEqual(upcoming)
    expect(await t.all("/dividends/calendar?all=true&limit=9", "dividends")).toEqual(all)
    expect((await t.all("/dividends/calendar?all=true&status=CANCELLED&limit=200", "dividends")).every((d: any) => d.status === "CANCELLED")).toBe(true)
    expect((await t.get("/dividends/calendar?status=CANCELLED")).body.count).toBe(0)
    const p = await t.get("/dividends/calendar?all=true&limit=1")
    expectError(await t.get(`/dividends/calendar?limit=1&cursor=${p.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get("/dividends/calendar?all=yes"), 400, "INVALID_TYPE", "all", /all must be true or false, got "yes"/)
    expectError(await t.get("/dividends/calendar?to=2020-01-01&from=2021-01-01"), 400, "VALIDATION_ERROR", "from")
    expectError(await t.get("/dividends/calendar?limit=0"), 400, "VALIDATION_ERROR", "limit")
  })

  it("gives a listing's history newest first, up to the limit", async () => {
    const history = await t.get("/dividends/SCOM.KE/history")
    expect(history.status).toBe(200)
    const scom = await t.all("/dividends?symbol=SCOM.KE&limit=200", "dividends")
    expect(history.body).toEqual({ symbol: "SCOM.KE", dividends: scom.slice(0, 20), count: Math.min(20, scom.length) })
    expect((await t.get("/dividends/scom/history?limit=2")).body).toEqual({ symbol: "SCOM.KE", dividends: scom.slice(0, 2), count: 2 })
    expect((await t.get("/dividends/STX40.ZA/history")).body).toEqual({ symbol: "STX40.ZA", dividends: [], count: 0 })
    expectError(await t.get("/dividends/NOPE.KE/history"), 404, "NOT_FOUND")
    expectError(await t.get("/dividends/SCOM.KE/history?limit=101"), 400, "VALIDATION_ERROR", "limit")
    expectError(await t.get("/dividends/SCOM.KE/history?limit=0"), 400, "VALIDATION_ERROR", "limit")
  })
})

describe("corporate actions", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists the actions announced by now, newest announcement first, with their details", async () => {
    const r = await t.get("/corporate-actions?limit=200")
    expect(r.status).toBe(200)
    const items = r.body.corporateActions as Array<any>
    const announced = book()
      .actions()
      .filter((a) => a.announcedAt <= MONDAY_OPEN)
    expect(items.map((a) => a.actionId)).toEqual(announced.map((a) => a.actionId))
    expect(items.length).toBeGreaterThan(2)
    for (let i = 1; i < items.length; i++) expect(items[i - 1].announcedAt >= items[i].announcedAt).toBe(true)
    const split = items.find((a) => a.actionType === "SPLIT")
    expect(split).toMatchObject({ status: "COMPLETED", details: { ratioFrom: 1 } })
    expect(split.updatedAt).toBe(`${split.effectiveDate}T18:00:00.000Z`)
    expect(await t.all("/corporate-actions?limit=1", "corporateActions")).toEqual(items)
    expect((await t.get(`/corporate-actions/${split.actionId}`)).body).toEqual(split)
  })

  it("filters by exchange, symbol, type, status and effective date", async () => {
    const items = await t.all("/corporate-actions?limit=200", "corporateActions")
    const pick = items[0]
    const check = async (query: string, keep: (a: any) => boolean) => {
      const got = await t.all(`/corporate-actions?limit=200&${query}`, "corporateActions")
      expect(got).toEqual(items.filter(keep))
      return got
    }
    expect(await check(`exchange=${pick.exchange}`, (a) => a.exchange === pick.exchange)).not.toHaveLength(0)
    expect(await check(`symbol=${pick.symbol}`, (a) => a.symbol === pick.symbol)).not.toHaveLength(0)
    expect(await check(`actionType=${pick.actionType}`, (a) => a.actionType === pick.actionType)).not.toHaveLength(0)
    expect(await check("status=COMPLETED", (a) => a.status === "COMPLETED")).not.toHaveLength(0)
    await check("status=ANNOUNCED", (a) => a.status === "ANNOUNCED")
    expect(await check(`from=${pick.effectiveDate}&to=${pick.effectiveDate}`, (a) => a.effectiveDate === pick.effectiveDate)).toContainEqual(pick)
    await check("from=2025-01-01", (a) => a.effectiveDate >= "2025-01-01")
    await check("to=2025-01-01", (a) => a.effectiveDate <= "2025-01-01")
    // Inclusive instant bounds at the effective date's midnight.
    const day = pick.effectiveDate
    expect(await check(`from=${day}T00:00:00Z&to=${day}T00:00:00Z`, (a) => a.effectiveDate === day)).toContainEqual(pick)
    for (const type of ["GENERIC", "SPLIT", "REVERSE_SPLIT", "BONUS", "SUSPENSION", "HALT", "DELISTING", "RIGHTS_ISSUE", "SYMBOL_CHANGE"]) {
      expect(await t.all(`/corporate-actions?actionType=${type}&limit=200`, "corporateActions")).toEqual(items.filter((a) => a.actionType === type))
    }
    for (const status of ["ANNOUNCED", "EFFECTIVE", "COMPLETED", "CANCELLED"]) {
      expect(await t.all(`/corporate-actions?status=${status}&limit=200`, "corporateActions")).toEqual(items.filter((a) => a.status === status))
    }
    const page = await t.get("/corporate-actions?limit=1")
    for (const other of ["exchange=NSE", "symbol=SCOM.KE", "actionType=SPLIT", "status=COMPLETED", "from=2020-01-01", "to=2030-01-01"]) {
      expectError(await t.get(`/corporate-actions?limit=1&${other}&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    }
    expectError(await t.get("/corporate-actions?actionType=split"), 400, "VALIDATION_ERROR", "actionType")
    expectError(await t.get("/corporate-actions?status=DONE"), 400, "VALIDATION_ERROR", "status")
    expectError(await t.get("/corporate-actions?symbol=NOPE.KE"), 400, "VALIDATION_ERROR", "symbol")
    expectError(await t.get("/corporate-actions?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
    expectError(await t.get("/corporate-actions?from=2026-01-02&to=2026-01-01"), 400, "VALIDATION_ERROR", "from")
    expectError(await t.get("/corporate-actions?limit=201"), 400, "VALIDATION_ERROR", "limit")
  })

  it("announces notices as time passes: 404 before, ANNOUNCED, then EFFECTIVE from the effective date", async () => {
    const notice = book()
      .actions()
      .filter((a) => a.actionType === "GENERIC" && a.announcedAt > MONDAY_OPEN)
      .at(-1)!
    expectError(await t.get(`/corporate-actions/${notice.actionId}`), 404, "NOT_FOUND", undefined, /corporate action .* was not found/)
    await t.advance((notice.announcedAt - MONDAY_OPEN) / 1000)
    const announced = await t.get(`/corporate-actions/${notice.actionId}`)
    expect(announced.body).toMatchObject({ actionType: "GENERIC", status: "ANNOUNCED", details: {}, updatedAt: new Date(notice.announcedAt).toISOString() })
    expect((await t.get("/corporate-actions?limit=1")).body.corporateActions[0].actionId).toBe(notice.actionId)
    await t.advance((notice.effectiveAt - notice.announcedAt) / 1000)
    expect((await t.get(`/corporate-actions/${notice.actionId}`)).body).toMatchObject({
      status: "EFFECTIVE",
      updatedAt: new Date(notice.effectiveAt).toISOString()
    })
    expectError(await t.get("/corporate-actions/ca_nope"), 404, "NOT_FOUND")
  })
})
