/**
 * PriceAlertService: price alerts on the delayed price (spec "Price alerts", D-053, D-076). Create (production, full
 * key, at most 200 active), list, get, delete; each live alert is evaluated by its own Scheduler job at every 900 s
 * refresh that publishes a price captured while its exchange was open (D-243), and `price.alert` is appended when it
 * fires, in the job's transaction.
 * Owns the alert records and their evaluation; the state machine is domain/price-alert.ts, prices are the
 * MarketFeed's published observations.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { findExchange, isOpen } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { parseScaled, price4ToWire } from "../domain/money.ts"
import { observeAlert } from "../domain/price-alert.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { DELAY_SECONDS, MarketFeed, REFRESH_SECONDS } from "../sim/market-feed.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { checkLimit } from "./cursor.ts"
import { type PriceAlertDoc, PriceAlerts, timeSortKey } from "./docs.ts"
import { Symbols } from "./symbols.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import type { Principal } from "./principal.ts"

export const MAX_ACTIVE_ALERTS = 200
export const EVALUATE_JOB = "price-alert.evaluate"
const REFRESH_MS = REFRESH_SECONDS * 1000

/** The next refresh boundary strictly after `now`: when the delayed price can next have moved. */
export const nextRefresh = (now: number): number => (Math.floor(now / REFRESH_MS) + 1) * REFRESH_MS

export interface CreateAlert {
  readonly symbol: string
  readonly exchange: string
  readonly condition: "above" | "below"
  readonly threshold: number
  readonly repeat?: boolean | undefined
  readonly clientAlertId?: string | undefined
}

const isActive = (a: PriceAlertDoc) => !a.deleted && a.state !== "DISARMED"

export const alertToWire = (a: PriceAlertDoc): Schemas["PriceAlert"] => ({
  alertId: a.alertId,
  clientAlertId: a.clientAlertId,
  symbol: a.symbol,
  exchange: a.exchange,
  condition: a.condition,
  threshold: price4ToWire(a.threshold),
  currency: a.currency,
  repeat: a.repeat,
  state: a.state,
  lastPriceLocal: price4ToWire(a.lastPrice),
  triggerCount: a.triggerCount,
  createdAt: isoAt(a.createdAt),
  lastTriggeredAt: a.lastTriggeredAt === null ? null : isoAt(a.lastTriggeredAt)
})

const fullKeyOnly = (principal: Principal, what: string): ApiFailure | undefined =>
  principal.keyKind === "full" ? undefined : fail("FORBIDDEN", `${what} needs a full pk_live_ key`)

export class PriceAlertService extends Context.Service<
  PriceAlertService,
  {
    readonly create: (principal: Principal, input: CreateAlert) => Effect.Effect<Schemas["PriceAlert"], ApiFailure | StoreError>
    readonly list: (
      principal: Principal,
      query: { readonly state?: PriceAlertDoc["state"] | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) => Effect.Effect<Schemas["PriceAlertList"], ApiFailure | StoreError>
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
      const refused = fullKeyOnly(principal, "creating a price alert")
      if (refused !== undefined) return yield* Effect.fail(refused)
      // An unknown but well-formed symbol is a 400 here (the operation declares no 404; decisions "Error codes").
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange)).pipe(
        Effect.mapError((e) =>
          e.code === "NOT_FOUND" ? fail("VALIDATION_ERROR", `symbol ${input.symbol} is not listed on ${input.exchange}`, { param: "symbol" }) : e
        )
      )
      if (instrument.exchange !== input.exchange.toUpperCase()) {
        return yield* Effect.fail(
          fail("VALIDATION_ERROR", `${instrument.symbol} is listed on ${instrument.exchange}, not ${input.exchange}`, { param: "exchange" })
        )
      }
      const threshold = parseScaled(input.threshold, 4)
      if (threshold === undefined || threshold <= 0) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "threshold must be positive with at most 4 decimals", { param: "threshold" }))
      }
      const now = yield* clock.now
      const observed = yield* feed.observe(instrument, now)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const active = (yield* all(tx, principal.partition)).filter(isActive).length
          if (active >= MAX_ACTIVE_ALERTS) {
            return yield* Effect.fail(fail("VALIDATION_ERROR", `at most ${MAX_ACTIVE_ALERTS} active price alerts`, { limit: MAX_ACTIVE_ALERTS }))
          }
          const alert: PriceAlertDoc = {
            alertId: yield* entropy.id("alt"),
            partition: principal.partition,
            clientAlertId: input.clientAlertId ?? null,
            symbol: instrument.symbol,
            exchange: instrument.exchange,
            condition: input.condition,
            threshold,
            currency: findExchange(instrument.exchange)?.currency ?? "USD",
            repeat: input.repeat ?? false,
            state: "ARMED",
            lastPrice: observed.price,
            triggerCount: 0,
            createdAt: now,
            lastTriggeredAt: null,
            deleted: false
          }
          yield* save(tx, alert)
          yield* scheduler.schedule(tx, EVALUATE_JOB, nextRefresh(now), { alertId: alert.alertId })
          return alertToWire(alert)
        })
      )
    })

    const list = Effect.fn("PriceAlertService.list")(function* (
      principal: Principal,
      query: { readonly state?: PriceAlertDoc["state"] | undefined; readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) {
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
      const refused = fullKeyOnly(principal, "deleting a price alert")
      if (refused !== undefined) return yield* Effect.fail(refused)
      const alert = yield* find(principal, alertId)
      yield* store.transact((tx) => save(tx, { ...alert, deleted: true }))
      const answer: Schemas["DeletePriceAlertResponse"] = { alertId, deleted: true, message: "Price alert deleted." }
      return answer
    })

    // Each live alert looks at the delayed price at every refresh that publishes a new one (the capture 15 minutes
    // earlier was made while its exchange was open: D-243), then books its next look.
    yield* scheduler.register(EVALUATE_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { alertId } = payload as { alertId: string }
        const found = yield* PriceAlerts.get(tx, alertId)
        if (Option.isNone(found) || !isActive(found.value)) return
        const alert = found.value
        const now = yield* clock.now
        const instrument = symbols.listingOf(alert.symbol)
        const exchange = findExchange(alert.exchange)
        if (instrument !== undefined && exchange !== undefined && isOpen(exchange, now - DELAY_SECONDS * 1000)) {
          const observed = yield* feed.observe(instrument, now)
          const next = observeAlert(alert.state, alert, observed.price)
          const updated: PriceAlertDoc = {
            ...alert,
            state: next.state,
            lastPrice: observed.price,
            triggerCount: alert.triggerCount + (next.fired ? 1 : 0),
            lastTriggeredAt: next.fired ? now : alert.lastTriggeredAt
          }
          yield* save(tx, updated)
          if (next.fired) {
            const data: Schemas["PriceAlertEventData"] = {
              alertId,
              clientAlertId: alert.clientAlertId,
              symbol: alert.symbol,
              exchange: alert.exchange,
              condition: alert.condition,
              threshold: price4ToWire(alert.threshold),
              currency: alert.currency,
              price: price4ToWire(observed.price),
              repeat: alert.repeat,
              state: next.state === "TRIGGERED" ? "TRIGGERED" : "DISARMED",
              triggerCount: updated.triggerCount,
              triggeredAt: isoAt(now),
              asOf: isoAt(observed.asOf)
            }
            yield* events.append(tx, alert.partition, "price.alert", data)
          }
          if (!isActive(updated)) return
        }
        yield* scheduler.schedule(tx, EVALUATE_JOB, nextRefresh(now), { alertId })
      })
    )

    return PriceAlertService.of({ create, list, get, remove })
  })

  static readonly layer = Layer.effect(PriceAlertService, PriceAlertService.make)
}
