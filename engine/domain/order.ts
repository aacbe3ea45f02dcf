/**
 * The order state machine and its money arithmetic. Pure: the time, ids, prices and rates come in as arguments
 * and every transition returns the new order plus the wallet, escrow, holding and fee movements it causes.
 * Owns: statuses and their legal moves, escrow accounting per order, the wire projection of an order.
 * Does not own: storing, events, the desk's decisions (app/trading.ts and sim/desk.ts do those).
 */
import type { Schemas } from "../contract/wire.ts"
import { fail, type ApiFailure } from "./errors.ts"
import { type Cents, centsToWire, divRound, fees, grossCents, grossOfNotional, type Price4, price4ToWire, type Rate6, rate6ToWire, usdPrice4 } from "./money.ts"

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

export const filledQuantity = (o: OrderRecord): number => o.fills.reduce((n, f) => n + f.quantity, 0)
export const remainingQuantity = (o: OrderRecord): number => o.quantity - filledQuantity(o)
export const isTerminal = (o: OrderRecord): boolean => o.status === "FILLED" || o.status === "REJECTED" || o.status === "CANCELLED" || o.status === "EXPIRED"
/** Orders the desk may still decide on. */
export const awaitsDesk = (o: OrderRecord): boolean => o.status === "PENDING" || o.status === "PARTIALLY_FILLED"

/** Money and share movements a transition causes, for the caller to apply to wallets and holdings. */
export interface Movements {
  /** Added to the account's USD wallet (negative = taken). */
  readonly wallet: Cents
  /** Fees the broker collected. */
  readonly feesCollected: Cents
  /** USD paid to (BUY, negative) or received from (SELL, positive) the market. */
  readonly marketNet: Cents
  /** Shares added to the holding (negative = removed). */
  readonly shares: number
  /** Shares added to the reserved part of the holding (negative = released). */
  readonly sharesReserved: number
}

const NO_MOVEMENT: Movements = { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }

export interface Transition {
  readonly order: OrderRecord
  readonly movements: Movements
}

export interface FillInput {
  readonly reportId: string
  readonly quantity: number
  readonly price: Price4
  readonly now: number
}

/** The desk fills `quantity` at `price`. The last fill settles the order and returns unused BUY escrow. */
export const applyFill = (order: OrderRecord, input: FillInput): Transition | ApiFailure => {
  if (!awaitsDesk(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot be filled`)
  const remaining = remainingQuantity(order)
  if (!Number.isSafeInteger(input.quantity) || input.quantity <= 0 || input.quantity > remaining) {
    return fail("VALIDATION_ERROR", `fill quantity must be a whole number from 1 to ${remaining}`)
  }
  if (!Number.isSafeInteger(input.price) || input.price <= 0) return fail("VALIDATION_ERROR", "fill price must be positive")
  // Each fill is priced as the difference of cumulative totals, so partial fills add up to exactly what one fill of
  // the whole quantity would cost: rounding never makes a BUY cost more than its escrow (E-002).
  const notionalBefore = order.fills.reduce((n, f) => n + BigInt(f.quantity) * BigInt(f.price), 0n)
  const notionalAfter = notionalBefore + BigInt(input.quantity) * BigInt(input.price)
  const grossBefore = grossOfNotional(notionalBefore, order.fxRate)
  const grossAfter = grossOfNotional(notionalAfter, order.fxRate)
  const gross = grossAfter - grossBefore
  const fee = fees(grossAfter, order.markupBps).fee - fees(grossBefore, order.markupBps).fee
  const complete = input.quantity === remaining
  const fill: Fill = { reportId: input.reportId, quantity: input.quantity, price: input.price, gross, fee, at: input.now }
  let movements: Movements
  let escrow = order.escrow
  if (order.side === "BUY") {
    const cost = gross + fee
    if (cost > escrow) return fail("CONFLICT", `fill costs ${centsToWire(cost)} USD but only ${centsToWire(escrow)} USD is in escrow`)
    escrow -= cost
    const refund = complete ? escrow : 0
    escrow -= refund
    movements = { wallet: refund, feesCollected: fee, marketNet: -gross, shares: input.quantity, sharesReserved: 0 }
  } else {
    movements = { wallet: gross - fee, feesCollected: fee, marketNet: gross, shares: -input.quantity, sharesReserved: -input.quantity }
  }
  return {
    order: {
      ...order,
      fills: [...order.fills, fill],
      escrow,
      status: complete ? "FILLED" : "PARTIALLY_FILLED",
      settlementStatus: complete ? "SETTLED" : "PENDING",
      settledAt: complete ? input.now : order.settledAt,
      filledAt: complete ? input.now : order.filledAt,
      queuedAt: complete ? null : order.queuedAt,
      version: order.version + 1
    },
    movements
  }
}

const releaseUnfilled = (order: OrderRecord): Movements =>
  order.side === "BUY" ? { ...NO_MOVEMENT, wallet: order.escrow } : { ...NO_MOVEMENT, sharesReserved: -remainingQuantity(order) }

/** The desk declines. BUY escrow goes back to the wallet first (spec: before `order.rejected` fires). */
export const applyReject = (order: OrderRecord, code: string, reason: string, now: number): Transition | ApiFailure => {
  if (!awaitsDesk(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot be rejected`)
  return {
    order: {
      ...order,
      escrow: 0,
      status: "REJECTED",
      settlementStatus: order.fills.length > 0 ? "SETTLED" : "FAILED",
      rejectionCode: code,
      rejectionReason: reason,
      settledAt: now,
      queuedAt: null,
      version: order.version + 1
    },
    movements: releaseUnfilled(order)
  }
}

/**
 * Custody settlement fails (D-290): the trade is unwound. Every fill is reversed (a BUY's shares leave the holding
 * and everything debited for it, fills and escrow, returns to the wallet; a SELL's proceeds leave the wallet and
 * its shares return, the unfilled part's reservation released), fees included, and the fills are dropped: nothing
 * settled. The order ends REJECTED with `code`, settlement FAILED. The caller checks the holding and wallet can give back.
 */
export const applySettlementFailure = (order: OrderRecord, code: string, reason: string, now: number): Transition | ApiFailure => {
  if (!awaitsDesk(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status}: its settlement can no longer fail`)
  const units = filledQuantity(order)
  const gross = order.fills.reduce((s, f) => s + f.gross, 0)
  const fee = order.fills.reduce((s, f) => s + f.fee, 0)
  const movements: Movements =
    order.side === "BUY"
      ? { wallet: order.escrow + gross + fee, feesCollected: -fee, marketNet: gross, shares: -units, sharesReserved: 0 }
      : { wallet: -(gross - fee), feesCollected: -fee, marketNet: -gross, shares: units, sharesReserved: -remainingQuantity(order) }
  return {
    order: {
      ...order,
      fills: [],
      escrow: 0,
      status: "REJECTED",
      settlementStatus: "FAILED",
      rejectionCode: code,
      rejectionReason: reason,
      settledAt: now,
      filledAt: null,
      queuedAt: null,
      version: order.version + 1
    },
    movements
  }
}

/** Why a partner's cancel closed the order (spec event order.cancelled, `cancelReason`). */
export const CANCEL_REASON_PARTNER = "PARTNER_REQUEST"

/** Orders a partner may cancel (spec: "a cancelable (PENDING or WORKING) order"); a partly filled one may not (D-033). */
export const isCancelable = (o: OrderRecord): boolean => o.status === "PENDING" || o.status === "WORKING"

/**
 * The partner cancels (D-033): CANCELLED with `cancelReason`, nothing filled, BUY escrow back to the wallet and a
 * SELL's reserved shares released; settlement FAILED, as nothing will settle.
 */
export const applyCancel = (order: OrderRecord, reason: string, now: number): Transition | ApiFailure => {
  if (!isCancelable(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot be cancelled`)
  return {
    order: {
      ...order,
      escrow: 0,
      status: "CANCELLED",
      settlementStatus: "FAILED",
      cancelReason: reason,
      cancelledAt: now,
      settledAt: now,
      queuedAt: null,
      version: order.version + 1
    },
    movements: releaseUnfilled(order)
  }
}

/** Default service-level target for the dealing desk queue (spec: "live SLA clock"; value is ours, see E-004). */
export const EXECUTION_SLA_SECONDS = 300

const isoOf = (ms: number): string => new Date(ms).toISOString()
const iso = (ms: number | null): string | null => (ms === null ? null : isoOf(ms))

/** The Order resource as the spec shows it, at instant `now` (the SLA clock depends on it). */
export const orderToWire = (o: OrderRecord, now: number): Schemas["Order"] => {
  const filled = filledQuantity(o)
  const lastFill = o.fills.at(-1)
  const avgPrice =
    filled === 0
      ? null
      : Number(
          divRound(
            o.fills.reduce((s, f) => s + BigInt(f.price) * BigInt(f.quantity), 0n),
            BigInt(filled)
          )
        )
  const inQueue = o.status === "PENDING" || o.status === "PARTIALLY_FILLED"
  const sla =
    inQueue && o.queuedAt !== null
      ? {
          queuedAt: isoOf(o.queuedAt),
          targetSeconds: EXECUTION_SLA_SECONDS,
          deadlineAt: isoOf(o.queuedAt + EXECUTION_SLA_SECONDS * 1000),
          elapsedSeconds: Math.max(0, Math.floor((now - o.queuedAt) / 1000)),
          breached: now - o.queuedAt > EXECUTION_SLA_SECONDS * 1000
        }
      : null
  return {
    orderId: o.orderId,
    symbol: o.symbol,
    name: o.name,
    exchange: o.exchange,
    orderType: o.orderType,
    limitPrice: o.limitPrice === null ? null : price4ToWire(o.limitPrice),
    stopPrice: o.stopPrice === null ? null : price4ToWire(o.stopPrice),
    cancelable: isCancelable(o),
    replaceable: o.status === "WORKING",
    type: o.side,
    status: o.status,
    canonicalStatus: o.status,
    settlementStatus: o.settlementStatus,
    quoteId: o.quoteId,
    quoteExpiresAt: iso(o.quoteExpiresAt),
    quoteUsdPrice: o.quoteUsdPrice === null ? null : price4ToWire(o.quoteUsdPrice),
    clientOrderId: o.clientOrderId,
    omsStatus: null,
    timeInForce: o.timeInForce,
    filledQuantity: filled,
    remainingQuantity: o.quantity - filled,
    averageFillPrice: avgPrice === null ? null : price4ToWire(avgPrice),
    executionVenue: o.fills.length > 0 ? "SOKONI-SIM-DESK" : null,
    lastExecutionReportId: lastFill?.reportId ?? null,
    executionSla: sla,
    quantity: o.quantity,
    priceAtOrder: price4ToWire(o.priceAtOrder),
    usdPriceAtOrder: price4ToWire(usdPrice4(o.priceAtOrder, o.fxRate)),
    fxRateAtOrder: rate6ToWire(o.fxRate),
    fxSource: o.fxSource,
    fxRateAsOf: iso(o.fxRateAsOf),
    fxConversion: {
      fromCurrency: o.localCurrency,
      toCurrency: "USD",
      rate: rate6ToWire(o.fxRate),
      source: o.fxSource,
      asOf: isoOf(o.fxRateAsOf)
    },
    fee: centsToWire(o.fee),
    baseFee: centsToWire(o.baseFee),
    partnerMarkupFee: centsToWire(o.partnerMarkupFee),
    totalAmount: centsToWire(o.totalAmount),
    currency: "USD",
    localCurrency: o.localCurrency,
    rejectionCode: o.rejectionCode,
    rejectionReason: o.rejectionReason,
    cancelledAt: iso(o.cancelledAt),
    settledAt: iso(o.settledAt),
    createdAt: isoOf(o.createdAt),
    orderLifecycle: o.orderLifecycle,
    cancelReason: o.cancelReason
  }
}

export type OrderWire = Schemas["Order"]
