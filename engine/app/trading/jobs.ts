/**
 * The trading jobs, each one transaction on the scheduler: `order.trigger` (a WORKING order's look at the delayed
 * price at every refresh that publishes a capture made while its exchange was open, as price alerts do: D-243,
 * D-282), `order.expire` (D-004), `desk.fill` (the auto desk) and `desk.step` (one planned step of the desk's policy,
 * sim/desk.ts). Owns: registering them and what each loads. Does not own the rules (domain/trading/).
 */
import { Effect, Option } from "effect"
import { findExchange, isOpen } from "../../domain/calendar.ts"
import { liftFailure } from "../../domain/errors.ts"
import type { OrderRecord } from "../../domain/order.ts"
import { awaitsDesk } from "../../domain/order-transitions.ts"
import { deskStepAction } from "../../domain/trading/decide-desk.ts"
import { decideExpire, decideTrigger } from "../../domain/trading/decide-lifecycle.ts"
import { EXPIRE_JOB, TRIGGER_JOB } from "../../domain/trading/plan.ts"
import { DESK_FILL_JOB, DESK_STEP_JOB, SETTLEMENT_FAILED_CODE } from "../../sim/desk.ts"
import { DELAY_SECONDS } from "../../sim/market-feed.ts"
import type { Tx } from "../../store/port.ts"
import { Orders } from "../docs.ts"
import { DeskFillPayload, DeskStepPayload, ExpirePayload, TriggerPayload } from "../job-payloads.ts"
import { walletBalance } from "../ledger.ts"
import { nextRefresh } from "../price-alerts/service.ts"
import type { TradingDeps } from "./deps.ts"
import type { desking } from "./desk.ts"
import { writePlan } from "./write-plan.ts"

/** Read when called (`getWithHere`): every job yields it at once in its generator's body. */
const loadOrder = (tx: Tx, orderId: string) => Orders.getWithHere(tx, orderId, Option.getOrUndefined)

export const registerTradingJobs = (d: TradingDeps, desk: ReturnType<typeof desking>) =>
  Effect.gen(function* () {
    /** The delayed price `order` sees now, if its exchange was open at the delayed instant; undefined otherwise. */
    // Every job's generator is made once here (Effect.fnUntraced), not per job: see sim/scheduler.ts.
    const delayedPrice = Effect.fnUntraced(function* (order: OrderRecord, now: number) {
      const instrument = d.symbols.listingOf(order.symbol)
      const exchange = findExchange(order.exchange)
      if (instrument === undefined || exchange === undefined || !isOpen(exchange, now - DELAY_SECONDS * 1000)) return undefined
      return (yield* d.feed.observe(instrument, now)).price
    })

    yield* d.scheduler.register(
      TRIGGER_JOB,
      TriggerPayload,
      Effect.fnUntraced(function* (tx: Tx, payload: typeof TriggerPayload.Type) {
        const order = yield* loadOrder(tx, payload.orderId)
        if (order === undefined || order.status !== "WORKING") return
        const now = yield* d.clock.nowHere()
        const price = yield* delayedPrice(order, now)
        const available = price !== undefined && order.side === "BUY" ? yield* walletBalance(tx, order.partition, order.account) : 0
        const plan = yield* liftFailure(decideTrigger(order, { price, available, nextLook: nextRefresh(now) }, now))
        yield* writePlan(d, tx, order.partition, plan, now)
      })
    )

    yield* d.scheduler.register(
      EXPIRE_JOB,
      ExpirePayload,
      Effect.fnUntraced(function* (tx: Tx, job: typeof ExpirePayload.Type) {
        const order = yield* loadOrder(tx, job.orderId)
        if (order === undefined) return
        const now = yield* d.clock.nowHere()
        const plan = yield* liftFailure(decideExpire(order, job, now))
        yield* writePlan(d, tx, order.partition, plan, now)
      })
    )

    yield* d.scheduler.register(
      DESK_FILL_JOB,
      DeskFillPayload,
      Effect.fnUntraced(function* (tx: Tx, { orderId }: typeof DeskFillPayload.Type) {
        const order = yield* loadOrder(tx, orderId)
        // decided meanwhile (manual action, cancel) or wiped by a sandbox reset: nothing to do
        if (order === undefined || !awaitsDesk(order)) return
        yield* desk.fillIn(tx, orderId, {}, order)
      })
    )

    // One planned step of the desk's policy (sim/desk.ts plans, the rules say what it does now); skipped once the order is decided.
    yield* d.scheduler.register(
      DESK_STEP_JOB,
      DeskStepPayload,
      Effect.fnUntraced(function* (tx: Tx, { orderId, step }: typeof DeskStepPayload.Type) {
        const order = yield* loadOrder(tx, orderId)
        if (order === undefined || !awaitsDesk(order)) return
        const marketPrice =
          step.action === "fill" && step.price === "market" ? yield* d.desk.marketPrice(d.symbols.listingOf(order.symbol), yield* d.clock.nowHere()) : undefined
        const action = deskStepAction(order, step, SETTLEMENT_FAILED_CODE, marketPrice)
        // The order just read in this transaction is handed on, not read again.
        if (action._tag === "Reject") yield* desk.rejectIn(tx, orderId, action.code, action.reason, action.unwind, order)
        else yield* desk.fillIn(tx, orderId, action.request, order)
      })
    )
  })
