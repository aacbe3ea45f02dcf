/**
 * Quote routes (contract tag "Trading"): `GET /quote/{symbol}` issues a single-use, 60-second quote bound to the
 * side, the quantity or cashValue, and the account it was asked for. Decoding only; MarketService does the work.
 */

import { MarketService } from "../../app/market.ts"
import { decimal, integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"

export const quoteRoutes = [
  partnerRoute("getQuote", 200, {
    params: { symbol: required(text) },
    query: {
      side: optional(oneOf(["BUY", "SELL"])),
      quantity: optional(integer({ min: 1 })),
      cashValue: optional(decimal),
      subAccountId: optional(text),
      exchange: optional(text)
    },
    handle: ({ params, query, principal }) => MarketService.use((market) => market.issueQuote(principal, params.symbol, query))
  })
]
