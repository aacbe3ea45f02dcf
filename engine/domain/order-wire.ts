/**
 * The Order resource as the spec shows it (D-004: an expired order is CANCELLED on the wire, its canonicalStatus
 * EXPIRED), the status filters of `GET /orders`, and the desk's service-level clock. Pure, like order.ts.
 */
import type { Schemas } from "../contract/wire.ts"
import { centsToWire, divRound, price4ToWire, rate6ToWire, usdPrice4 } from "./money.ts"
import type { CanonicalStatus, OrderRecord } from "./order.ts"
import { filledQuantity, isCancelable } from "./order-transitions.ts"
import { isoOf } from "./strings.ts"

/** The status a partner sees (D-004): an expired order is CANCELLED, its canonicalStatus EXPIRED. */
export const wireStatus = (o: OrderRecord): CanonicalStatus => (o.status === "EXPIRED" ? "CANCELLED" : o.status)

/** Whether `o` matches a `status` filter: CANCELLED includes expiries (their status), EXPIRED only them. */
export const matchesStatus = (o: OrderRecord, wanted: string | undefined): boolean =>
  wanted === undefined || o.status === wanted || (wanted === "CANCELLED" && o.status === "EXPIRED")

/** Default service-level target for the dealing desk queue (spec: "live SLA clock"; value is ours, see E-004). */
export const EXECUTION_SLA_SECONDS = 300

const iso = (ms: number | null): string | null => (ms === null ? null : isoOf(ms))

/** The Order resource as the spec shows it, at instant `now` (the SLA clock depends on it). */
export const orderToWire = (o: OrderRecord, now: number): Schemas["Order"] => {
  const filled = filledQuantity(o)
  const lastFill = o.fills.at(-1)
  const avgPrice =
    filled === 0
      ? null
      : Number(
          divRound(
            o.fills.reduce((s, f) => s + BigInt(f.price) * BigInt(f.quantity), 0n),
            BigInt(filled)
          )
        )
  const inQueue = o.status === "PENDING" || o.status === "PARTIALLY_FILLED"
  const sla =
    inQueue && o.queuedAt !== null
      ? {
          queuedAt: isoOf(o.queuedAt),
          targetSeconds: EXECUTION_SLA_SECONDS,
          deadlineAt: isoOf(o.queuedAt + EXECUTION_SLA_SECONDS * 1000),
          elapsedSeconds: Math.max(0, Math.floor((now - o.queuedAt) / 1000)),
          breached: now - o.queuedAt > EXECUTION_SLA_SECONDS * 1000
        }
      : null
  return {
    orderId: o.orderId,
    symbol: o.symbol,
    name: o.name,
    exchange: o.exchange,
    orderType: o.orderType,
    limitPrice: o.limitPrice === null ? null : price4ToWire(o.limitPrice),
    stopPrice: o.stopPrice === null ? null : price4ToWire(o.stopPrice),
    cancelable: isCancelable(o),
    replaceable: o.status === "WORKING",
    type: o.side,
    status: wireStatus(o),
    canonicalStatus: o.status,
    settlementStatus: o.settlementStatus,
    quoteId: o.quoteId,
    quoteExpiresAt: iso(o.quoteExpiresAt),
    quoteUsdPrice: o.quoteUsdPrice === null ? null : price4ToWire(o.quoteUsdPrice),
    clientOrderId: o.clientOrderId,
    omsStatus: null,
    timeInForce: o.timeInForce,
    ...(o.expiresAt === undefined || o.expiresAt === null ? {} : { expiresAt: isoOf(o.expiresAt) }),
    filledQuantity: filled,
    remainingQuantity: o.quantity - filled,
    averageFillPrice: avgPrice === null ? null : price4ToWire(avgPrice),
    executionVenue: o.fills.length > 0 ? "SOKONI-SIM-DESK" : null,
    lastExecutionReportId: lastFill?.reportId ?? null,
    executionSla: sla,
    quantity: o.quantity,
    priceAtOrder: price4ToWire(o.priceAtOrder),
    usdPriceAtOrder: price4ToWire(usdPrice4(o.priceAtOrder, o.fxRate)),
    fxRateAtOrder: rate6ToWire(o.fxRate),
    fxSource: o.fxSource,
    fxRateAsOf: iso(o.fxRateAsOf),
    // The contract's direction (D-006, E-220): from USD to the local currency, `rate` local units per USD, as
    // fxRateAtOrder; none for an instrument that trades in USD.
    fxConversion:
      o.localCurrency === "USD"
        ? null
        : { fromCurrency: "USD", toCurrency: o.localCurrency, rate: rate6ToWire(o.fxRate), source: o.fxSource, asOf: isoOf(o.fxRateAsOf) },
    fee: centsToWire(o.fee),
    baseFee: centsToWire(o.baseFee),
    partnerMarkupFee: centsToWire(o.partnerMarkupFee),
    totalAmount: centsToWire(o.totalAmount),
    currency: "USD",
    localCurrency: o.localCurrency,
    rejectionCode: o.rejectionCode,
    rejectionReason: o.rejectionReason,
    cancelledAt: iso(o.cancelledAt),
    settledAt: iso(o.settledAt),
    createdAt: isoOf(o.createdAt),
    orderLifecycle: o.orderLifecycle,
    cancelReason: o.cancelReason
  }
}

export type OrderWire = Schemas["Order"]
