/**
 * A symbol change on the records that name a listing (D-342): from its effective instant every position, open order
 * and live price alert carries the new symbol, so the listing's holders keep trading and watching it under the name
 * the exchange now uses; what was traded (filled, rejected, cancelled or expired orders), quotes, journal entries and
 * events keep the symbol of their day. Also the durable job that applies a change announced for a later date (D-340).
 * Functions over a transaction, for every partner and environment. The rules (the new symbol's checks, when a change
 * applies) are pure in domain/corporate-actions/decide-symbol-change.ts; the action is raised by
 * app/corporate-actions/. Does not own which symbol a listing answers to (app/symbols.ts).
 */
import { Effect, Option } from "effect"
import { dueSymbolChange } from "../../domain/corporate-actions/decide-symbol-change.ts"
import type { Instrument } from "../../domain/instruments.ts"
import { isTerminal } from "../../domain/order-transitions.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { JobHandler } from "../../sim/scheduler.ts"
import type { Tx } from "../../store/port.ts"
import { saveAction } from "./action-records.ts"
import { Orders, type PriceAlertDoc, PriceAlerts, SimActions, timeSortKey } from "../docs.ts"
import type { ActionPayload } from "../job-payloads.ts"
import { holdersOf, partnerPartitions, putHolding } from "./holders.ts"
import type { Symbols } from "../symbols.ts"

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
      for (const doc of yield* Orders.listDocs(tx, { partition, limit: 1_000_000, order: "asc" })) {
        const order = doc.body
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

/** The listing takes `newSymbol` now: its symbol, then every record that names it (D-340, D-342). */
export const applySymbolChange = (symbols: Symbols["Service"], tx: Tx, instrument: Instrument, newSymbol: string, actionId: string, now: number) =>
  Effect.andThen(symbols.renameIn(tx, instrument, newSymbol, actionId, now), renameRecordsIn(tx, instrument.symbol, newSymbol))

/** The job of a change announced for a later date: applied at its instant, unless the listing changed symbol since. */
export const symbolChangeJob =
  (deps: { readonly symbols: Symbols["Service"]; readonly clock: EngineClock["Service"] }): JobHandler<typeof ActionPayload.Type> =>
  (tx, { actionId }) =>
    Effect.gen(function* () {
      const { symbols, clock } = deps
      const found = yield* SimActions.get(tx, actionId)
      if (Option.isNone(found)) return
      const action = found.value
      const listing = symbols.listingOf(String(action.details.oldSymbol))
      const newSymbol = listing === undefined ? undefined : dueSymbolChange(action, yield* symbols.symbolIn(tx, listing))
      if (listing === undefined || newSymbol === undefined) return
      const now = yield* clock.nowHere()
      yield* applySymbolChange(symbols, tx, listing, newSymbol, action.actionId, now)
      yield* saveAction(tx, { ...action, completedAt: now })
    })
