/**
 * Price alerts' rules (spec "Price alerts", D-053, D-076, D-243) as pure functions: who may create or delete one, a
 * request's terms, the 200 active alerts cap, the new alert, and what an evaluation at a refresh does (the state
 * machine of domain/price-alert.ts applied, `price.alert` when it fires, the next look while it is live). The
 * dispatcher (app/price-alerts/service.ts) resolves the symbol, observes the price, draws the alert's id once the cap
 * allows it (E-350) and writes the plan.
 * Owns: these rules and the event's payload. Does not own the state machine (domain/price-alert.ts) nor prices.
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { Instrument } from "../instruments.ts"
import { parseScaled, type Price4, price4ToWire } from "../money.ts"
import { observeAlert } from "../price-alert.ts"

export const MAX_ACTIVE_ALERTS = 200

/** A stored price alert (D-053, D-076), in its partner's production partition, sorted by creation (app/docs.ts PriceAlerts). */
export interface AlertRecord {
  readonly alertId: string
  readonly partition: string
  readonly clientAlertId: string | null
  readonly symbol: string
  readonly exchange: string
  readonly condition: "above" | "below"
  /** Local currency, 1/10000. */
  readonly threshold: number
  readonly currency: string
  readonly repeat: boolean
  readonly state: "ARMED" | "TRIGGERED" | "DISARMED"
  /** Last delayed price seen, 1/10000 of the local currency. */
  readonly lastPrice: number
  readonly triggerCount: number
  readonly createdAt: number
  readonly lastTriggeredAt: number | null
  readonly deleted: boolean
}

export interface CreateAlert {
  readonly symbol: string
  readonly exchange: string
  readonly condition: "above" | "below"
  readonly threshold: number
  readonly repeat?: boolean | undefined
  readonly clientAlertId?: string | undefined
}

const isoAt = (ms: number) => new Date(ms).toISOString()

/** Whether an alert is live: not deleted, not disarmed (a one-shot alert that fired). */
export const isActive = (a: Pick<AlertRecord, "deleted" | "state">) => !a.deleted && a.state !== "DISARMED"

/** Creating and deleting alerts needs a full production key. */
export const fullKeyOnly = (keyKind: string, what: string): ApiFailure | undefined =>
  keyKind === "full" ? undefined : fail("FORBIDDEN", `${what} needs a full pk_live_ key`)

/** An unknown but well-formed symbol is a 400 here (the operation declares no 404; decisions "Error codes"). */
export const unlistedSymbol = (refusal: ApiFailure, input: CreateAlert): ApiFailure =>
  refusal.code === "NOT_FOUND" ? fail("VALIDATION_ERROR", `symbol ${input.symbol} is not listed on ${input.exchange}`, { param: "symbol" }) : refusal

/** The threshold (1/10000, positive), once the listing is on the exchange the request names. */
export const alertThreshold = (input: CreateAlert, instrument: Instrument): number | ApiFailure => {
  if (instrument.exchange !== input.exchange.toUpperCase()) {
    return fail("VALIDATION_ERROR", `${instrument.symbol} is listed on ${instrument.exchange}, not ${input.exchange}`, { param: "exchange" })
  }
  const threshold = parseScaled(input.threshold, 4)
  return threshold === undefined || threshold <= 0
    ? fail("VALIDATION_ERROR", "threshold must be positive with at most 4 decimals", { param: "threshold" })
    : threshold
}

/** At most 200 active alerts per partner environment. */
export const refuseMoreAlerts = (activeCount: number): ApiFailure | undefined =>
  activeCount >= MAX_ACTIVE_ALERTS ? fail("VALIDATION_ERROR", `at most ${MAX_ACTIVE_ALERTS} active price alerts`, { limit: MAX_ACTIVE_ALERTS }) : undefined

/** A new alert: ARMED, remembering the price seen at creation; its first evaluation at the next refresh. */
export const decideCreateAlert = (
  command: { readonly partition: string; readonly input: CreateAlert; readonly instrument: Instrument; readonly threshold: number; readonly currency: string },
  observedPrice: Price4,
  now: number,
  firstLook: number,
  ids: { readonly alertId: string }
) => {
  const { input, instrument } = command
  const alert: AlertRecord = {
    alertId: ids.alertId,
    partition: command.partition,
    clientAlertId: input.clientAlertId ?? null,
    symbol: instrument.symbol,
    exchange: instrument.exchange,
    condition: input.condition,
    threshold: command.threshold,
    currency: command.currency,
    repeat: input.repeat ?? false,
    state: "ARMED",
    lastPrice: observedPrice,
    triggerCount: 0,
    createdAt: now,
    lastTriggeredAt: null,
    deleted: false
  }
  return { alert, job: { dueAt: firstLook, alertId: alert.alertId }, answer: alertToWire(alert) }
}

export const alertToWire = (a: AlertRecord): Schemas["PriceAlert"] => ({
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

/**
 * An evaluation (D-243): with a delayed price captured in session (`observed`), the alert moves through its state
 * machine and `price.alert` is announced when it fires; a live alert books its next look, a disarmed one stops.
 */
export const decideEvaluation = <A extends AlertRecord>(
  alert: A,
  observed: { readonly price: Price4; readonly asOf: number } | undefined,
  now: number,
  nextLook: number
) => {
  const again = { dueAt: nextLook, alertId: alert.alertId }
  if (observed === undefined) return { job: again }
  const next = observeAlert(alert.state, alert, observed.price)
  const updated: A = {
    ...alert,
    state: next.state,
    lastPrice: observed.price,
    triggerCount: alert.triggerCount + (next.fired ? 1 : 0),
    lastTriggeredAt: next.fired ? now : alert.lastTriggeredAt
  }
  const data: Schemas["PriceAlertEventData"] | undefined = next.fired
    ? {
        alertId: alert.alertId,
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
    : undefined
  return { updated, event: data === undefined ? undefined : { name: "price.alert" as const, data }, job: isActive(updated) ? again : undefined }
}
