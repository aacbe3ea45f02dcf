/**
 * Market-data routes (contract tag "Market data"): the stock list today; quotes, movers, status and the rest of the
 * family arrive with the market simulation issue. Decoding only; the work is MarketService's.
 */

import { MarketService } from "../../app/market.ts"
import { partnerRoute } from "../route.ts"
import { integer, oneOf, optional, text } from "../query.ts"

export const PAGE = { cursor: optional(text) }

export const marketDataRoutes = [
  partnerRoute("listStocks", 200, {
    query: {
      exchange: optional(text),
      sector: optional(text),
      assetType: optional(oneOf(["STOCK", "ETF"])),
      search: optional(text),
      limit: optional(integer({ min: 1, max: 200 })),
      ...PAGE
    },
    handle: ({ query, principal }) => MarketService.use((market) => market.listStocks(query, principal.partition))
  })
]
