/**
 * The corporate actions' one writer: a rule's plan (domain/corporate-actions/plan.ts) written in the action's
 * transaction, in the plan's fixed order: the listing's status, the dividend record, the holdings, the ledger credits,
 * the action record, the events, the entitlements, the symbol change's renames, then the jobs.
 * Owns: turning a plan into store writes. Does not own deciding
 * (domain/corporate-actions/) nor the transaction (the caller's).
 */
import { Effect } from "effect"
import type { Instrument } from "../../domain/instruments.ts"
import type { ActionPlan } from "../../domain/corporate-actions/plan.ts"
import type { EventLog } from "../../events/event-log.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import type { Tx } from "../../store/port.ts"
import { saveAction } from "./action-records.ts"
import { SimDividends, timeSortKey } from "../docs.ts"
import { putHolding } from "./holders.ts"
import { postEntry } from "../ledger.ts"
import type { Listings } from "../listings.ts"
import { putEntitlement } from "./rights.ts"
import { applySymbolChange } from "./symbol-change.ts"
import type { Symbols } from "../symbols.ts"

/** Dividends raised through the control API live in partition "global", by announcement time. */
const GLOBAL = "global"

export interface ActionWriters {
  readonly events: EventLog["Service"]
  readonly scheduler: Scheduler["Service"]
  readonly listings: Listings["Service"]
  readonly symbols: Symbols["Service"]
}

/** Writes `plan`, an action on `instrument`, in `tx` and answers its outcome. */
export const writeActionPlan = (w: ActionWriters, tx: Tx, instrument: Instrument, plan: ActionPlan, now: number) =>
  Effect.gen(function* () {
    if (plan.listing !== undefined) yield* w.listings.setIn(tx, instrument.id, plan.listing.status, plan.listing.actionId, now)
    const dividend = plan.dividend
    if (dividend !== undefined) yield* SimDividends.put(tx, dividend.dividendId, GLOBAL, timeSortKey(dividend.announcedAt, dividend.dividendId), dividend)
    for (const h of plan.holdings) yield* putHolding(tx, h, h.holding)
    for (const credit of plan.credits) yield* postEntry(tx, credit.partition, credit.entry)
    if (plan.action !== undefined) yield* saveAction(tx, plan.action)
    for (const event of plan.events) yield* w.events.append(tx, event.partition, event.name, event.data)
    for (const entitlement of plan.entitlements) yield* putEntitlement(tx, entitlement)
    if (plan.rename !== undefined && plan.action !== undefined) {
      yield* applySymbolChange(w.symbols, tx, instrument, plan.rename.newSymbol, plan.action.actionId, now)
    }
    for (const job of plan.jobs) yield* w.scheduler.scheduleHere(tx, job.kind, job.dueAt, job.payload)
    return plan.outcome
  })
