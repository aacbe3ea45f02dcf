/**
 * Listings and FX over HTTP: one stock, ETFs, companies, tickers, FX rates (D-041, D-046, D-051, D-052, D-094).
 * Every answer is checked against the contract by the harness; prices agree with the quote the same feed gives (a
 * stock's USD price at the rate the quote shows, not its local price).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { localParts } from "../../engine/domain/calendar.ts"
import { FX_CURRENCIES, rateFor } from "../../engine/domain/fx.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import { divRound, parseScaled } from "../../engine/domain/money.ts"
import { companyFacts, etfFacts } from "../../engine/domain/reference/companies.ts"
import { expectError, type PartnerEngine, PROD, partnerEngine } from "./reference-support.ts"

const instrument = (symbol: string) => INSTRUMENTS.find((i) => i.symbol === symbol) as Instrument
/** Symbols of the catalogue's stocks matching `keep`, sorted (the catalogue grows; the tests follow it). */
const stockSymbols = (keep: (i: Instrument) => boolean = () => true) =>
  INSTRUMENTS.filter((i) => i.assetType === "STOCK" && keep(i))
    .map((i) => i.symbol)
    .sort()
const price4 = (wire: number) => BigInt(parseScaled(wire, 4) as number)

describe("reference listings", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  describe("GET /stocks/{symbol}", () => {
    it("answers the stock item the list and the quote show, by qualified symbol, bare ticker or slug", async () => {
      await t.advance(3 * 3600)
      const one = await t.get("/stocks/SCOM.KE")
      expect(one.status).toBe(200)
      const listed = await t.get("/stocks?search=SCOM")
      expect(listed.body.stocks).toEqual([one.body])
      expect((await t.get("/stocks/scom")).body).toEqual(one.body)
      expect((await t.get("/stocks/scom.ke?exchange=nse")).body).toEqual(one.body)
      const quote = await t.get("/quote/SCOM.KE")
      expect(quote.body.price).toBe(one.body.price)
      expect(one.body.price).not.toBe(18)
    })

    it("answers the contract's errors for bad symbols and exchanges", async () => {
      expectError(await t.get("/stocks/S"), 400, "INVALID_SYMBOL", "symbol")
      expectError(await t.get("/stocks/NOPE.KE"), 404, "NOT_FOUND", undefined, /NOPE\.KE was not found/)
      expectError(await t.get("/stocks/SCOM.KE?exchange=JSE"), 404, "NOT_FOUND")
      expectError(await t.get("/stocks/SCOM.KE?exchange=XXX"), 400, "UNKNOWN_EXCHANGE", "exchange")
    })

    it("answers a USD price that is its local price at the exchange currency's rate, the rate a quote at the same instant shows", async () => {
      const stock = await t.get("/stocks/SCOM.KE")
      const quote = await t.get("/quote/SCOM?side=BUY&quantity=1")
      expect([stock.status, quote.status]).toEqual([200, 200])
      expect(stock.body.currency).toBe("KES")
      expect(quote.body.price).toBe(stock.body.price)
      expect(quote.body.fxRate).not.toBe(1)
      expect(stock.body.usdPrice).toBe(quote.body.usdPrice)
      // KES is more than 100 to the dollar: a KES price is worth far fewer dollars
      expect(stock.body.usdPrice).toBeLessThan(stock.body.price / 100)
      const listed = (await t.get("/stocks?search=SCOM")).body.stocks[0]
      expect(listed.usdPrice).toBe(quote.body.usdPrice)
    })
  })

  describe("ETFs", () => {
    it("lists the ETF listings as stock items with their fund facts, NAV from the same price", async () => {
      await t.advance(2 * 3600)
      const list = await t.get("/etfs")
      expect(list.status).toBe(200)
      const etfs = INSTRUMENTS.filter((i) => i.assetType === "ETF").map((i) => i.symbol)
      expect(list.body.etfs.map((e: any) => e.symbol)).toEqual(etfs.sort())
      const stx = list.body.etfs.find((e: any) => e.symbol === "STX40.ZA")
      const { issuer, expenseRatioPct, underlyingIndex, nav, navDate, ...item } = stx
      expect((await t.get("/stocks/STX40.ZA")).body).toEqual(item)
      const facts = etfFacts(1, instrument("STX40.ZA"))
      expect(issuer).toBe("Satrix")
      expect(underlyingIndex).toBe(facts.underlyingIndex)
      expect(expenseRatioPct * 100).toBeCloseTo(facts.expenseRatioBps, 9)
      expect(price4(nav)).toBe(divRound(price4(item.price) * BigInt(10_000 + facts.navDiscountBps), 10_000n))
      expect(navDate).toBe(localParts(Date.parse(item.asOf), "Africa/Johannesburg").date)
      expect((await t.get("/etfs/STX40.ZA")).body).toEqual(stx)
      expect((await t.get("/etfs/stx40")).body).toEqual(stx)
    })

    it("dates the NAV on the exchange's day of the price observation", async () => {
      // 22:05 UTC is 00:05 on the 24th in Johannesburg; the delayed observation (the end-of-day pass at the 17:00
      // close, 15:00 UTC) is still the 23rd.
      await t.advance(14 * 3600 + 5 * 60)
      const etf = (await t.get("/etfs/STX40.ZA")).body
      expect(etf.asOf).toBe("2026-11-23T15:00:00.000Z")
      expect(etf.navDate).toBe("2026-11-23")
    })

    it("filters by exchange and pages with a cursor bound to the filter", async () => {
      const etfs = (keep: (i: Instrument) => boolean) =>
        INSTRUMENTS.filter((i) => i.assetType === "ETF" && keep(i))
          .map((i) => i.symbol)
          .sort()
      expect((await t.get("/etfs?exchange=JSE")).body.etfs.map((e: any) => e.symbol)).toEqual(etfs((i) => i.exchange === "JSE"))
      expect(etfs((i) => i.exchange === "JSE")).toContain("STX40.ZA")
      expect((await t.get("/etfs?exchange=nse")).body.etfs.map((e: any) => e.symbol)).toEqual(etfs((i) => i.exchange === "NSE"))
      expect((await t.get("/etfs?exchange=GSE")).body).toEqual({ etfs: [], count: 0, hasMore: false, nextCursor: null })
      expect((await t.all("/etfs?limit=1", "etfs")).map((e) => e.symbol)).toEqual((await t.get("/etfs")).body.etfs.map((e: any) => e.symbol))
      expectError(await t.get("/etfs?exchange=XXX"), 400, "UNKNOWN_EXCHANGE", "exchange")
      expectError(await t.get("/etfs?limit=0"), 400, "VALIDATION_ERROR", "limit")
      expectError(await t.get("/etfs?limit=201"), 400, "VALIDATION_ERROR", "limit")
      expectError(await t.get("/etfs?cursor=nonsense"), 400, "VALIDATION_ERROR", "cursor")
    })

    it("answers 404 for a listing that is not an ETF, and for an unknown one", async () => {
      expectError(await t.get("/etfs/SCOM.KE"), 404, "NOT_FOUND", undefined, /SCOM\.KE is not an ETF/)
      expectError(await t.get("/etfs/NOPE.ZA"), 404, "NOT_FOUND")
      expectError(await t.get("/etfs/N"), 400, "INVALID_SYMBOL", "symbol")
    })
  })

  describe("companies", () => {
    it("profiles the stock listings, market capitalisation at the delayed price", async () => {
      await t.advance(4 * 3600)
      const r = await t.get("/companies/SCOM.KE")
      expect(r.status).toBe(200)
      const facts = companyFacts(1, instrument("SCOM.KE"))
      const price = (await t.get("/stocks/SCOM.KE")).body.price
      expect(r.body).toEqual({
        symbol: "SCOM.KE",
        exchange: "NSE",
        name: "Safaricom PLC",
        sector: "Telecommunications",
        industry: facts.industry,
        country: "KE",
        description: facts.description,
        website: "https://www.scom.example.com",
        employees: facts.employees,
        marketCap: Number(divRound(facts.sharesOutstanding * price4(price), 10_000n)),
        currency: "KES",
        listingDate: facts.listingDate,
        isin: facts.isin,
        logoUrl: null
      })
      expect((await t.get("/companies/scom")).body).toEqual(r.body)
    })

    it("lists companies by symbol, filtered by exchange and sector, across pages", async () => {
      const stocks = stockSymbols()
      const full = await t.get("/companies?limit=200")
      expect(full.body.companies.map((c: any) => c.symbol)).toEqual(stocks)
      expect(full.body).toMatchObject({ count: stocks.length, hasMore: false, nextCursor: null })
      const paged = await t.all("/companies?limit=2", "companies")
      expect(paged).toEqual(full.body.companies)
      expect((await t.get("/companies?exchange=JSE")).body.companies.map((c: any) => c.symbol)).toEqual(stockSymbols((i) => i.exchange === "JSE"))
      expect((await t.get("/companies?sector=financials&limit=200")).body.companies.map((c: any) => c.symbol)).toEqual(
        stockSymbols((i) => i.sector === "Financials")
      )
      expect((await t.get("/companies?sector=financials&exchange=NSE")).body.companies.map((c: any) => c.symbol)).toEqual(
        stockSymbols((i) => i.sector === "Financials" && i.exchange === "NSE")
      )
      const first = await t.get("/companies?limit=2")
      expectError(await t.get(`/companies?limit=2&exchange=NSE&cursor=${first.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
      expectError(await t.get(`/companies?limit=2&sector=Financials&cursor=${first.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
      expectError(await t.get("/companies?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
      expectError(await t.get("/companies?limit=abc"), 400, "INVALID_TYPE", "limit")
    })

    it("answers 404 for an ETF or an unknown symbol", async () => {
      expectError(await t.get("/companies/STX40.ZA"), 404, "NOT_FOUND", undefined, /ETF, not a company/)
      expectError(await t.get("/companies/NOPE.KE"), 404, "NOT_FOUND")
      expectError(await t.get("/companies/x"), 400, "INVALID_SYMBOL", "symbol")
    })

    it("answers the same on the production base with the live key", async () => {
      const live = await t.get("/companies/SCOM.KE", t.keys.liveKey, PROD)
      expect(live.status).toBe(200)
      expect(live.body).toEqual((await t.get("/companies/SCOM.KE")).body)
    })
  })

  describe("GET /companies/tickers", () => {
    it("lists qualified symbols with totalCount, 100 per page by default, filtered by exchange and search", async () => {
      const symbols = stockSymbols()
      const all = await t.get("/companies/tickers")
      expect(all.body).toEqual({ tickers: symbols, count: symbols.length, totalCount: symbols.length, hasMore: false, nextCursor: null })
      expect(symbols).toContain("SCOM.KE")
      const first = await t.get("/companies/tickers?limit=3")
      expect(first.body).toMatchObject({ tickers: symbols.slice(0, 3), count: 3, totalCount: symbols.length, hasMore: true })
      expect(await t.all("/companies/tickers?limit=3", "tickers")).toEqual(symbols)
      const banks = stockSymbols((i) => i.name.toLowerCase().includes("bank") || i.symbol.toLowerCase().includes("bank"))
      expect((await t.get("/companies/tickers?search=BANK")).body).toMatchObject({ tickers: banks, totalCount: banks.length })
      expect(banks).toContain("SBK.ZA")
      // "scom" is in the symbol only (Safaricom), "bank" in the name only (Standard Bank).
      expect((await t.get("/companies/tickers?search=scom")).body.tickers).toEqual(stockSymbols((i) => /scom/i.test(i.symbol) || /scom/i.test(i.name)))
      expect((await t.get("/companies/tickers?search=scom")).body.tickers).toContain("SCOM.KE")
      const nse = stockSymbols((i) => i.exchange === "NSE")
      expect((await t.get("/companies/tickers?exchange=NSE")).body).toMatchObject({ tickers: nse, totalCount: nse.length })
      expectError(await t.get(`/companies/tickers?search=${"a".repeat(101)}`), 400, "VALIDATION_ERROR", "search", /at most 100/)
      expect((await t.get(`/companies/tickers?search=${"a".repeat(100)}`)).status).toBe(200)
      expectError(await t.get(`/companies/tickers?search=a&cursor=${first.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
      expectError(await t.get("/companies/tickers?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
      expectError(await t.get("/companies/tickers?limit=201"), 400, "VALIDATION_ERROR", "limit")
    })
  })
})

describe("FX rates", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists every quoted currency against USD, published on the 900 s cadence", async () => {
    await t.advance(600)
    const r = await t.get("/fx")
    expect(r.status).toBe(200)
    expect(r.body.rates.map((x: any) => x.currency)).toEqual([...FX_CURRENCIES])
    expect(r.body).toMatchObject({ count: FX_CURRENCIES.length, hasMore: false, nextCursor: null })
    expect(r.body.rates.find((x: any) => x.currency === "KES")).toEqual({
      currency: "KES",
      base: "USD",
      rate: 129.25,
      inverseRate: 0.0077369439,
      source: "sokoni-sim-reference",
      asOf: "2026-11-23T08:00:00.000Z",
      stale: false
    })
    await t.advance(300)
    expect((await t.get("/fx/KES")).body.asOf).toBe("2026-11-23T08:15:00.000Z")
    expect((await t.get("/fx/rates")).body).toEqual(await t.get("/fx").then((x) => x.body))
  })

  it("filters by a comma-separated list, ignores codes it does not quote, and pages", async () => {
    expect((await t.get("/fx?currencies=zar,%20KES")).body.rates.map((x: any) => x.currency)).toEqual(["KES", "ZAR"])
    expect((await t.get("/fx/rates?currencies=KES,XYZ")).body.rates.map((x: any) => x.currency)).toEqual(["KES"])
    const invalid = await t.get("/fx?currencies=KES,KE,12AB")
    expectError(invalid, 400, "VALIDATION_ERROR", "currencies")
    expect(invalid.body.error.invalid).toEqual(["KE", "12AB"])
    expect(await t.all("/fx?limit=4", "rates")).toEqual((await t.get("/fx")).body.rates)
    const first = await t.get("/fx?limit=1&currencies=KES,ZAR")
    expect(first.body).toMatchObject({ count: 1, hasMore: true })
    expect((await t.get(`/fx?limit=1&currencies=ZAR,KES&cursor=${first.body.nextCursor}`)).body.rates.map((x: any) => x.currency)).toEqual(["ZAR"])
    expectError(await t.get(`/fx?limit=1&cursor=${first.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get("/fx?limit=0"), 400, "VALIDATION_ERROR", "limit")
  })

  it("answers one rate by code, 404 for the base and for codes it does not quote", async () => {
    const kes = await t.get("/fx/kes")
    expect(kes.status).toBe(200)
    expect(kes.body.rate).toBe(Number(rateFor("KES")) / 1_000_000)
    expect((await t.get("/fx/UGX")).body).toMatchObject({ currency: "UGX", rate: 3600, inverseRate: 0.0002777778 })
    expectError(await t.get("/fx/USD"), 404, "NOT_FOUND", undefined, /USD is the base/)
    expectError(await t.get("/fx/XYZ"), 404, "NOT_FOUND", undefined, /no FX rate for XYZ/)
    expectError(await t.get("/fx/KESX"), 400, "VALIDATION_ERROR", "currency")
  })
})
