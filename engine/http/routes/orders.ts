/**
 * Order routes (contract tag "Trading"): place a trade on the master account or a sub-account, list and read orders,
 * cancel, and replace a sub-account's resting order. The body schema
 * mirrors the contract's TradeRequest (types, enums case-exact); business rules (quote binding, funds, market hours)
 * are TradingService's. Decoding only.
 */
import { Context, Schema } from "effect"
import { OrderBlotter } from "../../app/blotter.ts"
import { PortfolioService } from "../../app/portfolio.ts"
import { TradingService } from "../../app/trading/service.ts"
import { MAX_CASH_VALUE, MAX_ORDER_QUANTITY, ORDER_STATUS_FILTERS } from "../../domain/order.ts"
import { bound, integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"
import { maxCharacters, minCharacters } from "../body.ts"

const positive = Schema.Number.check(Schema.isGreaterThan(0))

/** The contract's TradeRequest. */
export const TradeBody = Schema.Struct({
  symbol: Schema.String.check(minCharacters(1)),
  exchange: Schema.optionalKey(Schema.String),
  type: Schema.Literals(["BUY", "SELL"]),
  orderType: Schema.optionalKey(Schema.Literals(["MARKET", "LIMIT", "STOP", "STOP_LIMIT"])),
  quantity: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_ORDER_QUANTITY }))),
  cashValue: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(MAX_CASH_VALUE))),
  quoteId: Schema.optionalKey(Schema.String.check(minCharacters(1))),
  limitPrice: Schema.optionalKey(positive),
  stopPrice: Schema.optionalKey(positive),
  timeInForce: Schema.optionalKey(Schema.Literals(["DAY", "GTC", "GTD"])),
  expiresAt: Schema.optionalKey(Schema.String),
  clientOrderId: Schema.optionalKey(Schema.String.check(maxCharacters(64)))
})

/** The contract's ReplaceOrderRequest (at least one field: checked by TradingService.replace, D-035). */
export const ReplaceBody = Schema.Struct({
  quantity: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: MAX_ORDER_QUANTITY }))),
  limitPrice: Schema.optionalKey(positive),
  stopPrice: Schema.optionalKey(positive),
  timeInForce: Schema.optionalKey(Schema.Literals(["DAY", "GTC", "GTD"])),
  expiresAt: Schema.optionalKey(Schema.String)
})

export const orderRoutes = [
  partnerRoute("placeTrade", 202, {
    body: TradeBody,
    handle: ({ body, principal }) => TradingService.use((t) => t.trade(principal, "master", body)),
    readsAhead: ({ body, principal }, context) => Context.get(context, TradingService).readsAhead(principal, "master", body)
  }),
  partnerRoute("listOrders", 200, {
    query: {
      status: optional(oneOf(ORDER_STATUS_FILTERS)),
      symbol: optional(text),
      from: optional(bound("from")),
      to: optional(bound("to")),
      limit: optional(integer({ min: 1, max: 200 })),
      ...PAGE
    },
    handle: ({ query, principal }) => TradingService.use((t) => t.listOrders(principal, "master", query))
  }),
  partnerRoute("placeSubAccountTrade", 202, {
    params: { userId: required(text) },
    body: TradeBody,
    handle: ({ params, body, principal }) => TradingService.use((t) => t.trade(principal, params.userId, body)),
    readsAhead: ({ params, body, principal }, context) => Context.get(context, TradingService).readsAhead(principal, params.userId, body)
  }),
  partnerRoute("listSubAccountOrders", 200, {
    params: { userId: required(text) },
    query: {
      status: optional(oneOf(ORDER_STATUS_FILTERS)),
      symbol: optional(text),
      from: optional(bound("from")),
      to: optional(bound("to")),
      limit: optional(integer({ min: 1, max: 200 })),
      ...PAGE
    },
    handle: ({ params, query, principal }) => TradingService.use((t) => t.listOrders(principal, params.userId, query))
  }),
  partnerRoute("getOrder", 200, {
    params: { orderId: required(text) },
    handle: ({ params, principal }) => TradingService.use((t) => t.getOrder(principal, params.orderId))
  }),
  partnerRoute("listTestToolOrders", 200, {
    query: {
      subAccountId: required(text),
      orderId: optional(text),
      status: optional(oneOf(ORDER_STATUS_FILTERS)),
      limit: optional(integer({ min: 1, max: 200 })),
      ...PAGE
    },
    handle: ({ query, principal }) => TradingService.use((t) => t.listOrders(principal, query.subAccountId, query))
  }),
  partnerRoute("getOrderBlotter", 200, {
    query: {
      status: optional(oneOf(["ALL", ...ORDER_STATUS_FILTERS.filter((s) => s !== "PROCESSING")])),
      symbol: optional(text),
      from: optional(bound("from")),
      to: optional(bound("to")),
      limit: optional(integer({ min: 1, max: 200 })),
      ...PAGE
    },
    handle: ({ query, principal }) => OrderBlotter.use((b) => b.page(principal, query))
  }),
  partnerRoute("getMasterPortfolio", 200, { handle: ({ principal }) => PortfolioService.use((p) => p.portfolio(principal, "master")) }),
  partnerRoute("getSubAccountPortfolio", 200, {
    params: { userId: required(text) },
    handle: ({ params, principal }) => PortfolioService.use((p) => p.portfolio(principal, params.userId))
  }),
  partnerRoute("replaceSubAccountOrder", 200, {
    params: { userId: required(text), orderId: required(text) },
    body: ReplaceBody,
    handle: ({ params, body, principal }) => TradingService.use((t) => t.replace(principal, params.userId, params.orderId, body))
  }),
  partnerRoute("cancelOrder", 200, {
    params: { orderId: required(text) },
    handle: ({ params, principal }) => TradingService.use((t) => t.cancel(principal, params.orderId))
  })
]
