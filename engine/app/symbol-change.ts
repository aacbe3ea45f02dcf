/**
 * A symbol change on the records that name a listing (D-342): from its effective instant every position, open order
 * and live price alert carries the new symbol, so the listing's holders keep trading and watching it under the name
 * the exchange now uses; what was traded (filled, rejected, cancelled or expired orders), quotes, journal entries and
 * events keep the symbol of their day. Also the action itself (D-340): checked, announced, applied at once or by a
 * durable job at its effective instant. Functions over a transaction, for every partner and environment.
 * Does not own raising the other actions (app/corporate-actions.ts) nor which symbol a listing answers to (app/symbols.ts).
 */
import { Effect, Option } from "effect"
import { findExchange } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { type Instrument, SYMBOL_FORMAT } from "../domain/instruments.ts"
import type { OrderRecord } from "../domain/order.ts"
import { isTerminal } from "../domain/order-transitions.ts"
import { dateMs, isCalendarDate, isoDate } from "../domain/reference/seeded.ts"
import type { EventLog } from "../events/event-log.ts"
import type { EngineClock } from "../sim/clock.ts"
import type { JobHandler, Scheduler } from "../sim/scheduler.ts"
import type { Tx } from "../store/port.ts"
import { actionOf, announceAction, saveAction } from "./action-records.ts"
import { Orders, type PriceAlertDoc, PriceAlerts, SimActions, timeSortKey } from "./docs.ts"
import type { ActionPayload } from "./job-payloads.ts"
import { holdersOf, partnerPartitions, putHolding } from "./holders.ts"
import type { Symbols } from "./symbols.ts"

/** The job that applies a symbol change announced for a later date, at its effective instant (00:00 UTC of that date). */
export const SYMBOL_CHANGE_JOB = "corporateaction.symbol_change"

/**
 * The new symbol asked for, upper-cased: the spec's symbol format (2-20 letters or digits, dot-separated) with the
 * listing's exchange suffix (`.KE` on NSE, facts 9.1.1), and not the symbol it has. Whether another listing has or had
 * it is the caller's check (committed state).
 */
export const newSymbolFor = (raw: string | undefined, instrument: Instrument): string | ApiFailure => {
  const suffix = findExchange(instrument.exchange)?.suffix ?? instrument.exchange
  const symbol = raw?.toUpperCase()
  if (symbol === undefined || !SYMBOL_FORMAT.test(symbol) || !symbol.endsWith(`.${suffix}`) || symbol.split(".").length !== 2) {
    return fail("VALIDATION_ERROR", `a SYMBOL_CHANGE needs newSymbol: a ticker of 1-17 letters or digits and the exchange suffix .${suffix}`, {
      param: "newSymbol"
    })
  }
  if (symbol === instrument.symbol) return fail("VALIDATION_ERROR", `${instrument.symbol} already has that symbol`, { param: "newSymbol" })
  return symbol
}

export interface Renamed {
  /** Accounts whose position moved to the new symbol. */
  readonly accounts: number
  /** Open orders (WORKING, PENDING, PARTIALLY_FILLED) now under the new symbol. */
  readonly orders: ReadonlyArray<string>
  /** Price alerts (not deleted) now under the new symbol. */
  readonly alerts: number
}

/** Moves every position, open order and live alert on `from` to `to`, in every partner's partitions. */
export const renameRecordsIn = (tx: Tx, from: string, to: string) =>
  Effect.gen(function* () {
    const holders = yield* holdersOf(tx, from, true)
    for (const h of holders) {
      // The old document stays, empty (a store has no delete): position lists skip empty holdings.
      yield* putHolding(tx, h, { symbol: from, quantity: 0, reserved: 0 })
      yield* putHolding(tx, h, { symbol: to, quantity: h.holding.quantity, reserved: h.holding.reserved })
    }
    const orders: Array<string> = []
    let alerts = 0
    for (const partition of yield* partnerPartitions(tx, true)) {
      for (const doc of yield* tx.list(Orders.name, { partition, limit: 1_000_000, order: "asc" })) {
        const order = doc.body as OrderRecord
        if (order.symbol !== from || isTerminal(order)) continue
        yield* Orders.put(tx, order.orderId, order.partition, doc.sortKey, { ...order, symbol: to })
        orders.push(order.orderId)
      }
      for (const alert of yield* PriceAlerts.list(tx, partition, { limit: 100_000, order: "asc" })) {
        if (alert.symbol !== from || alert.deleted) continue
        yield* PriceAlerts.put(tx, alert.alertId, alert.partition, timeSortKey(alert.createdAt, alert.alertId), {
          ...alert,
          symbol: to
        } satisfies PriceAlertDoc)
        alerts += 1
      }
    }
    return { accounts: holders.length, orders, alerts } satisfies Renamed
  })

export interface SymbolChangeInput {
  readonly newSymbol?: string | undefined
  readonly effectiveDate?: string | undefined
  readonly description?: string | undefined
}

/** The symbol change action, over the services it needs. */
export const symbolChanges = (deps: {
  readonly events: EventLog["Service"]
  readonly symbols: Symbols["Service"]
  readonly scheduler: Scheduler["Service"]
  readonly clock: EngineClock["Service"]
}) => {
  const { events, symbols, scheduler, clock } = deps

  /** The listing takes `newSymbol` now: its symbol, then every record that names it (D-340, D-342). */
  const apply = (tx: Tx, instrument: Instrument, newSymbol: string, actionId: string, now: number) =>
    Effect.andThen(symbols.renameIn(tx, instrument, newSymbol, actionId, now), renameRecordsIn(tx, instrument.symbol, newSymbol))

  /**
   * Checked, announced now (`corporateaction.symbol_changed`, the old symbol in `symbol`), applied now when its
   * effective date is today, else at 00:00 UTC of that date by a durable job.
   */
  const announce = (tx: Tx, instrument: Instrument, input: SymbolChangeInput, actionId: string, now: number) =>
    Effect.gen(function* () {
      const newSymbol = yield* liftFailure(newSymbolFor(input.newSymbol, instrument))
      const pending = (yield* SimActions.list(tx, "global", { limit: 100_000, order: "asc" })).filter(
        (a) => a.actionType === "SYMBOL_CHANGE" && a.completedAt === null
      )
      if (pending.some((a) => a.details.oldSymbol === instrument.symbol)) {
        return yield* Effect.fail(fail("CONFLICT", `${instrument.symbol} already has a symbol change pending`))
      }
      // A symbol any listing has, had, or is about to take names that listing for good (D-341): never reused.
      if ((yield* symbols.usedIn(tx, newSymbol)) || pending.some((a) => a.details.newSymbol === newSymbol)) {
        return yield* Effect.fail(fail("CONFLICT", `${newSymbol} is or was the symbol of a listing`, { param: "newSymbol" }))
      }
      const today = isoDate(now)
      const effectiveDate = input.effectiveDate ?? today
      if (!isCalendarDate(effectiveDate) || effectiveDate < today) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "effectiveDate must be a date (YYYY-MM-DD), today (UTC) or later", { param: "effectiveDate" }))
      }
      const effectiveAt = dateMs(effectiveDate)
      const immediate = effectiveAt <= now
      const details = { oldSymbol: instrument.symbol, newSymbol }
      const description = input.description ?? `Ticker ${instrument.symbol} becomes ${newSymbol}`
      const action = actionOf(instrument, actionId, "SYMBOL_CHANGE", now, description, details, immediate, effectiveAt)
      yield* saveAction(tx, action)
      yield* announceAction(events, tx, "corporateaction.symbol_changed", action, details)
      const holders = yield* holdersOf(tx, instrument.symbol)
      if (immediate) yield* apply(tx, instrument, newSymbol, actionId, now)
      else yield* scheduler.schedule(tx, SYMBOL_CHANGE_JOB, effectiveAt, { actionId })
      return { action, accountsAffected: holders.length }
    })

  /** The job of a change announced for a later date: applied at its instant, unless the listing changed symbol since. */
  const onEffectiveDate: JobHandler<typeof ActionPayload.Type> = (tx, { actionId }) =>
    Effect.gen(function* () {
      const found = yield* SimActions.get(tx, actionId)
      if (Option.isNone(found) || found.value.completedAt !== null) return
      const action = found.value
      const listing = symbols.listingOf(String(action.details.oldSymbol))
      if (listing === undefined || (yield* symbols.symbolIn(tx, listing)) !== action.details.oldSymbol) return
      const now = yield* clock.now
      yield* apply(tx, listing, String(action.details.newSymbol), action.actionId, now)
      yield* saveAction(tx, { ...action, completedAt: now })
    })

  return { announce, onEffectiveDate }
}
