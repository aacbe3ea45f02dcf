/**
 * Quote routes (contract tag "Trading"): `GET /quote/{symbol}` issues a single-use, 60-second quote bound to the
 * side, the quantity or cashValue, and the account it was asked for. Decoding only; MarketService does the work.
 */

import { MarketService } from "../../app/market.ts"
import { decimalAtMost, integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { MAX_CASH_VALUE, MAX_ORDER_QUANTITY } from "../../domain/order.ts"

export const quoteRoutes = [
  partnerRoute("getQuote", 200, {
    params: { symbol: required(text) },
    query: {
      side: optional(oneOf(["BUY", "SELL"])),
      quantity: optional(integer({ min: 1, max: MAX_ORDER_QUANTITY })),
      cashValue: optional(decimalAtMost(MAX_CASH_VALUE)),
      subAccountId: optional(text),
      exchange: optional(text)
    },
    handle: ({ params, query, principal }) => MarketService.use((market) => market.issueQuote(principal, params.symbol, query))
  })
]
