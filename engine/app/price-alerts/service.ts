/**
 * PriceAlertService: price alerts on the delayed price (spec "Price alerts", D-053, D-076). Create (production, full
 * key, at most 200 active), list, get, delete; each live alert is evaluated by its own Scheduler job at every 900 s
 * refresh that publishes a price captured while its exchange was open (D-243), and `price.alert` is appended when it
 * fires, in the job's transaction.
 * Wiring, reads and dispatch: the rules are pure in domain/alerts/decide-alert.ts (the state machine in
 * domain/price-alert.ts); prices are the MarketFeed's published observations.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import {
  alertThreshold,
  alertToWire,
  type CreateAlert,
  decideCreateAlert,
  decideEvaluation,
  fullKeyOnly,
  isActive,
  refuseMoreAlerts,
  unlistedSymbol
} from "../../domain/alerts/decide-alert.ts"
import { findExchange, isOpen } from "../../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { DELAY_SECONDS, MarketFeed, REFRESH_SECONDS } from "../../sim/market-feed.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { checkLimit } from "../cursor.ts"
import { type PriceAlertDoc, PriceAlerts, timeSortKey } from "../docs.ts"
import { AlertEvaluationPayload } from "../job-payloads.ts"
import { pageMeta, pageOf, scopeOf } from "../pages.ts"
import type { Principal } from "../principal.ts"
import { Symbols } from "../symbols.ts"

export type { CreateAlert }
export const EVALUATE_JOB = "price-alert.evaluate"
const REFRESH_MS = REFRESH_SECONDS * 1000

/** The next refresh boundary strictly after `now`: when the delayed price can next have moved. */
export const nextRefresh = (now: number): number => (Math.floor(now / REFRESH_MS) + 1) * REFRESH_MS

type AlertQuery = { readonly state?: PriceAlertDoc["state"] | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }

export class PriceAlertService extends Context.Service<
  PriceAlertService,
  {
    readonly create: (principal: Principal, input: CreateAlert) => Effect.Effect<Schemas["PriceAlert"], ApiFailure | StoreError>
    readonly list: (principal: Principal, query: AlertQuery) => Effect.Effect<Schemas["PriceAlertList"], ApiFailure | StoreError>
    readonly get: (principal: Principal, alertId: string) => Effect.Effect<Schemas["PriceAlert"], ApiFailure | StoreError>
    readonly remove: (principal: Principal, alertId: string) => Effect.Effect<Schemas["DeletePriceAlertResponse"], ApiFailure | StoreError>
  }
>()("sokoni/PriceAlertService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const symbols = yield* Symbols
    const entropy = yield* Entropy
    const feed = yield* MarketFeed
    const scheduler = yield* Scheduler
    const events = yield* EventLog

    const all = (tx: ReadTx, partition: string) => PriceAlerts.list(tx, partition, { limit: 100_000, order: "desc" })
    const find = (principal: Principal, alertId: string) =>
      store.read((tx) =>
        Effect.flatMap(PriceAlerts.get(tx, alertId), (found) =>
          Option.isSome(found) && found.value.partition === principal.partition && !found.value.deleted
            ? Effect.succeed(found.value)
            : Effect.fail(fail("NOT_FOUND", `price alert ${alertId} was not found`))
        )
      )
    const save = (tx: Tx, a: PriceAlertDoc) => PriceAlerts.put(tx, a.alertId, a.partition, timeSortKey(a.createdAt, a.alertId), a)

    const create = Effect.fn("PriceAlertService.create")(function* (principal: Principal, input: CreateAlert) {
      const refused = fullKeyOnly(principal.keyKind, "creating a price alert")
      if (refused !== undefined) return yield* Effect.fail(refused)
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange)).pipe(Effect.mapError((e) => unlistedSymbol(e, input)))
      const threshold = yield* liftFailure(alertThreshold(input, instrument))
      const now = yield* clock.nowHere()
      const observed = yield* feed.observe(instrument, now)
      const command = { partition: principal.partition, input, instrument, threshold, currency: findExchange(instrument.exchange)?.currency ?? "USD" }
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const tooMany = refuseMoreAlerts((yield* all(tx, principal.partition)).filter(isActive).length)
          if (tooMany !== undefined) return yield* Effect.fail(tooMany)
          const plan = decideCreateAlert(command, observed.price, now, nextRefresh(now), { alertId: yield* entropy.idHere("alt") })
          yield* save(tx, plan.alert)
          yield* scheduler.scheduleHere(tx, EVALUATE_JOB, plan.job.dueAt, { alertId: plan.job.alertId })
          return plan.answer
        })
      )
    })

    const list = Effect.fn("PriceAlertService.list")(function* (principal: Principal, query: AlertQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const alerts = (yield* store.read((tx) => all(tx, principal.partition))).filter(
        (a) => !a.deleted && (query.state === undefined || a.state === query.state)
      )
      const scope = scopeOf("price-alerts", principal.partition, [query.state])
      const page = yield* liftFailure(pageOf(alerts, (a) => timeSortKey(a.createdAt, a.alertId), "desc", { scope, cursor: query.cursor, limit }))
      const answer: Schemas["PriceAlertList"] = { data: page.items.map(alertToWire), ...pageMeta(page) }
      return answer
    })

    const get = Effect.fn("PriceAlertService.get")(function* (principal: Principal, alertId: string) {
      return alertToWire(yield* find(principal, alertId))
    })

    const remove = Effect.fn("PriceAlertService.remove")(function* (principal: Principal, alertId: string) {
      const refused = fullKeyOnly(principal.keyKind, "deleting a price alert")
      if (refused !== undefined) return yield* Effect.fail(refused)
      const alert = yield* find(principal, alertId)
      yield* store.transact((tx) => save(tx, { ...alert, deleted: true }))
      const answer: Schemas["DeletePriceAlertResponse"] = { alertId, deleted: true, message: "Price alert deleted." }
      return answer
    })

    // Each live alert looks at the delayed price at every refresh that publishes a new one (the capture 15 minutes
    // earlier was made while its exchange was open: D-243), then books its next look.
    // Made once (Effect.fnUntraced), not per look: see sim/scheduler.ts.
    yield* scheduler.register(
      EVALUATE_JOB,
      AlertEvaluationPayload,
      Effect.fnUntraced(function* (tx: Tx, { alertId }: typeof AlertEvaluationPayload.Type) {
        const found = yield* PriceAlerts.getHere(tx, alertId)
        if (Option.isNone(found) || !isActive(found.value)) return
        const alert = found.value
        const now = yield* clock.nowHere()
        const instrument = symbols.listingOf(alert.symbol)
        const exchange = findExchange(alert.exchange)
        const inSession = instrument !== undefined && exchange !== undefined && isOpen(exchange, now - DELAY_SECONDS * 1000)
        const observed = inSession ? yield* feed.observe(instrument, now) : undefined
        const plan = decideEvaluation(alert, observed, now, nextRefresh(now))
        if (plan.updated !== undefined) yield* save(tx, plan.updated)
        if (plan.event !== undefined) yield* events.append(tx, alert.partition, plan.event.name, plan.event.data)
        if (plan.job !== undefined) yield* scheduler.scheduleHere(tx, EVALUATE_JOB, plan.job.dueAt, { alertId: plan.job.alertId })
      })
    )

    return PriceAlertService.of({ create, list, get, remove })
  })

  static readonly layer = Layer.effect(PriceAlertService, PriceAlertService.make)
}
