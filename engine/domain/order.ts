import { type Cents, fees, grossCents, type Price4, type Rate6, usdPrice4 } from "./money.ts"

export type Side = "BUY" | "SELL"
export type OrderType = "MARKET" | "LIMIT" | "STOP" | "STOP_LIMIT"
export type CanonicalStatus = "PENDING" | "WORKING" | "PARTIALLY_FILLED" | "FILLED" | "REJECTED" | "CANCELLED" | "EXPIRED"
export type SettlementStatus = "PENDING" | "SETTLED" | "FAILED"
export type TimeInForce = "DAY" | "GTC" | "GTD"

/**
 * Largest order the engine accepts: 100 million units, 10 billion USD of cashValue (decision E-016). Far beyond any
 * listing's float, and well inside the exact integer range the money arithmetic needs.
 */
export const MAX_ORDER_QUANTITY = 100_000_000
export const MAX_CASH_VALUE = 10_000_000_000

/** Status filters `GET /orders` accepts: the canonical statuses and the v1 aliases PROCESSING and COMPLETED. */
export const ORDER_STATUS_FILTERS = ["PENDING", "WORKING", "PARTIALLY_FILLED", "PROCESSING", "COMPLETED", "FILLED", "REJECTED", "CANCELLED", "EXPIRED"] as const
export type OrderStatusFilter = (typeof ORDER_STATUS_FILTERS)[number]

export interface Fill {
  readonly reportId: string
  readonly quantity: number
  readonly price: Price4
  readonly gross: Cents
  readonly fee: Cents
  readonly at: number
  /**
   * Its place among the changes to units held (fills, splits, bonus issues) in commit order (`UNIT_CHANGES`): orders
   * those of one instant, which the engine clock gives to every request until it advances. Absent on older records.
   */
  readonly seq?: number
}

/** The stored order. Money in cents, local prices in Price4, rates in Rate6, times in epoch millis. */
export interface OrderRecord {
  readonly orderId: string
  readonly partition: string
  /** "master" or a sub-account id. */
  readonly account: string
  readonly externalId: string | null
  readonly symbol: string
  readonly name: string
  readonly exchange: string
  readonly orderType: OrderType
  readonly side: Side
  readonly quantity: number
  readonly limitPrice: Price4 | null
  readonly stopPrice: Price4 | null
  readonly timeInForce: TimeInForce | null
  readonly clientOrderId: string | null
  readonly quoteId: string | null
  readonly quoteExpiresAt: number | null
  readonly quoteUsdPrice: number | null
  readonly priceAtOrder: Price4
  readonly fxRate: Rate6
  readonly fxSource: string
  readonly fxRateAsOf: number
  readonly localCurrency: string
  readonly gross: Cents
  readonly baseFee: Cents
  readonly partnerMarkupFee: Cents
  readonly fee: Cents
  readonly totalAmount: Cents
  readonly markupBps: number
  /** BUY: what is still held in escrow for this order. SELL: always 0 (shares are reserved instead). */
  readonly escrow: Cents
  readonly status: CanonicalStatus
  readonly settlementStatus: SettlementStatus
  readonly fills: ReadonlyArray<Fill>
  readonly rejectionCode: string | null
  readonly rejectionReason: string | null
  readonly cancelReason: string | null
  readonly orderLifecycle: string | null
  readonly createdAt: number
  readonly queuedAt: number | null
  readonly cancelledAt: number | null
  readonly settledAt: number | null
  readonly filledAt: number | null
  readonly version: number
  /** GTD deadline as the partner gave it (wire `expiresAt`); absent or null otherwise. */
  readonly expiresAt?: number | null
  /** When a DAY or GTD order expires (DAY: the exchange's close, D-281); absent or null for MARKET and GTC orders. */
  readonly deadline?: number | null
  /** When a resting order's trigger price was reached and it went to the desk. */
  readonly triggeredAt?: number | null
}

export interface PlaceMarketInput {
  readonly orderId: string
  readonly partition: string
  readonly account: string
  readonly externalId: string | null
  readonly instrument: { readonly symbol: string; readonly name: string; readonly exchange: string }
  readonly side: Side
  readonly quantity: number
  readonly price: Price4
  readonly rate: Rate6
  readonly rateAsOf: number
  readonly fxSource: string
  readonly localCurrency: string
  readonly markupBps: number
  readonly quote: { readonly quoteId: string; readonly expiresAt: number }
  readonly clientOrderId: string | null
  readonly timeInForce: TimeInForce | null
  readonly now: number
}

export const placeMarket = (input: PlaceMarketInput): OrderRecord => {
  const gross = grossCents(input.quantity, input.price, input.rate)
  const f = fees(gross, input.markupBps)
  const totalAmount = input.side === "BUY" ? gross + f.fee : gross - f.fee
  return {
    orderId: input.orderId,
    partition: input.partition,
    account: input.account,
    externalId: input.externalId,
    symbol: input.instrument.symbol,
    name: input.instrument.name,
    exchange: input.instrument.exchange,
    orderType: "MARKET",
    side: input.side,
    quantity: input.quantity,
    limitPrice: null,
    stopPrice: null,
    timeInForce: input.timeInForce,
    clientOrderId: input.clientOrderId,
    quoteId: input.quote.quoteId,
    quoteExpiresAt: input.quote.expiresAt,
    quoteUsdPrice: usdPrice4(input.price, input.rate),
    priceAtOrder: input.price,
    fxRate: input.rate,
    fxSource: input.fxSource,
    fxRateAsOf: input.rateAsOf,
    localCurrency: input.localCurrency,
    gross,
    baseFee: f.baseFee,
    partnerMarkupFee: f.partnerMarkupFee,
    fee: f.fee,
    totalAmount,
    markupBps: input.markupBps,
    escrow: input.side === "BUY" ? totalAmount : 0,
    status: "PENDING",
    settlementStatus: "PENDING",
    fills: [],
    rejectionCode: null,
    rejectionReason: null,
    cancelReason: null,
    orderLifecycle: null,
    createdAt: input.now,
    queuedAt: input.now,
    cancelledAt: null,
    settledAt: null,
    filledAt: null,
    version: 1
  }
}

export type RestingType = Exclude<OrderType, "MARKET">

export interface PlaceRestingInput {
  readonly orderId: string
  readonly partition: string
  readonly account: string
  /** The sub-account's externalId (spec: the Order and its events carry it); null for the master account. */
  readonly externalId: string | null
  readonly instrument: { readonly symbol: string; readonly name: string; readonly exchange: string }
  readonly orderType: RestingType
  readonly side: Side
  readonly quantity: number
  readonly limitPrice: Price4 | null
  readonly stopPrice: Price4 | null
  readonly timeInForce: TimeInForce
  /** GTD: the partner's deadline. */
  readonly expiresAt: number | null
  /** When it expires (DAY: the exchange's close; GTD: expiresAt; GTC: null). */
  readonly deadline: number | null
  readonly rate: Rate6
  readonly rateAsOf: number
  readonly fxSource: string
  readonly localCurrency: string
  readonly markupBps: number
  readonly clientOrderId: string | null
  readonly now: number
}

/**
 * The price a resting order is escrowed and shown at until it triggers (E-160): the limit for LIMIT and STOP_LIMIT
 * (no fill may be worse), the stop for STOP (its trigger; the trigger re-prices it at the price that reached it).
 */
export const referencePrice = (o: { readonly orderType: OrderType; readonly limitPrice: Price4 | null; readonly stopPrice: Price4 | null }): Price4 | null =>
  o.orderType === "STOP" ? o.stopPrice : o.limitPrice

/** gross, fees and total of `quantity` at `price`: BUY total = gross + fee (the escrow), SELL total = gross - fee. */
export const priced = (side: Side, quantity: number, price: Price4, rate: Rate6, markupBps: number) => {
  const gross = grossCents(quantity, price, rate)
  const f = fees(gross, markupBps)
  return { gross, baseFee: f.baseFee, partnerMarkupFee: f.partnerMarkupFee, fee: f.fee, totalAmount: side === "BUY" ? gross + f.fee : gross - f.fee }
}

/**
 * A LIMIT, STOP or STOP_LIMIT order rests WORKING until its trigger (spec lifecycle). A BUY escrows its total at the
 * reference price (E-160); a SELL reserves its shares (the caller moves both, from the returned escrow/quantity).
 */
export const placeResting = (input: PlaceRestingInput): OrderRecord => {
  const reference = referencePrice({ orderType: input.orderType, limitPrice: input.limitPrice, stopPrice: input.stopPrice }) ?? 0
  const p = priced(input.side, input.quantity, reference, input.rate, input.markupBps)
  return {
    orderId: input.orderId,
    partition: input.partition,
    account: input.account,
    externalId: input.externalId,
    symbol: input.instrument.symbol,
    name: input.instrument.name,
    exchange: input.instrument.exchange,
    orderType: input.orderType,
    side: input.side,
    quantity: input.quantity,
    limitPrice: input.limitPrice,
    stopPrice: input.stopPrice,
    timeInForce: input.timeInForce,
    clientOrderId: input.clientOrderId,
    quoteId: null,
    quoteExpiresAt: null,
    quoteUsdPrice: null,
    priceAtOrder: reference,
    fxRate: input.rate,
    fxSource: input.fxSource,
    fxRateAsOf: input.rateAsOf,
    localCurrency: input.localCurrency,
    ...p,
    markupBps: input.markupBps,
    escrow: input.side === "BUY" ? p.totalAmount : 0,
    status: "WORKING",
    settlementStatus: "PENDING",
    fills: [],
    rejectionCode: null,
    rejectionReason: null,
    cancelReason: null,
    orderLifecycle: null,
    createdAt: input.now,
    queuedAt: null,
    cancelledAt: null,
    settledAt: null,
    filledAt: null,
    version: 1,
    expiresAt: input.expiresAt,
    deadline: input.deadline,
    triggeredAt: null
  }
}
