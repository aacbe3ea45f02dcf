/**
 * Trading: placing orders, reading them, and applying the desk's decisions (fill, reject); cancel, replace, triggers
 * and expiry. MARKET orders are quote-gated and go straight to the desk (PENDING); LIMIT, STOP and STOP_LIMIT rest
 * WORKING (BUY escrow at the reference price, SELL shares reserved) until their trigger job sees the delayed price
 * reach them (then PENDING at the desk), and DAY/GTD orders expire at their deadline (D-004, D-031, D-035,
 * D-280..D-284, E-160, E-161).
 * This module is wiring: the rules are pure deciders in domain/trading/ (decide-order, decide-desk,
 * decide-lifecycle, decide-quote), the dispatchers around them load state, draw ids and write the plan in one
 * transaction (place.ts, desk.ts, orders.ts, jobs.ts, write-plan.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import type { ApiFailure } from "../../domain/errors.ts"
import type { FillRequest, OrderListQuery, ReplaceRequest, TradeInput } from "../../domain/trading/commands.ts"
import type { Hint, StoreError, Tx } from "../../store/port.ts"
import type { Principal } from "../principal.ts"
import { tradingDeps } from "./deps.ts"
import { desking } from "./desk.ts"
import { registerTradingJobs } from "./jobs.ts"
import { ordering } from "./orders.ts"
import { placing } from "./place.ts"

export type { FillRequest, OrderListQuery, ReplaceRequest, TradeInput }

type Failing<A> = Effect.Effect<A, ApiFailure | StoreError>

export class TradingService extends Context.Service<
  TradingService,
  {
    readonly trade: (principal: Principal, account: string, input: TradeInput) => Failing<Schemas["Order"]>
    /** The rows `trade` will read, for a store that reads ahead (`Tx.prefetch`): asked before its transaction locks. */
    readonly readsAhead: (principal: Principal, account: string, input: TradeInput) => ReadonlyArray<Hint>
    readonly listOrders: (principal: Principal, account: string, query: OrderListQuery) => Failing<Schemas["OrderList"]>
    readonly getOrder: (principal: Principal, orderId: string) => Failing<Schemas["Order"]>
    readonly deskQueue: Effect.Effect<ReadonlyArray<Schemas["Order"]>, StoreError>
    readonly deskFill: (orderId: string, request: FillRequest) => Failing<Schemas["Order"]>
    readonly deskReject: (orderId: string, code: string, reason: string) => Failing<Schemas["Order"]>
    /** Custody settlement of a PENDING or PARTIALLY_FILLED order fails: the trade is unwound (D-290). */
    readonly deskFailSettlement: (orderId: string, reason: string) => Failing<Schemas["Order"]>
    readonly cancel: (principal: Principal, orderId: string) => Failing<Schemas["Order"]>
    readonly replace: (principal: Principal, account: string, orderId: string, input: ReplaceRequest) => Failing<Schemas["Order"]>
    /**
     * Rejects, in `tx`, every order on `symbol` still awaiting the desk (money and units back first, order.rejected
     * as the desk's rejection): what a corporate action does to the listing's open orders (D-304). Their ids.
     */
    readonly rejectOpenIn: (tx: Tx, symbol: string, code: string, reason: string) => Failing<ReadonlyArray<string>>
  }
>()("sokoni/TradingService") {
  static readonly make = Effect.gen(function* () {
    const deps = yield* tradingDeps
    const { trade, readsAhead } = placing(deps)
    const { listOrders, getOrder, cancel, replace } = ordering(deps)
    const desk = desking(deps)
    yield* registerTradingJobs(deps, desk)
    const { deskQueue, deskFill, deskReject, deskFailSettlement, rejectOpenIn } = desk
    return TradingService.of({ trade, readsAhead, listOrders, getOrder, deskQueue, deskFill, deskReject, deskFailSettlement, cancel, replace, rejectOpenIn })
  })

  static readonly layer = Layer.effect(TradingService, TradingService.make)
}
