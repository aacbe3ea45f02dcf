/**
 * An open order's life apart from the desk: the partner's cancel (D-033) and replace (D-035, D-284), a resting order's
 * trigger (D-282) and a DAY or GTD order's expiry (D-004). Pure: the dispatchers (app/trading/orders.ts, jobs.ts)
 * load the order and what the account holds, and write the plan.
 * Owns: what each of these changes, books and announces. Does not own the state machine itself (domain/order.ts).
 */
import type { Exchange } from "../calendar.ts"
import { ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire, type Price4, price4ToWire } from "../money.ts"
import type { OrderRecord } from "../order.ts"
import {
  applyCancel,
  applyExpire,
  applyRejectAtTrigger,
  applyReplace,
  applyTrigger,
  CANCEL_REASON_PARTNER,
  isTerminal,
  triggers,
  triggerShortfall,
  type Transition
} from "../order-transitions.ts"
import { orderToWire } from "../order-wire.ts"
import { refuseTrading, type SubAccountRecord } from "../subaccount.ts"
import type { ReplaceRequest } from "./commands.ts"
import { cancelledEvent, pendingEvent, rejectedEvents, replacedEvent } from "./order-events.ts"
import { dayDeadline, replaceFields } from "./order-fields.ts"
import { EXPIRE_JOB, type ExpireJob, type JobPlan, NOTHING, type OrderJob, type OrderPlan, type OrderTransition, TRIGGER_JOB, transitionOf } from "./plan.ts"

const booked = (order: OrderRecord, t: Transition, kind: OrderTransition["kind"], now: number): OrderTransition =>
  transitionOf(t.order, kind, t.order.escrow - order.escrow, t.movements, now)

/** The partner cancels a PENDING or WORKING order of its own (D-033): money and units back first, then order.cancelled. */
export const decideCancel = (order: OrderRecord, partition: string, now: number): OrderPlan | ApiFailure => {
  if (order.partition !== partition) return fail("NOT_FOUND", `order ${order.orderId} was not found`)
  const t = applyCancel(order, CANCEL_REASON_PARTNER, now)
  if (t instanceof ApiFailure) return t
  return {
    ledger: booked(order, t, "ORDER_CANCELLED", now),
    order: t.order,
    jobs: [],
    events: [cancelledEvent(t.order, t.movements.wallet)],
    answer: orderToWire(t.order, now)
  }
}

/**
 * An `order.expire` job (D-004): an order still open at the deadline the job was booked for expires, the unfilled
 * part released. A replace that moved the deadline left the old job behind: it sees another deadline and does nothing.
 */
export const decideExpire = (order: OrderRecord | undefined, job: ExpireJob, now: number): JobPlan | ApiFailure => {
  if (order === undefined || isTerminal(order) || order.deadline !== job.deadline) return NOTHING
  const t = applyExpire(order, now)
  if (t instanceof ApiFailure) return t
  return { ledger: booked(order, t, "ORDER_EXPIRED", now), order: t.order, jobs: [], events: [cancelledEvent(t.order, t.movements.wallet)], answer: undefined }
}

/** What an `order.trigger` job sees: the delayed price when the order's exchange published one in session, and the wallet. */
export interface TriggerLook {
  /** Undefined when the exchange was closed at the delayed instant (or the listing is gone): no look this time. */
  readonly price: Price4 | undefined
  /** The account's available cash (read for a BUY only). */
  readonly available: Cents
  /** The next refresh: when the order looks again if it does not trigger now. */
  readonly nextLook: number
}

/**
 * An `order.trigger` job (D-282): a WORKING order whose price is reached goes PENDING to the desk, re-priced there (a
 * BUY's escrow topped up from the wallet when the new total exceeds it); a STOP BUY whose top-up the wallet cannot
 * give is REJECTED with INSUFFICIENT_FUNDS; an order not triggered looks again at the next refresh.
 */
export const decideTrigger = (order: OrderRecord | undefined, look: TriggerLook, now: number): JobPlan | ApiFailure => {
  // triggered, cancelled, expired meanwhile, or wiped by a sandbox reset: the chain ends
  if (order === undefined || order.status !== "WORKING") return NOTHING
  const price = look.price
  if (price === undefined || !triggers(order, price)) {
    return { jobs: [{ kind: TRIGGER_JOB, dueAt: look.nextLook, payload: { orderId: order.orderId } }], events: [], answer: undefined }
  }
  const shortfall = triggerShortfall(order, price)
  const available = shortfall > 0 ? look.available : 0
  if (shortfall > available) {
    const reason = `the ${order.orderType} BUY triggered at ${price4ToWire(price)} and needs ${centsToWire(shortfall)} USD more than its escrow; the wallet holds ${centsToWire(available)} USD`
    const t = applyRejectAtTrigger(order, "INSUFFICIENT_FUNDS", reason, now)
    if (t instanceof ApiFailure) return t
    return {
      ledger: booked(order, t, "ORDER_REJECTED", now),
      order: t.order,
      jobs: [],
      events: rejectedEvents(t.order, "INSUFFICIENT_FUNDS", reason, now),
      answer: undefined
    }
  }
  const t = applyTrigger(order, price, now)
  if (t instanceof ApiFailure) return t
  const next = t.order
  const ledger = next.escrow === order.escrow ? undefined : booked(order, t, "ORDER_PLACED", now)
  return { ledger, order: next, jobs: [], events: [pendingEvent(next)], toDesk: next, answer: undefined }
}

/** What a replace reads: the sub-account on the path, the order, and what the account has free (cash for a BUY, units for a SELL). */
export interface ReplaceState {
  readonly subAccount: SubAccountRecord
  readonly order: OrderRecord
  readonly partition: string
  readonly exchange: Exchange | undefined
  readonly available: Cents
  readonly freeUnits: number
}

/** The new deadline of a replace: undefined when neither timeInForce nor expiresAt changes. */
const replacedDeadline = (
  order: OrderRecord,
  change: { readonly timeInForce: OrderRecord["timeInForce"] | undefined; readonly expiresAt: number | null | undefined },
  exchange: Exchange | undefined,
  now: number
): number | null | undefined => {
  if (change.timeInForce === undefined && change.expiresAt === undefined) return undefined
  const timeInForce = change.timeInForce ?? order.timeInForce
  if (timeInForce === "DAY") return order.timeInForce === "DAY" ? (order.deadline ?? null) : dayDeadline(exchange, now)
  if (timeInForce === "GTD") return change.expiresAt ?? order.expiresAt ?? null
  return null
}

/** A replace may need more from the account: a BUY's extra escrow (INSUFFICIENT_FUNDS), a SELL's extra units (INSUFFICIENT_HOLDINGS). */
const refuseReplaceFunds = (state: ReplaceState, t: Transition): ApiFailure | undefined => {
  const { wallet, sharesReserved } = t.movements
  if (wallet < 0 && state.available < -wallet) {
    return fail("INSUFFICIENT_FUNDS", `the replaced order needs ${centsToWire(-wallet)} USD more and the wallet holds ${centsToWire(state.available)} USD`)
  }
  if (sharesReserved > 0 && state.freeUnits < sharesReserved) {
    return fail("INSUFFICIENT_HOLDINGS", `the account holds ${state.freeUnits} free units of ${state.order.symbol}, the replace needs ${sharesReserved} more`)
  }
  return undefined
}

/**
 * Replace (D-035, D-284): a WORKING order of the sub-account on the path changes in place; BUY escrow re-computed
 * (the extra taken from the wallet or the surplus refunded), SELL reservation follows the quantity; `order.replaced`;
 * a new deadline gets its own expiry job (the old one finds another deadline and does nothing).
 */
export const decideReplace = (state: ReplaceState, input: ReplaceRequest, now: number): OrderPlan | ApiFailure => {
  const { order, subAccount } = state
  if (order.partition !== state.partition || order.account !== subAccount.subAccountId) {
    return fail("NOT_FOUND", `order ${order.orderId} was not found for sub-account ${subAccount.subAccountId}`)
  }
  if (order.status !== "WORKING") return fail("CONFLICT", `order ${order.orderId} is ${order.status}: only a WORKING order is replaceable`)
  const refused = refuseTrading(subAccount)
  if (refused !== undefined) return refused
  const change = replaceFields(order, input, now)
  if (change instanceof ApiFailure) return change
  const deadline = replacedDeadline(order, change, state.exchange, now)
  const t = applyReplace(order, { ...change, ...(deadline === undefined ? {} : { deadline }) })
  if (t instanceof ApiFailure) return t
  const short = refuseReplaceFunds(state, t)
  if (short !== undefined) return short
  const next = t.order
  const newDeadline = next.deadline ?? null
  const jobs: Array<OrderJob> =
    newDeadline !== null && newDeadline !== (order.deadline ?? null)
      ? [{ kind: EXPIRE_JOB, dueAt: newDeadline, payload: { orderId: order.orderId, deadline: newDeadline } }]
      : []
  return {
    ledger: booked(order, t, next.escrow > order.escrow ? "ORDER_PLACED" : "ORDER_REPLACED", now),
    order: next,
    jobs,
    events: [replacedEvent(order, next, now)],
    answer: orderToWire(next, now)
  }
}
