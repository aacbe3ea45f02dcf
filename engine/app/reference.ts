/**
 * Reference: the read-only views of the listings and of FX: one stock (`/stocks/{symbol}`, MarketService's cached
 * item), ETFs with their fund facts, company profiles, the ticker directory, and the reference FX rates. ETFs and
 * companies are valued at the MarketFeed observation the quotes use, so an ETF's NAV or a company's market
 * capitalisation never disagrees with its quote. Owns the wire shapes of those families (D-041, D-046, D-051, D-052,
 * D-094, D-162, D-164).
 * Does not own prices (sim/market-feed), the seeded facts (domain/reference), dividends and corporate actions
 * (app/corporate.ts), news (app/intel.ts), nor offers and the asset directory (app/offers.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { FX_BASE, FX_CURRENCIES, FX_SOURCE, fxAsOf, INVERSE_DECIMALS, inverseRate, rateFor } from "../domain/fx.ts"
import type { Instrument } from "../domain/instruments.ts"
import { type Price4, price4ToWire, rate6ToWire, toWireNumber } from "../domain/money.ts"
import { type CompanyFacts, type EtfFacts, etfNav, marketCap } from "../domain/reference/companies.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { MarketFeed, type Observation } from "../sim/market-feed.ts"
import { checkLimit } from "./cursor.ts"
import { Listings } from "./listings.ts"
import { MarketService, stockItemOf } from "./market.ts"
import { Symbols } from "./symbols.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import { exchangeFilter, localDate, ReferenceData } from "./reference-data.ts"

export interface EtfQuery {
  readonly exchange?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export interface CompanyQuery extends EtfQuery {
  readonly sector?: string | undefined
}

export interface TickerQuery extends EtfQuery {
  readonly search?: string | undefined
}

export interface FxQuery {
  readonly currencies?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const MAX_SEARCH = 100

/** The FX answer for a currency at `now`: published on the 900 s cadence (D-052, D-162). */
export const fxRateAt = (currency: string, rate: number, now: number): Schemas["FxRate"] => {
  const asOf = fxAsOf(now)
  return {
    currency,
    base: FX_BASE,
    rate: rate6ToWire(rate),
    inverseRate: toWireNumber(inverseRate(rate), INVERSE_DECIMALS),
    source: FX_SOURCE,
    asOf: isoAt(asOf),
    // Republished every 900 s, so never older than the 1,800 s after which a price is stale.
    stale: false
  }
}

/** An ETF: its stock item at the observation `o`, its fund facts, and its NAV at that price on that day (D-164). */
export const etfToWire = (instrument: Instrument, facts: EtfFacts, o: Observation, now: number): Schemas["Etf"] => ({
  ...stockItemOf(instrument, o, now),
  issuer: facts.issuer,
  expenseRatioPct: toWireNumber(facts.expenseRatioBps, 2),
  underlyingIndex: facts.underlyingIndex,
  nav: price4ToWire(etfNav(facts, o.price)),
  navDate: localDate(instrument.exchange, o.asOf)
})

/** A company profile valued at `price`, the delayed price of its stock item (D-164). */
export const companyToWire = (instrument: Instrument, facts: CompanyFacts, price: Price4): Schemas["Company"] => ({
  symbol: instrument.symbol,
  exchange: instrument.exchange,
  name: instrument.name,
  sector: instrument.sector,
  industry: facts.industry,
  country: facts.country,
  description: facts.description,
  website: facts.website,
  employees: facts.employees,
  // A delisted company has no market to value it at.
  marketCap: instrument.listingStatus === "DELISTED" ? null : toWireNumber(marketCap(facts, price), 0),
  currency: facts.currency,
  listingDate: facts.listingDate,
  isin: facts.isin,
  logoUrl: null
})

export class ReferenceService extends Context.Service<
  ReferenceService,
  {
    readonly getStock: (symbol: string, exchange: string | undefined) => Effect.Effect<Schemas["StockItem"], ApiFailure>
    readonly listEtfs: (query: EtfQuery, partition: string) => Effect.Effect<Schemas["EtfList"], ApiFailure>
    readonly getEtf: (symbol: string) => Effect.Effect<Schemas["Etf"], ApiFailure>
    readonly listCompanies: (query: CompanyQuery, partition: string) => Effect.Effect<Schemas["CompanyList"], ApiFailure>
    readonly getCompany: (symbol: string) => Effect.Effect<Schemas["Company"], ApiFailure>
    readonly listTickers: (query: TickerQuery, partition: string) => Effect.Effect<Schemas["TickerList"], ApiFailure>
    readonly listFxRates: (query: FxQuery, partition: string) => Effect.Effect<Schemas["FxRateList"], ApiFailure>
    readonly getFxRate: (currency: string) => Effect.Effect<Schemas["FxRate"], ApiFailure>
  }
>()("sokoni/ReferenceService") {
  static readonly make = Effect.gen(function* () {
    const market = yield* MarketService
    const clock = yield* EngineClock
    const feed = yield* MarketFeed
    const { book } = yield* ReferenceData
    const listings = yield* Listings
    const symbols = yield* Symbols
    const bySymbol = (a: Instrument) => a.symbol
    // The listings under their current symbols (app/symbols.ts), sorted once per change of symbols.
    let sortedAt: { readonly version: number; readonly etfs: ReadonlyArray<Instrument>; readonly companies: ReadonlyArray<Instrument> } | undefined
    const sorted = () => {
      if (sortedAt?.version !== symbols.version()) {
        const all = [...symbols.catalogue()].sort((a, b) => (a.symbol < b.symbol ? -1 : 1))
        sortedAt = { version: symbols.version(), etfs: all.filter((i) => i.assetType === "ETF"), companies: all.filter((i) => i.assetType === "STOCK") }
      }
      return sortedAt
    }

    /** The feed's observation of a listing now: the one its stock item and its quote show. */
    const observed = (instrument: Instrument) => Effect.flatMap(clock.now, (now) => Effect.map(feed.observe(instrument, now), (o) => ({ o, now })))
    // With the listing status and symbol corporate actions set (app/listings.ts, app/symbols.ts): an ETF shows its
    // status, a delisted company has no value. The facts are the catalogue listing's (seeded under its first symbol).
    const shown = (instrument: Instrument) => listings.current(symbols.current(instrument))
    const etfOf = (instrument: Instrument) =>
      Effect.map(observed(instrument), ({ o, now }) => etfToWire(shown(instrument), book.etf(symbols.original(instrument)), o, now))
    const companyOf = (instrument: Instrument) =>
      Effect.map(observed(instrument), ({ o }) => companyToWire(shown(instrument), book.company(symbols.original(instrument)), o.price))

    const listing = (symbol: string, exchange?: string) => liftFailure(symbols.resolve(symbol, exchange))

    const getStock = Effect.fn("ReferenceService.getStock")(function* (symbol: string, exchange: string | undefined) {
      return yield* market.stockItem(yield* listing(symbol, exchange))
    })

    const listEtfs = Effect.fn("ReferenceService.listEtfs")(function* (query: EtfQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const matching = sorted().etfs.filter((i) => exchange === undefined || i.exchange === exchange)
      const page = yield* liftFailure(pageOf(matching, bySymbol, "asc", { scope: scopeOf("etfs", partition, [exchange]), cursor: query.cursor, limit }))
      const list: Schemas["EtfList"] = {
        etfs: yield* Effect.forEach(page.items, etfOf),
        ...pageMeta(page)
      }
      return list
    })

    const getEtf = Effect.fn("ReferenceService.getEtf")(function* (symbol: string) {
      const instrument = yield* listing(symbol)
      if (instrument.assetType !== "ETF")
        return yield* Effect.fail(fail("NOT_FOUND", `${instrument.symbol} is not an ETF (see GET /stocks/${instrument.symbol})`))
      return yield* etfOf(instrument)
    })

    const listCompanies = Effect.fn("ReferenceService.listCompanies")(function* (query: CompanyQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const sector = query.sector?.toLowerCase()
      const matching = sorted().companies.filter(
        (i) => (exchange === undefined || i.exchange === exchange) && (sector === undefined || i.sector?.toLowerCase() === sector)
      )
      const scope = scopeOf("companies", partition, [exchange, sector])
      const page = yield* liftFailure(pageOf(matching, bySymbol, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["CompanyList"] = {
        companies: yield* Effect.forEach(page.items, companyOf),
        ...pageMeta(page)
      }
      return list
    })

    const getCompany = Effect.fn("ReferenceService.getCompany")(function* (symbol: string) {
      const instrument = yield* listing(symbol)
      if (instrument.assetType !== "STOCK")
        return yield* Effect.fail(fail("NOT_FOUND", `${instrument.symbol} is an ETF, not a company (see GET /etfs/${instrument.symbol})`))
      return yield* companyOf(instrument)
    })

    const listTickers = Effect.fn("ReferenceService.listTickers")(function* (query: TickerQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 100, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      if (query.search !== undefined && query.search.length > MAX_SEARCH) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", `search must be at most ${MAX_SEARCH} characters`, { param: "search" }))
      }
      const search = query.search?.toLowerCase()
      const matching = sorted().companies.filter(
        (i) =>
          (exchange === undefined || i.exchange === exchange) &&
          (search === undefined || i.symbol.toLowerCase().includes(search) || i.name.toLowerCase().includes(search))
      )
      const page = yield* liftFailure(
        pageOf(matching, bySymbol, "asc", { scope: scopeOf("tickers", partition, [exchange, search]), cursor: query.cursor, limit })
      )
      const list: Schemas["TickerList"] = {
        tickers: page.items.map(bySymbol),
        count: page.count,
        totalCount: matching.length,
        hasMore: page.hasMore,
        nextCursor: page.nextCursor
      }
      return list
    })

    const listFxRates = Effect.fn("ReferenceService.listFxRates")(function* (query: FxQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      let wanted: ReadonlySet<string> | undefined
      if (query.currencies !== undefined) {
        const codes = query.currencies.split(",").map((c) => c.trim().toUpperCase())
        const invalid = codes.filter((c) => !/^[A-Z]{3}$/.test(c))
        if (invalid.length > 0) {
          return yield* Effect.fail(fail("VALIDATION_ERROR", "currencies must be comma-separated ISO 4217 codes", { param: "currencies", invalid }))
        }
        wanted = new Set(codes)
      }
      const now = yield* clock.nowHere()
      const matching = FX_CURRENCIES.filter((c) => wanted === undefined || wanted.has(c))
      const scope = scopeOf("fx", partition, [wanted === undefined ? undefined : [...wanted].sort().join(",")])
      const page = yield* liftFailure(pageOf(matching, (c) => c, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["FxRateList"] = {
        rates: page.items.map((c) => fxRateAt(c, rateFor(c) ?? 0, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getFxRate = Effect.fn("ReferenceService.getFxRate")(function* (currency: string) {
      const code = currency.toUpperCase()
      if (!/^[A-Z]{3}$/.test(code)) return yield* Effect.fail(fail("VALIDATION_ERROR", "currency must be an ISO 4217 code", { param: "currency" }))
      const rate = rateFor(code)
      if (code === FX_BASE || rate === undefined) {
        return yield* Effect.fail(fail("NOT_FOUND", code === FX_BASE ? "USD is the base of every rate, not a quoted currency" : `no FX rate for ${code}`))
      }
      return fxRateAt(code, rate, yield* clock.nowHere())
    })

    return ReferenceService.of({ getStock, listEtfs, getEtf, listCompanies, getCompany, listTickers, listFxRates, getFxRate })
  })

  static readonly layer = Layer.effect(ReferenceService, ReferenceService.make)
}
