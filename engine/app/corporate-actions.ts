/**
 * CorporateActions: actions the operator raises through the control API (`POST /_sim/corporate-actions`, D-302) and
 * their effect on every partner's holders, in one transaction each: a dividend credits every holder's wallet from the
 * issuer (ledger entry, `dividend.paid` per partition); a split, reverse split or bonus issue rescales holdings (cash in
 * lieu of fractions) and the price path; a suspension, resumption or delisting sets the listing's status; a rights
 * issue entitles its holders (taken up through app/rights.ts); a symbol change renames the listing now or at its
 * effective date (D-340). Every action rejects the listing's open orders first where it changes what they trade
 * (D-304), and appends its `corporateaction.*` event and the generic `corporateaction.declared` (D-074).
 * Owns the raised records (SimActions, SimDividends). Does not own the seeded schedules (domain/reference), how they
 * are listed (app/corporate.ts), order rejection (app/trading/desk.ts), listing statuses (app/listings.ts), symbols
 * (app/symbols.ts, app/symbol-change.ts), rights take-up (app/rights.ts) nor prices.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlSchemas, Schemas } from "../contract/wire.ts"
import { findExchange } from "../domain/calendar.ts"
import { cashInLieuCents, dividendCents, MAX_RATIO, splitUnits } from "../domain/corporate.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { rateFor } from "../domain/fx.ts"
import type { Instrument } from "../domain/instruments.ts"
import { ISSUER, transfer, walletAccount } from "../domain/ledger.ts"
import { centsToWire, parseScaled, price4ToWire } from "../domain/money.ts"
import type { ActionRecord, ActionType } from "../domain/reference/corporate-actions.ts"
import type { DividendRecord } from "../domain/reference/dividends.ts"
import { addWeekdays, dateMs, dayStart, isCalendarDate, isoDate } from "../domain/reference/seeded.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { rememberRescale } from "../sim/durable-time.ts"
import { MarketFeed, type PinResult } from "../sim/market-feed.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { findSubAccount } from "./accounts.ts"
import { SimActions, SimDividends, timeSortKey, UNIT_CHANGES } from "./docs.ts"
import { ActionPayload } from "./job-payloads.ts"
import { holdersOf, putHolding } from "./holders.ts"
import { actionOf, announceAction, saveAction } from "./action-records.ts"
import { postEntry } from "./ledger.ts"
import { Listings } from "./listings.ts"
import { allotmentAt, entitleIn } from "./rights.ts"
import { Symbols } from "./symbols.ts"
import { SYMBOL_CHANGE_JOB, symbolChanges } from "./symbol-change.ts"
import { ReferenceData, localDate } from "./reference-data.ts"
import { TradingService } from "./trading/service.ts"

const GLOBAL = "global"

export type RaiseType = "DIVIDEND" | "SPLIT" | "REVERSE_SPLIT" | "BONUS" | "SUSPENSION" | "RESUMPTION" | "DELISTING" | "RIGHTS_ISSUE" | "SYMBOL_CHANGE"

export interface RaiseInput {
  readonly actionType: RaiseType
  readonly symbol: string
  readonly exchange?: string | undefined
  readonly description?: string | undefined
  readonly dividendPerShare?: number | undefined
  readonly ratioFrom?: number | undefined
  readonly ratioTo?: number | undefined
  readonly reason?: string | undefined
  readonly expectedResumeAt?: string | undefined
  readonly ratioHeld?: number | undefined
  readonly ratioEntitled?: number | undefined
  readonly subscriptionPrice?: number | undefined
  readonly subscriptionDeadline?: string | undefined
  readonly newSymbol?: string | undefined
  readonly effectiveDate?: string | undefined
}

/** Rejection codes of the listing's open orders (D-304, extending D-008). */
export const REJECT_SPLIT = "CORPORATE_ACTION"
export const REJECT_SUSPENDED = "INSTRUMENT_SUSPENDED"
export const REJECT_DELISTED = "INSTRUMENT_DELISTED"

const invalid = (param: string, message: string) => fail("VALIDATION_ERROR", message, { param })

const wholeRatio = (value: number | undefined, param: string): number | ApiFailure =>
  value !== undefined && Number.isSafeInteger(value) && value >= 1 && value <= MAX_RATIO
    ? value
    : invalid(param, `${param} must be a whole number from 1 to ${MAX_RATIO}`)

/** The split's ratios, checked against its type: a split and a bonus add units, a reverse split removes them. */
const splitRatios = (input: RaiseInput): { readonly ratioFrom: number; readonly ratioTo: number } | ApiFailure => {
  const ratioFrom = wholeRatio(input.ratioFrom, "ratioFrom")
  if (typeof ratioFrom !== "number") return ratioFrom
  const ratioTo = wholeRatio(input.ratioTo, "ratioTo")
  if (typeof ratioTo !== "number") return ratioTo
  if (input.actionType === "REVERSE_SPLIT" ? ratioTo >= ratioFrom : ratioTo <= ratioFrom) {
    return invalid("ratioTo", `a ${input.actionType} needs ratioTo ${input.actionType === "REVERSE_SPLIT" ? "below" : "above"} ratioFrom`)
  }
  return { ratioFrom, ratioTo }
}

export class CorporateActions extends Context.Service<
  CorporateActions,
  {
    readonly raise: (input: RaiseInput) => Effect.Effect<ControlSchemas["CorporateActionResult"], ApiFailure | StoreError>
  }
>()("sokoni/CorporateActions") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog
    const feed = yield* MarketFeed
    const listings = yield* Listings
    const trading = yield* TradingService
    const { book } = yield* ReferenceData
    const symbols = yield* Symbols
    const scheduler = yield* Scheduler

    const announce = (tx: Tx, event: string, a: ActionRecord, extra: Record<string, unknown>) => announceAction(events, tx, event, a, extra)

    /** What the answer reports besides the action. */
    interface Outcome {
      readonly action: ActionRecord | undefined
      readonly dividend: DividendRecord | undefined
      readonly accountsAffected: number
      readonly ordersRejected: ReadonlyArray<string>
      readonly totalUsdCents: number | null
      readonly listingStatus: Instrument["listingStatus"]
      readonly rescale: { readonly ratioFrom: number; readonly ratioTo: number } | undefined
    }

    const payDividend = (tx: Tx, instrument: Instrument, input: RaiseInput, dividendId: string, now: number) =>
      Effect.gen(function* () {
        const perShare = input.dividendPerShare === undefined ? undefined : parseScaled(input.dividendPerShare, 4)
        if (perShare === undefined || perShare <= 0) {
          return yield* Effect.fail(invalid("dividendPerShare", "a DIVIDEND needs dividendPerShare above 0, local currency, at most 4 decimals"))
        }
        const currency = findExchange(instrument.exchange)?.currency ?? "USD"
        const rate = rateFor(currency)
        if (rate === undefined) return yield* Effect.fail(fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`))
        const today = localDate(instrument.exchange, now)
        const dividend: DividendRecord = {
          dividendId,
          symbol: instrument.symbol,
          exchange: instrument.exchange,
          name: instrument.name,
          perShare,
          currency,
          type: "CASH",
          announcedAt: now,
          exDate: today,
          recordDate: today,
          paymentDate: today,
          cancelledOn: null
        }
        yield* SimDividends.put(tx, dividendId, GLOBAL, timeSortKey(now, dividendId), dividend)
        const holders = yield* holdersOf(tx, instrument.symbol)
        const byPartition = new Map<string, { readonly distributions: Array<Schemas["DividendDistribution"]>; cents: number }>()
        let total = 0
        for (const h of holders) {
          const cents = dividendCents(h.holding.quantity, perShare, rate)
          if (cents > 0) {
            yield* postEntry(tx, h.partition, {
              kind: "DIVIDEND",
              postings: transfer(ISSUER, walletAccount(h.account), cents),
              at: now,
              description: `Dividend on ${h.holding.quantity} ${instrument.symbol} at ${currency} ${price4ToWire(perShare)} per share`,
              reference: dividendId
            })
          }
          total += cents
          const externalId =
            h.account === "master"
              ? null
              : (yield* Effect.option(findSubAccount(tx, h.partition, h.account))).pipe(
                  Option.map((s) => s.externalId),
                  Option.getOrNull
                )
          const batch = byPartition.get(h.partition) ?? { distributions: [], cents: 0 }
          batch.distributions.push({ subAccountId: h.account, externalId, units: h.holding.quantity, usdYield: centsToWire(cents) })
          batch.cents += cents
          byPartition.set(h.partition, batch)
        }
        // One dividend.paid per partition, the batch of the symbol (spec: "once per batch grouped by symbol").
        for (const [partition, { distributions, cents: paid }] of byPartition) {
          const payload: Schemas["DividendPaidData"] = {
            symbol: instrument.symbol,
            name: instrument.name,
            dividendPerShare: price4ToWire(perShare),
            currency,
            totalUsdPaid: centsToWire(paid),
            distributionCount: distributions.length,
            distributions
          }
          yield* events.append(tx, partition, "dividend.paid", payload)
        }
        return { accountsAffected: holders.length, totalUsdCents: total, dividend }
      })

    const applySplit = (tx: Tx, instrument: Instrument, input: RaiseInput, actionId: string, now: number) =>
      Effect.gen(function* () {
        const { ratioFrom, ratioTo } = yield* liftFailure(splitRatios(input))
        const what =
          input.actionType === "SPLIT"
            ? `${ratioTo}-for-${ratioFrom} share split`
            : input.actionType === "REVERSE_SPLIT"
              ? `${ratioTo}-for-${ratioFrom} share consolidation`
              : `Bonus issue: ${ratioTo} shares for every ${ratioFrom} held`
        const rejected = yield* trading.rejectOpenIn(
          tx,
          instrument.symbol,
          REJECT_SPLIT,
          `${what} of ${instrument.symbol}: place the order again at the adjusted price`
        )
        const currency = findExchange(instrument.exchange)?.currency ?? "USD"
        const rate = rateFor(currency) ?? 1_000_000
        const price = (yield* feed.observe(instrument, now)).price
        const holders = yield* holdersOf(tx, instrument.symbol)
        for (const h of holders) {
          const split = splitUnits(h.holding.quantity, ratioFrom, ratioTo)
          // Reserved units belong to open SELL orders, rejected above: nothing is reserved any more.
          const reserved = splitUnits(h.holding.reserved, ratioFrom, ratioTo).units
          yield* putHolding(tx, h, { symbol: instrument.symbol, quantity: split.units, reserved: Math.min(reserved, split.units) })
          const cents = split.fraction === 0 ? 0 : cashInLieuCents(split.fraction, ratioTo, price, rate)
          if (cents > 0) {
            yield* postEntry(tx, h.partition, {
              kind: "CASH_IN_LIEU",
              postings: transfer(ISSUER, walletAccount(h.account), cents),
              at: now,
              description: `Cash in lieu of ${split.fraction}/${ratioFrom} of a ${instrument.symbol} share (${what})`,
              reference: actionId
            })
          }
        }
        const action: ActionRecord = {
          ...actionOf(instrument, actionId, input.actionType as ActionType, now, input.description ?? what, { ratioFrom, ratioTo }, true),
          seq: yield* tx.nextId(UNIT_CHANGES)
        }
        yield* saveAction(tx, action)
        yield* announce(tx, "corporateaction.split", action, { ratioFrom, ratioTo })
        return { action, accountsAffected: holders.length, ordersRejected: rejected, rescale: { ratioFrom, ratioTo } }
      })

    /** The suspension in force: the last one raised here, else the seeded one that explains a SUSPENDED listing. */
    const suspensionInForce = (tx: ReadTx, instrument: Instrument) =>
      Effect.gen(function* () {
        // raised under any symbol the listing had (D-342); seeded under its catalogue symbol (its id)
        const raised = (yield* SimActions.list(tx, GLOBAL, { limit: 100_000, order: "desc" })).find(
          (a) => symbols.listingOf(a.symbol)?.id === instrument.id && a.actionType === "SUSPENSION" && a.completedAt === null
        )
        return raised ?? book.actions().find((a) => a.symbol === instrument.id && a.actionType === "SUSPENSION")
      })

    const symbolChange = symbolChanges({ events, symbols, scheduler, clock })
    yield* scheduler.register(SYMBOL_CHANGE_JOB, ActionPayload, symbolChange.onEffectiveDate)

    const raise = Effect.fn("CorporateActions.raise")(function* (input: RaiseInput) {
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange))
      const actionId = yield* entropy.id(input.actionType === "DIVIDEND" ? "div" : "ca")
      const outcome = yield* store.transact(
        (tx): Effect.Effect<Outcome, ApiFailure | StoreError> =>
          Effect.gen(function* () {
            // A global step (E-320): the unit-change seq it takes must not interleave with any partition's fills.
            yield* tx.lockPartition("global")
            const now = yield* clock.now
            const status = yield* listings.statusIn(tx, instrument)
            if (status === "DELISTED") return yield* Effect.fail(fail("CONFLICT", `${instrument.symbol} is delisted: no further corporate actions`))
            const none: Outcome = {
              action: undefined,
              dividend: undefined,
              accountsAffected: 0,
              ordersRejected: [],
              totalUsdCents: null,
              listingStatus: status,
              rescale: undefined
            }
            switch (input.actionType) {
              case "DIVIDEND": {
                const paid = yield* payDividend(tx, instrument, input, actionId, now)
                return { ...none, dividend: paid.dividend, accountsAffected: paid.accountsAffected, totalUsdCents: paid.totalUsdCents } satisfies Outcome
              }
              case "SPLIT":
              case "REVERSE_SPLIT":
              case "BONUS": {
                const split = yield* applySplit(tx, instrument, input, actionId, now)
                return { ...none, ...split } satisfies Outcome
              }
              case "SUSPENSION": {
                if (status === "SUSPENDED") return yield* Effect.fail(fail("CONFLICT", `${instrument.symbol} is already suspended`))
                const resume = input.expectedResumeAt === undefined ? null : Date.parse(input.expectedResumeAt)
                if (resume !== null && (!Number.isFinite(resume) || resume <= now)) {
                  return yield* Effect.fail(invalid("expectedResumeAt", "expectedResumeAt must be a date-time after now"))
                }
                const reason = input.reason ?? "Regulatory review"
                const rejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_SUSPENDED, `trading in ${instrument.symbol} is suspended: ${reason}`)
                yield* listings.setIn(tx, instrument.id, "SUSPENDED", actionId, now)
                const details = { reason, suspendedFrom: isoAt(now), expectedResumeAt: resume === null ? null : isoAt(resume) }
                const action = actionOf(
                  instrument,
                  actionId,
                  "SUSPENSION",
                  now,
                  input.description ?? `Trading in ${instrument.symbol} suspended: ${reason.toLowerCase()}`,
                  details,
                  false
                )
                yield* saveAction(tx, action)
                yield* announce(tx, "corporateaction.suspension", action, details)
                return { ...none, action, ordersRejected: rejected, listingStatus: "SUSPENDED" } satisfies Outcome
              }
              case "RESUMPTION": {
                const suspension = status === "SUSPENDED" ? yield* suspensionInForce(tx, instrument) : undefined
                if (suspension === undefined) return yield* Effect.fail(fail("CONFLICT", `${instrument.symbol} is not suspended`))
                yield* listings.setIn(tx, instrument.id, "ACTIVE", suspension.actionId, now)
                // The suspension ends: the same action (same actionId), completed now, its resumption time known.
                const details = { ...suspension.details, expectedResumeAt: isoAt(now) }
                const action: ActionRecord = {
                  ...suspension,
                  details,
                  completedAt: now,
                  description: input.description ?? `Trading in ${instrument.symbol} resumed`
                }
                yield* saveAction(tx, action)
                const before = suspension.details
                yield* announce(tx, "corporateaction.suspension", action, {
                  reason: String(before.reason ?? "Suspension lifted"),
                  suspendedFrom: String(before.suspendedFrom ?? isoAt(suspension.effectiveAt)),
                  expectedResumeAt: details.expectedResumeAt
                })
                return { ...none, action, listingStatus: "ACTIVE" } satisfies Outcome
              }
              case "DELISTING": {
                const reason = input.reason ?? "Voluntary delisting"
                const rejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_DELISTED, `${instrument.symbol} is delisted: ${reason}`)
                yield* listings.setIn(tx, instrument.id, "DELISTED", actionId, now)
                const details = { reason, lastTradingDate: localDate(instrument.exchange, now) }
                const action = actionOf(
                  instrument,
                  actionId,
                  "DELISTING",
                  now,
                  input.description ?? `${instrument.symbol} delisted: ${reason.toLowerCase()}`,
                  details,
                  true
                )
                yield* saveAction(tx, action)
                yield* announce(tx, "corporateaction.delisting", action, details)
                const holders = yield* holdersOf(tx, instrument.symbol)
                return { ...none, action, accountsAffected: holders.length, ordersRejected: rejected, listingStatus: "DELISTED" } satisfies Outcome
              }
              case "SYMBOL_CHANGE": {
                const change = yield* symbolChange.announce(tx, instrument, input, actionId, now)
                return { ...none, ...change } satisfies Outcome
              }
              case "RIGHTS_ISSUE": {
                const ratioHeld = yield* liftFailure(wholeRatio(input.ratioHeld, "ratioHeld"))
                const ratioEntitled = yield* liftFailure(wholeRatio(input.ratioEntitled, "ratioEntitled"))
                const price = input.subscriptionPrice === undefined ? undefined : parseScaled(input.subscriptionPrice, 4)
                if (price === undefined || price <= 0) {
                  return yield* Effect.fail(invalid("subscriptionPrice", "a RIGHTS_ISSUE needs subscriptionPrice above 0, local currency, at most 4 decimals"))
                }
                const today = localDate(instrument.exchange, now)
                const deadline = input.subscriptionDeadline ?? isoDate(addWeekdays(dateMs(today), 15))
                if (!isCalendarDate(deadline) || deadline < today) {
                  return yield* Effect.fail(invalid("subscriptionDeadline", "subscriptionDeadline must be a date (YYYY-MM-DD), today or later"))
                }
                const currency = findExchange(instrument.exchange)?.currency ?? "USD"
                const details = {
                  ratioHeld,
                  ratioEntitled,
                  subscriptionPrice: price4ToWire(price),
                  currency,
                  recordDate: today,
                  subscriptionDeadline: deadline
                }
                const description =
                  input.description ?? `Rights issue of ${ratioEntitled} new share for every ${ratioHeld} held at ${currency} ${price4ToWire(price)}`
                // Effective (the new units credited, the rest lapsed) at 00:00 UTC after the deadline (D-344).
                const action = actionOf(instrument, actionId, "RIGHTS_ISSUE", now, description, details, false, allotmentAt(deadline))
                yield* saveAction(tx, action)
                yield* announce(tx, "corporateaction.rights_issue", action, details)
                const holders = yield* holdersOf(tx, instrument.symbol)
                yield* entitleIn(tx, scheduler, action, holders)
                return { ...none, action, accountsAffected: holders.length } satisfies Outcome
              }
            }
          })
      )
      // The price path follows a split once the holdings did; kept in the store like a pin (E-182, E-298).
      const repriced: PinResult | undefined =
        outcome.rescale === undefined ? undefined : yield* feed.rescale(instrument, outcome.rescale.ratioFrom, outcome.rescale.ratioTo)
      if (repriced !== undefined && outcome.rescale !== undefined)
        yield* rememberRescale(store, instrument, repriced.index, outcome.rescale.ratioFrom, outcome.rescale.ratioTo)
      const now = yield* clock.now
      const a = outcome.action
      const d = outcome.dividend
      const result: ControlSchemas["CorporateActionResult"] = {
        // A resumption answers the suspension it ends (same actionId as its events).
        actionId: a?.actionId ?? actionId,
        actionType: input.actionType,
        symbol: instrument.symbol,
        exchange: instrument.exchange,
        name: instrument.name,
        description: a?.description ?? `Dividend of ${d?.currency ?? ""} ${d === undefined ? "" : price4ToWire(d.perShare)} per share paid`,
        effectiveDate: isoDate(a?.effectiveAt ?? dayStart(now)),
        listingStatus: outcome.listingStatus,
        details: a === undefined ? { dividendPerShare: d === undefined ? null : price4ToWire(d.perShare), currency: d?.currency ?? null } : { ...a.details },
        accountsAffected: outcome.accountsAffected,
        ordersRejected: [...outcome.ordersRejected],
        totalUsdPaid: outcome.totalUsdCents === null ? null : centsToWire(outcome.totalUsdCents),
        priceEffectiveAt: repriced === undefined ? null : isoAt(repriced.effectiveAt),
        priceVisibleFrom: repriced === undefined ? null : isoAt(repriced.visibleFrom)
      }
      return result
    })

    return CorporateActions.of({ raise })
  })

  static readonly layer = Layer.effect(CorporateActions, CorporateActions.make)
}
