/**
 * The seeded reference generators (engine/domain/reference): pure functions of (seed, key), well-formed values
 * (ISIN check digits, ids, weekdays, whole cents), and the rules of where a dividend, an action or an offer stands.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EXCHANGES } from "../../engine/domain/calendar.ts"
import { FX_CURRENCIES, inverseRate, rateFor } from "../../engine/domain/fx.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { makeReferenceBook, NEWS_DAYS_BACK } from "../../engine/domain/reference/book.ts"
import { companyFacts, etfFacts, etfNav, marketCap } from "../../engine/domain/reference/companies.ts"
import { actionStatus, actionsOf, delistedAt } from "../../engine/domain/reference/corporate-actions.ts"
import { type DividendRecord, dividendStage, dividendsOf } from "../../engine/domain/reference/dividends.ts"
import { weekOf, weekStart } from "../../engine/domain/reference/news.ts"
import { type OpportunityRecord, raisedBy, windowStatus } from "../../engine/domain/reference/offers.ts"
import {
  addWeekdays,
  calendarDateMs,
  DAY_MS,
  dateMs,
  drawsFor,
  hash53,
  isinCheckDigit,
  onWeekday,
  previousWeekday,
  refId,
  isCalendarDate,
  slugify,
  weekday
} from "../../engine/domain/reference/seeded.ts"

const ORIGIN = Date.parse("2026-11-23T08:00:00.000Z")
const stock = (over: Partial<Instrument> = {}): Instrument => ({ ...(INSTRUMENTS[0] as Instrument), ...over })

describe("seeded draws and ids", () => {
  it("are a pure function of (seed, key)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 - 1 }), fc.string(), (seed, key) => {
        const a = drawsFor(seed, key)
        const b = drawsFor(seed, key)
        for (let i = 0; i < 5; i++) expect(a.between(3, 9)).toBe(b.between(3, 9))
        expect(refId("x", seed, key)).toBe(refId("x", seed, key))
      })
    )
  })

  it("differ between seeds and keys, and ids have the engine's shape", () => {
    expect(hash53("SCOM.KE", 1)).not.toBe(hash53("SCOM.KE", 2))
    expect(refId("div", 1, "a")).not.toBe(refId("div", 2, "a"))
    const ids = new Set(Array.from({ length: 20_000 }, (_, i) => refId("art", 7, `key-${i}`)))
    expect(ids.size).toBe(20_000)
    for (const id of [...ids].slice(0, 100)) expect(id).toMatch(/^art_[0-9a-hjkmnp-tv-z]{16}$/)
  })

  it("draw within their bounds", () => {
    const d = drawsFor(3, "bounds")
    for (let i = 0; i < 1_000; i++) {
      const v = d.between(-2, 2)
      expect(v).toBeGreaterThanOrEqual(-2)
      expect(v).toBeLessThanOrEqual(2)
      expect(["a", "b"]).toContain(d.pick(["a", "b"]))
    }
    expect(Array.from({ length: 200 }, () => d.chance(0)).some(Boolean)).toBe(false)
    expect(Array.from({ length: 200 }, () => d.chance(1000)).every(Boolean)).toBe(true)
  })
})

describe("calendar-day helpers", () => {
  it("know the weekdays and skip weekends", () => {
    expect(weekday(dateMs("2026-11-23"))).toBe(1)
    expect(weekday(dateMs("2026-11-29"))).toBe(7)
    expect(onWeekday(dateMs("2026-11-28") + 5_000)).toBe(dateMs("2026-11-30"))
    expect(onWeekday(dateMs("2026-11-27") + 5_000)).toBe(dateMs("2026-11-27"))
    expect(addWeekdays(dateMs("2026-11-27"), 1)).toBe(dateMs("2026-11-30"))
    expect(addWeekdays(dateMs("2026-11-23"), 5)).toBe(dateMs("2026-11-30"))
    expect(previousWeekday(dateMs("2026-11-30"))).toBe(dateMs("2026-11-27"))
    expect(weekStart(weekOf(ORIGIN))).toBe(dateMs("2026-11-23"))
    expect(weekStart(weekOf(dateMs("2026-11-29") + DAY_MS - 1))).toBe(dateMs("2026-11-23"))
  })

  it("take only real calendar dates written YYYY-MM-DD, at their UTC midnight", () => {
    expect(calendarDateMs("2026-11-23")).toBe(Date.UTC(2026, 10, 23))
    expect(calendarDateMs("2028-02-29")).toBe(Date.UTC(2028, 1, 29))
    for (const bad of [
      "2027-02-29",
      "2026-02-30",
      "2026-11-31",
      "2026-13-01",
      "2026-00-10",
      "2026-01-00",
      "2026-1-01",
      "x2026-01-01",
      "2026-01-01x",
      "+002026-01-01",
      "2026-01-01T00:00:00Z",
      ""
    ]) {
      expect(calendarDateMs(bad), bad).toBeUndefined()
      expect(isCalendarDate(bad), bad).toBe(false)
    }
    expect(isCalendarDate("2026-12-31")).toBe(true)
  })

  it("slugs titles and computes ISIN check digits (ISO 6166)", () => {
    expect(slugify("Côte d'Ivoire: the Week in Review!")).toBe("cote-d-ivoire-the-week-in-review")
    expect(isinCheckDigit("US037833100")).toBe(5)
    expect(isinCheckDigit("KE100000140")).toBe(2)
    expect(isinCheckDigit("GB000263494")).toBe(6)
  })
})

describe("company and ETF facts", () => {
  it("give every listing a well-formed, seeded profile", () => {
    for (const instrument of INSTRUMENTS) {
      const facts = companyFacts(1, instrument)
      expect(facts).toEqual(companyFacts(1, instrument))
      expect(facts.isin).toMatch(new RegExp(`^${facts.country}\\d{10}$`))
      expect(Number(facts.isin.at(-1))).toBe(isinCheckDigit(facts.isin.slice(0, 11)))
      expect(weekday(dateMs(facts.listingDate))).toBeLessThanOrEqual(5)
      expect(facts.sharesOutstanding % 1_000n).toBe(0n)
      expect(facts.sharesOutstanding).toBeGreaterThan(0n)
    }
    expect(INSTRUMENTS.map((i) => companyFacts(1, i).isin)).not.toEqual(INSTRUMENTS.map((i) => companyFacts(2, i).isin))
  })

  it("value a company and an ETF from a price, exactly", () => {
    const facts = { ...companyFacts(1, stock()), sharesOutstanding: 4_000_000_000n }
    expect(marketCap(facts, 185_555)).toBe(74_222_000_000n)
    const etf = { ...etfFacts(1, stock({ assetType: "ETF" })), navDiscountBps: -25 }
    expect(etfNav(etf, 850_000)).toBe(847_875)
    expect(etfNav({ ...etf, navDiscountBps: 10 }, 850_000)).toBe(850_850)
  })
})

describe("dividends", () => {
  const record = (over: Partial<DividendRecord> = {}): DividendRecord => ({
    dividendId: "div_1",
    symbol: "SCOM.KE",
    exchange: "NSE",
    name: "Safaricom PLC",
    perShare: 5_500,
    currency: "KES",
    type: "CASH",
    announcedAt: 0,
    exDate: "2026-01-20",
    recordDate: "2026-01-21",
    paymentDate: "2026-02-27",
    cancelledOn: null,
    ...over
  })

  it("stand where their dates put them", () => {
    const d = record()
    expect(dividendStage(d, "2026-01-19")).toEqual({ status: "DECLARED", calendarStage: "ANNOUNCED" })
    expect(dividendStage(d, "2026-01-20")).toEqual({ status: "DECLARED", calendarStage: "EX_DATE_PASSED" })
    expect(dividendStage(d, "2026-01-21")).toEqual({ status: "DECLARED", calendarStage: "RECORD_DATE_PASSED" })
    expect(dividendStage(d, "2026-02-27")).toEqual({ status: "PAID", calendarStage: "PAID" })
    const withdrawn = record({ cancelledOn: "2026-01-15" })
    expect(dividendStage(withdrawn, "2026-01-14").status).toBe("DECLARED")
    expect(dividendStage(withdrawn, "2026-01-15")).toEqual({ status: "CANCELLED", calendarStage: "CANCELLED" })
    expect(dividendStage(withdrawn, "2026-03-01").status).toBe("CANCELLED")
  })

  it("are scheduled on weekdays, in whole cents, announced before the ex-date, withdrawn only before it", () => {
    const all = INSTRUMENTS.flatMap((i) => [2024, 2025, 2026, 2027].flatMap((y) => dividendsOf(1, i, y)))
    expect(all.length).toBeGreaterThan(10)
    for (const d of all) {
      expect(weekday(dateMs(d.exDate))).toBeLessThanOrEqual(5)
      expect(d.recordDate > d.exDate && d.paymentDate > d.recordDate).toBe(true)
      expect(d.perShare % 100).toBe(0)
      expect(d.perShare).toBeGreaterThan(0)
      expect(d.announcedAt).toBeLessThan(dateMs(d.exDate))
      if (d.cancelledOn !== null) expect(d.cancelledOn < d.exDate && dateMs(d.cancelledOn) > d.announcedAt).toBe(true)
    }
    for (const etf of INSTRUMENTS.filter((i) => i.assetType === "ETF")) expect(dividendsOf(1, etf, 2026)).toEqual([])
    expect(all).toEqual(INSTRUMENTS.flatMap((i) => [2024, 2025, 2026, 2027].flatMap((y) => dividendsOf(1, i, y))))
  })

  it("stop at a delisting", () => {
    const delisted = stock({ listingStatus: "DELISTED" })
    const end = delistedAt(1, delisted, ORIGIN) as number
    expect(end).toBeLessThan(ORIGIN)
    const book = makeReferenceBook(1, ORIGIN, [delisted], EXCHANGES)
    expect(book.dividendsThrough(2027).every((d) => dateMs(d.exDate) < end)).toBe(true)
    expect(delistedAt(1, stock(), ORIGIN)).toBeUndefined()
  })
})

describe("corporate actions", () => {
  it("explain a suspended or delisted listing and move ANNOUNCED -> EFFECTIVE -> COMPLETED", () => {
    const [suspension] = actionsOf(1, stock({ listingStatus: "SUSPENDED" }), ORIGIN).filter((a) => a.actionType === "SUSPENSION")
    expect(suspension?.completedAt).toBeNull()
    expect(actionStatus(suspension!, ORIGIN)).toEqual({ status: "EFFECTIVE", updatedAt: suspension!.effectiveAt })
    const [delisting] = actionsOf(1, stock({ listingStatus: "DELISTED" }), ORIGIN).filter((a) => a.actionType === "DELISTING")
    expect(delisting?.details.lastTradingDate).toBeTypeOf("string")
    const a = { ...delisting!, announcedAt: 100, effectiveAt: 1_000, completedAt: 2_000 }
    expect(actionStatus(a, 999)).toEqual({ status: "ANNOUNCED", updatedAt: 100 })
    expect(actionStatus(a, 1_000)).toEqual({ status: "EFFECTIVE", updatedAt: 1_000 })
    expect(actionStatus(a, 2_000)).toEqual({ status: "COMPLETED", updatedAt: 2_000 })
    expect(actionsOf(1, stock(), ORIGIN).some((x) => x.actionType === "SUSPENSION" || x.actionType === "DELISTING")).toBe(false)
  })

  it("put past capital actions before the run's start and notices around it", () => {
    const all = INSTRUMENTS.flatMap((i) => actionsOf(5, i, ORIGIN))
    for (const a of all) {
      expect(a.announcedAt).toBeLessThan(a.effectiveAt + DAY_MS)
      if (a.actionType !== "GENERIC") expect(a.effectiveAt).toBeLessThan(ORIGIN)
      else expect(a.announcedAt).toBeGreaterThan(ORIGIN - 91 * DAY_MS)
    }
  })
})

describe("offers", () => {
  it("open and close their windows", () => {
    expect(windowStatus(10, 20, 9)).toBe("UPCOMING")
    expect(windowStatus(10, 20, 10)).toBe("OPEN")
    expect(windowStatus(10, 20, 20)).toBe("CLOSED")
    expect(windowStatus(null, null, 0)).toBe("OPEN")
  })

  it("raise linearly over the window, never above the target", () => {
    const o = { targetRaise: 100_000_00, fillPermille: 1_300, opensAt: 1_000, closesAt: 2_000 } as OpportunityRecord
    expect(raisedBy(o, 999)).toBeNull()
    expect(raisedBy(o, 1_000)).toBe(0)
    expect(raisedBy(o, 1_500)).toBe(65_000_00)
    expect(raisedBy(o, 5_000)).toBe(100_000_00)
    expect(raisedBy({ ...o, fillPermille: 500 }, 5_000)).toBe(50_000_00)
  })

  it("exist for every country of the simulated exchanges, with integer amounts", () => {
    const book = makeReferenceBook(1, ORIGIN, INSTRUMENTS, EXCHANGES)
    for (const exchange of EXCHANGES) {
      expect(book.bonds().filter((b) => b.country === exchange.suffix && b.instrumentType === "TREASURY_BILL")).toHaveLength(3)
      expect(book.funds().some((f) => f.country === exchange.suffix && f.fundType === "MONEY_MARKET")).toBe(true)
      expect(book.opportunities().some((o) => o.country === exchange.suffix && o.opportunityType === "PRE_IPO")).toBe(true)
    }
    for (const b of book.bonds()) {
      expect(Number.isInteger(b.yieldBps)).toBe(true)
      expect(b.isin === null).toBe(b.instrumentType === "TREASURY_BILL")
      expect(dateMs(b.maturityDate) - dateMs(b.issueDate)).toBe(b.tenorDays * DAY_MS)
      expect(b.closesAt).toBeGreaterThan(b.opensAt)
    }
  })
})

describe("FX", () => {
  it("quotes every currency of the spec's exchanges, with exact inverses", () => {
    for (const c of ["KES", "NGN", "ZAR", "GHS", "XOF", "ZWG", "BWP", "ZMW", "EGP", "TZS", "UGX", "MWK", "MAD", "MUR"]) expect(FX_CURRENCIES).toContain(c)
    expect(FX_CURRENCIES).not.toContain("USD")
    expect(inverseRate(rateFor("KES") as number)).toBe(77_369_439n)
    expect(inverseRate(1_000_000)).toBe(10_000_000_000n)
  })
})

describe("the reference book", () => {
  it("is the same for the same seed and start, and lists newest first", () => {
    const a = makeReferenceBook(9, ORIGIN, INSTRUMENTS, EXCHANGES)
    const b = makeReferenceBook(9, ORIGIN, INSTRUMENTS, EXCHANGES)
    const week = weekOf(ORIGIN)
    expect(a.articlesThrough(week)).toEqual(b.articlesThrough(week))
    expect(a.articlesThrough(week)).toBe(a.articlesThrough(week))
    const articles = a.articlesThrough(week)
    for (let i = 1; i < articles.length; i++) {
      const [prev, cur] = [articles[i - 1]!, articles[i]!]
      expect(prev.publishedAt > cur.publishedAt || (prev.publishedAt === cur.publishedAt && prev.id > cur.id)).toBe(true)
    }
    expect(articles.at(-1)!.publishedAt).toBeGreaterThanOrEqual(weekStart(weekOf(ORIGIN - NEWS_DAYS_BACK * DAY_MS)))
    expect(new Set(articles.map((x) => x.slug)).size).toBe(articles.length)
    expect(a.dividendsThrough(2027)).toEqual(b.dividendsThrough(2027))
    expect(a.actions()).toEqual(b.actions())
    const c = makeReferenceBook(10, ORIGIN, INSTRUMENTS, EXCHANGES)
    expect(c.articlesThrough(week).map((x) => x.id)).not.toEqual(articles.map((x) => x.id))
  })
})
