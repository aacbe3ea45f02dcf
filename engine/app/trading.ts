/**
 * Trading: placing MARKET orders against a quote, reading orders, and applying the desk's decisions (fill, reject).
 * Owns: the quote checks, escrow at placement, order events, the desk queue and the desk.fill job.
 * Does not own: the order arithmetic (domain/order.ts), when the desk decides (sim/desk.ts), prices (market feed).
 * Resting orders (LIMIT/STOP), cancel and replace come with the trading issue; they are refused clearly for now.
 */
import { Context, Effect, Layer, Option } from "effect"
import { findExchange, isOpen } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { FX_SOURCE } from "../domain/fx.ts"
import { refuseTrading } from "../domain/subaccount.ts"
import { BASE_FEE_BPS, centsToWire, parseScaled, price4ToWire, quantityForCash, usdPrice4 } from "../domain/money.ts"
import {
  applyFill,
  applyCancel,
  applyReject,
  CANCEL_REASON_PARTNER,
  awaitsDesk,
  type OrderRecord,
  orderToWire,
  placeMarket,
  remainingQuantity,
  type OrderStatusFilter,
  type Side,
  type TimeInForce
} from "../domain/order.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { PlantedDefects } from "../sim/defects.ts"
import { DESK_FILL_JOB, type DeskFillJob, ExecutionDesk } from "../sim/desk.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import type { Schemas } from "../contract/wire.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { Orders, type QuoteDoc, Quotes, timeSortKey } from "./docs.ts"
import { findSubAccount } from "./accounts.ts"
import { applyOrderTransition, holding, type OrderTransition, walletBalance } from "./ledger.ts"
import { resolveInstrument } from "./market.ts"
import type { Principal } from "./principal.ts"

export interface TradeInput {
  readonly symbol: string
  readonly exchange?: string | undefined
  readonly type: Side
  readonly orderType?: string | undefined
  readonly quantity?: number | undefined
  readonly cashValue?: number | undefined
  readonly quoteId?: string | undefined
  readonly limitPrice?: number | undefined
  readonly stopPrice?: number | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: string | undefined
  readonly clientOrderId?: string | undefined
}

export interface OrderListQuery {
  readonly status?: OrderStatusFilter | undefined
  /** Only this order (`GET /test-tools/orders?orderId=`). */
  readonly orderId?: string | undefined
  readonly symbol?: string | undefined
  /** Epoch millis, inclusive (decoded by the route: dates cover the whole UTC day). */
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface FillRequest {
  readonly price?: number | undefined
  readonly quantity?: number | undefined
}

/** Orders and users scan at most this many records per request (spec Limits). */
const SCAN_LIMIT = 1000
/** Index of orders handed to the desk (entries stay; the queue view keeps those still awaiting a decision). */
const DESK_QUEUE = "deskQueue"
/** `accountType` on master-account events (decision D-010). */
const MASTER = "MASTER"

const accountFields = (o: OrderRecord) => (o.account === "master" ? { accountType: MASTER } : { subAccountId: o.account })

/** The planted defect fee-rounding: the base fee rounded up to the next cent, and the total and escrow with it. */
const feeRoundedUp = (order: OrderRecord): OrderRecord => {
  const baseFee = Number((BigInt(order.gross) * BigInt(BASE_FEE_BPS) + 9_999n) / 10_000n)
  const fee = baseFee + order.partnerMarkupFee
  const totalAmount = order.side === "BUY" ? order.gross + fee : order.gross - fee
  return { ...order, baseFee, fee, totalAmount, escrow: order.side === "BUY" ? totalAmount : 0 }
}

export class TradingService extends Context.Service<
  TradingService,
  {
    readonly trade: (principal: Principal, account: string, input: TradeInput) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly listOrders: (principal: Principal, account: string, query: OrderListQuery) => Effect.Effect<Schemas["OrderList"], ApiFailure | StoreError>
    readonly getOrder: (principal: Principal, orderId: string) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly deskQueue: Effect.Effect<ReadonlyArray<Schemas["Order"]>, StoreError>
    readonly deskFill: (orderId: string, request: FillRequest) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly deskReject: (orderId: string, code: string, reason: string) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly cancel: (principal: Principal, orderId: string) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
  }
>()("sokoni/TradingService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    // TEST ONLY (sim/defects.ts, E-190): empty unless `serve --plant-defect` named fee-rounding or quote-ttl.
    const planted = yield* PlantedDefects
    const entropy = yield* Entropy
    const events = yield* EventLog
    const desk = yield* ExecutionDesk
    const scheduler = yield* Scheduler

    const saveOrder = (tx: Tx, o: OrderRecord) => Orders.put(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o)

    const trade = Effect.fn("TradingService.trade")(function* (principal: Principal, account: string, input: TradeInput) {
      const orderType = input.orderType ?? "MARKET"
      if (orderType !== "MARKET") {
        return yield* Effect.fail(
          fail("VALIDATION_ERROR", `orderType ${orderType} is not simulated yet: this engine version takes MARKET orders`, { param: "orderType" })
        )
      }
      if (input.quoteId === undefined)
        return yield* Effect.fail(fail("QUOTE_REQUIRED", "a MARKET order needs a quoteId from GET /quote/{symbol}", { param: "quoteId" }))
      if ((input.quantity === undefined) === (input.cashValue === undefined)) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "give exactly one of quantity or cashValue", { params: ["quantity", "cashValue"] }))
      }
      if (input.quantity !== undefined && (!Number.isSafeInteger(input.quantity) || input.quantity <= 0)) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" }))
      }
      const cashValue = input.cashValue === undefined ? undefined : parseScaled(input.cashValue, 2)
      if (input.cashValue !== undefined && (cashValue === undefined || cashValue <= 0)) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "cashValue must be a positive USD amount with at most 2 decimals", { param: "cashValue" }))
      }
      const instrument = yield* liftFailure(resolveInstrument(input.symbol, input.exchange))
      const exchange = findExchange(instrument.exchange)
      const quoteId = input.quoteId

      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          if (account !== "master") yield* liftFailure(refuseTrading(yield* findSubAccount(tx, principal.partition, account)))
          const found = yield* Quotes.get(tx, quoteId)
          if (Option.isNone(found) || found.value.partition !== principal.partition) {
            return yield* Effect.fail(fail("QUOTE_NOT_FOUND", `quote ${quoteId} was never issued to this key`, { param: "quoteId" }))
          }
          const quote = found.value
          if (quote.account !== account) {
            return yield* Effect.fail(
              fail("QUOTE_SCOPE_MISMATCH", "the quote was issued for another account: fetch it with the subAccountId you trade on", { param: "quoteId" })
            )
          }
          // The planted quote-ttl defect forgets expiry (by the clock or the expiry job) and keeps single use.
          const expired = planted.has("quote-ttl") ? false : quote.status !== "OPEN" || now >= quote.expiresAt
          if (quote.status === "USED" || expired) {
            return yield* Effect.fail(
              fail("STALE_QUOTE", quote.status === "USED" ? "the quote was already used" : "the quote expired (60 s TTL); fetch a new one", {
                param: "quoteId"
              })
            )
          }
          const mismatch = quoteMismatch(quote, instrument.symbol, input.type, input.quantity, cashValue)
          if (mismatch !== undefined) {
            return yield* Effect.fail(fail("QUOTE_ORDER_MISMATCH", `the quote does not match the order's ${mismatch}`, { param: mismatch }))
          }
          if (exchange !== undefined && !isOpen(exchange, now)) {
            return yield* Effect.fail(fail("MARKET_CLOSED", `${exchange.code} is closed at ${isoAt(now)}`))
          }
          const quantity = input.quantity ?? quote.derivedQuantity ?? quantityFromCash(cashValue ?? 0, quote.price, quote.rate, principal.markupBps, input.type)
          if (quantity <= 0)
            return yield* Effect.fail(fail("VALIDATION_ERROR", "cashValue does not buy a single unit at the quoted price", { param: "cashValue" }))
          const placed = placeMarket({
            orderId: yield* entropy.id("ord"),
            partition: principal.partition,
            account,
            externalId: null,
            instrument,
            side: input.type,
            quantity,
            price: quote.price,
            rate: quote.rate,
            rateAsOf: quote.issuedAt,
            fxSource: FX_SOURCE,
            localCurrency: exchange?.currency ?? "USD",
            markupBps: principal.markupBps,
            quote: { quoteId, expiresAt: quote.expiresAt },
            clientOrderId: input.clientOrderId ?? null,
            timeInForce: input.timeInForce ?? null,
            now
          })
          const order = planted.has("fee-rounding") ? feeRoundedUp(placed) : placed
          if (order.side === "BUY") {
            const balance = yield* walletBalance(tx, principal.partition, account)
            if (balance < order.totalAmount) {
              return yield* Effect.fail(
                fail("INSUFFICIENT_FUNDS", `the order needs ${centsToWire(order.totalAmount)} USD and the wallet holds ${centsToWire(balance)} USD`)
              )
            }
            yield* applyOrderTransition(tx, principal.partition, {
              ...transitionOf(order, "ORDER_PLACED", order.escrow, now),
              movements: { wallet: -order.totalAmount, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }
            })
          } else {
            const h = yield* holding(tx, principal.partition, account, order.symbol)
            if (h.quantity - h.reserved < quantity) {
              return yield* Effect.fail(fail("INSUFFICIENT_HOLDINGS", `the account holds ${h.quantity - h.reserved} free units of ${order.symbol}`))
            }
            yield* applyOrderTransition(tx, principal.partition, {
              ...transitionOf(order, "ORDER_PLACED", 0, now),
              movements: { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: quantity }
            })
          }
          yield* Quotes.put(tx, quoteId, quote.partition, timeSortKey(quote.issuedAt, quoteId), { ...quote, status: "USED" })
          yield* saveOrder(tx, order)
          yield* events.append(tx, principal.partition, "order.pending", {
            orderId: order.orderId,
            ...accountFields(order),
            externalId: order.externalId,
            type: order.side,
            symbol: order.symbol,
            quantity: order.quantity,
            priceAtOrder: price4ToWire(order.priceAtOrder),
            usdPriceAtOrder: price4ToWire(usdPrice4(order.priceAtOrder, order.fxRate)),
            gross: centsToWire(order.gross),
            baseFee: centsToWire(order.baseFee),
            partnerMarkupFee: centsToWire(order.partnerMarkupFee),
            fee: centsToWire(order.fee),
            ...(order.side === "BUY" ? { totalCost: centsToWire(order.totalAmount) } : {}),
            status: "PENDING"
          })
          yield* tx.put(DESK_QUEUE, { id: order.orderId, partition: "global", sortKey: timeSortKey(now, order.orderId), body: { orderId: order.orderId } })
          yield* desk.onQueued(tx, order, now)
          return orderToWire(order, now)
        })
      )
    })

    const listOrders = Effect.fn("TradingService.listOrders")(function* (principal: Principal, account: string, query: OrderListQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const status = query.status
      const wanted = status === "COMPLETED" ? "FILLED" : status === "PROCESSING" ? "PENDING" : status
      const { from, to } = query
      if (from !== undefined && to !== undefined && from > to)
        return yield* Effect.fail(fail("VALIDATION_ERROR", "from is after to", { params: ["from", "to"] }))
      const scope = `orders|${principal.partition}|${account}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      const symbol = query.symbol?.toUpperCase()
      const now = yield* clock.now
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          // a sub-account's orders stay readable whatever its status; an unknown or foreign id is 404
          if (account !== "master") yield* findSubAccount(tx, principal.partition, account)
          const scanned = yield* tx.list(Orders.name, { partition: principal.partition, after, limit: SCAN_LIMIT + 1, order: "desc" })
          const window = scanned.slice(0, SCAN_LIMIT)
          const matches: Array<OrderRecord> = []
          let lastKey: string | undefined
          for (const doc of window) {
            const o = doc.body as OrderRecord
            if (matches.length === limit) break
            lastKey = doc.sortKey
            if (o.account !== account) continue
            if (query.orderId !== undefined && o.orderId !== query.orderId) continue
            if (wanted !== undefined && o.status !== wanted) continue
            if (symbol !== undefined && o.symbol !== symbol && o.symbol.split(".")[0] !== symbol) continue
            if (from !== undefined && o.createdAt < from) continue
            if (to !== undefined && o.createdAt > to) continue
            matches.push(o)
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

    const findOrder = (tx: ReadTx, orderId: string) =>
      Effect.flatMap(
        Orders.get(tx, orderId),
        Option.match({ onNone: () => Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found`)), onSome: Effect.succeed })
      )

    const getOrder = Effect.fn("TradingService.getOrder")(function* (principal: Principal, orderId: string) {
      if (principal.environment === "sandbox") {
        return yield* Effect.fail(
          fail("FORBIDDEN", "GET /orders/{orderId} is not available in the sandbox (spec: sandbox unsupported); use GET /orders or GET /test-tools/orders")
        )
      }
      const now = yield* clock.now
      const order = yield* store.read((tx) => findOrder(tx, orderId))
      if (order.partition !== principal.partition) return yield* Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found`))
      return orderToWire(order, now)
    })

    /** Fills inside `tx`; shared by the control API and the auto desk's job. */
    const fillIn = (tx: Tx, orderId: string, request: FillRequest) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const order = yield* findOrder(tx, orderId)
        const price = request.price === undefined ? order.priceAtOrder : parseScaled(request.price, 4)
        if (price === undefined) return yield* Effect.fail(fail("VALIDATION_ERROR", "price must be positive with at most 4 decimals", { param: "price" }))
        const transition = yield* liftFailure(
          applyFill(order, { reportId: yield* entropy.id("exr"), quantity: request.quantity ?? remainingQuantity(order), price, now })
        )
        const next = transition.order
        yield* applyOrderTransition(tx, next.partition, {
          ...transitionOf(next, "ORDER_FILLED", next.escrow - order.escrow, now),
          movements: transition.movements
        })
        yield* saveOrder(tx, next)
        if (next.status === "FILLED") {
          const filledGross = next.fills.reduce((s, f) => s + f.gross, 0)
          const filledFee = next.fills.reduce((s, f) => s + f.fee, 0)
          const payload = {
            ...decisionPayload(next, "FILLED", filledFee, now),
            ...(next.account === "master" ? { accountType: MASTER } : {}),
            settlementUsdPrice: price4ToWire(usdPrice4(price, next.fxRate)),
            ...(next.side === "BUY" ? { totalCost: centsToWire(filledGross + filledFee) } : { proceeds: centsToWire(filledGross - filledFee) })
          }
          yield* events.append(tx, next.partition, "order.filled", payload)
          yield* events.append(tx, next.partition, "trade.settled", payload)
        }
        return orderToWire(next, now)
      })

    const deskFill = Effect.fn("TradingService.deskFill")(function* (orderId: string, request: FillRequest) {
      return yield* store.transact((tx) => fillIn(tx, orderId, request))
    })

    const deskReject = Effect.fn("TradingService.deskReject")(function* (orderId: string, code: string, reason: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const order = yield* findOrder(tx, orderId)
          const transition = yield* liftFailure(applyReject(order, code, reason, now))
          const next = transition.order
          yield* applyOrderTransition(tx, next.partition, {
            ...transitionOf(next, "ORDER_REJECTED", next.escrow - order.escrow, now),
            movements: transition.movements
          })
          yield* saveOrder(tx, next)
          const payload = {
            ...decisionPayload(
              next,
              "REJECTED",
              next.fills.reduce((sum, f) => sum + f.fee, 0),
              now
            ),
            rejectionCode: code,
            rejectionReason: reason
          }
          yield* events.append(tx, next.partition, "order.rejected", payload)
          yield* events.append(tx, next.partition, "trade.rejected", payload)
          return orderToWire(next, now)
        })
      )
    })

    /** The partner cancels one of its PENDING or WORKING orders, master or sub-account (D-033): money back first. */
    const cancel = Effect.fn("TradingService.cancel")(function* (principal: Principal, orderId: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const order = yield* findOrder(tx, orderId)
          if (order.partition !== principal.partition) return yield* Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found`))
          const transition = yield* liftFailure(applyCancel(order, CANCEL_REASON_PARTNER, now))
          const next = transition.order
          yield* applyOrderTransition(tx, next.partition, {
            ...transitionOf(next, "ORDER_CANCELLED", next.escrow - order.escrow, now),
            movements: transition.movements
          })
          yield* saveOrder(tx, next)
          yield* events.append(tx, next.partition, "order.cancelled", {
            orderId: next.orderId,
            subAccountId: next.account === "master" ? null : next.account,
            externalId: next.externalId,
            type: next.side,
            symbol: next.symbol,
            quantity: next.quantity,
            status: "CANCELLED",
            ...(next.side === "BUY" ? { refunded: centsToWire(transition.movements.wallet) } : {}),
            currency: "USD",
            orderLifecycle: next.orderLifecycle,
            cancelReason: next.cancelReason
          })
          return orderToWire(next, now)
        })
      )
    })

    /** PENDING and PARTIALLY_FILLED orders of every partner, oldest first: what the desk has to decide. */
    const deskQueue = Effect.gen(function* () {
      const now = yield* clock.now
      const orders = yield* store.read((tx) =>
        Effect.gen(function* () {
          const entries = yield* tx.list(DESK_QUEUE, { partition: "global", limit: 100_000, order: "asc" })
          const loaded = yield* Effect.forEach(entries, (e) => Orders.get(tx, e.id))
          return loaded.flatMap((o) => (Option.isSome(o) && awaitsDesk(o.value) ? [o.value] : []))
        })
      )
      return orders.map((o) => orderToWire(o, now))
    })

    yield* scheduler.register(DESK_FILL_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { orderId } = payload as DeskFillJob
        const order = yield* Orders.get(tx, orderId)
        // decided meanwhile (manual action, cancel) or wiped by a sandbox reset: nothing to do
        if (Option.isNone(order) || !awaitsDesk(order.value)) return
        yield* fillIn(tx, orderId, {})
      })
    )

    return TradingService.of({ trade, listOrders, getOrder, deskQueue, deskFill, deskReject, cancel })
  })

  static readonly layer = Layer.effect(TradingService, TradingService.make)
}

/** The ledger's view of an order transition (its money movements are added by the caller). */
const transitionOf = (o: OrderRecord, kind: OrderTransition["kind"], escrowDelta: number, at: number) => ({
  account: o.account,
  symbol: o.symbol,
  orderId: o.orderId,
  side: o.side,
  kind,
  escrowDelta,
  at
})

/** Fields order.filled and order.rejected share (spec "Payloads"). */
const decisionPayload = (o: OrderRecord, status: "FILLED" | "REJECTED", feeCents: number, now: number) => ({
  orderId: o.orderId,
  subAccountId: o.account === "master" ? null : o.account,
  externalId: o.externalId,
  type: o.side,
  symbol: o.symbol,
  exchange: o.exchange,
  quantity: o.quantity,
  priceAtOrder: price4ToWire(o.priceAtOrder),
  usdPriceAtOrder: price4ToWire(usdPrice4(o.priceAtOrder, o.fxRate)),
  feeAmount: centsToWire(feeCents),
  status,
  settledAt: isoAt(now)
})

/**
 * Which field of the order differs from what its quote was issued for (spec QUOTE_ORDER_MISMATCH: symbol, side,
 * quantity or cashValue). A quote binds what it names: a side, and either a quantity or a cashValue, never the other.
 */
export const quoteMismatch = (
  quote: QuoteDoc,
  symbol: string,
  side: Side,
  quantity: number | undefined,
  cashValue: number | undefined
): "symbol" | "side" | "quantity" | "cashValue" | undefined => {
  if (quote.symbol !== symbol) return "symbol"
  if (quote.side !== null && quote.side !== side) return "side"
  if (quote.quantity !== null && quote.quantity !== quantity) return "quantity"
  if (quote.cashValue !== null && quote.cashValue !== cashValue) return "cashValue"
  return undefined
}

/** Whole units a cashValue buys (BUY: gross + fee within cash; SELL: gross within cash). */
const quantityFromCash = (cash: number, price: number, rate: number, markupBps: number, side: Side): number =>
  side === "BUY" ? quantityForCash(cash, price, rate, markupBps) : quantityForCash(cash, price, rate, 0)
