/**
 * The trading dispatchers' one writer: a rule's plan (domain/trading/plan.ts) written in the command's transaction,
 * in the plan's fixed order: the ledger entry, the used quote (and its expiry job deleted), the order, the jobs, the
 * events, then the desk's queue entry and the desk's plan for the order.
 * Owns: turning a plan into store writes. Does not own deciding (domain/trading/) nor the transaction (the caller's).
 */
import { Effect } from "effect"
import type { Plan } from "../../domain/trading/plan.ts"
import type { OrderRecord } from "../../domain/order.ts"
import type { EventLog } from "../../events/event-log.ts"
import type { ExecutionDesk } from "../../sim/desk.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import { discardJob, putHere, type Tx } from "../../store/port.ts"
import { Orders, type QuoteDoc, quoteKeepUntil, Quotes, timeSortKey } from "../docs.ts"
import { applyOrderTransition } from "../ledger.ts"

/** Index of orders handed to the desk (entries stay; the queue view keeps those still awaiting a decision). */
export const DESK_QUEUE = "deskQueue"

/** Writes the order where it is called (`putHere`): for `yield*` at once only. */
export const saveOrder = (tx: Tx, o: OrderRecord) => Orders.putHere(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o)

export interface Writers {
  readonly events: EventLog["Service"]
  readonly scheduler: Scheduler["Service"]
  readonly desk: ExecutionDesk["Service"]
}

/** Writes `plan`, a command of `partition` (a partner environment), in `tx` and answers its answer. */
// Its generator is made once (Effect.fnUntraced), not per command: see sim/scheduler.ts.
export const writePlan = Effect.fnUntraced(function* <A>(w: Writers, tx: Tx, partition: string, plan: Plan<A, QuoteDoc>, now: number) {
  if (plan.ledger !== undefined) yield* applyOrderTransition(tx, partition, plan.ledger)
  if (plan.usedQuote !== undefined) {
    const { quote, expiryJob } = plan.usedQuote
    // A used quote answers STALE_QUOTE until one TTL after its expiry, then may be collected (E-400).
    yield* Quotes.putHere(tx, quote.quoteId, quote.partition, timeSortKey(quote.issuedAt, quote.quoteId), quote, quoteKeepUntil(quote))
    if (expiryJob !== undefined) yield* discardJob(tx, expiryJob)
  }
  if (plan.order !== undefined) yield* saveOrder(tx, plan.order)
  for (const job of plan.jobs) yield* w.scheduler.scheduleHere(tx, job.kind, job.dueAt, job.payload)
  for (const event of plan.events) yield* w.events.append(tx, partition, event.name, event.data)
  if (plan.toDesk !== undefined) {
    const order = plan.toDesk
    yield* putHere(tx, DESK_QUEUE, { id: order.orderId, partition: "global", sortKey: timeSortKey(now, order.orderId), body: { orderId: order.orderId } })
    yield* w.desk.onQueued(tx, order, now)
  }
  return plan.answer
})
