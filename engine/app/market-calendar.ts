/**
 * MarketCalendarService: the market clock as partners see it. `GET /market/status` (phase map, D-043),
 * `GET /market/exchanges` (reference data, D-092), `GET /market/holidays` (closures and early closes, D-093), their
 * `/market-data/**` aliases, and the `market.status` event (D-077 as revised by D-231): one Scheduler job chain walks
 * every exchange's phase boundaries on the engine clock and appends the changes to the log of each partition that has
 * an active webhook subscribed to `market.status` (D-232); the chain runs only while such a webhook exists.
 * Owns the answers' shapes and the watch (its state document and job). Does not own the calendars themselves
 * (domain/calendar.ts), webhook registrations (app/webhooks/service.ts, which starts the watch) nor deliveries.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import {
  EXCHANGES,
  type Exchange,
  type ExchangeCode,
  findExchange,
  hhmm,
  holidayOn,
  holidaysBetween,
  localIso,
  localParts,
  type MarketPhase,
  nextPhaseChange,
  nextSessionAfter,
  phaseAt,
  sessionToday
} from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { MARKET_STATUS_EVENT } from "../domain/webhooks/decide-webhook.ts"
import { MarketWatch, type MarketWatchDoc, Partners, Webhooks } from "./docs.ts"
import { MarketWatchPayload } from "./job-payloads.ts"
import { partitionOf } from "./principal.ts"

export const WATCH_JOB = "market.status.watch"
/** D-093: a holiday window spans at most this many days (inclusive). */
export const MAX_HOLIDAY_WINDOW_DAYS = 366

const DAY_MS = 86_400_000
const GLOBAL = "global"
const WATCH_ID = "market-status"

/** The instant of the earliest phase change of any exchange after `now`. */
const nextBoundary = (now: number): number => {
  let next = Number.POSITIVE_INFINITY
  for (const e of EXCHANGES) {
    const change = nextPhaseChange(e, now)
    if (change !== undefined && change < next) next = change
  }
  // Every calendar has a session within a month, so this is always finite; a day later is a harmless fallback.
  return Number.isFinite(next) ? next : now + DAY_MS
}

const phasesAt = (now: number): Record<string, MarketPhase> => Object.fromEntries(EXCHANGES.map((e) => [e.code, phaseAt(e, now)]))

/**
 * Starts the market.status watch in `tx` unless it already runs (called by the webhook service when a registration
 * subscribes to `market.status`): records every exchange's phase at `now` and books the job at the next boundary.
 */
export const startMarketWatch = (tx: Tx, now: number): Effect.Effect<void, StoreError> =>
  Effect.gen(function* () {
    const found = yield* MarketWatch.get(tx, WATCH_ID)
    if (Option.isSome(found) && found.value.running) return
    const dueAt = nextBoundary(now)
    const doc: MarketWatchDoc = { running: true, phases: phasesAt(now), dueAt }
    yield* MarketWatch.put(tx, WATCH_ID, GLOBAL, WATCH_ID, doc)
    yield* tx.scheduleJob({ kind: WATCH_JOB, dueAt, payload: { dueAt } })
  })

/** Partitions (partner and environment) with an active webhook subscribed to market.status: who hears of changes. */
const subscribedPartitions = (tx: ReadTx): Effect.Effect<ReadonlyArray<string>, StoreError> =>
  Effect.gen(function* () {
    const partners = yield* Partners.list(tx, GLOBAL, { limit: 1_000_000, order: "asc" })
    const out: Array<string> = []
    for (const p of partners) {
      if (p.status === "suspended") continue
      for (const env of ["sandbox", "production"] as const) {
        const partition = partitionOf(p.partnerId, env)
        const hooks = yield* Webhooks.list(tx, partition, { limit: 1_000, order: "asc" })
        if (hooks.some((w) => !w.deleted && w.status === "active" && w.events.includes(MARKET_STATUS_EVENT))) out.push(partition)
      }
    }
    return out
  })

// ---------------------------------------------------------------------------------------------------------------
// Answers (pure given the instant)
// ---------------------------------------------------------------------------------------------------------------

const isoOrNull = (ms: number | undefined): string | null => (ms === undefined ? null : isoAt(ms))

type SessionFields = Pick<Schemas["ExchangeStatus"], "isOpen" | "status" | "opensAt" | "closesAt" | "nextOpen" | "nextClose" | "holidayName">

/** Every boundary is on a whole minute, so an exchange's session fields are the same all minute: computed once. */
const lastMinute = new Map<string, { readonly minute: number; readonly fields: SessionFields }>()

const sessionFields = (e: Exchange, now: number): SessionFields => {
  const minute = Math.floor(now / 60_000)
  const cached = lastMinute.get(e.code)
  if (cached !== undefined && cached.minute === minute) return cached.fields
  const status = phaseAt(e, now)
  const today = sessionToday(e, now)
  const next = nextSessionAfter(e, now)
  const fields: SessionFields = {
    isOpen: status === "OPEN",
    status,
    opensAt: isoOrNull(today?.opensAt),
    closesAt: isoOrNull(today?.closesAt),
    nextOpen: isoOrNull(next?.opensAt),
    nextClose: status === "OPEN" ? isoOrNull(today?.closesAt) : isoOrNull(next?.closesAt),
    holidayName: status === "HOLIDAY" ? (holidayOn(e, localParts(now, e.timeZone).date)?.name ?? null) : null
  }
  lastMinute.set(e.code, { minute, fields })
  return fields
}

/** One exchange's phase and session times at `now` (D-043). Pure (the per-minute memo cannot change an answer). */
export const exchangeStatus = (e: Exchange, now: number): Schemas["ExchangeStatus"] => {
  const fields = sessionFields(e, now)
  return {
    exchange: e.code,
    exchangeMic: e.mic,
    name: e.name,
    country: e.country,
    timezone: e.timeZone,
    isOpen: fields.isOpen,
    status: fields.status,
    localTime: localIso(now, e.timeZone),
    opensAt: fields.opensAt,
    closesAt: fields.closesAt,
    nextOpen: fields.nextOpen,
    nextClose: fields.nextClose,
    holidayName: fields.holidayName
  }
}

/** One exchange's reference data at `now` (D-092). Pure. */
export const exchangeInfo = (e: Exchange, now: number): Schemas["ExchangeInfo"] => ({
  code: e.code,
  mic: e.mic,
  name: e.name,
  country: e.country,
  currency: e.currency,
  timezone: e.timeZone,
  trading_hours: { open: hhmm(e.opensAt), close: hhmm(e.closesAt) },
  settlement: { cycle: `T+${e.settlementDays}`, cycleDays: e.settlementDays },
  market_status: phaseAt(e, now),
  symbol_suffix: `.${e.suffix}`
})

/** The `exchange` query parameter (case-insensitive) as an exchange, all of them when absent, or UNKNOWN_EXCHANGE. */
export const exchangesFor = (exchange: string | undefined): ReadonlyArray<Exchange> | ApiFailure => {
  if (exchange === undefined) return EXCHANGES
  const found = findExchange(exchange.toUpperCase())
  return found === undefined ? fail("UNKNOWN_EXCHANGE", `exchange ${exchange} is not recognised`, { param: "exchange" }) : [found]
}

const byCode = (a: Exchange, b: Exchange) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0)

const utcDate = (ms: number) => isoAt(ms).slice(0, 10)
const dayNumber = (date: string) => Date.parse(`${date}T00:00:00.000Z`) / DAY_MS

/** The holiday window (D-093): default today (UTC) to 365 days ahead; reversed or over 366 days is VALIDATION_ERROR. */
export const holidayWindow = (now: number, from: string | undefined, to: string | undefined): { from: string; to: string } | ApiFailure => {
  const start = from ?? (to !== undefined && to < utcDate(now) ? to : utcDate(now))
  const end = to ?? utcDate(Date.parse(`${start}T00:00:00.000Z`) + (MAX_HOLIDAY_WINDOW_DAYS - 1) * DAY_MS)
  if (end < start) return fail("VALIDATION_ERROR", `to (${end}) is before from (${start})`, { param: "to" })
  const days = dayNumber(end) - dayNumber(start) + 1
  if (days > MAX_HOLIDAY_WINDOW_DAYS)
    return fail("VALIDATION_ERROR", `the window covers ${days} days; at most ${MAX_HOLIDAY_WINDOW_DAYS}`, { param: "to", max: MAX_HOLIDAY_WINDOW_DAYS })
  return { from: start, to: end }
}

export interface HolidaysQuery {
  readonly exchange?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
}

export class MarketCalendarService extends Context.Service<
  MarketCalendarService,
  {
    readonly status: (query: { readonly exchange?: string | undefined }) => Effect.Effect<Schemas["MarketStatusResponse"], ApiFailure>
    readonly exchanges: (query: { readonly exchange?: string | undefined }) => Effect.Effect<Schemas["ExchangeListResponse"], ApiFailure>
    readonly holidays: (query: HolidaysQuery) => Effect.Effect<Schemas["HolidayListResponse"], ApiFailure>
  }
>()("sokoni/MarketCalendarService") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const scheduler = yield* Scheduler
    const events = yield* EventLog
    yield* Store

    const status = Effect.fn("MarketCalendarService.status")(function* (query: { readonly exchange?: string | undefined }) {
      const chosen = yield* liftFailure(exchangesFor(query.exchange))
      const now = yield* clock.nowHere()
      const map: Partial<Record<ExchangeCode, Schemas["ExchangeStatus"]>> = {}
      for (const e of chosen) map[e.code] = exchangeStatus(e, now)
      const answer: Schemas["MarketStatusResponse"] = {
        anyOpen: Object.values(map).some((s) => s?.isOpen === true),
        checkedAt: isoAt(now),
        serverTime: isoAt(now),
        exchanges: map
      }
      return answer
    })

    const exchanges = Effect.fn("MarketCalendarService.exchanges")(function* (query: { readonly exchange?: string | undefined }) {
      const chosen = yield* liftFailure(exchangesFor(query.exchange))
      const now = yield* clock.nowHere()
      const data = [...chosen].sort(byCode).map((e) => exchangeInfo(e, now))
      const answer: Schemas["ExchangeListResponse"] = { data, count: data.length }
      return answer
    })

    const holidays = Effect.fn("MarketCalendarService.holidays")(function* (query: HolidaysQuery) {
      const chosen = yield* liftFailure(exchangesFor(query.exchange))
      const now = yield* clock.nowHere()
      const window = yield* liftFailure(holidayWindow(now, query.from, query.to))
      const items: Array<Schemas["Holiday"]> = []
      for (const e of [...chosen].sort(byCode)) {
        for (const h of holidaysBetween(e, window.from, window.to)) {
          items.push({
            exchange: e.code,
            date: h.date,
            name: h.name,
            type: h.closesAt === undefined ? "CLOSED" : "EARLY_CLOSE",
            closesAt: h.closesAt === undefined ? null : hhmm(h.closesAt)
          })
        }
      }
      // by date, then exchange (the exchanges were visited by code, and the sort is stable)
      items.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0))
      const answer: Schemas["HolidayListResponse"] = { holidays: items, count: items.length, from: window.from, to: window.to }
      return answer
    })

    // The watch: at each boundary, append the exchanges whose phase changed to every subscribed partition's log, then
    // book the next boundary; with no subscriber left, stop (a new subscription starts it again).
    yield* scheduler.register(WATCH_JOB, MarketWatchPayload, (tx, { dueAt }) =>
      Effect.gen(function* () {
        const found = yield* MarketWatch.get(tx, WATCH_ID)
        if (Option.isNone(found) || !found.value.running) return
        const now = yield* clock.nowHere()
        const partitions = yield* subscribedPartitions(tx)
        if (partitions.length === 0) {
          yield* MarketWatch.put(tx, WATCH_ID, GLOBAL, WATCH_ID, { ...found.value, running: false })
          return
        }
        const phases = phasesAt(now)
        for (const e of EXCHANGES) {
          const previous = found.value.phases[e.code] ?? null
          const current = phases[e.code] as MarketPhase
          if (previous === current) continue
          const data: Schemas["MarketStatusEventData"] = {
            exchange: e.code,
            status: current,
            previousStatus: previous,
            changedAt: isoAt(Math.min(dueAt, now)),
            nextChangeAt: isoOrNull(nextPhaseChange(e, now))
          }
          for (const partition of partitions) yield* events.append(tx, partition, MARKET_STATUS_EVENT, data)
        }
        const next = nextBoundary(now)
        yield* MarketWatch.put(tx, WATCH_ID, GLOBAL, WATCH_ID, { running: true, phases, dueAt: next })
        yield* scheduler.scheduleHere(tx, WATCH_JOB, next, { dueAt: next })
      })
    )

    return MarketCalendarService.of({ status, exchanges, holidays })
  })

  static readonly layer = Layer.effect(MarketCalendarService, MarketCalendarService.make)
}
