/**
 * The order's legal moves after placement (D-280..D-284): trigger, replace, the desk's fill and reject, a failed
 * settlement, cancel and expiry, each returning the new order and the wallet, escrow, holding and fee movements it
 * causes; and the queries on an order's state (filled, remaining, terminal, cancelable). Pure, like order.ts.
 */
import { fail, type ApiFailure } from "./errors.ts"
import { type Cents, centsToWire, fees, grossOfNotional, type Price4, price4ToWire } from "./money.ts"
import { type OrderRecord, priced, referencePrice, type TimeInForce, type Fill } from "./order.ts"

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

/**
 * An order ended before it was wholly filled (rejected or expired): its unfilled escrow and reservation released, what
 * was filled settled, and `ending` saying how it ended.
 */
const endedUnfilled = (order: OrderRecord, now: number, ending: Partial<OrderRecord> & Pick<OrderRecord, "status">): Transition => ({
  order: {
    ...order,
    escrow: 0,
    settlementStatus: order.fills.length > 0 ? "SETTLED" : "FAILED",
    ...ending,
    settledAt: now,
    queuedAt: null,
    version: order.version + 1
  },
  movements: releaseUnfilled(order)
})

const rejected = (order: OrderRecord, code: string, reason: string, now: number): Transition =>
  endedUnfilled(order, now, { status: "REJECTED", rejectionCode: code, rejectionReason: reason })

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
    return fail("CONFLICT", `order ${order.orderId} has no deadline reached at ${new Date(now).toISOString()}`)
  }
  return endedUnfilled(order, now, {
    status: "EXPIRED",
    orderLifecycle: LIFECYCLE_EXPIRED,
    cancelReason: order.timeInForce === "GTD" ? CANCEL_REASON_GTD : CANCEL_REASON_DAY,
    cancelledAt: now
  })
}
