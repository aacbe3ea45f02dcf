/**
 * The dealing desk's decisions on an order awaiting it (D-005, D-290, D-292): a fill (whole or partial), a rejection,
 * a settlement failure that unwinds what was filled. Pure: the dispatcher (app/trading/desk.ts) loads the order (and,
 * to unwind, what the account still holds), draws the execution report's id and unit-change position, and writes the
 * plan; the control API and the desk's jobs go through the same rules.
 * Owns: what each decision changes and announces, and what a planned desk step does to an order now. Does not own the
 * fill arithmetic (domain/order.ts) nor the desk's policy (sim/desk.ts).
 */
import { ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire, parseScaled, type Price4, price4ToWire } from "../money.ts"
import type { OrderRecord } from "../order.ts"
import { applyFill, applyReject, applySettlementFailure, remainingQuantity, type Transition } from "../order-transitions.ts"
import { orderToWire } from "../order-wire.ts"
import type { FillRequest } from "./commands.ts"
import { filledEvents, rejectedEvents } from "./order-events.ts"
import { type OrderPlan, type OrderTransition, transitionOf } from "./plan.ts"

/** The booked form of a transition from `order` to `t.order`. */
const booked = (order: OrderRecord, t: Transition, kind: OrderTransition["kind"], now: number): OrderTransition =>
  transitionOf(t.order, kind, t.order.escrow - order.escrow, t.movements, now)

/** The price a fill request names (4 decimals, local currency), or the order's own price when it names none. */
export const fillPrice = (order: OrderRecord, request: FillRequest): Price4 | ApiFailure => {
  const price = request.price === undefined ? order.priceAtOrder : parseScaled(request.price, 4)
  return price === undefined ? fail("VALIDATION_ERROR", "price must be positive with at most 4 decimals", { param: "price" }) : price
}

/**
 * A fill of `quantity` (default: all that remains) at `price`: the BUY's cost out of its escrow (the unused rest back
 * at the last fill), a SELL's proceeds in; the last fill settles the order and announces order.filled and trade.settled.
 */
export const decideFill = (
  order: OrderRecord,
  request: { readonly quantity?: number | undefined; readonly price: Price4 },
  now: number,
  ids: { readonly reportId: string; readonly seq: number }
): OrderPlan | ApiFailure => {
  const t = applyFill(order, { reportId: ids.reportId, quantity: request.quantity ?? remainingQuantity(order), price: request.price, now, seq: ids.seq })
  if (t instanceof ApiFailure) return t
  const next = t.order
  return {
    ledger: booked(order, t, "ORDER_FILLED", now),
    order: next,
    jobs: [],
    events: next.status === "FILLED" ? filledEvents(next, request.price, now) : [],
    answer: orderToWire(next, now)
  }
}

/** What the account still holds of a trade to unwind: a BUY's free units, a SELL's wallet cash. */
export type UnwindFunds = { readonly kind: "units"; readonly free: number } | { readonly kind: "cash"; readonly available: Cents }

/** Custody can only unwind what is still there: a BUY's filled units, a SELL's proceeds (D-290); else CONFLICT. */
const refuseUnwind = (order: OrderRecord, funds: UnwindFunds): ApiFailure | undefined => {
  const units = order.fills.reduce((n, f) => n + f.quantity, 0)
  if (order.side === "BUY") {
    const free = funds.kind === "units" ? funds.free : 0
    return free < units ? fail("CONFLICT", `the account no longer holds the ${units} filled units of ${order.symbol} to unwind`) : undefined
  }
  const proceeds = order.fills.reduce((c, f) => c + f.gross - f.fee, 0)
  const available = funds.kind === "cash" ? funds.available : 0
  return available < proceeds ? fail("CONFLICT", `the wallet no longer holds the ${centsToWire(proceeds)} USD of proceeds to reverse`) : undefined
}

/**
 * The desk rejects (`unwind` undefined) or custody settlement fails (`unwind`: what the account still holds, D-290):
 * REJECTED with `code`, the unfilled part released (and for a settlement failure every fill reversed first), then
 * order.rejected and trade.rejected.
 */
export const decideReject = (order: OrderRecord, code: string, reason: string, now: number, unwind?: UnwindFunds): OrderPlan | ApiFailure => {
  const t = unwind === undefined ? applyReject(order, code, reason, now) : applySettlementFailure(order, code, reason, now)
  if (t instanceof ApiFailure) return t
  const refused = unwind === undefined ? undefined : refuseUnwind(order, unwind)
  if (refused !== undefined) return refused
  const next = t.order
  return {
    ledger: booked(order, t, "ORDER_REJECTED", now),
    order: next,
    jobs: [],
    events: rejectedEvents(next, code, reason, now),
    answer: orderToWire(next, now)
  }
}

/** A planned desk step (sim/desk.ts PlannedStep) as the rules need it. */
export type DeskStep =
  | { readonly action: "fill"; readonly quantity: number | null; readonly price: "quote" | "market" }
  | { readonly action: "reject"; readonly rejectionCode: string; readonly rejectionReason: string }
  | { readonly action: "failSettlement"; readonly reason: string }

/** What a desk step does to an order still awaiting the desk: a rejection (possibly a settlement failure) or a fill. */
export type DeskAction =
  | { readonly _tag: "Reject"; readonly code: string; readonly reason: string; readonly unwind: boolean }
  | { readonly _tag: "Fill"; readonly request: FillRequest }

/**
 * A step's action now. A fill at the market takes `marketPrice` (undefined: no price for the listing); a BUY's
 * escrow was sized at its quote, so a market price above it cannot be paid and the desk declines (D-292). The fill's
 * price goes through the wire form, as the control API's would.
 */
export const deskStepAction = (order: OrderRecord, step: DeskStep, settlementFailedCode: string, marketPrice: Price4 | undefined): DeskAction => {
  if (step.action === "reject") return { _tag: "Reject", code: step.rejectionCode, reason: step.rejectionReason, unwind: false }
  if (step.action === "failSettlement") return { _tag: "Reject", code: settlementFailedCode, reason: step.reason, unwind: true }
  const remaining = remainingQuantity(order)
  const price = step.price === "market" ? marketPrice : order.priceAtOrder
  if (price === undefined || (order.side === "BUY" && price > order.priceAtOrder)) {
    return { _tag: "Reject", code: "PRICE_OUT_OF_TOLERANCE", reason: "The market moved above the quoted price", unwind: false }
  }
  return { _tag: "Fill", request: { quantity: Math.min(step.quantity ?? remaining, remaining), price: price4ToWire(price) } }
}
