/**
 * A partner's orders: reading them (lists, one order) and the partner's own changes, cancel (D-033) and replace
 * (D-035, D-284), as dispatchers around domain/trading/decide-lifecycle.ts.
 * Owns: what each command loads and the list's scan. Does not own the rules.
 */
import { Effect } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { findExchange } from "../../domain/calendar.ts"
import { fail, liftFailure } from "../../domain/errors.ts"
import type { OrderRecord } from "../../domain/order.ts"
import { matchesStatus, orderToWire } from "../../domain/order-wire.ts"
import type { OrderListQuery, ReplaceRequest } from "../../domain/trading/commands.ts"
import { decideCancel, decideReplace } from "../../domain/trading/decide-lifecycle.ts"
import { findSubAccount } from "../accounts.ts"
import { checkLimit, decodeCursor, encodeCursor } from "../cursor.ts"
import { Orders } from "../docs.ts"
import { holding, walletBalance } from "../ledger.ts"
import type { Principal } from "../principal.ts"
import type { TradingDeps } from "./deps.ts"
import { findOrder } from "./desk.ts"
import { writePlan } from "./write-plan.ts"

/** Orders and users scan at most this many records per request (spec Limits). */
const SCAN_LIMIT = 1000

/** Whether the qualified `stored` symbol is the filter `symbol` (qualified, or its bare ticker). */
const namedBy = (stored: string, symbol: string) => stored === symbol || stored.split(".")[0] === symbol

export const ordering = (d: TradingDeps) => {
  /** Whether `o` is one of the orders `query` asks for on `account` (`symbol` upper-cased). */
  const wanted = (o: OrderRecord, account: string, query: OrderListQuery, status: string | undefined, symbol: string | undefined) =>
    o.account === account &&
    (query.orderId === undefined || o.orderId === query.orderId) &&
    matchesStatus(o, status) &&
    // the symbol traded, or the listing's symbol now (an order before a symbol change keeps what it traded: D-342)
    (symbol === undefined || namedBy(o.symbol, symbol) || namedBy(d.symbols.currentSymbol(o.symbol), symbol)) &&
    (query.from === undefined || o.createdAt >= query.from) &&
    (query.to === undefined || o.createdAt <= query.to)

  const listOrders = Effect.fn("TradingService.listOrders")(function* (principal: Principal, account: string, query: OrderListQuery) {
    const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
    const status = query.status === "COMPLETED" ? "FILLED" : query.status === "PROCESSING" ? "PENDING" : query.status
    const { from, to } = query
    if (from !== undefined && to !== undefined && from > to) return yield* Effect.fail(fail("VALIDATION_ERROR", "from is after to", { params: ["from", "to"] }))
    const scope = `orders|${principal.partition}|${account}`
    const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
    const symbol = query.symbol?.toUpperCase()
    const now = yield* d.clock.nowHere()
    return yield* d.store.read((tx) =>
      Effect.gen(function* () {
        // a sub-account's orders stay readable whatever its status; an unknown or foreign id is 404
        if (account !== "master") yield* findSubAccount(tx, principal.partition, account)
        const scanned = yield* Orders.listDocs(tx, { partition: principal.partition, after, limit: SCAN_LIMIT + 1, order: "desc" })
        const window = scanned.slice(0, SCAN_LIMIT)
        const matches: Array<OrderRecord> = []
        let lastKey: string | undefined
        for (const doc of window) {
          if (matches.length === limit) break
          lastKey = doc.sortKey
          const o = doc.body
          if (wanted(o, account, query, status, symbol)) matches.push(o)
        }
        const hasMore = lastKey !== undefined && (window.at(-1)?.sortKey !== lastKey || scanned.length > SCAN_LIMIT)
        const list: Schemas["OrderList"] = {
          orders: matches.map((o) => orderToWire(o, now)),
          count: matches.length,
          hasMore,
          nextCursor: hasMore && lastKey !== undefined ? encodeCursor(scope, lastKey) : null
        }
        return list
      })
    )
  })

  const getOrder = Effect.fn("TradingService.getOrder")(function* (principal: Principal, orderId: string) {
    if (principal.environment === "sandbox") {
      return yield* Effect.fail(
        fail("FORBIDDEN", "GET /orders/{orderId} is not available in the sandbox (spec: sandbox unsupported); use GET /orders or GET /test-tools/orders")
      )
    }
    const now = yield* d.clock.nowHere()
    const order = yield* d.store.read((tx) => findOrder(tx, orderId))
    if (order.partition !== principal.partition) return yield* Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found`))
    return orderToWire(order, now)
  })

  /** The partner cancels one of its PENDING or WORKING orders, master or sub-account (D-033): money back first. */
  const cancel = Effect.fn("TradingService.cancel")(function* (principal: Principal, orderId: string) {
    return yield* d.store.transact((tx) =>
      Effect.gen(function* () {
        const now = yield* d.clock.nowHere()
        const order = yield* findOrder(tx, orderId)
        const plan = yield* liftFailure(decideCancel(order, principal.partition, now))
        return yield* writePlan(d, tx, order.partition, plan, now)
      })
    )
  })

  /** Replace (D-035, D-284): only on the sub-account path ("master" is no sub-account, so /users/master finds nothing). */
  const replace = Effect.fn("TradingService.replace")(function* (principal: Principal, account: string, orderId: string, input: ReplaceRequest) {
    const now = yield* d.clock.nowHere()
    return yield* d.store.transact((tx) =>
      Effect.gen(function* () {
        const subAccount = yield* findSubAccount(tx, principal.partition, account)
        const order = yield* findOrder(tx, orderId)
        const owned = order.partition === principal.partition && order.account === account
        const state = {
          subAccount,
          order,
          partition: principal.partition,
          exchange: findExchange(order.exchange),
          // what the change may need: cash for a BUY's extra escrow, free units for a SELL's extra reservation
          available: owned && order.side === "BUY" ? yield* walletBalance(tx, order.partition, account) : 0,
          freeUnits: owned && order.side === "SELL" ? yield* freeUnits(tx, order.partition, account, order.symbol) : 0
        }
        const plan = yield* liftFailure(decideReplace(state, input, now))
        return yield* writePlan(d, tx, order.partition, plan, now)
      })
    )
  })

  return { listOrders, getOrder, cancel, replace }
}

const freeUnits = (tx: Parameters<typeof holding>[0], partition: string, account: string, symbol: string) =>
  Effect.map(holding(tx, partition, account, symbol), (h) => h.quantity - h.reserved)
