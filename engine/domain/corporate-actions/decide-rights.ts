/**
 * A rights issue (D-344..D-346): raised by the operator, it entitles every holder on the record date (the day it is
 * raised) to floor(units x ratioEntitled / ratioHeld) new units; until the subscription deadline (the exchange's local
 * date) a holder takes some or all of them up, paying subscriptionPrice x units in USD at the reference rate, rounded
 * once, from its wallet to the issuer; at 00:00 UTC after the deadline (the issue's effective date) the units taken up
 * are credited and the rest lapse. Pure. Owns: those rules, the entitlement record and its wire shape. Does not own
 * the control route nor who holds what (app/corporate-actions/holders.ts).
 */
import type { ControlSchemas } from "../../contract/wire.ts"
import { findExchange, localDate } from "../calendar.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { ISSUER, transfer, walletAccount } from "../ledger.ts"
import { type Cents, centsToWire, grossCents, parseScaled, price4ToWire } from "../money.ts"
import type { ActionRecord } from "../reference/corporate-actions.ts"
import { addWeekdays, DAY_MS, dateMs, isCalendarDate, isoDate } from "../reference/seeded.ts"
import { actionOf, announcements } from "./action-record.ts"
import { type ActionPlan, type Credit, emptyPlan, type Holder, type Position } from "./plan.ts"
import { invalid, type ListingStatus, positivePrice4, type RaiseInput, wholeRatio } from "./raise.ts"

export const RIGHTS_ALLOT_JOB = "rights.allot"

/** One account's entitlement in one rights issue, in the account's partition. */
export interface EntitlementRecord {
  readonly actionId: string
  readonly partition: string
  /** `master` or a sub-account id. */
  readonly account: string
  /** The listing's symbol on the record date. */
  readonly symbol: string
  readonly entitled: number
  readonly takenUp: number
  /** USD cents paid for the units taken up, all take-ups together. */
  readonly paidCents: number
  readonly status: "OPEN" | "ALLOTTED" | "LAPSED"
  /** When the units taken up were credited. */
  readonly allottedAt?: number
}

/** 00:00 UTC of the day after the subscription deadline: when the units taken up are credited (the issue's effective date). */
export const allotmentAt = (subscriptionDeadline: string): number => dateMs(subscriptionDeadline) + DAY_MS

/** New units `units` held entitle to: floor(units x ratioEntitled / ratioHeld). */
export const entitledUnits = (units: number, ratioHeld: number, ratioEntitled: number): number =>
  Number((BigInt(units) * BigInt(ratioEntitled)) / BigInt(ratioHeld))

/** Each holder's entitlement on the record date; a holder entitled to less than one new unit has none. */
export const entitlementsOf = (action: ActionRecord, holders: ReadonlyArray<Holder>): ReadonlyArray<EntitlementRecord> =>
  holders.flatMap((h) => {
    const entitled = entitledUnits(h.holding.quantity, Number(action.details.ratioHeld), Number(action.details.ratioEntitled))
    return entitled === 0
      ? []
      : [
          {
            actionId: action.actionId,
            partition: h.partition,
            account: h.account,
            symbol: action.symbol,
            entitled,
            takenUp: 0,
            paidCents: 0,
            status: "OPEN" as const
          }
        ]
  })

export interface RightsIssueState {
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  readonly holders: ReadonlyArray<Holder>
  readonly partitions: ReadonlyArray<string>
}

/** The issue's terms checked (deadline 15 weekdays on by default), its holders entitled, its allotment booked. */
export const decideRightsIssue = (state: RightsIssueState, input: RaiseInput, now: number, ids: { readonly actionId: string }): ActionPlan | ApiFailure => {
  const { instrument } = state
  const ratioHeld = wholeRatio(input.ratioHeld, "ratioHeld")
  if (typeof ratioHeld !== "number") return ratioHeld
  const ratioEntitled = wholeRatio(input.ratioEntitled, "ratioEntitled")
  if (typeof ratioEntitled !== "number") return ratioEntitled
  const price = positivePrice4(input.subscriptionPrice)
  if (price === undefined) return invalid("subscriptionPrice", "a RIGHTS_ISSUE needs subscriptionPrice above 0, local currency, at most 4 decimals")
  const today = localDate(instrument.exchange, now)
  const deadline = input.subscriptionDeadline ?? isoDate(addWeekdays(dateMs(today), 15))
  if (!isCalendarDate(deadline) || deadline < today) {
    return invalid("subscriptionDeadline", "subscriptionDeadline must be a date (YYYY-MM-DD), today or later")
  }
  const currency = findExchange(instrument.exchange)?.currency ?? "USD"
  const details = { ratioHeld, ratioEntitled, subscriptionPrice: price4ToWire(price), currency, recordDate: today, subscriptionDeadline: deadline }
  const description = input.description ?? `Rights issue of ${ratioEntitled} new share for every ${ratioHeld} held at ${currency} ${price4ToWire(price)}`
  // Effective (the new units credited, the rest lapsed) at 00:00 UTC after the deadline (D-344).
  const action = actionOf(instrument, ids.actionId, "RIGHTS_ISSUE", now, description, details, false, allotmentAt(deadline))
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    action,
    events: announcements(state.partitions, "corporateaction.rights_issue", action, details),
    entitlements: entitlementsOf(action, state.holders),
    jobs: [{ kind: RIGHTS_ALLOT_JOB, dueAt: action.effectiveAt, payload: { actionId: action.actionId } }],
    outcome: { ...none.outcome, action, accountsAffected: state.holders.length }
  }
}

/** A take-up's size, when given: a whole number of units above 0 (the rest of the entitlement when not given). */
export const takeUpUnits = (units: number | undefined): ApiFailure | undefined =>
  units !== undefined && (!Number.isSafeInteger(units) || units < 1)
    ? fail("VALIDATION_ERROR", "units must be a whole number above 0", { param: "units" })
    : undefined

export interface TakeUpState {
  readonly action: ActionRecord
  readonly entitlement: EntitlementRecord
  /** The account's wallet balance, USD cents. */
  readonly balance: Cents
  /** The listing's symbol now (the entitlement keeps the record date's). */
  readonly currentSymbol: string
}

export interface TakeUpPlan {
  readonly credit: Credit | undefined
  readonly entitlement: EntitlementRecord
  readonly answer: ControlSchemas["RightsEntitlement"]
}

/** Units taken up while the entitlement is open and the subscription too, paid from the wallet in one entry. */
export const decideTakeUp = (state: TakeUpState, units: number | undefined, now: number): TakeUpPlan | ApiFailure => {
  const { action, entitlement: e } = state
  const deadline = String(action.details.subscriptionDeadline)
  if (e.status !== "OPEN" || localDate(action.exchange, now) > deadline)
    return fail("CONFLICT", `the entitlement lapsed: the subscription closed on ${deadline}`)
  const remaining = e.entitled - e.takenUp
  const taken = units ?? remaining
  if (taken > remaining || remaining === 0) return fail("CONFLICT", `${remaining} units of the entitlement are left to take up`, { param: "units" })
  const currency = String(action.details.currency)
  const rate = rateFor(currency)
  const price = parseScaled(Number(action.details.subscriptionPrice), 4)
  if (rate === undefined || price === undefined) return fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`)
  const cents = grossCents(taken, price, rate)
  if (state.balance < cents) {
    return fail("INSUFFICIENT_FUNDS", `taking up ${taken} units needs ${centsToWire(cents)} USD and the wallet holds ${centsToWire(state.balance)} USD`)
  }
  const description = `Rights taken up: ${taken} new ${state.currentSymbol} at ${currency} ${action.details.subscriptionPrice}`
  const credit: Credit | undefined =
    cents > 0
      ? {
          partition: e.partition,
          entry: { kind: "RIGHTS_SUBSCRIBED", postings: transfer(walletAccount(e.account), ISSUER, cents), at: now, description, reference: action.actionId }
        }
      : undefined
  const next: EntitlementRecord = { ...e, takenUp: e.takenUp + taken, paidCents: e.paidCents + cents }
  return { credit, entitlement: next, answer: entitlementToWire(action, next, cents, state.currentSymbol) }
}

/**
 * At the issue's effective date: an open entitlement with units taken up is ALLOTTED, one without lapses; a decided
 * one stays as it is (undefined: nothing to write).
 */
export const decideAllotment = (e: EntitlementRecord, now: number): EntitlementRecord | undefined =>
  e.status !== "OPEN" ? undefined : e.takenUp > 0 ? { ...e, status: "ALLOTTED", allottedAt: now } : { ...e, status: "LAPSED" }

/** The account's position once an ALLOTTED entitlement's units join it (the position under the listing's symbol now). */
export const withAllotted = (position: Position, e: EntitlementRecord): Position => ({
  symbol: position.symbol,
  quantity: position.quantity + e.takenUp,
  reserved: position.reserved
})

type Entitlement = ControlSchemas["RightsEntitlement"]

/** The control API's view of an entitlement; `debitedCents` is what this call took from the wallet. */
export const entitlementToWire = (a: ActionRecord, e: EntitlementRecord, debitedCents: Cents, currentSymbol: string): Entitlement => {
  const [partnerId = "", environment = "sandbox"] = e.partition.split(":")
  return {
    actionId: a.actionId,
    symbol: currentSymbol,
    partnerId,
    environment: environment as Entitlement["environment"],
    subAccountId: e.account,
    entitledUnits: e.entitled,
    takenUpUnits: e.takenUp,
    remainingUnits: e.status === "OPEN" ? e.entitled - e.takenUp : 0,
    subscriptionPrice: Number(a.details.subscriptionPrice),
    currency: String(a.details.currency),
    debitedUsd: centsToWire(debitedCents),
    paidUsd: centsToWire(e.paidCents),
    subscriptionDeadline: String(a.details.subscriptionDeadline),
    allotmentDate: isoDate(a.effectiveAt),
    status: e.status
  }
}

/** Units allotted to `account` by rights issues, as BUY fills at their subscription cost: the average cost counts them (D-346). */
export const allottedAsBuys = (entitlements: ReadonlyArray<EntitlementRecord>, account: string) =>
  entitlements
    .filter((e) => e.account === account && e.status === "ALLOTTED")
    .map((e) => ({ account, side: "BUY" as const, symbol: e.symbol, fills: [{ quantity: e.takenUp, gross: e.paidCents, fee: 0, at: e.allottedAt ?? 0 }] }))
