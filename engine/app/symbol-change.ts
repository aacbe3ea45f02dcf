/**
 * A symbol change on the records that name a listing (D-342): from its effective instant every position, open order
 * and live price alert carries the new symbol, so the listing's holders keep trading and watching it under the name
 * the exchange now uses; what was traded (filled, rejected, cancelled or expired orders), quotes, journal entries and
 * events keep the symbol of their day. Functions over a transaction, for every partner and environment.
 * Does not own the action (app/corporate-actions.ts) nor which symbol a listing answers to (app/symbols.ts).
 */
import { Effect } from "effect"
import { findExchange } from "../domain/calendar.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { type Instrument, SYMBOL_FORMAT } from "../domain/instruments.ts"
import { isTerminal, type OrderRecord } from "../domain/order.ts"
import type { Tx } from "../store/port.ts"
import { Orders, type PriceAlertDoc, PriceAlerts, timeSortKey } from "./docs.ts"
import { holdersOf, partnerPartitions, putHolding } from "./holders.ts"

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
