/**
 * Reference-data routes (contract tags "Market data", "Instruments", "Market intelligence"): one stock, ETFs,
 * companies and their tickers and news, dividends, corporate actions, FX, bonds, funds, opportunities, the asset
 * directory and market intelligence. Decoding only (names, types and enums as the contract declares them); the work
 * is ReferenceService's, CorporateService's, IntelService's and OfferService's.
 */
import { CorporateService } from "../../app/corporate.ts"
import { IntelService } from "../../app/intel.ts"
import { OfferService } from "../../app/offers.ts"
import { ReferenceService } from "../../app/reference.ts"
import { fail } from "../../domain/errors.ts"
import { bound, type Decoder, integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"

/** A boolean query value: `true` or `false` exactly; anything else is the wrong type. */
export const flag: Decoder<boolean> = (raw, name) =>
  raw === "true" ? true : raw === "false" ? false : fail("INVALID_TYPE", `${name} must be true or false, got ${JSON.stringify(raw)}`, { param: name })

const symbolPath = { symbol: required(text) }
const limit = (max: number) => optional(integer({ min: 1, max }))
const exchange = optional(text)
const range = { from: optional(bound("from")), to: optional(bound("to")) }
const OFFER_STATUS = ["UPCOMING", "OPEN", "CLOSED"] as const
const BOND_TYPES = ["TREASURY_BILL", "GOVERNMENT_BOND", "CORPORATE_BOND", "INFRASTRUCTURE_BOND"] as const
const FUND_TYPES = ["MONEY_MARKET", "FIXED_INCOME", "EQUITY", "BALANCED", "REAL_ESTATE"] as const
const CATEGORIES = ["NEWS", "EARNINGS", "CORPORATE_ACTION", "MARKET_COMMENTARY", "REGULATORY", "MACRO"] as const
const DIVIDEND_STATUS = ["DECLARED", "PAID", "CANCELLED"] as const
const ACTION_TYPES = ["GENERIC", "SPLIT", "REVERSE_SPLIT", "BONUS", "SUSPENSION", "HALT", "DELISTING", "RIGHTS_ISSUE", "SYMBOL_CHANGE"] as const
const ACTION_STATUS = ["ANNOUNCED", "EFFECTIVE", "COMPLETED", "CANCELLED"] as const
const ASSET_CLASSES = ["STOCK", "ETF", "TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"] as const

const fxQuery = { currencies: optional(text), limit: limit(200), ...PAGE }
const dividendQuery = { exchange, symbol: optional(text), ...range, status: optional(oneOf(DIVIDEND_STATUS)), limit: limit(200), ...PAGE }

export const referenceRoutes = [
  partnerRoute("getStock", 200, {
    params: symbolPath,
    query: { exchange },
    handle: ({ params, query }) => ReferenceService.use((r) => r.getStock(params.symbol, query.exchange))
  }),
  partnerRoute("listEtfs", 200, {
    query: { exchange, limit: limit(200), ...PAGE },
    handle: ({ query, principal }) => ReferenceService.use((r) => r.listEtfs(query, principal.partition))
  }),
  partnerRoute("getEtf", 200, { params: symbolPath, handle: ({ params }) => ReferenceService.use((r) => r.getEtf(params.symbol)) }),
  partnerRoute("listCompanies", 200, {
    query: { exchange, sector: optional(text), limit: limit(200), ...PAGE },
    handle: ({ query, principal }) => ReferenceService.use((r) => r.listCompanies(query, principal.partition))
  }),
  partnerRoute("listCompanyTickers", 200, {
    query: { exchange, search: optional(text), limit: limit(200), ...PAGE },
    handle: ({ query, principal }) => ReferenceService.use((r) => r.listTickers(query, principal.partition))
  }),
  partnerRoute("getCompany", 200, { params: symbolPath, handle: ({ params }) => ReferenceService.use((r) => r.getCompany(params.symbol)) }),
  partnerRoute("listCompanyNews", 200, {
    params: symbolPath,
    query: { type: optional(oneOf(CATEGORIES)), limit: limit(100), ...PAGE },
    handle: ({ params, query, principal }) => IntelService.use((i) => i.companyNews(params.symbol, query, principal.partition))
  }),
  partnerRoute("listFxRates", 200, {
    query: fxQuery,
    handle: ({ query, principal }) => ReferenceService.use((r) => r.listFxRates(query, principal.partition))
  }),
  partnerRoute("listFxRatesByRatesPath", 200, {
    query: fxQuery,
    handle: ({ query, principal }) => ReferenceService.use((r) => r.listFxRates(query, principal.partition))
  }),
  partnerRoute("getFxRate", 200, { params: { currency: required(text) }, handle: ({ params }) => ReferenceService.use((r) => r.getFxRate(params.currency)) }),
  partnerRoute("listDividends", 200, {
    query: dividendQuery,
    handle: ({ query, principal }) => CorporateService.use((c) => c.listDividends(query, principal.partition))
  }),
  partnerRoute("getDividendCalendar", 200, {
    query: { ...dividendQuery, all: optional(flag) },
    handle: ({ query, principal }) => CorporateService.use((c) => c.dividendCalendar(query, principal.partition))
  }),
  partnerRoute("getDividend", 200, {
    params: { dividendId: required(text) },
    handle: ({ params }) => CorporateService.use((c) => c.getDividend(params.dividendId))
  }),
  partnerRoute("getDividendHistory", 200, {
    params: symbolPath,
    query: { limit: limit(100) },
    handle: ({ params, query }) => CorporateService.use((c) => c.dividendHistory(params.symbol, query.limit))
  }),
  partnerRoute("listCorporateActions", 200, {
    query: {
      exchange,
      symbol: optional(text),
      actionType: optional(oneOf(ACTION_TYPES)),
      status: optional(oneOf(ACTION_STATUS)),
      ...range,
      limit: limit(200),
      ...PAGE
    },
    handle: ({ query, principal }) => CorporateService.use((c) => c.listActions(query, principal.partition))
  }),
  partnerRoute("getCorporateAction", 200, {
    params: { actionId: required(text) },
    handle: ({ params }) => CorporateService.use((c) => c.getAction(params.actionId))
  }),
  partnerRoute("listMarketIntel", 200, {
    query: { exchange, symbol: optional(text), limit: limit(100), ...PAGE },
    handle: ({ query, principal }) => IntelService.use((i) => i.listArticles(query, principal.partition))
  }),
  partnerRoute("getMarketIntelArticle", 200, {
    params: { articleId: required(text) },
    handle: ({ params }) => IntelService.use((i) => i.getArticle(params.articleId))
  }),
  partnerRoute("listBonds", 200, {
    query: {
      exchange,
      instrumentType: optional(oneOf(BOND_TYPES)),
      type: optional(oneOf(BOND_TYPES)),
      country: optional(text),
      currency: optional(text),
      status: optional(oneOf(OFFER_STATUS)),
      limit: limit(200),
      ...PAGE
    },
    handle: ({ query, principal }) => OfferService.use((o) => o.listBonds(query, principal.partition))
  }),
  partnerRoute("getBond", 200, { params: { bondId: required(text) }, handle: ({ params }) => OfferService.use((o) => o.getBond(params.bondId)) }),
  partnerRoute("listFunds", 200, {
    query: {
      fundType: optional(oneOf(FUND_TYPES)),
      category: optional(oneOf(FUND_TYPES)),
      country: optional(text),
      currency: optional(text),
      status: optional(oneOf(OFFER_STATUS)),
      limit: limit(200),
      ...PAGE
    },
    handle: ({ query, principal }) => OfferService.use((o) => o.listFunds(query, principal.partition))
  }),
  partnerRoute("getFund", 200, { params: { fundId: required(text) }, handle: ({ params }) => OfferService.use((o) => o.getFund(params.fundId)) }),
  partnerRoute("listOpportunities", 200, {
    query: { opportunityType: optional(oneOf(["PRIVATE_CREDIT", "PRE_IPO"])), status: optional(oneOf(OFFER_STATUS)), limit: limit(200), ...PAGE },
    handle: ({ query, principal }) => OfferService.use((o) => o.listOpportunities(query, principal.partition))
  }),
  partnerRoute("getOpportunity", 200, {
    params: { opportunityId: required(text) },
    handle: ({ params }) => OfferService.use((o) => o.getOpportunity(params.opportunityId))
  }),
  partnerRoute("listAssets", 200, {
    query: {
      assetClass: optional(oneOf(ASSET_CLASSES)),
      exchange,
      country: optional(text),
      currency: optional(text),
      search: optional(text),
      limit: limit(200),
      ...PAGE
    },
    handle: ({ query, principal }) => OfferService.use((o) => o.listAssets(query, principal.partition))
  })
]
