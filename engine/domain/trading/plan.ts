/**
 * What a trading rule decides, as data: the plan a dispatcher writes in the command's one transaction (issue 22,
 * item 5). A rule (decide-*.ts) reads loaded state and returns either a refusal (an ApiFailure carrying the spec's
 * code and status) or a plan; it never touches the store, the clock or the generator.
 * Owns: the plan's shape and the order in which its parts are written. Does not own writing them (app/trading/).
 *
 * The writing order is fixed and is part of every trace: the ledger entry (its journal position), the used quote and
 * its expiry job, the order document, the jobs (their sequence numbers), the events (their positions; an event's
 * webhook hook books delivery jobs after the plan's own), then the desk's queue entry and the desk's plan.
 */
import type { Schemas } from "../../contract/wire.ts"
import type { Cents } from "../money.ts"
import type { OrderRecord, Side } from "../order.ts"
import type { Movements } from "../order-transitions.ts"

/** An order transition as the ledger books it: one journal entry for its money, and its share movements. */
export interface OrderTransition {
  readonly account: string
  readonly symbol: string
  readonly orderId: string
  readonly side: Side
  readonly kind: "ORDER_PLACED" | "ORDER_FILLED" | "ORDER_REJECTED" | "ORDER_CANCELLED" | "ORDER_EXPIRED" | "ORDER_REPLACED"
  readonly movements: Movements
  /** The order's escrow after the transition minus before. */
  readonly escrowDelta: Cents
  readonly at: number
}

/** The ledger's view of `next`, an order after a transition of `kind`, given what the transition moved. */
export const transitionOf = (next: OrderRecord, kind: OrderTransition["kind"], escrowDelta: Cents, movements: Movements, at: number): OrderTransition => ({
  account: next.account,
  symbol: next.symbol,
  orderId: next.orderId,
  side: next.side,
  kind,
  escrowDelta,
  at,
  movements
})

export const TRIGGER_JOB = "order.trigger"
export const EXPIRE_JOB = "order.expire"

/** A WORKING order's next look at the delayed price. */
export interface TriggerJob {
  readonly orderId: string
}

/** A DAY or GTD order's deadline; a job whose deadline the order no longer has does nothing. */
export interface ExpireJob {
  readonly orderId: string
  readonly deadline: number
}

export type OrderJob =
  | { readonly kind: typeof TRIGGER_JOB; readonly dueAt: number; readonly payload: TriggerJob }
  | { readonly kind: typeof EXPIRE_JOB; readonly dueAt: number; readonly payload: ExpireJob }

export type OrderEventName = "order.pending" | "order.cancelled" | "order.filled" | "trade.settled" | "order.rejected" | "trade.rejected" | "order.replaced"

export interface OrderEvent {
  readonly name: OrderEventName
  readonly data: Readonly<Record<string, unknown>>
}

/** A used quote: written back with its new status, its expiry job deleted (nothing is left to expire, E-295). */
export interface UsedQuote<Q> {
  readonly quote: Q
  readonly expiryJob: number | undefined
}

export interface Plan<A, Q = never> {
  readonly ledger?: OrderTransition | undefined
  readonly usedQuote?: UsedQuote<Q> | undefined
  /** The order as it is after the command (absent: the order does not change). */
  readonly order?: OrderRecord | undefined
  readonly jobs: ReadonlyArray<OrderJob>
  readonly events: ReadonlyArray<OrderEvent>
  /** The order enters the dealing desk's queue (its `order.pending` is in `events`). */
  readonly toDesk?: OrderRecord | undefined
  readonly answer: A
}

/** A command answered with the order as it now is (the spec's Order). */
export type OrderPlan<Q = never> = Plan<Schemas["Order"], Q>

/** A job's plan: no answer. */
export type JobPlan = Plan<void>

/** Nothing to write (a job whose order was decided meanwhile). */
export const NOTHING: JobPlan = { jobs: [], events: [], answer: undefined }
