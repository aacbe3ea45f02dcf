/**
 * Keyset pages over in-memory lists (engine/app/pages.ts) and the pure wire builders of the reference services:
 * cursors bound to their scope, a cursor past the end, both orders; a delisted company has no market value; an
 * ETF's NAV and its date follow the observation.
 */
import { describe, expect, it } from "vitest"
import { encodeCursor } from "../../engine/app/cursor.ts"
import { pageOf, scopeOf } from "../../engine/app/pages.ts"
import { companyToWire, etfToWire, fxRateAt } from "../../engine/app/reference.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { companyFacts, etfFacts } from "../../engine/domain/reference/companies.ts"

const ITEMS = ["a", "b", "c", "d", "e"]
const id = (s: string) => s

describe("pageOf", () => {
  it("pages ascending and descending lists after the cursor's key", () => {
    const first = pageOf(ITEMS, id, "asc", { scope: "s", cursor: undefined, limit: 2 })
    expect(first).toEqual({ items: ["a", "b"], count: 2, hasMore: true, nextCursor: encodeCursor("s", "b") })
    expect(pageOf(ITEMS, id, "asc", { scope: "s", cursor: encodeCursor("s", "b"), limit: 2 })).toMatchObject({ items: ["c", "d"], hasMore: true })
    expect(pageOf(ITEMS, id, "asc", { scope: "s", cursor: encodeCursor("s", "d"), limit: 2 })).toEqual({
      items: ["e"],
      count: 1,
      hasMore: false,
      nextCursor: null
    })
    expect(pageOf(ITEMS, id, "asc", { scope: "s", cursor: encodeCursor("s", "bb"), limit: 9 })).toMatchObject({ items: ["c", "d", "e"] })
    const desc = [...ITEMS].reverse()
    expect(pageOf(desc, id, "desc", { scope: "s", cursor: encodeCursor("s", "d"), limit: 2 })).toMatchObject({ items: ["c", "b"], hasMore: true })
    expect(pageOf(ITEMS, id, "asc", { scope: "s", cursor: undefined, limit: 5 })).toEqual({ items: ITEMS, count: 5, hasMore: false, nextCursor: null })
  })

  it("answers an empty last page for a cursor past the end, and refuses another scope's cursor", () => {
    expect(pageOf(ITEMS, id, "asc", { scope: "s", cursor: encodeCursor("s", "z"), limit: 2 })).toEqual({
      items: [],
      count: 0,
      hasMore: false,
      nextCursor: null
    })
    expect(pageOf([...ITEMS].reverse(), id, "desc", { scope: "s", cursor: encodeCursor("s", "0"), limit: 2 })).toMatchObject({ items: [], hasMore: false })
    const foreign = pageOf(ITEMS, id, "asc", { scope: "s", cursor: encodeCursor("t", "b"), limit: 2 })
    expect(foreign).toBeInstanceOf(ApiFailure)
    expect((foreign as ApiFailure).extras).toEqual({ param: "cursor" })
  })

  it("scopes a cursor by list, partition and every filter, in order", () => {
    expect(scopeOf("l", "p", ["a", undefined, 3, true])).toBe("l|p|a||3|true")
    expect(scopeOf("l", "p", [undefined, "a"])).not.toBe(scopeOf("l", "p", ["a", undefined]))
    expect(scopeOf("l", "p", [])).toBe("l|p")
  })
})

const instrument = (symbol: string) => INSTRUMENTS.find((i) => i.symbol === symbol) as Instrument

describe("wire builders", () => {
  it("value a company at the price, and a delisted one not at all", () => {
    const scom = instrument("SCOM.KE")
    const facts = { ...companyFacts(1, scom), sharesOutstanding: 40_065_428_000n }
    expect(companyToWire(scom, facts, 185_000).marketCap).toBe(741_210_418_000)
    expect(companyToWire({ ...scom, listingStatus: "SUSPENDED" }, facts, 185_000).marketCap).toBe(741_210_418_000)
    expect(companyToWire({ ...scom, listingStatus: "DELISTED" }, facts, 185_000).marketCap).toBeNull()
  })

  it("date an ETF's NAV on the exchange's day of the observation, not of the answer", () => {
    const stx = instrument("STX40.ZA")
    const facts = { ...etfFacts(1, stx), navDiscountBps: 20, expenseRatioBps: 35 }
    // 21:45 UTC is 23:45 in Johannesburg; the answer at 22:05 UTC is already the next local day.
    const asOf = Date.parse("2026-11-23T21:45:00.000Z")
    const o = { price: 850_000, open: 850_000, dayHigh: 850_000, dayLow: 850_000, previousClose: 850_000, volume: 1, asOf, publishedAt: asOf + 900_000 }
    const etf = etfToWire(stx, facts, o, Date.parse("2026-11-23T22:05:00.000Z"))
    expect(etf).toMatchObject({ nav: 85.17, navDate: "2026-11-23", expenseRatioPct: 0.35, price: 85, issuer: facts.issuer, symbol: "STX40.ZA" })
  })

  it("publishes FX rates on the 900 s cadence, never stale", () => {
    const at = Date.parse("2026-11-23T08:00:00.000Z")
    expect(fxRateAt("KES", 129_250_000, at + 899_999)).toMatchObject({ asOf: "2026-11-23T08:00:00.000Z", stale: false })
    expect(fxRateAt("KES", 129_250_000, at + 900_000)).toMatchObject({ asOf: "2026-11-23T08:15:00.000Z", stale: false })
  })
})
