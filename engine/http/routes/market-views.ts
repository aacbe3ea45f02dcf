/**
 * Market-data views (contract tag "Market data"): informational quotes, movers and the snapshot, each also under the
 * `/market-data/**` alias the service keeps (facts 9.3). Decoding only; the work is MarketViews'.
 */
import { MarketViews } from "../../app/market-views.ts"
import { integer, oneOf, optional, text } from "../query.ts"
import { partnerRoute } from "../route.ts"

const quotesQuery = { symbol: optional(text), symbols: optional(text), exchange: optional(text) }
const moversQuery = { direction: optional(oneOf(["gainers", "losers"])), exchange: optional(text), limit: optional(integer({ min: 1, max: 50 })) }
const snapshotQuery = { symbols: optional(text), exchange: optional(text) }

export const marketViewRoutes = [
  partnerRoute("getMarketQuotes", 200, { query: quotesQuery, handle: ({ query }) => MarketViews.use((v) => v.quotes(query)) }),
  partnerRoute("getMarketDataQuotes", 200, { query: quotesQuery, handle: ({ query }) => MarketViews.use((v) => v.quotes(query)) }),
  partnerRoute("getMarketMovers", 200, { query: moversQuery, handle: ({ query }) => MarketViews.use((v) => v.movers(query)) }),
  partnerRoute("getMarketDataMovers", 200, { query: moversQuery, handle: ({ query }) => MarketViews.use((v) => v.movers(query)) }),
  partnerRoute("getMarketSnapshot", 200, { query: snapshotQuery, handle: ({ query }) => MarketViews.use((v) => v.snapshot(query)) }),
  partnerRoute("getMarketDataSnapshot", 200, { query: snapshotQuery, handle: ({ query }) => MarketViews.use((v) => v.snapshot(query)) })
]
