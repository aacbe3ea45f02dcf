/**
 * Offers: the primary-market families (bonds and treasury bills, funds, private-market opportunities) and the asset
 * directory that lists them beside the traded listings (D-047, D-048, D-049, D-099). Windows and amounts raised are
 * evaluated at now; an equity or balanced fund's NAV follows its exchange's delayed prices from the MarketFeed, the
 * feed the quotes use. Owns those wire shapes and their filters.
 * Does not own the seeded offers (domain/reference/offers.ts) nor subscriptions (app/subscriptions/).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { findExchange } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { fxAsOf } from "../domain/fx.ts"
import { centsToWire, divRound, price4ToWire, toWireNumber } from "../domain/money.ts"
import { countryOf, currencyOf } from "../domain/reference/companies.ts"
import {
  type BondRecord,
  type BondType,
  type FundRecord,
  type FundType,
  type OfferStatus,
  type OpportunityRecord,
  raisedBy,
  windowStatus
} from "../domain/reference/offers.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { MarketFeed } from "../sim/market-feed.ts"
import { checkLimit } from "./cursor.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import { COUNTRY, CURRENCY, exchangeFilter, localDate, patternCheck, ReferenceData } from "./reference-data.ts"

interface Paging {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export interface BondQuery extends Paging {
  readonly exchange?: string | undefined
  readonly instrumentType?: BondType | undefined
  readonly type?: BondType | undefined
  readonly country?: string | undefined
  readonly currency?: string | undefined
  readonly status?: OfferStatus | undefined
}

export interface FundQuery extends Paging {
  readonly fundType?: FundType | undefined
  readonly category?: FundType | undefined
  readonly country?: string | undefined
  readonly currency?: string | undefined
  readonly status?: OfferStatus | undefined
}

export interface OpportunityQuery extends Paging {
  readonly opportunityType?: "PRIVATE_CREDIT" | "PRE_IPO" | undefined
  readonly status?: OfferStatus | undefined
}

export type AssetClass = Schemas["AssetDirectoryClass"]

export interface AssetQuery extends Paging {
  readonly assetClass?: AssetClass | undefined
  readonly exchange?: string | undefined
  readonly country?: string | undefined
  readonly currency?: string | undefined
  readonly search?: string | undefined
}

const ASSET_CLASSES: ReadonlyArray<AssetClass> = ["STOCK", "ETF", "TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"]
const MAX_SEARCH = 100

/** An alias and its parameter given together must agree (D-047, D-048). */
const alias = <A>(value: A | undefined, other: A | undefined, names: readonly [string, string]): A | undefined | ApiFailure =>
  value !== undefined && other !== undefined && value !== other
    ? fail("VALIDATION_ERROR", `${names[0]} and ${names[1]} are the same filter and must agree`, { param: names[1], params: [...names] })
    : (value ?? other)

const fundStatus = (f: FundRecord, now: number): OfferStatus => (f.closed ? "CLOSED" : windowStatus(f.opensAt, null, now))

export const bondToWire = (b: BondRecord, now: number): Schemas["Bond"] => ({
  bondId: b.bondId,
  instrumentType: b.instrumentType,
  name: b.name,
  issuer: b.issuer,
  country: b.country,
  currency: b.currency,
  isin: b.isin,
  couponRatePct: b.couponBps === null ? null : toWireNumber(b.couponBps, 2),
  yieldPct: toWireNumber(b.yieldBps, 2),
  tenorDays: b.tenorDays,
  issueDate: b.issueDate,
  maturityDate: b.maturityDate,
  faceValue: price4ToWire(b.faceValue),
  minimumSubscriptionUsd: centsToWire(b.minimumSubscription),
  status: windowStatus(b.opensAt, b.closesAt, now),
  subscriptionOpensAt: isoAt(b.opensAt),
  subscriptionClosesAt: isoAt(b.closesAt),
  asOf: isoAt(fxAsOf(now))
})

export const opportunityToWire = (o: OpportunityRecord, now: number): Schemas["Opportunity"] => {
  const raised = raisedBy(o, now)
  return {
    opportunityId: o.opportunityId,
    opportunityType: o.opportunityType,
    name: o.name,
    issuer: o.issuer,
    sector: o.sector,
    country: o.country,
    currency: o.currency,
    targetRaiseUsd: centsToWire(o.targetRaise),
    raisedUsd: raised === null ? null : centsToWire(raised),
    minimumSubscriptionUsd: centsToWire(o.minimumSubscription),
    expectedReturnPct: o.expectedReturnBps === null ? null : toWireNumber(o.expectedReturnBps, 2),
    tenorMonths: o.tenorMonths,
    status: windowStatus(o.opensAt, o.closesAt, now),
    opensAt: isoAt(o.opensAt),
    closesAt: isoAt(o.closesAt),
    riskDisclosureUrl: `https://docs.example.com/opportunities/${o.opportunityId}/risk.pdf`
  }
}

export class OfferService extends Context.Service<
  OfferService,
  {
    readonly listBonds: (query: BondQuery, partition: string) => Effect.Effect<Schemas["BondList"], ApiFailure>
    readonly getBond: (bondId: string) => Effect.Effect<Schemas["Bond"], ApiFailure>
    readonly listFunds: (query: FundQuery, partition: string) => Effect.Effect<Schemas["FundList"], ApiFailure>
    readonly getFund: (fundId: string) => Effect.Effect<Schemas["Fund"], ApiFailure>
    readonly listOpportunities: (query: OpportunityQuery, partition: string) => Effect.Effect<Schemas["OpportunityList"], ApiFailure>
    readonly getOpportunity: (opportunityId: string) => Effect.Effect<Schemas["Opportunity"], ApiFailure>
    readonly listAssets: (query: AssetQuery, partition: string) => Effect.Effect<Schemas["AssetList"], ApiFailure>
  }
>()("sokoni/OfferService") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const feed = yield* MarketFeed
    const { book } = yield* ReferenceData
    const bonds = [...book.bonds()].sort((a, b) => (`${a.maturityDate}|${a.bondId}` < `${b.maturityDate}|${b.bondId}` ? -1 : 1))
    const byName =
      <A extends { readonly name: string }>(id: (a: A) => string) =>
      (a: A, b: A) =>
        `${a.name}|${id(a)}` < `${b.name}|${id(b)}` ? -1 : 1
    const funds = [...book.funds()].sort(byName((f) => f.fundId))
    const opportunities = [...book.opportunities()].sort(byName((o) => o.opportunityId))

    /**
     * A fund's NAV at now: the base NAV, with `marketLinkPct` of it moving like the price-weighted index of its
     * exchange's active stocks (sum of delayed prices over the sum of starting prices); dated at the prices' day.
     */
    const fundToWire = (f: FundRecord, now: number) =>
      Effect.gen(function* () {
        const members = book.instruments.filter((i) => i.exchange === f.exchange && i.assetType === "STOCK" && i.listingStatus === "ACTIVE")
        const observed = yield* Effect.forEach(members, (i) => feed.observe(i, now))
        const base = members.reduce((sum, i) => sum + BigInt(i.basePrice), 0n)
        const current = observed.reduce((sum, o) => sum + BigInt(o.price), 0n)
        const asOf = observed.at(0)?.asOf ?? now
        // A market with no active stock leaves the NAV where it started.
        const nav = base === 0n ? BigInt(f.baseNav) : divRound(BigInt(f.baseNav) * (100n * base + BigInt(f.marketLinkPct) * (current - base)), 100n * base)
        const fund: Schemas["Fund"] = {
          fundId: f.fundId,
          name: f.name,
          manager: f.manager,
          fundType: f.fundType,
          currency: f.currency,
          nav: price4ToWire(Number(nav)),
          navDate: localDate(f.exchange, asOf),
          yieldPct: f.yieldBps === null ? null : toWireNumber(f.yieldBps, 2),
          feesBps: f.feesBps,
          riskRating: f.riskRating,
          minimumSubscriptionUsd: centsToWire(f.minimumSubscription),
          status: fundStatus(f, now)
        }
        return fund
      })

    const listBonds = Effect.fn("OfferService.listBonds")(function* (query: BondQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const type = yield* liftFailure(alias(query.instrumentType, query.type, ["instrumentType", "type"]))
      yield* liftFailure(patternCheck(query.country, COUNTRY, "country", "an ISO 3166-1 alpha-2 code (upper case)"))
      yield* liftFailure(patternCheck(query.currency, CURRENCY, "currency", "an ISO 4217 code (upper case)"))
      const { country, currency, status } = query
      const exchangeCountry = exchange === undefined ? undefined : findExchange(exchange)?.suffix
      const now = yield* clock.nowHere()
      const matching = bonds.filter(
        (b) =>
          (exchangeCountry === undefined || b.country === exchangeCountry) &&
          (type === undefined || b.instrumentType === type) &&
          (country === undefined || b.country === country) &&
          (currency === undefined || b.currency === currency) &&
          (status === undefined || windowStatus(b.opensAt, b.closesAt, now) === status)
      )
      const scope = scopeOf("bonds", partition, [exchange, type, country, currency, status])
      const page = yield* liftFailure(pageOf(matching, (b) => `${b.maturityDate}|${b.bondId}`, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["BondList"] = {
        bonds: page.items.map((b) => bondToWire(b, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getBond = Effect.fn("OfferService.getBond")(function* (bondId: string) {
      const found = bonds.find((b) => b.bondId === bondId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `bond ${bondId} was not found`))
      return bondToWire(found, yield* clock.nowHere())
    })

    const listFunds = Effect.fn("OfferService.listFunds")(function* (query: FundQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const fundType = yield* liftFailure(alias(query.fundType, query.category, ["fundType", "category"]))
      yield* liftFailure(patternCheck(query.country, COUNTRY, "country", "an ISO 3166-1 alpha-2 code (upper case)"))
      yield* liftFailure(patternCheck(query.currency, CURRENCY, "currency", "an ISO 4217 code (upper case)"))
      const { country, currency, status } = query
      const now = yield* clock.nowHere()
      const matching = funds.filter(
        (f) =>
          (fundType === undefined || f.fundType === fundType) &&
          (country === undefined || f.country === country) &&
          (currency === undefined || f.currency === currency) &&
          (status === undefined || fundStatus(f, now) === status)
      )
      const scope = scopeOf("funds", partition, [fundType, country, currency, status])
      const page = yield* liftFailure(pageOf(matching, (f) => `${f.name}|${f.fundId}`, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["FundList"] = {
        funds: yield* Effect.forEach(page.items, (f) => fundToWire(f, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getFund = Effect.fn("OfferService.getFund")(function* (fundId: string) {
      const found = funds.find((f) => f.fundId === fundId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `fund ${fundId} was not found`))
      return yield* fundToWire(found, yield* clock.nowHere())
    })

    const listOpportunities = Effect.fn("OfferService.listOpportunities")(function* (query: OpportunityQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { opportunityType, status } = query
      const now = yield* clock.nowHere()
      const matching = opportunities.filter(
        (o) =>
          (opportunityType === undefined || o.opportunityType === opportunityType) &&
          (status === undefined || windowStatus(o.opensAt, o.closesAt, now) === status)
      )
      const scope = scopeOf("opportunities", partition, [opportunityType, status])
      const page = yield* liftFailure(pageOf(matching, (o) => `${o.name}|${o.opportunityId}`, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["OpportunityList"] = {
        opportunities: page.items.map((o) => opportunityToWire(o, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getOpportunity = Effect.fn("OfferService.getOpportunity")(function* (opportunityId: string) {
      const found = opportunities.find((o) => o.opportunityId === opportunityId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `opportunity ${opportunityId} was not found`))
      return opportunityToWire(found, yield* clock.nowHere())
    })

    /** Every entry of the directory at `now`, by asset class (in the enum's order), then name, then ID. */
    const directory = (now: number): Array<Schemas["AssetSummary"]> => {
      const entries: Array<Schemas["AssetSummary"]> = [
        ...book.instruments.map((i): Schemas["AssetSummary"] => ({
          assetId: i.symbol,
          assetClass: i.assetType,
          symbol: i.symbol,
          name: i.name,
          exchange: i.exchange,
          country: countryOf(i),
          currency: currencyOf(i),
          status: i.listingStatus,
          access: "trade",
          detailPath: `/${i.assetType === "ETF" ? "etfs" : "stocks"}/${i.symbol}`
        })),
        ...bonds.map((b) =>
          offerEntry(b.bondId, b.instrumentType === "TREASURY_BILL" ? "TREASURY_BILL" : "BOND", b, windowStatus(b.opensAt, b.closesAt, now), "bonds")
        ),
        ...funds.map((f) => offerEntry(f.fundId, "FUND", f, fundStatus(f, now), "funds")),
        ...opportunities.map((o) => offerEntry(o.opportunityId, o.opportunityType, o, windowStatus(o.opensAt, o.closesAt, now), "opportunities"))
      ]
      return entries.sort((a, b) => (assetKey(a) < assetKey(b) ? -1 : 1))
    }

    const listAssets = Effect.fn("OfferService.listAssets")(function* (query: AssetQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      yield* liftFailure(patternCheck(query.country, COUNTRY, "country", "an ISO 3166-1 alpha-2 code (upper case)"))
      yield* liftFailure(patternCheck(query.currency, CURRENCY, "currency", "an ISO 4217 code (upper case)"))
      if (query.search !== undefined && query.search.length > MAX_SEARCH) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", `search must be at most ${MAX_SEARCH} characters`, { param: "search" }))
      }
      const { assetClass, country, currency } = query
      const search = query.search?.toLowerCase()
      const now = yield* clock.nowHere()
      const matching = directory(now).filter(
        (a) =>
          (assetClass === undefined || a.assetClass === assetClass) &&
          (exchange === undefined || a.exchange === exchange) &&
          (country === undefined || a.country === country) &&
          (currency === undefined || a.currency === currency) &&
          (search === undefined || a.name.toLowerCase().includes(search) || (a.symbol?.toLowerCase().includes(search) ?? false))
      )
      const scope = scopeOf("assets", partition, [assetClass, exchange, country, currency, search])
      const page = yield* liftFailure(pageOf(matching, assetKey, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["AssetList"] = { assets: [...page.items], ...pageMeta(page) }
      return list
    })

    return OfferService.of({ listBonds, getBond, listFunds, getFund, listOpportunities, getOpportunity, listAssets })
  })

  static readonly layer = Layer.effect(OfferService, OfferService.make)
}

const assetKey = (a: Schemas["AssetSummary"]) => `${ASSET_CLASSES.indexOf(a.assetClass)}|${a.name}|${a.assetId}`

const offerEntry = (
  assetId: string,
  assetClass: AssetClass,
  offer: { readonly name: string; readonly country: string; readonly currency: string },
  status: OfferStatus,
  family: string
): Schemas["AssetSummary"] => ({
  assetId,
  assetClass,
  symbol: null,
  name: offer.name,
  exchange: null,
  country: offer.country,
  currency: offer.currency,
  status,
  access: "subscription",
  detailPath: `/${family}/${assetId}`
})
