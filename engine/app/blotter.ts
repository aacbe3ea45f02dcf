/**
 * OrderBlotter: `GET /orders/blotter` (D-032), sub-account orders across customers, newest first. Like the service,
 * a page scans at most 20 customers and 1,000 orders and returns up to `limit` matches; `nextCursor` continues the
 * scan where it stopped (bound to the partner, environment and filters). Owns the scan and the item; does not own
 * orders (app/trading/) nor the master account's list (`GET /orders`).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import type { OrderRecord, OrderStatusFilter } from "../domain/order.ts"
import { filledQuantity, remainingQuantity } from "../domain/order-transitions.ts"
import { matchesStatus, orderToWire } from "../domain/order-wire.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError } from "../store/port.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { Orders } from "./docs.ts"
import { isSandboxPartition, type Principal } from "./principal.ts"
import { Symbols } from "./symbols.ts"

/** Whether the qualified `stored` symbol is the filter `symbol` (qualified, or its bare ticker). */
const namedBy = (stored: string, symbol: string) => stored === symbol || stored.split(".")[0] === symbol

export const BLOTTER_MAX_CUSTOMERS = 20
export const BLOTTER_MAX_SCANNED = 1_000

export interface BlotterQuery {
  readonly status?: OrderStatusFilter | "ALL" | undefined
  readonly symbol?: string | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface Scanned {
  readonly sortKey: string
  readonly order: OrderRecord
}

/**
 * One page of the scan over `newestFirst` (master orders skipped): stops at `limit` matches, at the 21st distinct
 * customer or after BLOTTER_MAX_SCANNED orders; `resumeAfter` is the last order looked at when more may follow. Pure.
 */
export const scanBlotter = (
  newestFirst: ReadonlyArray<Scanned>,
  limit: number,
  matches: (o: OrderRecord) => boolean
): { readonly items: ReadonlyArray<OrderRecord>; readonly scanned: number; readonly resumeAfter: string | undefined } => {
  const customers = new Set<string>()
  const items: Array<OrderRecord> = []
  let scanned = 0
  let last: string | undefined
  for (const { sortKey, order } of newestFirst) {
    if (items.length === limit || scanned === BLOTTER_MAX_SCANNED) return { items, scanned, resumeAfter: last }
    if (order.account === "master") {
      last = sortKey
      continue
    }
    if (!customers.has(order.account) && customers.size === BLOTTER_MAX_CUSTOMERS) return { items, scanned, resumeAfter: last }
    customers.add(order.account)
    scanned++
    last = sortKey
    if (matches(order)) items.push(order)
  }
  return { items, scanned, resumeAfter: undefined }
}

const itemOf = (o: OrderRecord, now: number): Schemas["BlotterItem"] => {
  const wire = orderToWire(o, now)
  return {
    orderId: o.orderId,
    subAccountId: o.account,
    externalId: o.externalId,
    symbol: wire.symbol,
    type: wire.type,
    status: wire.status,
    canonicalStatus: wire.canonicalStatus,
    settlementStatus: wire.settlementStatus,
    quantity: o.quantity,
    filledQuantity: filledQuantity(o),
    remainingQuantity: remainingQuantity(o),
    currency: "USD",
    createdAt: wire.createdAt,
    filledAt: o.filledAt === null ? null : isoAt(o.filledAt),
    settledAt: wire.settledAt,
    rejectionCode: o.rejectionCode,
    orderLifecycle: o.orderLifecycle,
    cancelReason: o.cancelReason
  }
}

export class OrderBlotter extends Context.Service<
  OrderBlotter,
  { readonly page: (principal: Principal, query: BlotterQuery) => Effect.Effect<Schemas["BlotterResponse"], ApiFailure | StoreError> }
>()("sokoni/OrderBlotter") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const symbols = yield* Symbols

    const page = Effect.fn("OrderBlotter.page")(function* (principal: Principal, query: BlotterQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { from, to } = query
      if (from !== undefined && to !== undefined && from > to) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "from is after to", { param: "from", params: ["from", "to"] }))
      }
      const wanted = query.status === undefined || query.status === "ALL" ? undefined : query.status === "COMPLETED" ? "FILLED" : query.status
      const symbol = query.symbol?.toUpperCase()
      const scope = `blotter|${principal.partition}|${wanted ?? ""}|${symbol ?? ""}|${from ?? ""}|${to ?? ""}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      const now = yield* clock.nowHere()
      const docs = yield* store.read((tx) => Orders.listDocs(tx, { partition: principal.partition, after, limit: 100_000, order: "desc" }))
      const result = scanBlotter(
        docs.map((d) => ({ sortKey: d.sortKey, order: d.body })),
        limit,
        (o) =>
          matchesStatus(o, wanted) &&
          // the symbol traded, or the listing's symbol now (D-342)
          (symbol === undefined || namedBy(o.symbol, symbol) || namedBy(symbols.currentSymbol(o.symbol), symbol)) &&
          (from === undefined || o.createdAt >= from) &&
          (to === undefined || o.createdAt <= to)
      )
      const answer: Schemas["BlotterResponse"] = {
        orders: result.items.map((o) => itemOf(o, now)),
        count: result.items.length,
        hasMore: result.resumeAfter !== undefined,
        nextCursor: result.resumeAfter === undefined ? null : encodeCursor(scope, result.resumeAfter),
        ordering: "createdAt_desc",
        scope: "sub_accounts",
        snapshotModel: "per_customer",
        scannedOrders: result.scanned,
        sandbox: isSandboxPartition(principal.partition)
      }
      return answer
    })

    return OrderBlotter.of({ page })
  })

  static readonly layer = Layer.effect(OrderBlotter, OrderBlotter.make)
}
