/**
 * The listing's status set by the operator (D-302, D-304): a suspension (its open orders rejected, trading refused
 * until it is lifted), a resumption (the suspension in force completed, same actionId) and a delisting (its open
 * orders rejected, final). A suspension and a delisting come in two steps around the rejection of open orders, which
 * the dispatcher runs with the trading desk: `accept*` (the terms and the rejection's reason), then `decide*`. Pure.
 * Owns: those rules, the records and their events. Does not own rejecting orders (app/trading/desk.ts) nor how a
 * status is stored (app/listings.ts).
 */
import { localDate } from "../calendar.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { Instrument } from "../instruments.ts"
import type { ActionRecord } from "../reference/corporate-actions.ts"
import { actionOf, announcements } from "./action-record.ts"
import { type ActionPlan, emptyPlan } from "./plan.ts"
import { invalid, type ListingStatus, type RaiseInput } from "./raise.ts"

const isoAt = (ms: number): string => new Date(ms).toISOString()

/** The listing and who hears of the action (active partners' partitions). */
export interface ListingState {
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  readonly partitions: ReadonlyArray<string>
}

export interface AcceptedSuspension {
  readonly reason: string
  /** When the operator expects trading to resume, or null. */
  readonly resumeAt: number | null
  /** Why the listing's open orders are rejected (code REJECT_SUSPENDED). */
  readonly rejectReason: string
}

/** A suspension of a listing not suspended already, expected to end (when said) after now. */
export const acceptSuspension = (state: ListingState, input: RaiseInput, now: number): AcceptedSuspension | ApiFailure => {
  const symbol = state.instrument.symbol
  if (state.listingStatus === "SUSPENDED") return fail("CONFLICT", `${symbol} is already suspended`)
  const resumeAt = input.expectedResumeAt === undefined ? null : Date.parse(input.expectedResumeAt)
  if (resumeAt !== null && (!Number.isFinite(resumeAt) || resumeAt <= now)) {
    return invalid("expectedResumeAt", "expectedResumeAt must be a date-time after now")
  }
  const reason = input.reason ?? "Regulatory review"
  return { reason, resumeAt, rejectReason: `trading in ${symbol} is suspended: ${reason}` }
}

/** The listing SUSPENDED by a new action, in force until a resumption completes it. */
export const decideSuspension = (
  state: ListingState & { readonly ordersRejected: ReadonlyArray<string> },
  command: { readonly input: RaiseInput; readonly accepted: AcceptedSuspension },
  now: number,
  ids: { readonly actionId: string }
): ActionPlan => {
  const { instrument } = state
  const { reason, resumeAt } = command.accepted
  const details = { reason, suspendedFrom: isoAt(now), expectedResumeAt: resumeAt === null ? null : isoAt(resumeAt) }
  const description = command.input.description ?? `Trading in ${instrument.symbol} suspended: ${reason.toLowerCase()}`
  const action = actionOf(instrument, ids.actionId, "SUSPENSION", now, description, details, false)
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    listing: { status: "SUSPENDED", actionId: ids.actionId },
    action,
    events: announcements(state.partitions, "corporateaction.suspension", action, details),
    outcome: { ...none.outcome, action, ordersRejected: state.ordersRejected, listingStatus: "SUSPENDED" }
  }
}

/**
 * The suspension in force ends now: the same action (same actionId) completed, its resumption time known, the listing
 * ACTIVE again. `suspension` is the last one raised, else the seeded one that explains a SUSPENDED listing.
 */
export const decideResumption = (
  state: ListingState & { readonly suspension: ActionRecord | undefined },
  input: RaiseInput,
  now: number
): ActionPlan | ApiFailure => {
  const { instrument, suspension } = state
  if (state.listingStatus !== "SUSPENDED" || suspension === undefined) return fail("CONFLICT", `${instrument.symbol} is not suspended`)
  const details = { ...suspension.details, expectedResumeAt: isoAt(now) }
  const action: ActionRecord = { ...suspension, details, completedAt: now, description: input.description ?? `Trading in ${instrument.symbol} resumed` }
  const before = suspension.details
  const extra = {
    reason: String(before.reason ?? "Suspension lifted"),
    suspendedFrom: String(before.suspendedFrom ?? isoAt(suspension.effectiveAt)),
    expectedResumeAt: details.expectedResumeAt
  }
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    listing: { status: "ACTIVE", actionId: suspension.actionId },
    action,
    events: announcements(state.partitions, "corporateaction.suspension", action, extra),
    outcome: { ...none.outcome, action, listingStatus: "ACTIVE" }
  }
}

/** A delisting's reason, and why the listing's open orders are rejected (code REJECT_DELISTED). */
export const acceptDelisting = (instrument: Instrument, input: RaiseInput) => {
  const reason = input.reason ?? "Voluntary delisting"
  return { reason, rejectReason: `${instrument.symbol} is delisted: ${reason}` }
}

/** The listing DELISTED for good: its last trading date is today at the exchange; its holders keep their units. */
export const decideDelisting = (
  state: ListingState & { readonly ordersRejected: ReadonlyArray<string>; readonly holderCount: number },
  input: RaiseInput,
  now: number,
  ids: { readonly actionId: string }
): ActionPlan => {
  const { instrument } = state
  const { reason } = acceptDelisting(instrument, input)
  const details = { reason, lastTradingDate: localDate(instrument.exchange, now) }
  const action = actionOf(
    instrument,
    ids.actionId,
    "DELISTING",
    now,
    input.description ?? `${instrument.symbol} delisted: ${reason.toLowerCase()}`,
    details,
    true
  )
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    listing: { status: "DELISTED", actionId: ids.actionId },
    action,
    events: announcements(state.partitions, "corporateaction.delisting", action, details),
    outcome: { ...none.outcome, action, accountsAffected: state.holderCount, ordersRejected: state.ordersRejected, listingStatus: "DELISTED" }
  }
}
