/**
 * The catalogue over HTTP (D-300, D-301), on the memory store and on PostgreSQL: `GET /stocks` filters, pages and
 * counts across the 14 exchanges, searches by a fragment of the company name in any case, symbol errors
 * (INVALID_SYMBOL, UNKNOWN_EXCHANGE with its message and param, ambiguous VALIDATION_ERROR), and
 * a SUSPENDED or DELISTED listing quoted but refused for trading with 422 MARKET_CLOSED. Every answer is checked
 * against the contract by the harness.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { EXCHANGES } from "../../engine/domain/calendar.ts"
import { INSTRUMENTS } from "../../engine/domain/instruments.ts"
import { partnerOf } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { adminUrl, withDatabase } from "./node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

type Engine = ReturnType<typeof startEngine>

const sorted = (symbols: ReadonlyArray<string>) => [...symbols].sort()

const listsAndPages = async (engine: Engine) => {
  const p = await partnerOf(engine)
  const all: Array<any> = []
  let cursor: string | null = null
  for (let i = 0; i < 100; i++) {
    const r = await p.sb("GET", `/stocks?limit=7${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`)
    expect(r.status).toBe(200)
    expect(r.body.totalCount).toBe(INSTRUMENTS.length)
    all.push(...r.body.stocks)
    if (!r.body.hasMore) break
    cursor = r.body.nextCursor
  }
  expect(all.map((s) => s.symbol)).toEqual(sorted(INSTRUMENTS.map((i) => i.symbol)))
  for (const exchange of EXCHANGES) {
    const r = await p.sb("GET", `/stocks?exchange=${exchange.code.toLowerCase()}&limit=200`)
    const expected = sorted(INSTRUMENTS.filter((i) => i.exchange === exchange.code).map((i) => i.symbol))
    expect(r.body.stocks.map((s: any) => s.symbol)).toEqual(expected)
    expect(r.body).toMatchObject({ count: expected.length, totalCount: expected.length, hasMore: false })
    expect(r.body.stocks.every((s: any) => s.currency === exchange.currency && s.exchangeMic === exchange.mic)).toBe(true)
  }
  const etfs = await p.sb("GET", "/stocks?assetType=ETF&limit=200")
  expect(etfs.body.stocks.map((s: any) => s.symbol)).toEqual(sorted(INSTRUMENTS.filter((i) => i.assetType === "ETF").map((i) => i.symbol)))
  const banks = await p.sb("GET", "/stocks?sector=financials&exchange=NGX&limit=2")
  const ngxBanks = INSTRUMENTS.filter((i) => i.sector === "Financials" && i.exchange === "NGX")
  expect(banks.body).toMatchObject({ count: 2, totalCount: ngxBanks.length, hasMore: true })
  const statuses = new Map(all.map((s) => [s.symbol, s.listingStatus]))
  for (const i of INSTRUMENTS) expect(statuses.get(i.symbol)).toBe(i.listingStatus)
  const ambiguous = await p.sb("GET", "/stocks/GLD")
  expect(ambiguous.status).toBe(400)
  expect(ambiguous.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "symbol" })
  expect(ambiguous.body.error.message).toMatch(/GLD\.KE, GLD\.ZA/)
  expect((await p.sb("GET", "/stocks/GLD?exchange=JSE")).body).toMatchObject({ symbol: "GLD.ZA", currency: "ZAR", assetType: "ETF" })
  expect((await p.sb("GET", "/stocks/G")).body.error.code).toBe("INVALID_SYMBOL")
  expect((await p.sb("GET", "/stocks/GLD?exchange=XXX")).body.error.code).toBe("UNKNOWN_EXCHANGE")
  expect((await p.sb("GET", "/stocks?exchange=XXX")).body.error.code).toBe("UNKNOWN_EXCHANGE")
}

const refusesInactive = async (engine: Engine) => {
  const p = await partnerOf(engine)
  const id = (await p.createUser("sandbox")).subAccountId
  await p.verify(id)
  await p.deposit(id, 500)
  const trade = async (symbol: string) => {
    const q = await p.sb("GET", `/quote/${symbol}?side=BUY&quantity=1&subAccountId=${id}`)
    expect(q.status).toBe(200)
    return p.sb("POST", `/users/${id}/trade`, { symbol, type: "BUY", quantity: 1, quoteId: q.body.quoteId })
  }
  for (const symbol of INSTRUMENTS.filter((i) => i.listingStatus !== "ACTIVE" && i.exchange === "NSE").map((i) => i.symbol)) {
    const refused = await trade(symbol)
    expect(refused.status, symbol).toBe(422)
    expect(refused.body.error.code).toBe("MARKET_CLOSED")
    expect(refused.body.error.message).toMatch(/suspended|delisted/)
  }
  // The same session takes an order on an ACTIVE listing of the same exchange: the refusal is the listing's.
  expect((await trade("COOP.KE")).status).toBe(202)
  const wallet = (await p.sb("GET", `/users/${id}`)).body.walletBalance
  expect(wallet).toBeLessThan(500)
}

describe("the catalogue over HTTP", () => {
  let engine: Engine
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())

  it("lists, filters and pages every exchange's listings with totalCount, and answers the symbol errors", () => listsAndPages(engine))
  it("quotes a SUSPENDED or DELISTED listing but refuses to trade it", () => refusesInactive(engine))

  it("refuses an unknown exchange with UNKNOWN_EXCHANGE naming it, param exchange", async () => {
    const p = await partnerOf(engine)
    const r = await p.sb("GET", "/stocks?exchange=XXX")
    expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([400, "UNKNOWN_EXCHANGE"])
    expect(r.body.error).toEqual({ code: "UNKNOWN_EXCHANGE", message: "exchange XXX is not recognised", param: "exchange" })
  })

  it("finds a listing by a fragment of its company name that its symbol does not contain, in any case", async () => {
    const p = await partnerOf(engine)
    for (const search of ["safaricom", "SAFARICOM", "Safari"]) {
      const r = await p.sb("GET", `/stocks?search=${search}`)
      expect(r.status).toBe(200)
      expect(r.body.stocks.map((i: { symbol: string }) => i.symbol)).toEqual(["SCOM.KE"])
      expect([r.body.count, r.body.totalCount, r.body.hasMore, r.body.nextCursor]).toEqual([1, 1, false, null])
    }
  })
})

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined ? "catalogue on postgres (skipped: set DATABASE_URL)" : "catalogue on postgres",
  onPostgres,
  () => {
    it("lists, pages and refuses as on memory", async () => {
      await withDatabase(adminUrl ?? "", async (databaseUrl) => {
        const engine = startEngine({ databaseUrl })
        try {
          await listsAndPages(engine)
          await refusesInactive(engine)
        } finally {
          await engine.dispose()
        }
      })
    }, 120_000)
  }
)
