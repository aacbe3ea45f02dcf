/**
 * The desk's decisions (control API fill, reject, fail-settlement; the desk's jobs; a corporate action's rejection of
 * a listing's open orders): dispatchers around domain/trading/decide-desk.ts, each inside the caller's transaction.
 * Owns: loading the order (and what an unwind needs), drawing the execution report's id and unit-change position,
 * the desk queue view. Does not own the rules.
 */
import { Effect, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { fail, liftFailure } from "../../domain/errors.ts"
import type { OrderRecord } from "../../domain/order.ts"
import { awaitsDesk } from "../../domain/order-transitions.ts"
import { orderToWire } from "../../domain/order-wire.ts"
import type { FillRequest } from "../../domain/trading/commands.ts"
import { decideFill, decideReject, fillPrice, type UnwindFunds } from "../../domain/trading/decide-desk.ts"
import { SETTLEMENT_FAILED_CODE } from "../../sim/desk.ts"
import type { ReadTx, StoreError, Tx } from "../../store/port.ts"
import { Orders, UNIT_CHANGES } from "../docs.ts"
import { holding, walletBalance } from "../ledger.ts"
import type { TradingDeps } from "./deps.ts"
import { DESK_QUEUE, writePlan } from "./write-plan.ts"

export const findOrder = (tx: ReadTx, orderId: string) =>
  Effect.flatMap(
    Orders.get(tx, orderId),
    Option.match({ onNone: () => Effect.fail(fail("NOT_FOUND", `order ${orderId} was not found`)), onSome: Effect.succeed })
  )

export const desking = (d: TradingDeps) => {
  /**
   * Fills inside `tx`; shared by the control API and the desk's jobs. `loaded`: the order as a job already read it in
   * `tx` (read again otherwise).
   */
  // Generators made once per service (Effect.fnUntraced), not per call: see sim/scheduler.ts.
  const fillIn = Effect.fnUntraced(function* (tx: Tx, orderId: string, request: FillRequest, loaded?: OrderRecord) {
    const now = yield* d.clock.nowHere()
    const order = loaded ?? (yield* findOrder(tx, orderId))
    const price = yield* liftFailure(fillPrice(order, request))
    const ids = { reportId: yield* d.entropy.idHere("exr"), seq: yield* tx.nextId(UNIT_CHANGES) }
    const plan = yield* liftFailure(decideFill(order, { quantity: request.quantity, price }, now, ids))
    return yield* writePlan(d, tx, order.partition, plan, now)
  })

  /** What custody can still take back to unwind `order` (D-290): a BUY's units (under the listing's symbol now), a SELL's cash. */
  const unwindFunds = (tx: ReadTx, order: OrderRecord): Effect.Effect<UnwindFunds, StoreError> =>
    order.side === "BUY"
      ? Effect.map(holding(tx, order.partition, order.account, d.symbols.currentSymbol(order.symbol)), (h) => ({
          kind: "units",
          free: h.quantity - h.reserved
        }))
      : Effect.map(walletBalance(tx, order.partition, order.account), (available) => ({ kind: "cash", available }))

  /** Rejects inside `tx` (control API, desk jobs); a settlement failure (`unwind`) is a rejection that reverses the fills. */
  const rejectIn = Effect.fnUntraced(function* (tx: Tx, orderId: string, code: string, reason: string, unwind = false, loaded?: OrderRecord) {
    const now = yield* d.clock.nowHere()
    const order = loaded ?? (yield* findOrder(tx, orderId))
    const funds = unwind ? yield* unwindFunds(tx, order) : undefined
    const plan = yield* liftFailure(decideReject(order, code, reason, now, funds))
    return yield* writePlan(d, tx, order.partition, plan, now)
  })

  const deskFill = Effect.fn("TradingService.deskFill")(function* (orderId: string, request: FillRequest) {
    return yield* d.store.transact((tx) => fillIn(tx, orderId, request))
  })

  const deskReject = Effect.fn("TradingService.deskReject")(function* (orderId: string, code: string, reason: string) {
    return yield* d.store.transact((tx) => rejectIn(tx, orderId, code, reason))
  })

  /** Custody settlement of a PENDING or PARTIALLY_FILLED order fails: the trade is unwound (D-290). */
  const deskFailSettlement = Effect.fn("TradingService.deskFailSettlement")(function* (orderId: string, reason: string) {
    return yield* d.store.transact((tx) => rejectIn(tx, orderId, SETTLEMENT_FAILED_CODE, reason, true))
  })

  /** Rejects, in `tx`, every order on `symbol` still awaiting the desk (a corporate action's, D-304); their ids. */
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

  /** PENDING and PARTIALLY_FILLED orders of every partner, oldest first: what the desk has to decide. */
  const deskQueue = Effect.gen(function* () {
    const now = yield* d.clock.nowHere()
    const orders = yield* d.store.read((tx) =>
      Effect.gen(function* () {
        const entries = yield* tx.list(DESK_QUEUE, { partition: "global", limit: 100_000, order: "asc" })
        const loaded = yield* Effect.forEach(entries, (e) => Orders.get(tx, e.id))
        return loaded.flatMap((o) => (Option.isSome(o) && awaitsDesk(o.value) ? [o.value] : []))
      })
    )
    const queue: ReadonlyArray<Schemas["Order"]> = orders.map((o) => orderToWire(o, now))
    return queue
  })

  return { fillIn, rejectIn, deskFill, deskReject, deskFailSettlement, rejectOpenIn, deskQueue }
}
