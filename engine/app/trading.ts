/**
 * Trading: placing orders, reading them, and applying the desk's decisions (fill, reject); cancel, replace, triggers
 * and expiry. MARKET orders are quote-gated and go straight to the desk (PENDING); LIMIT, STOP and STOP_LIMIT rest
 * WORKING (BUY escrow at the reference price, SELL shares reserved) until their trigger job sees the delayed price
 * reach them (then PENDING at the desk), and DAY/GTD orders expire at their deadline (D-004, D-031, D-035, D-280..D-284, E-160, E-161).
 * Owns: the quote checks, escrow at placement, order events, the desk queue, and the desk.fill, order.trigger and
 * order.expire jobs. Does not own: the order arithmetic and state machine (domain/order.ts), when the desk decides
 * (sim/desk.ts), prices (market feed), calendars (domain/calendar.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import { type Exchange, findExchange, isOpen, nextSessionAfter, sessionToday } from "../domain/calendar.ts"
import { ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { FX_SOURCE, fxAsOf, rateFor } from "../domain/fx.ts"
import { refuseTrading } from "../domain/subaccount.ts"
import { BASE_FEE_BPS, centsToWire, parseScaled, price4ToWire, quantityForCash, usdPrice4 } from "../domain/money.ts"
import {
  applyCancel,
  applyExpire,
  applyFill,
  applyReject,
  applyRejectAtTrigger,
  applyReplace,
  applyTrigger,
  isTerminal,
  matchesStatus,
  placeResting,
  type RestingType,
  triggers,
  triggerShortfall,
  applySettlementFailure,
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
import { DESK_FILL_JOB, DESK_STEP_JOB, type DeskFillJob, type DeskStepJob, ExecutionDesk, SETTLEMENT_FAILED_CODE } from "../sim/desk.ts"
import { PlantedDefects } from "../sim/defects.ts"
import { Entropy } from "../sim/random.ts"
import { DELAY_SECONDS, MarketFeed } from "../sim/market-feed.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import type { Schemas } from "../contract/wire.ts"
import type { Instrument } from "../domain/instruments.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { Orders, type QuoteDoc, quoteKeepUntil, Quotes, timeSortKey, UNIT_CHANGES } from "./docs.ts"
import { findSubAccount } from "./accounts.ts"
import { applyOrderTransition, holding, type OrderTransition, walletBalance } from "./ledger.ts"
import { Listings } from "./listings.ts"
import { Symbols } from "./symbols.ts"
import { nextRefresh } from "./price-alerts.ts"
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
    /** Custody settlement of a PENDING or PARTIALLY_FILLED order fails: the trade is unwound (D-290). */
    readonly deskFailSettlement: (orderId: string, reason: string) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly cancel: (principal: Principal, orderId: string) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    readonly replace: (
      principal: Principal,
      account: string,
      orderId: string,
      input: ReplaceRequest
    ) => Effect.Effect<Schemas["Order"], ApiFailure | StoreError>
    /**
     * Rejects, in `tx`, every order on `symbol` still awaiting the desk (money and units back first, order.rejected
     * as the desk's rejection): what a corporate action does to the listing's open orders (D-304). Their ids.
     */
    readonly rejectOpenIn: (tx: Tx, symbol: string, code: string, reason: string) => Effect.Effect<ReadonlyArray<string>, ApiFailure | StoreError>
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
    const feed = yield* MarketFeed
    const listings = yield* Listings
    const symbols = yield* Symbols

    /** A symbol change committed by another process since this one resolved the symbol (E-230): the old symbol is 404. */
    const renamedMeanwhile = (tx: Tx, asked: string, instrument: Instrument) =>
      Effect.flatMap(symbols.symbolIn(tx, instrument), (committed) =>
        committed === instrument.symbol ? Effect.void : Effect.fail(fail("NOT_FOUND", `symbol ${asked} was not found: it changed to ${committed}`))
      )

    const saveOrder = (tx: Tx, o: OrderRecord) => Orders.put(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o)

    /** The order enters the dealing desk's queue: `order.pending`, the queue entry, and the desk's policy. */
    const toDesk = (tx: Tx, order: OrderRecord, now: number) =>
      Effect.gen(function* () {
        yield* events.append(tx, order.partition, "order.pending", {
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
      })

    /** `order.cancelled` for a partner's cancel or an expiry (D-071): `refunded` on a BUY. */
    const cancelledEvent = (tx: Tx, next: OrderRecord, refunded: number) =>
      events.append(tx, next.partition, "order.cancelled", {
        orderId: next.orderId,
        subAccountId: next.account === "master" ? null : next.account,
        externalId: next.externalId,
        type: next.side,
        symbol: next.symbol,
        quantity: next.quantity,
        status: "CANCELLED",
        ...(next.side === "BUY" ? { refunded: centsToWire(refunded) } : {}),
        currency: "USD",
        orderLifecycle: next.orderLifecycle,
        cancelReason: next.cancelReason
      })

    /**
     * LIMIT, STOP, STOP_LIMIT (D-031, D-280): no quote; WORKING at once, BUY escrow at the reference price plus fees,
     * SELL shares reserved; looked at by its trigger job at every refresh, expired by its deadline job.
     */
    /**
     * Refuses a sub-account that may not trade (closed, frozen, KYC not VERIFIED); answers the externalId the order
     * carries (the spec's Order and order events: the sub-account's, null for the master account).
     */
    const tradingAccount = (tx: Tx, partition: string, account: string) =>
      account === "master"
        ? Effect.succeed(null)
        : Effect.flatMap(findSubAccount(tx, partition, account), (s) => Effect.as(liftFailure(refuseTrading(s)), s.externalId))

    const placeRestingOrder = (principal: Principal, account: string, input: TradeInput, orderType: RestingType) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const fields = yield* liftFailure(restingFields(orderType, input, now))
        const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange))
        const exchange = findExchange(instrument.exchange)
        const currency = exchange?.currency ?? "USD"
        const rate = rateFor(currency)
        if (rate === undefined) return yield* Effect.fail(fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`))
        const deadline = fields.timeInForce === "DAY" ? dayDeadline(exchange, now) : fields.expiresAt
        return yield* store.transact((tx) =>
          Effect.gen(function* () {
            yield* tx.lockPartition(principal.partition)
            const externalId = yield* tradingAccount(tx, principal.partition, account)
            yield* renamedMeanwhile(tx, input.symbol, instrument)
            const order = placeResting({
              orderId: yield* entropy.id("ord"),
              partition: principal.partition,
              account,
              externalId,
              instrument,
              orderType,
              side: input.type,
              quantity: fields.quantity,
              limitPrice: fields.limitPrice,
              stopPrice: fields.stopPrice,
              timeInForce: fields.timeInForce,
              expiresAt: fields.expiresAt,
              deadline,
              rate,
              rateAsOf: fxAsOf(now),
              fxSource: FX_SOURCE,
              localCurrency: currency,
              markupBps: principal.markupBps,
              clientOrderId: input.clientOrderId ?? null,
              now
            })
            yield* holdFor(tx, order, now)
            yield* saveOrder(tx, order)
            yield* scheduler.schedule(tx, TRIGGER_JOB, nextRefresh(now), { orderId: order.orderId } satisfies TriggerJob)
            if (deadline !== null) yield* scheduler.schedule(tx, EXPIRE_JOB, deadline, { orderId: order.orderId, deadline } satisfies ExpireJob)
            return orderToWire(order, now)
          })
        )
      })

    /** Escrows a new resting BUY (funds checked) or reserves a resting SELL's shares (holdings checked). */
    const holdFor = (tx: Tx, order: OrderRecord, now: number) =>
      Effect.gen(function* () {
        if (order.side === "BUY") {
          const balance = yield* walletBalance(tx, order.partition, order.account)
          if (balance < order.escrow) {
            return yield* Effect.fail(
              fail("INSUFFICIENT_FUNDS", `the order needs ${centsToWire(order.escrow)} USD and the wallet holds ${centsToWire(balance)} USD`)
            )
          }
          yield* applyOrderTransition(tx, order.partition, {
            ...transitionOf(order, "ORDER_PLACED", order.escrow, now),
            movements: { wallet: -order.escrow, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }
          })
        } else {
          const h = yield* holding(tx, order.partition, order.account, order.symbol)
          if (h.quantity - h.reserved < order.quantity) {
            return yield* Effect.fail(fail("INSUFFICIENT_HOLDINGS", `the account holds ${h.quantity - h.reserved} free units of ${order.symbol}`))
          }
          yield* applyOrderTransition(tx, order.partition, {
            ...transitionOf(order, "ORDER_PLACED", 0, now),
            movements: { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: order.quantity }
          })
        }
      })

    const trade = Effect.fn("TradingService.trade")(function* (principal: Principal, account: string, input: TradeInput) {
      const orderType = input.orderType ?? "MARKET"
      if (orderType !== "MARKET") return yield* placeRestingOrder(principal, account, input, orderType as RestingType)
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
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange))
      const exchange = findExchange(instrument.exchange)
      const quoteId = input.quoteId

      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          yield* tx.lockPartition(principal.partition)
          const now = yield* clock.now
          const externalId = yield* tradingAccount(tx, principal.partition, account)
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
          // A quote issued before its listing's symbol change binds the listing: it is honoured under the new symbol (D-343).
          const mismatch = quoteMismatch({ ...quote, symbol: symbols.currentSymbol(quote.symbol) }, instrument.symbol, input.type, input.quantity, cashValue)
          if (mismatch !== undefined) {
            return yield* Effect.fail(fail("QUOTE_ORDER_MISMATCH", `the quote does not match the order's ${mismatch}`, { param: mismatch }))
          }
          if (exchange !== undefined && !isOpen(exchange, now)) {
            return yield* Effect.fail(fail("MARKET_CLOSED", `${exchange.code} is closed at ${isoAt(now)}`))
          }
          yield* renamedMeanwhile(tx, input.symbol, instrument)
          // A listing that does not trade is closed to orders whatever its exchange's session (D-301).
          const listingStatus = yield* listings.statusIn(tx, instrument)
          if (listingStatus !== "ACTIVE") {
            return yield* Effect.fail(fail("MARKET_CLOSED", `${instrument.symbol} is ${listingStatus.toLowerCase()}: it takes no orders`))
          }
          const quantity = input.quantity ?? quote.derivedQuantity ?? quantityFromCash(cashValue ?? 0, quote.price, quote.rate, principal.markupBps, input.type)
          if (quantity <= 0)
            return yield* Effect.fail(fail("VALIDATION_ERROR", "cashValue does not buy a single unit at the quoted price", { param: "cashValue" }))
          const placed = placeMarket({
            orderId: yield* entropy.id("ord"),
            partition: principal.partition,
            account,
            externalId,
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
            // MARKET orders ignore timeInForce: the Order shows null (D-031)
            timeInForce: null,
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
          yield* Quotes.put(tx, quoteId, quote.partition, timeSortKey(quote.issuedAt, quoteId), { ...quote, status: "USED" }, quoteKeepUntil(quote))
          // Its expiry job would find it used and do nothing 60 s later: gone now, with the quote's use (issue 25).
          if (quote.expiryJob !== undefined) yield* tx.deleteJob(quote.expiryJob)
          yield* saveOrder(tx, order)
          yield* toDesk(tx, order, now)
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
            if (!matchesStatus(o, wanted)) continue
            // the symbol traded, or the listing's symbol now (an order before a symbol change keeps what it traded: D-342)
            if (symbol !== undefined && !namedBy(o.symbol, symbol) && !namedBy(symbols.currentSymbol(o.symbol), symbol)) continue
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
          applyFill(order, {
            reportId: yield* entropy.id("exr"),
            quantity: request.quantity ?? remainingQuantity(order),
            price,
            now,
            seq: yield* tx.nextId(UNIT_CHANGES)
          })
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

    /** Rejects inside `tx` (control API, desk jobs); a settlement failure is a rejection whose transition unwinds fills. */
    const rejectIn = (tx: Tx, orderId: string, code: string, reason: string, unwind = false) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const order = yield* findOrder(tx, orderId)
        const transition = yield* liftFailure(unwind ? applySettlementFailure(order, code, reason, now) : applyReject(order, code, reason, now))
        if (unwind) yield* checkUnwind(tx, order)
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

    /** Custody can only unwind what is still there: a BUY's filled shares, a SELL's proceeds (D-290). */
    const checkUnwind = (tx: Tx, order: OrderRecord) =>
      Effect.gen(function* () {
        const units = order.fills.reduce((n, f) => n + f.quantity, 0)
        if (order.side === "BUY") {
          const h = yield* holding(tx, order.partition, order.account, symbols.currentSymbol(order.symbol))
          if (h.quantity - h.reserved < units)
            return yield* Effect.fail(fail("CONFLICT", `the account no longer holds the ${units} filled units of ${order.symbol} to unwind`))
        } else {
          const proceeds = order.fills.reduce((c, f) => c + f.gross - f.fee, 0)
          if ((yield* walletBalance(tx, order.partition, order.account)) < proceeds)
            return yield* Effect.fail(fail("CONFLICT", `the wallet no longer holds the ${centsToWire(proceeds)} USD of proceeds to reverse`))
        }
      })

    const deskReject = Effect.fn("TradingService.deskReject")(function* (orderId: string, code: string, reason: string) {
      return yield* store.transact((tx) => rejectIn(tx, orderId, code, reason))
    })

    const deskFailSettlement = Effect.fn("TradingService.deskFailSettlement")(function* (orderId: string, reason: string) {
      return yield* store.transact((tx) => rejectIn(tx, orderId, SETTLEMENT_FAILED_CODE, reason, true))
    })

    const rejectOpenIn = (tx: Tx, symbol: string, code: string, reason: string) =>
      Effect.gen(function* () {
        const entries = yield* tx.list(DESK_QUEUE, { partition: "global", limit: 100_000, order: "asc" })
        const rejected: Array<string> = []
        for (const entry of entries) {
          const order = yield* Orders.get(tx, entry.id)
          if (Option.isNone(order) || !awaitsDesk(order.value) || order.value.symbol !== symbol) continue
          yield* rejectIn(tx, entry.id, code, reason)
          rejected.push(entry.id)
        }
        return rejected
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
          yield* cancelledEvent(tx, next, transition.movements.wallet)
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

    /**
     * Replace (D-035, D-284): a WORKING sub-account order changes in place; BUY escrow re-computed (the extra taken
     * from the wallet, 400 INSUFFICIENT_FUNDS when short, or the surplus refunded), SELL reservation follows the
     * quantity (422 INSUFFICIENT_HOLDINGS); `order.replaced`; a new deadline gets its own expiry job.
     */
    const replace = Effect.fn("TradingService.replace")(function* (principal: Principal, account: string, orderId: string, input: ReplaceRequest) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          // only the sub-account path exists (D-284): "master" is no sub-account, so /users/master finds nothing
          yield* findSubAccount(tx, principal.partition, account)
          const order = yield* findOrder(tx, orderId)
          if (order.partition !== principal.partition || order.account !== account) {
            return yield* Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found for sub-account ${account}`))
          }
          if (order.status !== "WORKING") {
            return yield* Effect.fail(fail("CONFLICT", `order ${orderId} is ${order.status}: only a WORKING order is replaceable`))
          }
          yield* liftFailure(refuseTrading(yield* findSubAccount(tx, principal.partition, account)))
          const change = yield* liftFailure(replaceFields(order, input, now))
          const exchange = findExchange(order.exchange)
          const deadline =
            change.timeInForce === undefined && change.expiresAt === undefined
              ? undefined
              : (change.timeInForce ?? order.timeInForce) === "DAY"
                ? order.timeInForce === "DAY"
                  ? (order.deadline ?? null)
                  : dayDeadline(exchange, now)
                : (change.timeInForce ?? order.timeInForce) === "GTD"
                  ? (change.expiresAt ?? order.expiresAt ?? null)
                  : null
          const transition = yield* liftFailure(applyReplace(order, { ...change, ...(deadline === undefined ? {} : { deadline }) }))
          const next = transition.order
          if (transition.movements.wallet < 0) {
            const balance = yield* walletBalance(tx, order.partition, account)
            if (balance < -transition.movements.wallet) {
              return yield* Effect.fail(
                fail(
                  "INSUFFICIENT_FUNDS",
                  `the replaced order needs ${centsToWire(-transition.movements.wallet)} USD more and the wallet holds ${centsToWire(balance)} USD`
                )
              )
            }
          }
          if (transition.movements.sharesReserved > 0) {
            const h = yield* holding(tx, order.partition, account, order.symbol)
            if (h.quantity - h.reserved < transition.movements.sharesReserved) {
              return yield* Effect.fail(
                fail(
                  "INSUFFICIENT_HOLDINGS",
                  `the account holds ${h.quantity - h.reserved} free units of ${order.symbol}, the replace needs ${transition.movements.sharesReserved} more`
                )
              )
            }
          }
          yield* applyOrderTransition(tx, order.partition, {
            ...transitionOf(next, next.escrow > order.escrow ? "ORDER_PLACED" : "ORDER_REPLACED", next.escrow - order.escrow, now),
            movements: transition.movements
          })
          yield* saveOrder(tx, next)
          const newDeadline = next.deadline ?? null
          if (newDeadline !== null && newDeadline !== (order.deadline ?? null)) {
            yield* scheduler.schedule(tx, EXPIRE_JOB, newDeadline, { orderId, deadline: newDeadline } satisfies ExpireJob)
          }
          const data: Schemas["OrderReplacedData"] = {
            orderId,
            subAccountId: account,
            externalId: next.externalId,
            type: next.side,
            symbol: next.symbol,
            orderType: next.orderType,
            status: "WORKING",
            quantity: next.quantity,
            limitPrice: next.limitPrice === null ? null : price4ToWire(next.limitPrice),
            stopPrice: next.stopPrice === null ? null : price4ToWire(next.stopPrice),
            timeInForce: next.timeInForce,
            previous: {
              quantity: order.quantity,
              limitPrice: order.limitPrice === null ? null : price4ToWire(order.limitPrice),
              stopPrice: order.stopPrice === null ? null : price4ToWire(order.stopPrice),
              timeInForce: order.timeInForce
            },
            replacedAt: isoAt(now)
          }
          yield* events.append(tx, order.partition, "order.replaced", data)
          return orderToWire(next, now)
        })
      )
    })

    // A WORKING order looks at the delayed price at every refresh that publishes a capture made while its exchange
    // was open (as price alerts do, D-243), and goes to the desk when that price triggers it (D-282).
    yield* scheduler.register(TRIGGER_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { orderId } = payload as TriggerJob
        const found = yield* Orders.get(tx, orderId)
        // triggered, cancelled, expired meanwhile, or wiped by a sandbox reset: the chain ends
        if (Option.isNone(found) || found.value.status !== "WORKING") return
        const order = found.value
        const now = yield* clock.now
        const instrument = symbols.listingOf(order.symbol)
        const exchange = findExchange(order.exchange)
        if (instrument !== undefined && exchange !== undefined && isOpen(exchange, now - DELAY_SECONDS * 1000)) {
          const observed = yield* feed.observe(instrument, now)
          if (triggers(order, observed.price)) {
            const shortfall = triggerShortfall(order, observed.price)
            const balance = shortfall > 0 ? yield* walletBalance(tx, order.partition, order.account) : 0
            if (shortfall > balance) {
              const reason = `the ${order.orderType} BUY triggered at ${price4ToWire(observed.price)} and needs ${centsToWire(shortfall)} USD more than its escrow; the wallet holds ${centsToWire(balance)} USD`
              const rejected = yield* liftFailure(applyRejectAtTrigger(order, "INSUFFICIENT_FUNDS", reason, now))
              yield* applyOrderTransition(tx, order.partition, {
                ...transitionOf(rejected.order, "ORDER_REJECTED", rejected.order.escrow - order.escrow, now),
                movements: rejected.movements
              })
              yield* saveOrder(tx, rejected.order)
              const data = { ...decisionPayload(rejected.order, "REJECTED", 0, now), rejectionCode: "INSUFFICIENT_FUNDS", rejectionReason: reason }
              yield* events.append(tx, order.partition, "order.rejected", data)
              yield* events.append(tx, order.partition, "trade.rejected", data)
              return
            }
            const transition = yield* liftFailure(applyTrigger(order, observed.price, now))
            const next = transition.order
            if (next.escrow !== order.escrow) {
              yield* applyOrderTransition(tx, order.partition, {
                ...transitionOf(next, "ORDER_PLACED", next.escrow - order.escrow, now),
                movements: transition.movements
              })
            }
            yield* saveOrder(tx, next)
            yield* toDesk(tx, next, now)
            return
          }
        }
        yield* scheduler.schedule(tx, TRIGGER_JOB, nextRefresh(now), { orderId } satisfies TriggerJob)
      })
    )

    // A DAY or GTD order that is still open at its deadline expires (D-004). A replace that moved the deadline left
    // the old job behind: it sees another deadline and does nothing.
    yield* scheduler.register(EXPIRE_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { orderId, deadline } = payload as ExpireJob
        const found = yield* Orders.get(tx, orderId)
        if (Option.isNone(found) || isTerminal(found.value) || found.value.deadline !== deadline) return
        const order = found.value
        const now = yield* clock.now
        const transition = yield* liftFailure(applyExpire(order, now))
        const next = transition.order
        yield* applyOrderTransition(tx, next.partition, {
          ...transitionOf(next, "ORDER_EXPIRED", next.escrow - order.escrow, now),
          movements: transition.movements
        })
        yield* saveOrder(tx, next)
        yield* cancelledEvent(tx, next, transition.movements.wallet)
      })
    )

    yield* scheduler.register(DESK_FILL_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { orderId } = payload as DeskFillJob
        const order = yield* Orders.get(tx, orderId)
        // decided meanwhile (manual action, cancel) or wiped by a sandbox reset: nothing to do
        if (Option.isNone(order) || !awaitsDesk(order.value)) return
        yield* fillIn(tx, orderId, {})
      })
    )
    // One planned step of the desk's policy (sim/desk.ts plans, this applies); skipped once the order is decided.
    yield* scheduler.register(DESK_STEP_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { orderId, step } = payload as DeskStepJob
        const found = yield* Orders.get(tx, orderId)
        if (Option.isNone(found) || !awaitsDesk(found.value)) return
        if (step.action === "reject") return yield* Effect.asVoid(rejectIn(tx, orderId, step.rejectionCode, step.rejectionReason))
        if (step.action === "failSettlement") return yield* Effect.asVoid(rejectIn(tx, orderId, SETTLEMENT_FAILED_CODE, step.reason, true))
        const order = found.value
        const remaining = remainingQuantity(order)
        const price = step.price === "market" ? yield* desk.marketPrice(symbols.listingOf(order.symbol), yield* clock.now) : order.priceAtOrder
        // a BUY's escrow was sized at its quote: a market price above it cannot be paid, so the desk declines (D-292)
        if (price === undefined || (order.side === "BUY" && price > order.priceAtOrder)) {
          return yield* Effect.asVoid(rejectIn(tx, orderId, "PRICE_OUT_OF_TOLERANCE", "The market moved above the quoted price"))
        }
        yield* fillIn(tx, orderId, { quantity: Math.min(step.quantity ?? remaining, remaining), price: price4ToWire(price) })
      })
    )

    return TradingService.of({ trade, listOrders, getOrder, deskQueue, deskFill, deskReject, deskFailSettlement, cancel, replace, rejectOpenIn })
  })

  static readonly layer = Layer.effect(TradingService, TradingService.make)
}

export interface ReplaceRequest {
  readonly quantity?: number | undefined
  readonly limitPrice?: number | undefined
  readonly stopPrice?: number | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: string | undefined
}

export const TRIGGER_JOB = "order.trigger"
export const EXPIRE_JOB = "order.expire"
interface TriggerJob {
  readonly orderId: string
}
interface ExpireJob {
  readonly orderId: string
  readonly deadline: number
}

/** Furthest GTD deadline accepted: 366 days (D-281). */
const MAX_GTD_MS = 366 * 86_400_000
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/

/** A GTD deadline: an RFC 3339 date-time with an offset, after `now`, at most a year ahead (D-281). */
const gtdDeadline = (raw: string | undefined, now: number): number | ApiFailure => {
  if (raw === undefined) return fail("VALIDATION_ERROR", "a GTD order needs expiresAt", { param: "expiresAt" })
  const at = DATE_TIME.test(raw) ? Date.parse(raw) : Number.NaN
  if (!Number.isFinite(at)) return fail("VALIDATION_ERROR", "expiresAt must be an ISO 8601 date-time with a time zone", { param: "expiresAt" })
  if (at <= now) return fail("VALIDATION_ERROR", "expiresAt must be in the future", { param: "expiresAt" })
  if (at > now + MAX_GTD_MS) return fail("VALIDATION_ERROR", "expiresAt must be at most 366 days ahead", { param: "expiresAt" })
  return at
}

/** A limit or stop price: positive, at most 4 decimals (local currency). */
const priceField = (value: number, param: "limitPrice" | "stopPrice"): number | ApiFailure => {
  const p = parseScaled(value, 4)
  return p === undefined || p <= 0 ? fail("VALIDATION_ERROR", `${param} must be positive with at most 4 decimals`, { param }) : p
}

/** Which of limitPrice and stopPrice an order type takes (contract TradeRequest). */
const takesLimit = (t: RestingType) => t === "LIMIT" || t === "STOP_LIMIT"
const takesStop = (t: RestingType) => t === "STOP" || t === "STOP_LIMIT"

/** The validated fields of a resting order request (D-280): every mistake is a 400 naming its parameter. */
export const restingFields = (orderType: RestingType, input: TradeInput, now: number) => {
  if (input.quoteId !== undefined)
    return fail("VALIDATION_ERROR", `a ${orderType} order takes no quoteId (only MARKET orders are quote-gated)`, { param: "quoteId" })
  if (input.cashValue !== undefined) return fail("VALIDATION_ERROR", `a ${orderType} order takes a quantity, not a cashValue`, { param: "cashValue" })
  if (input.quantity === undefined) return fail("VALIDATION_ERROR", `a ${orderType} order needs a quantity`, { param: "quantity" })
  if (!Number.isSafeInteger(input.quantity) || input.quantity <= 0)
    return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  const limitPrice = priceOf(orderType, "limitPrice", takesLimit(orderType), input.limitPrice)
  if (limitPrice instanceof ApiFailure) return limitPrice
  const stopPrice = priceOf(orderType, "stopPrice", takesStop(orderType), input.stopPrice)
  if (stopPrice instanceof ApiFailure) return stopPrice
  const timeInForce = input.timeInForce ?? "DAY"
  if (timeInForce !== "GTD" && input.expiresAt !== undefined) {
    return fail("VALIDATION_ERROR", "expiresAt goes only with timeInForce GTD", { param: "expiresAt" })
  }
  const expiresAt = timeInForce === "GTD" ? gtdDeadline(input.expiresAt, now) : null
  if (expiresAt instanceof ApiFailure) return expiresAt
  return { quantity: input.quantity, limitPrice, stopPrice, timeInForce, expiresAt }
}

const priceOf = (orderType: RestingType, param: "limitPrice" | "stopPrice", takes: boolean, value: number | undefined): number | null | ApiFailure => {
  if (!takes) return value === undefined ? null : fail("VALIDATION_ERROR", `a ${orderType} order takes no ${param}`, { param })
  if (value === undefined) return fail("VALIDATION_ERROR", `a ${orderType} order needs a ${param}`, { param })
  return priceField(value, param)
}

/** The validated change of a replace (D-284): fields must fit the order's type; expiresAt only with GTD. */
export const replaceFields = (order: OrderRecord, input: ReplaceRequest, now: number) => {
  const orderType = order.orderType as RestingType
  if (Object.values(input).every((v) => v === undefined)) {
    return fail("VALIDATION_ERROR", "give at least one of quantity, limitPrice, stopPrice, timeInForce, expiresAt")
  }
  if (input.quantity !== undefined && (!Number.isSafeInteger(input.quantity) || input.quantity <= 0)) {
    return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  }
  const limitPrice =
    input.limitPrice === undefined ? undefined : takesLimit(orderType) ? priceField(input.limitPrice, "limitPrice") : notFor(orderType, "limitPrice")
  if (limitPrice instanceof ApiFailure) return limitPrice
  const stopPrice = input.stopPrice === undefined ? undefined : takesStop(orderType) ? priceField(input.stopPrice, "stopPrice") : notFor(orderType, "stopPrice")
  if (stopPrice instanceof ApiFailure) return stopPrice
  const timeInForce = input.timeInForce ?? order.timeInForce
  if (input.expiresAt !== undefined && timeInForce !== "GTD")
    return fail("VALIDATION_ERROR", "expiresAt goes only with timeInForce GTD", { param: "expiresAt" })
  const expiresAt =
    input.expiresAt !== undefined
      ? gtdDeadline(input.expiresAt, now)
      : input.timeInForce === "GTD" && order.timeInForce !== "GTD"
        ? gtdDeadline(undefined, now)
        : input.timeInForce !== undefined && input.timeInForce !== "GTD"
          ? null
          : undefined
  if (expiresAt instanceof ApiFailure) return expiresAt
  return { quantity: input.quantity, limitPrice, stopPrice, timeInForce: input.timeInForce, expiresAt }
}

const notFor = (orderType: RestingType, param: "limitPrice" | "stopPrice") => fail("VALIDATION_ERROR", `a ${orderType} order takes no ${param}`, { param })

/**
 * When a DAY order expires (D-281): the close of the session it was placed in, or, placed while the exchange is
 * closed (night, weekend, holiday), the close of the next session. No listing without an exchange trades here.
 */
export const dayDeadline = (exchange: Exchange | undefined, now: number): number | null => {
  if (exchange === undefined) return null
  if (isOpen(exchange, now)) return sessionToday(exchange, now)?.closesAt ?? null
  return nextSessionAfter(exchange, now)?.closesAt ?? null
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

/** Whether the qualified `stored` symbol is the filter `symbol` (qualified, or its bare ticker). */
const namedBy = (stored: string, symbol: string) => stored === symbol || stored.split(".")[0] === symbol

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
