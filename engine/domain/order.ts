/**
 * The order state machine and its money arithmetic. Pure: the time, ids, prices and rates come in as arguments
 * and every transition returns the new order plus the wallet, escrow, holding and fee movements it causes.
 * Owns: statuses and their legal moves, escrow accounting per order, the wire projection of an order.
 * Does not own: storing, events, the desk's decisions (domain/trading/ decides, app/trading/ and sim/desk.ts apply).
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
const priced = (side: Side, quantity: number, price: Price4, rate: Rate6, markupBps: number) => {
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

/**
 * Whether the delayed price `price` triggers a WORKING order (D-282): it is marketable there. LIMIT: BUY at or below
 * the limit, SELL at or above. STOP: BUY at or above the stop, SELL at or below. STOP_LIMIT: the stop is reached and
 * the price is still within the limit (a stop-limit that gapped past its limit keeps waiting).
 */
export const triggers = (o: OrderRecord, price: Price4): boolean => {
  if (o.status !== "WORKING") return false
  const buy = o.side === "BUY"
  const withinLimit = o.limitPrice !== null && (buy ? price <= o.limitPrice : price >= o.limitPrice)
  const stopReached = o.stopPrice !== null && (buy ? price >= o.stopPrice : price <= o.stopPrice)
  if (o.orderType === "LIMIT") return withinLimit
  if (o.orderType === "STOP") return stopReached
  if (o.orderType === "STOP_LIMIT") return stopReached && withinLimit
  return false
}

/**
 * The trigger: WORKING -> PENDING at the desk, re-priced at `price` (the desk fills there unless told otherwise). A
 * BUY keeps its escrow when it covers the new total (the surplus returns at the last fill, as for MARKET) and takes
 * the shortfall from the wallet otherwise (a STOP BUY triggered above its stop); the caller checks the wallet first.
 */
export const applyTrigger = (order: OrderRecord, price: Price4, now: number): Transition | ApiFailure => {
  if (order.status !== "WORKING") return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot trigger`)
  if (!Number.isSafeInteger(price) || price <= 0) return fail("VALIDATION_ERROR", "trigger price must be positive")
  const p = priced(order.side, order.quantity, price, order.fxRate, order.markupBps)
  const shortfall = order.side === "BUY" ? Math.max(0, p.totalAmount - order.escrow) : 0
  return {
    order: {
      ...order,
      ...p,
      priceAtOrder: price,
      escrow: order.escrow + shortfall,
      status: "PENDING",
      queuedAt: now,
      triggeredAt: now,
      version: order.version + 1
    },
    movements: { ...NO_MOVEMENT, wallet: -shortfall }
  }
}

/** What the wallet must add when `order` triggers at `price` (0 unless a BUY's escrow falls short). */
export const triggerShortfall = (order: OrderRecord, price: Price4): Cents =>
  order.side === "BUY" ? Math.max(0, priced("BUY", order.quantity, price, order.fxRate, order.markupBps).totalAmount - order.escrow) : 0

export interface ReplaceInput {
  readonly quantity?: number | undefined
  readonly limitPrice?: Price4 | undefined
  readonly stopPrice?: Price4 | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: number | null | undefined
  readonly deadline?: number | null | undefined
}

/**
 * Replace (D-035): a WORKING order changes in place, same orderId, still WORKING. Its total is re-priced at the new
 * reference price; a BUY's escrow becomes the new total (the wallet gives the difference or takes the surplus back),
 * a SELL's reserved shares follow the new quantity. The caller checks funds and holdings first.
 */
export const applyReplace = (order: OrderRecord, change: ReplaceInput): Transition | ApiFailure => {
  if (order.status !== "WORKING") return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot be replaced (replaceable only while WORKING)`)
  const next = {
    quantity: change.quantity ?? order.quantity,
    limitPrice: change.limitPrice ?? order.limitPrice,
    stopPrice: change.stopPrice ?? order.stopPrice
  }
  const reference = referencePrice({ orderType: order.orderType, ...next }) ?? order.priceAtOrder
  const p = priced(order.side, next.quantity, reference, order.fxRate, order.markupBps)
  const escrow = order.side === "BUY" ? p.totalAmount : 0
  return {
    order: {
      ...order,
      ...next,
      ...p,
      priceAtOrder: reference,
      escrow,
      timeInForce: change.timeInForce ?? order.timeInForce,
      expiresAt: change.expiresAt === undefined ? (order.expiresAt ?? null) : change.expiresAt,
      deadline: change.deadline === undefined ? (order.deadline ?? null) : change.deadline,
      version: order.version + 1
    },
    movements: { ...NO_MOVEMENT, wallet: order.escrow - escrow, sharesReserved: order.side === "SELL" ? next.quantity - order.quantity : 0 }
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
  /** The fill's place among unit changes (Fill.seq), from the store's `UNIT_CHANGES` counter. */
  readonly seq?: number
}

/** The desk fills `quantity` at `price`. The last fill settles the order and returns unused BUY escrow. */
export const applyFill = (order: OrderRecord, input: FillInput): Transition | ApiFailure => {
  if (!awaitsDesk(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot be filled`)
  const remaining = remainingQuantity(order)
  if (!Number.isSafeInteger(input.quantity) || input.quantity <= 0 || input.quantity > remaining) {
    return fail("VALIDATION_ERROR", `fill quantity must be a whole number from 1 to ${remaining}`)
  }
  if (!Number.isSafeInteger(input.price) || input.price <= 0) return fail("VALIDATION_ERROR", "fill price must be positive")
  if (order.limitPrice !== null && (order.side === "BUY" ? input.price > order.limitPrice : input.price < order.limitPrice)) {
    return fail(
      "VALIDATION_ERROR",
      `fill price must honour the order's limit (${order.side === "BUY" ? "at most" : "at least"} ${price4ToWire(order.limitPrice)})`
    )
  }
  // Each fill is priced as the difference of cumulative totals, so partial fills add up to exactly what one fill of
  // the whole quantity would cost: rounding never makes a BUY cost more than its escrow (E-002).
  const notionalBefore = order.fills.reduce((n, f) => n + BigInt(f.quantity) * BigInt(f.price), 0n)
  const notionalAfter = notionalBefore + BigInt(input.quantity) * BigInt(input.price)
  const grossBefore = grossOfNotional(notionalBefore, order.fxRate)
  const grossAfter = grossOfNotional(notionalAfter, order.fxRate)
  const gross = grossAfter - grossBefore
  const fee = fees(grossAfter, order.markupBps).fee - fees(grossBefore, order.markupBps).fee
  const complete = input.quantity === remaining
  const fill: Fill = {
    reportId: input.reportId,
    quantity: input.quantity,
    price: input.price,
    gross,
    fee,
    at: input.now,
    ...(input.seq === undefined ? {} : { seq: input.seq })
  }
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
  return rejected(order, code, reason, now)
}

/**
 * The engine rejects a WORKING order when its trigger comes and the wallet cannot cover a STOP BUY's higher price
 * (D-282): REJECTED with INSUFFICIENT_FUNDS, its escrow back to the wallet.
 */
export const applyRejectAtTrigger = (order: OrderRecord, code: string, reason: string, now: number): Transition | ApiFailure => {
  if (order.status !== "WORKING") return fail("CONFLICT", `order ${order.orderId} is ${order.status}, not WORKING`)
  return rejected(order, code, reason, now)
}

const rejected = (order: OrderRecord, code: string, reason: string, now: number): Transition => {
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
/** Why an expiry closed the order (D-004). */
export const CANCEL_REASON_DAY = "DAY_EXPIRED"
export const CANCEL_REASON_GTD = "GTD_EXPIRED"
export const LIFECYCLE_EXPIRED = "EXPIRED"

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

/**
 * A DAY or GTD order reached its deadline (D-004): EXPIRED (on the wire status CANCELLED, canonicalStatus EXPIRED),
 * `orderLifecycle` EXPIRED and a `cancelReason`, never a rejectionCode; what is unfilled is released (BUY escrow back
 * to the wallet, SELL shares unreserved). Settlement SETTLED when something filled, FAILED otherwise.
 */
export const applyExpire = (order: OrderRecord, now: number): Transition | ApiFailure => {
  if (isTerminal(order)) return fail("CONFLICT", `order ${order.orderId} is ${order.status} and cannot expire`)
  if (order.deadline === undefined || order.deadline === null || now < order.deadline) {
    return fail("CONFLICT", `order ${order.orderId} has no deadline reached at ${isoOf(now)}`)
  }
  return {
    order: {
      ...order,
      escrow: 0,
      status: "EXPIRED",
      settlementStatus: order.fills.length > 0 ? "SETTLED" : "FAILED",
      orderLifecycle: LIFECYCLE_EXPIRED,
      cancelReason: order.timeInForce === "GTD" ? CANCEL_REASON_GTD : CANCEL_REASON_DAY,
      cancelledAt: now,
      settledAt: now,
      queuedAt: null,
      version: order.version + 1
    },
    movements: releaseUnfilled(order)
  }
}

/** The status a partner sees (D-004): an expired order is CANCELLED, its canonicalStatus EXPIRED. */
export const wireStatus = (o: OrderRecord): CanonicalStatus => (o.status === "EXPIRED" ? "CANCELLED" : o.status)

/** Whether `o` matches a `status` filter: CANCELLED includes expiries (their status), EXPIRED only them. */
export const matchesStatus = (o: OrderRecord, wanted: string | undefined): boolean =>
  wanted === undefined || o.status === wanted || (wanted === "CANCELLED" && o.status === "EXPIRED")

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
    status: wireStatus(o),
    canonicalStatus: o.status,
    settlementStatus: o.settlementStatus,
    quoteId: o.quoteId,
    quoteExpiresAt: iso(o.quoteExpiresAt),
    quoteUsdPrice: o.quoteUsdPrice === null ? null : price4ToWire(o.quoteUsdPrice),
    clientOrderId: o.clientOrderId,
    omsStatus: null,
    timeInForce: o.timeInForce,
    ...(o.expiresAt === undefined || o.expiresAt === null ? {} : { expiresAt: isoOf(o.expiresAt) }),
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
    // The contract's direction (D-006, E-220): from USD to the local currency, `rate` local units per USD, as
    // fxRateAtOrder; none for an instrument that trades in USD.
    fxConversion:
      o.localCurrency === "USD"
        ? null
        : { fromCurrency: "USD", toCurrency: o.localCurrency, rate: rate6ToWire(o.fxRate), source: o.fxSource, asOf: isoOf(o.fxRateAsOf) },
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
