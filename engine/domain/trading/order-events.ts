/**
 * The events an order's transitions announce, as the spec's "Payloads" show them. Pure: built from the order after
 * the transition and the instant, in the field order the engine has always written (an event's bytes are part of the
 * trace and of its webhook signature).
 * Owns: the payload of order.pending, order.cancelled, order.filled/trade.settled, order.rejected/trade.rejected and
 * order.replaced. Does not own appending them (app/trading/write-plan.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { centsToWire, price4ToWire, usdPrice4 } from "../money.ts"
import type { OrderRecord } from "../order.ts"
import type { OrderEvent } from "./plan.ts"

/** `accountType` on master-account events (decision D-010). */
const MASTER = "MASTER"

const isoAt = (ms: number): string => new Date(ms).toISOString()

const accountFields = (o: OrderRecord) => (o.account === "master" ? { accountType: MASTER } : { subAccountId: o.account })

const feesOf = (o: OrderRecord) => o.fills.reduce((sum, f) => sum + f.fee, 0)

/** `order.pending`: the order entered the desk's queue. */
export const pendingEvent = (order: OrderRecord): OrderEvent => ({
  name: "order.pending",
  data: {
    orderId: order.orderId,
    ...accountFields(order),
    externalId: order.externalId,
    type: order.side,
    symbol: order.symbol,
    quantity: order.quantity,
    priceAtOrder: price4ToWire(order.priceAtOrder),
    usdPriceAtOrder: price4ToWire(usdPrice4(order.priceAtOrder, order.fxRate)),
    gross: centsToWire(order.gross),
    baseFee: centsToWire(order.baseFee),
    partnerMarkupFee: centsToWire(order.partnerMarkupFee),
    fee: centsToWire(order.fee),
    ...(order.side === "BUY" ? { totalCost: centsToWire(order.totalAmount) } : {}),
    status: "PENDING"
  }
})

/** `order.cancelled` for a partner's cancel or an expiry (D-071): `refunded` on a BUY. */
export const cancelledEvent = (next: OrderRecord, refunded: number): OrderEvent => ({
  name: "order.cancelled",
  data: {
    orderId: next.orderId,
    subAccountId: next.account === "master" ? null : next.account,
    externalId: next.externalId,
    type: next.side,
    symbol: next.symbol,
    quantity: next.quantity,
    status: "CANCELLED",
    ...(next.side === "BUY" ? { refunded: centsToWire(refunded) } : {}),
    currency: "USD",
    orderLifecycle: next.orderLifecycle,
    cancelReason: next.cancelReason
  }
})

/** Fields order.filled and order.rejected share (spec "Payloads"). */
const decisionPayload = (o: OrderRecord, status: "FILLED" | "REJECTED", feeCents: number, now: number) => ({
  orderId: o.orderId,
  subAccountId: o.account === "master" ? null : o.account,
  externalId: o.externalId,
  type: o.side,
  symbol: o.symbol,
  exchange: o.exchange,
  quantity: o.quantity,
  priceAtOrder: price4ToWire(o.priceAtOrder),
  usdPriceAtOrder: price4ToWire(usdPrice4(o.priceAtOrder, o.fxRate)),
  feeAmount: centsToWire(feeCents),
  status,
  settledAt: isoAt(now)
})

/** `order.filled` and `trade.settled` (one payload) when the last fill at `price` settles the order. */
export const filledEvents = (next: OrderRecord, price: number, now: number): ReadonlyArray<OrderEvent> => {
  const filledGross = next.fills.reduce((s, f) => s + f.gross, 0)
  const filledFee = feesOf(next)
  const data = {
    ...decisionPayload(next, "FILLED", filledFee, now),
    ...(next.account === "master" ? { accountType: MASTER } : {}),
    settlementUsdPrice: price4ToWire(usdPrice4(price, next.fxRate)),
    ...(next.side === "BUY" ? { totalCost: centsToWire(filledGross + filledFee) } : { proceeds: centsToWire(filledGross - filledFee) })
  }
  return [
    { name: "order.filled", data },
    { name: "trade.settled", data }
  ]
}

/** `order.rejected` and `trade.rejected` (one payload), after the money went back. */
export const rejectedEvents = (next: OrderRecord, code: string, reason: string, now: number): ReadonlyArray<OrderEvent> => {
  const data = { ...decisionPayload(next, "REJECTED", feesOf(next), now), rejectionCode: code, rejectionReason: reason }
  return [
    { name: "order.rejected", data },
    { name: "trade.rejected", data }
  ]
}

const priceOrNull = (p: number | null) => (p === null ? null : price4ToWire(p))

/** `order.replaced`: the order as it now is, and what it was. */
export const replacedEvent = (order: OrderRecord, next: OrderRecord, now: number): OrderEvent => {
  const data: Schemas["OrderReplacedData"] = {
    orderId: order.orderId,
    subAccountId: order.account,
    externalId: next.externalId,
    type: next.side,
    symbol: next.symbol,
    orderType: next.orderType,
    status: "WORKING",
    quantity: next.quantity,
    limitPrice: priceOrNull(next.limitPrice),
    stopPrice: priceOrNull(next.stopPrice),
    timeInForce: next.timeInForce,
    previous: {
      quantity: order.quantity,
      limitPrice: priceOrNull(order.limitPrice),
      stopPrice: priceOrNull(order.stopPrice),
      timeInForce: order.timeInForce
    },
    replacedAt: isoAt(now)
  }
  return { name: "order.replaced", data: { ...data } }
}
