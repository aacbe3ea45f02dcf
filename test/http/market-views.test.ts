/**
 * Market-data views: informational quotes (one symbol or a batch), movers and the snapshot, with their aliases under
 * /market-data. Every answer is checked against the contract by the harness; expectations are derived from the
 * stock list the engine serves at the same instant (a view never disagrees with the list) and from the spec's rules.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { MAX_SYMBOLS, rankMovers, resolveSymbols } from "../../engine/app/market-views.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { lookupSymbol } from "../../engine/domain/instruments.ts"
import { expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

let p: PartnerEngine
beforeEach(async () => {
  p = await partnerEngine()
  // move the feed on a few refreshes so changePct differs between listings
  await p.advance(3 * 900)
})
afterEach(() => p.dispose())

/** The stock list's items by symbol, read at the same instant as the view under test. */
const listed = async () => {
  const r = await p.get("/stocks?limit=200")
  expect(r.status).toBe(200)
  return new Map<string, any>(r.body.stocks.map((s: any) => [s.symbol, s]))
}

describe("GET /market/quotes", () => {
  it("answers one symbol as one item, equal to the stock list's item, with meta", async () => {
    const r = await p.get("/market/quotes?symbol=SCOM")
    expect(r.status).toBe(200)
    expect(r.body.data).toEqual((await listed()).get("SCOM.KE"))
    expect(r.body.meta).toMatchObject({ requested: 1, count: 1, maxSymbols: 50, exchange: null })
    expect((await p.get("/market-data/quotes?symbol=SCOM.KE")).body.data.symbol).toBe("SCOM.KE")
  })

  it("answers a batch in request order, duplicates once, unknown well-formed symbols in not_found", async () => {
    const r = await p.get("/market/quotes?symbols=NPN.ZA,SCOM.KE,ZZZZ,SCOM,NPN.ZA")
    expect(r.status).toBe(200)
    expect(r.body.data.map((i: any) => i.symbol)).toEqual(["NPN.ZA", "SCOM.KE"])
    expect(r.body.not_found).toEqual(["ZZZZ"])
    expect(r.body.meta).toMatchObject({ requested: 3, count: 2, maxSymbols: 50, exchange: null })
  })

  it("refuses what the spec refuses, each with its code and fields", async () => {
    expectError(await p.get("/market/quotes"), 400, "MISSING_PARAM", "symbol")
    expect((await p.get("/market/quotes")).body.error.params).toEqual(["symbol", "symbols"])
    expectError(await p.get("/market/quotes?symbol=SCOM&symbols=KCB"), 400, "VALIDATION_ERROR")
    expectError(await p.get("/market/quotes?symbol=ZZZZ"), 404, "NOT_FOUND")
    const invalid = await p.get("/market/quotes?symbols=SCOM,bad!sym,X")
    expectError(invalid, 400, "INVALID_SYMBOL")
    expect(invalid.body.error.invalid).toEqual(["bad!sym", "X"])
    const many = Array.from({ length: MAX_SYMBOLS + 1 }, (_, i) => `S${String(i).padStart(3, "0")}`).join(",")
    const tooMany = await p.get(`/market/quotes?symbols=${many}`)
    expectError(tooMany, 400, "BATCH_LIMIT_EXCEEDED")
    expect([tooMany.body.error.max, tooMany.body.error.received]).toEqual([50, 51])
    expectError(await p.get("/market/quotes?symbol=SCOM&exchange=XXX"), 400, "UNKNOWN_EXCHANGE", "exchange")
  })

  it("refuses a single symbol that is malformed, ambiguous or unknown, saying which and why", async () => {
    const malformed = await p.get("/market/quotes?symbol=bad!sym")
    expectError(malformed, 400, "INVALID_SYMBOL", "symbol", /^symbol "bad!sym" is malformed$/)
    expect(malformed.body.error.invalid).toEqual(["bad!sym"])
    expectError(await p.get("/market/quotes?symbol=GLD"), 400, "VALIDATION_ERROR", "symbol", /^symbol GLD matches several listings \(GLD\.KE, GLD\.ZA\)/)
    expect((await p.get("/market/quotes?symbol=GLD&exchange=JSE")).body.data.symbol).toBe("GLD.ZA")
    expectError(await p.get("/market/quotes?symbol=ZZZZ"), 404, "NOT_FOUND", undefined, /^symbol ZZZZ was not found$/)
  })

  it("names both parameters, and the fault, when given neither or both", async () => {
    const both = await p.get("/market/quotes?symbol=SCOM&symbols=KCB")
    expectError(both, 400, "VALIDATION_ERROR", "symbols", /^give symbol or symbols, not both$/)
    expect(both.body.error.params).toEqual(["symbol", "symbols"])
    expectError(await p.get("/market/quotes"), 400, "MISSING_PARAM", "symbol", /^symbol or symbols is required$/)
    expectError(await p.get("/market/quotes?symbols=SCOM,GLD"), 400, "VALIDATION_ERROR", "symbols", /GLD\.KE, GLD\.ZA/)
  })

  it("accepts exactly 50 symbols", async () => {
    const fifty = Array.from({ length: MAX_SYMBOLS }, (_, i) => `S${String(i).padStart(3, "0")}`).join(",")
    const r = await p.get(`/market/quotes?symbols=${fifty}`)
    expect(r.status).toBe(200)
    expect(r.body.not_found).toHaveLength(50)
  })
})

describe("GET /market/movers", () => {
  it("ranks gainers by changePct, highest first, and losers lowest first, from the same items as the list", async () => {
    const items = [...(await listed()).values()]
    const gainers = await p.get("/market/movers")
    expect(gainers.status).toBe(200)
    const expected = items
      .filter((i) => i.changePct > 0)
      .sort((a, b) => b.changePct - a.changePct || b.volume - a.volume || (a.symbol < b.symbol ? -1 : 1))
      .slice(0, 10)
    expect(gainers.body.movers.map((m: any) => m.symbol)).toEqual(expected.map((i) => i.symbol))
    expect(gainers.body).toMatchObject({ direction: "gainers", exchange: null, count: expected.length })
    // the feed moved: both lists have members, so the ranking is really exercised
    expect(expected.length).toBeGreaterThan(1)
    const losers = await p.get("/market-data/movers?direction=losers&limit=2")
    const expectedLosers = items
      .filter((i) => i.changePct < 0)
      .sort((a, b) => a.changePct - b.changePct || b.volume - a.volume || (a.symbol < b.symbol ? -1 : 1))
      .slice(0, 2)
    expect(losers.body.movers.map((m: any) => m.symbol)).toEqual(expectedLosers.map((i) => i.symbol))
    expect(losers.body.count).toBe(expectedLosers.length)
    expect(expectedLosers.length).toBe(2)
  })

  it("leaves out a listing suspended after it moved: it has no session to move in", async () => {
    const top = (await p.get("/market/movers?limit=1")).body.movers[0]
    expect(top.changePct).toBeGreaterThan(0)
    const suspended = await p.engine.admin("POST", "/_sim/corporate-actions", { actionType: "SUSPENSION", symbol: top.symbol, reason: "mover test" })
    expect(suspended.status).toBe(201)
    // still listed with its move, but no longer ranked
    expect((await listed()).get(top.symbol)).toMatchObject({ listingStatus: "SUSPENDED", changePct: top.changePct })
    const gainers = (await p.get("/market/movers?limit=50")).body.movers.map((m: any) => m.symbol)
    expect(gainers.length).toBeGreaterThan(0)
    expect(gainers).not.toContain(top.symbol)
  })

  it("filters by exchange and refuses a bad direction, limit or exchange", async () => {
    const nse = await p.get("/market/movers?exchange=nse&direction=losers&limit=50")
    expect(nse.body.exchange).toBe("NSE")
    const nseLosers = [...(await listed()).values()].filter((i) => i.exchange === "NSE" && i.listingStatus === "ACTIVE" && i.changePct < 0)
    expect(nseLosers.length).toBeGreaterThan(0)
    expect(nse.body.movers.map((m: any) => m.symbol).toSorted()).toEqual(nseLosers.map((i) => i.symbol).toSorted())
    expectError(await p.get("/market/movers?direction=up"), 400, "VALIDATION_ERROR", "direction")
    expectError(await p.get("/market/movers?limit=51"), 400, "VALIDATION_ERROR", "limit")
    expectError(await p.get("/market/movers?exchange=XXX"), 400, "UNKNOWN_EXCHANGE", "exchange")
  })
})

describe("GET /market/snapshot", () => {
  it("answers a whole exchange by symbol, each row the list's figures", async () => {
    const r = await p.get("/market/snapshot?exchange=JSE")
    expect(r.status).toBe(200)
    const list = await listed()
    // A suspended or delisted listing has no session: the exchange's snapshot is its ACTIVE listings.
    const jse = [...list.values()].filter((i) => i.exchange === "JSE" && i.listingStatus === "ACTIVE").map((i) => i.symbol)
    expect([...list.values()].some((i) => i.exchange === "JSE" && i.listingStatus !== "ACTIVE")).toBe(true)
    expect(r.body.data.map((row: any) => row.symbol)).toEqual([...jse].sort())
    for (const row of r.body.data) {
      const item = list.get(row.symbol)
      expect([row.price, row.changePct, row.volume, row.asOf, row.stale]).toEqual([item.price, item.changePct, item.volume, item.asOf, item.stale])
    }
    expect(r.body.meta).toMatchObject({ requested: 0, count: jse.length, exchange: "JSE" })
    expect(r.body.not_found).toEqual([])
  })

  it("answers a watchlist in request order, filtered to the exchange when one is given", async () => {
    const r = await p.get("/market-data/snapshot?symbols=SCOM.KE,NPN.ZA,NOPE")
    expect(r.body.data.map((row: any) => row.symbol)).toEqual(["SCOM.KE", "NPN.ZA"])
    expect(r.body.not_found).toEqual(["NOPE"])
    const filtered = await p.get("/market/snapshot?symbols=SCOM.KE,NPN.ZA&exchange=NSE")
    expect(filtered.body.data.map((row: any) => row.symbol)).toEqual(["SCOM.KE"])
    expect(filtered.body.meta).toMatchObject({ requested: 2, count: 1, exchange: "NSE" })
  })

  it("gives each row the list's market status and staleness, for open and closed exchanges alike", async () => {
    const items = [...(await listed()).values()]
    const open = items.find((i) => i.marketStatus === "OPEN")
    const closed = items.find((i) => i.marketStatus === "CLOSED" && i.stale === true)
    expect([open?.stale, closed?.stale]).toEqual([false, true])
    const r = await p.get(`/market/snapshot?symbols=${open.symbol},${closed.symbol}`)
    expect(r.body.data.map((row: any) => [row.symbol, row.marketStatus, row.stale])).toEqual([
      [open.symbol, "OPEN", false],
      [closed.symbol, "CLOSED", true]
    ])
  })

  it("needs symbols or an exchange", async () => {
    const r = await p.get("/market/snapshot")
    expectError(r, 400, "MISSING_PARAM", "symbols", /^symbols or exchange is required$/)
    expect(r.body.error.params).toEqual(["symbols", "exchange"])
  })
})

describe("resolveSymbols and rankMovers (pure)", () => {
  it("refuses an empty list and keeps notFound distinct", () => {
    expect(resolveSymbols(lookupSymbol, " , ", undefined)).toBeInstanceOf(ApiFailure)
    expect(resolveSymbols(lookupSymbol, "AAA,AAA", undefined)).toEqual({ found: [], notFound: ["AAA"] })
  })
  it("breaks changePct ties by volume, then by symbol, and leaves out null changePct", () => {
    const items = [
      { symbol: "B", changePct: 0.01, volume: 5 },
      { symbol: "A", changePct: 0.01, volume: 5 },
      { symbol: "C", changePct: 0.01, volume: 9 },
      { symbol: "D", changePct: null, volume: 100 },
      { symbol: "E", changePct: -0.02, volume: 1 },
      { symbol: "F", changePct: 0, volume: 1 }
    ]
    expect(rankMovers(items, "gainers", 10).map((i) => i.symbol)).toEqual(["C", "A", "B"])
    expect(rankMovers(items, "losers", 10).map((i) => i.symbol)).toEqual(["E"])
    expect(rankMovers(items, "gainers", 2).map((i) => i.symbol)).toEqual(["C", "A"])
  })
})
