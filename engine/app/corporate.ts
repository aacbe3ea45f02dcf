/**
 * Corporate: dividends (list, calendar, one dividend, a listing's history) and corporate actions (list, one
 * action), from the run's seeded schedules (domain/reference) and those raised through the control API (read from
 * the store, D-302; a raised record replaces the seeded one of the same id). A dividend or action exists once announced (its
 * announcement is at or before now); where it stands (status, calendarStage) is evaluated at now, on the exchange's
 * local date. Owns the wire shapes of D-050, D-096 and D-097 (the action's base fields for its events too) and their filters.
 * Does not own the schedules (domain/reference), nor raising actions and paying holders (app/corporate-actions.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import type { ExchangeCode } from "../domain/calendar.ts"
import type { Instrument } from "../domain/instruments.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { price4ToWire } from "../domain/money.ts"
import { timeKey } from "../domain/reference/book.ts"
import { actionBaseToWire } from "../domain/corporate-actions/action-record.ts"
import { type ActionRecord, type ActionStatus, type ActionType, actionStatus } from "../domain/reference/corporate-actions.ts"
import { type DividendRecord, type DividendStatus, dividendStage } from "../domain/reference/dividends.ts"
import { dateMs } from "../domain/reference/seeded.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError } from "../store/port.ts"
import { checkLimit } from "./cursor.ts"
import { SimActions, SimDividends } from "./docs.ts"
import { Symbols } from "./symbols.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import { exchangeFilter, localDate, rangeCheck, ReferenceData, symbolFilter } from "./reference-data.ts"

export interface DividendQuery {
  readonly exchange?: string | undefined
  readonly symbol?: string | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly status?: DividendStatus | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export interface CalendarQuery extends DividendQuery {
  readonly all?: boolean | undefined
}

export interface ActionQuery {
  readonly exchange?: string | undefined
  readonly symbol?: string | undefined
  readonly actionType?: ActionType | undefined
  readonly status?: ActionStatus | undefined
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const GLOBAL = "global"
const dividendKey = (d: DividendRecord) => `${d.exDate}|${d.dividendId}`
const actionKey = (a: ActionRecord) => timeKey(a.announcedAt, a.actionId)

export const dividendToWire = (d: DividendRecord, now: number): Schemas["Dividend"] => {
  const { status, calendarStage } = dividendStage(d, localDate(d.exchange, now))
  return {
    dividendId: d.dividendId,
    symbol: d.symbol,
    exchange: d.exchange as ExchangeCode,
    name: d.name,
    dividendPerShare: price4ToWire(d.perShare),
    currency: d.currency,
    type: d.type,
    exDate: d.exDate,
    recordDate: d.recordDate,
    paymentDate: d.paymentDate,
    status,
    calendarStage
  }
}

/** The fields every corporate action shows, in each `corporateaction.*` payload and as a resource (D-074, D-097). */
export const actionToWire = (a: ActionRecord, now: number): Schemas["CorporateAction"] => {
  const { status, updatedAt } = actionStatus(a, now)
  return {
    ...actionBaseToWire(a),
    status,
    details: { ...a.details },
    updatedAt: isoAt(updatedAt)
  }
}

export class CorporateService extends Context.Service<
  CorporateService,
  {
    readonly listDividends: (query: DividendQuery, partition: string) => Effect.Effect<Schemas["DividendList"], ApiFailure | StoreError>
    readonly dividendCalendar: (query: CalendarQuery, partition: string) => Effect.Effect<Schemas["DividendList"], ApiFailure | StoreError>
    readonly getDividend: (dividendId: string) => Effect.Effect<Schemas["Dividend"], ApiFailure | StoreError>
    readonly dividendHistory: (symbol: string, limit: number | undefined) => Effect.Effect<Schemas["DividendHistory"], ApiFailure | StoreError>
    readonly listActions: (query: ActionQuery, partition: string) => Effect.Effect<Schemas["CorporateActionList"], ApiFailure | StoreError>
    readonly getAction: (actionId: string) => Effect.Effect<Schemas["CorporateAction"], ApiFailure | StoreError>
  }
>()("sokoni/CorporateService") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const { book } = yield* ReferenceData

    const store = yield* Store
    const symbols = yield* Symbols
    /** Whether a record (declared under the symbol of its day) is of the listing: its symbol then or now (D-342). */
    const ofListing = (recordSymbol: string, instrument: Instrument) =>
      recordSymbol === instrument.symbol || symbols.listingOf(recordSymbol)?.id === instrument.id

    /**
     * Dividends declared by `now`, newest ex-date first (next year's may already be declared): the seeded schedule and
     * those raised through the control API (D-302).
     */
    const declared = (now: number) =>
      Effect.map(
        store.read((tx) => SimDividends.list(tx, GLOBAL, { limit: 100_000, order: "asc" })),
        (raised): ReadonlyArray<DividendRecord> => {
          const seeded = book.dividendsThrough(new Date(now).getUTCFullYear() + 1)
          const all = raised.length === 0 ? seeded : [...seeded, ...raised].sort((a, b) => (dividendKey(a) < dividendKey(b) ? 1 : -1))
          return all.filter((d) => d.announcedAt <= now)
        }
      )
    /** Actions announced by `now`, newest first: seeded and raised; a raised record replaces a seeded one (a resumption). */
    const announced = (now: number) =>
      Effect.map(
        store.read((tx) => SimActions.list(tx, GLOBAL, { limit: 100_000, order: "asc" })),
        (raised): ReadonlyArray<ActionRecord> => {
          const seeded = book.actions()
          if (raised.length === 0) return seeded.filter((a) => a.announcedAt <= now)
          const ids = new Set(raised.map((a) => a.actionId))
          return [...seeded.filter((a) => !ids.has(a.actionId)), ...raised]
            .sort((a, b) => (actionKey(a) < actionKey(b) ? 1 : -1))
            .filter((a) => a.announcedAt <= now)
        }
      )

    /** The checks and the filter shared by the list and the calendar, with the filters' cursor scope. */
    const dividendFilter = Effect.fnUntraced(function* (query: DividendQuery, now: number) {
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const instrument = yield* liftFailure(symbolFilter(symbols.resolve, query.symbol, exchange))
      yield* liftFailure(rangeCheck(query.from, query.to))
      const { from, to, status } = query
      const keep = (d: DividendRecord) => {
        const exAt = dateMs(d.exDate)
        return (
          (exchange === undefined || d.exchange === exchange) &&
          (instrument === undefined || ofListing(d.symbol, instrument)) &&
          (from === undefined || exAt >= from) &&
          (to === undefined || exAt <= to) &&
          (status === undefined || dividendStage(d, localDate(d.exchange, now)).status === status)
        )
      }
      return { keep, filters: [exchange, instrument?.symbol, from, to, status] }
    })

    const listDividends = Effect.fn("CorporateService.listDividends")(function* (query: DividendQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const now = yield* clock.nowHere()
      const { keep, filters } = yield* dividendFilter(query, now)
      const scope = scopeOf("dividends", partition, filters)
      const page = yield* liftFailure(pageOf((yield* declared(now)).filter(keep), dividendKey, "desc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["DividendList"] = {
        dividends: page.items.map((d) => dividendToWire(d, now)),
        ...pageMeta(page)
      }
      return list
    })

    const dividendCalendar = Effect.fn("CorporateService.dividendCalendar")(function* (query: CalendarQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const now = yield* clock.nowHere()
      const { keep, filters } = yield* dividendFilter(query, now)
      const all = query.all === true
      // Without all=true: not withdrawn, and paid today or later (D-096).
      const upcoming = (d: DividendRecord) => {
        const today = localDate(d.exchange, now)
        return dividendStage(d, today).status !== "CANCELLED" && d.paymentDate >= today
      }
      const soonestFirst = (yield* declared(now)).filter((d) => keep(d) && (all || upcoming(d))).reverse()
      const scope = scopeOf("dividend-calendar", partition, [...filters, all])
      const page = yield* liftFailure(pageOf(soonestFirst, dividendKey, "asc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["DividendList"] = {
        dividends: page.items.map((d) => dividendToWire(d, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getDividend = Effect.fn("CorporateService.getDividend")(function* (dividendId: string) {
      const now = yield* clock.nowHere()
      const found = (yield* declared(now)).find((d) => d.dividendId === dividendId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `dividend ${dividendId} was not found`))
      return dividendToWire(found, now)
    })

    const dividendHistory = Effect.fn("CorporateService.dividendHistory")(function* (symbol: string, limit: number | undefined) {
      const max = yield* liftFailure(checkLimit(limit, 20, 100))
      const instrument = yield* liftFailure(symbols.resolve(symbol))
      const now = yield* clock.nowHere()
      const dividends = (yield* declared(now))
        .filter((d) => ofListing(d.symbol, instrument))
        .slice(0, max)
        .map((d) => dividendToWire(d, now))
      const history: Schemas["DividendHistory"] = { symbol: instrument.symbol, dividends, count: dividends.length }
      return history
    })

    const listActions = Effect.fn("CorporateService.listActions")(function* (query: ActionQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const instrument = yield* liftFailure(symbolFilter(symbols.resolve, query.symbol, exchange))
      yield* liftFailure(rangeCheck(query.from, query.to))
      const { actionType, status, from, to } = query
      const now = yield* clock.nowHere()
      const matching = (yield* announced(now)).filter(
        (a) =>
          (exchange === undefined || a.exchange === exchange) &&
          (instrument === undefined || ofListing(a.symbol, instrument)) &&
          (actionType === undefined || a.actionType === actionType) &&
          (status === undefined || actionStatus(a, now).status === status) &&
          (from === undefined || a.effectiveAt >= from) &&
          (to === undefined || a.effectiveAt <= to)
      )
      const scope = scopeOf("corporate-actions", partition, [exchange, instrument?.symbol, actionType, status, from, to])
      const page = yield* liftFailure(pageOf(matching, actionKey, "desc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["CorporateActionList"] = {
        corporateActions: page.items.map((a) => actionToWire(a, now)),
        ...pageMeta(page)
      }
      return list
    })

    const getAction = Effect.fn("CorporateService.getAction")(function* (actionId: string) {
      const now = yield* clock.nowHere()
      const found = (yield* announced(now)).find((a) => a.actionId === actionId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `corporate action ${actionId} was not found`))
      return actionToWire(found, now)
    })

    return CorporateService.of({ listDividends, dividendCalendar, getDividend, dividendHistory, listActions, getAction })
  })

  static readonly layer = Layer.effect(CorporateService, CorporateService.make)
}
