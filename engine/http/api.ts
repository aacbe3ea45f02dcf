/**
 * The partner API as the engine serves it (effect/http-api definition), without the environment base: the gateway
 * mounts it under both `/api/v1/partner` and `/api/sandbox/v1/partner`. Contract only; handlers live in
 * handlers.ts. Errors are not declared per endpoint: every failure is an ApiFailure that the gateway renders in the
 * spec's envelope (see decisions E-001), and spec/openapi.yaml remains the authority on shapes.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"

const Side = Schema.Literals(["BUY", "SELL"])

/** The spec's pagination parameters, shared by every list endpoint. */
const PageQuery = { limit: Schema.optional(Schema.Number), cursor: Schema.optional(Schema.String) }

export class MarketGroup extends HttpApiGroup.make("market").add(
  HttpApiEndpoint.get("listStocks", "/stocks", {
    query: {
      exchange: Schema.optional(Schema.String),
      sector: Schema.optional(Schema.String),
      assetType: Schema.optional(Schema.Literals(["STOCK", "ETF"])),
      search: Schema.optional(Schema.String),
      ...PageQuery
    },
    success: Schema.Unknown
  }),
  HttpApiEndpoint.get("getQuote", "/quote/:symbol", {
    params: { symbol: Schema.String },
    query: {
      side: Schema.optional(Side),
      quantity: Schema.optional(Schema.Number),
      cashValue: Schema.optional(Schema.Number),
      subAccountId: Schema.optional(Schema.String),
      exchange: Schema.optional(Schema.String)
    },
    success: Schema.Unknown
  })
) {}

export const TradeBody = Schema.Struct({
  symbol: Schema.String,
  exchange: Schema.optionalKey(Schema.String),
  type: Side,
  orderType: Schema.optionalKey(Schema.Literals(["MARKET", "LIMIT", "STOP", "STOP_LIMIT"])),
  quantity: Schema.optionalKey(Schema.Number),
  cashValue: Schema.optionalKey(Schema.Number),
  quoteId: Schema.optionalKey(Schema.String),
  limitPrice: Schema.optionalKey(Schema.Number),
  stopPrice: Schema.optionalKey(Schema.Number),
  timeInForce: Schema.optionalKey(Schema.Literals(["DAY", "GTC", "GTD"])),
  expiresAt: Schema.optionalKey(Schema.String),
  clientOrderId: Schema.optionalKey(Schema.String)
})

export class OrdersGroup extends HttpApiGroup.make("orders").add(
  HttpApiEndpoint.post("trade", "/trade", {
    payload: TradeBody,
    success: Schema.Unknown.pipe(HttpApiSchema.status(202))
  }),
  HttpApiEndpoint.get("listOrders", "/orders", {
    query: {
      status: Schema.optional(Schema.String),
      symbol: Schema.optional(Schema.String),
      from: Schema.optional(Schema.String),
      to: Schema.optional(Schema.String),
      ...PageQuery
    },
    success: Schema.Unknown
  }),
  HttpApiEndpoint.get("getOrder", "/orders/:orderId", {
    params: { orderId: Schema.String },
    success: Schema.Unknown
  })
) {}

export class PartnerApi extends HttpApi.make("partner")
  .add(MarketGroup, OrdersGroup)
  .annotateMerge(OpenApi.annotations({ title: "Sokoni engine: partner API (as implemented)", version: "1" })) {}
