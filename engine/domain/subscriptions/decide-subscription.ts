/**
 * Asset subscriptions' rules (D-040, D-270..D-276) as pure functions: whether an offer takes a subscription, the
 * escrow of amount + fee at acceptance, and the decisions (allot, reject, cancel; the scheduled allotment's outcome).
 * Each answers a refusal or a plan: the ledger entry's kind and movements, the record after, the job to book, the
 * answer. The dispatcher (app/subscriptions/decisions.ts) draws the subscription's id once the subscription is
 * accepted (E-350) and writes the plan.
 * Owns: these rules. Does not own the arithmetic and state machine (domain/subscription.ts) nor the offers.
 */
import type { Schemas } from "../../contract/wire.ts"
import { ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire, parseScaled } from "../money.ts"
import type { SubAccountRecord } from "../subaccount.ts"
import {
  type AssetClass,
  accept,
  acceptMovements,
  allot,
  decline,
  MAX_SUBSCRIPTION_CENTS,
  MINIMUM_RAISE_NOT_MET,
  opportunityOutcome,
  refuseSubscribing,
  type SubscriptionMovements,
  type SubscriptionRecord,
  subscriptionToWire
} from "../subscription.ts"
import { allotAtOf, classOf, type Offer, offerId, statusOf } from "./offer.ts"

export interface SubscribeInput {
  readonly assetClass: AssetClass
  readonly instrumentId: string
  readonly amount: number
  readonly clientReference?: string | undefined
}

export type SubscriptionEntryKind = "SUBSCRIPTION_PLACED" | "SUBSCRIPTION_ALLOTTED" | "SUBSCRIPTION_REJECTED" | "SUBSCRIPTION_CANCELLED"

export interface SubscriptionPlan {
  /** The journal entry's kind (its postings follow from `movements`; none when nothing moves). */
  readonly kind: SubscriptionEntryKind
  readonly movements: SubscriptionMovements
  readonly record: SubscriptionRecord
  /** The scheduled allotment, booked at acceptance. */
  readonly allotJob?: { readonly dueAt: number; readonly subscriptionId: string } | undefined
  readonly answer: Schemas["Subscription"]
}

/** The checked terms of a subscription request: its amount (cents), the offer and its class. Before any state is read. */
export const subscriptionTerms = (input: SubscribeInput, offer: Offer | undefined) => {
  const amount = parseScaled(input.amount, 2)
  if (amount === undefined || amount <= 0) return fail("VALIDATION_ERROR", "amount must be a positive USD amount with at most 2 decimals", { param: "amount" })
  if (amount > MAX_SUBSCRIPTION_CENTS) return fail("VALIDATION_ERROR", `amount must be at most ${centsToWire(MAX_SUBSCRIPTION_CENTS)} USD`, { param: "amount" })
  if (offer === undefined) return fail("NOT_FOUND", `instrument ${input.instrumentId} is not a bond, fund or opportunity on offer`, { param: "instrumentId" })
  const assetClass = classOf(offer)
  if (assetClass !== input.assetClass) {
    return fail("VALIDATION_ERROR", `instrument ${input.instrumentId} is a ${assetClass} offer: assetClass must be ${assetClass}`, { param: "assetClass" })
  }
  const minimum = offer.record.minimumSubscription
  if (amount < minimum) return fail("VALIDATION_ERROR", `amount is below the offer's minimum subscription of ${centsToWire(minimum)} USD`, { param: "amount" })
  return { amount, offer, assetClass }
}

export type SubscriptionTerms = Exclude<ReturnType<typeof subscriptionTerms>, ApiFailure>

const isoAt = (ms: number) => new Date(ms).toISOString()

/**
 * Whether the account may subscribe now (an active, KYC VERIFIED sub-account, or the master) and the offer's window
 * is OPEN (OFFER_NOT_OPEN otherwise); the externalId the subscription carries.
 */
export const acceptSubscription = (subAccount: SubAccountRecord | null, terms: SubscriptionTerms, now: number): string | null | ApiFailure => {
  if (subAccount !== null) {
    const refused = refuseSubscribing(subAccount)
    if (refused !== undefined) return refused
  }
  const { offer } = terms
  const status = statusOf(offer, now)
  if (status !== "OPEN") {
    const when =
      status === "UPCOMING" && offer.record.opensAt !== null
        ? `opens at ${isoAt(offer.record.opensAt)}`
        : offer.family === "fund"
          ? "is closed to new money"
          : `closed at ${isoAt(offer.record.closesAt)}`
    return fail("OFFER_NOT_OPEN", `${offer.record.name} is ${status}: it ${when}`)
  }
  return subAccount?.externalId ?? null
}

export interface SubscribeCommand {
  readonly partition: string
  readonly account: string
  readonly markupBps: number
  readonly input: SubscribeInput
  readonly terms: SubscriptionTerms
}

/**
 * An accepted subscription: PENDING, amount + fee (base 0.75% + the partner's markup) from the wallet into escrow,
 * refused INSUFFICIENT_FUNDS when the wallet holds less; its allotment booked for the offer's close or dealing day.
 */
export const decideSubscribe = (
  command: SubscribeCommand,
  externalId: string | null,
  available: Cents,
  now: number,
  ids: { readonly subscriptionId: string }
): SubscriptionPlan | ApiFailure => {
  const { offer, amount, assetClass } = command.terms
  const record = accept({
    subscriptionId: ids.subscriptionId,
    partition: command.partition,
    account: command.account,
    externalId,
    assetClass,
    instrumentId: offerId(offer),
    instrumentName: offer.record.name,
    offerCurrency: offer.record.currency,
    amount,
    markupBps: command.markupBps,
    clientReference: command.input.clientReference ?? null,
    now,
    allotAt: allotAtOf(offer, now)
  })
  if (available < record.totalAmount) {
    return fail(
      "INSUFFICIENT_FUNDS",
      `the subscription needs ${centsToWire(record.totalAmount)} USD (amount + fee) and the wallet holds ${centsToWire(available)} USD`
    )
  }
  return {
    kind: "SUBSCRIPTION_PLACED",
    movements: acceptMovements(record),
    record,
    allotJob: { dueAt: record.allotAt, subscriptionId: record.subscriptionId },
    answer: subscriptionToWire(record)
  }
}

/** Allots `allotted` cents of a PENDING subscription (`units4`: what they buy, null without a price); the surplus returns. */
export const decideAllot = (r: SubscriptionRecord, allotted: Cents, units4: number | null, now: number): SubscriptionPlan | ApiFailure => {
  const t = allot(r, allotted, units4, now)
  if (t instanceof ApiFailure) return t
  return { kind: "SUBSCRIPTION_ALLOTTED", movements: t.movements, record: t.record, answer: subscriptionToWire(t.record) }
}

/** The service rejects (REJECTED) or the issuer cancels (CANCELLED) a PENDING subscription: the escrow returns whole. */
export const decideDecline = (
  r: SubscriptionRecord,
  status: "REJECTED" | "CANCELLED",
  code: string,
  reason: string,
  now: number
): SubscriptionPlan | ApiFailure => {
  const t = decline(r, status, code, reason, now)
  if (t instanceof ApiFailure) return t
  return {
    kind: status === "REJECTED" ? "SUBSCRIPTION_REJECTED" : "SUBSCRIPTION_CANCELLED",
    movements: t.movements,
    record: t.record,
    answer: subscriptionToWire(t.record)
  }
}

/** What the scheduled allotment does to a subscription still PENDING: a private raise's outcome (D-273), else allot in full. */
export type AllotmentOutcome =
  | { readonly _tag: "Allot"; readonly allotted: Cents }
  | { readonly _tag: "Cancel"; readonly code: string; readonly reason: string }

export const scheduledAllotment = (r: SubscriptionRecord, offer: Offer | undefined): AllotmentOutcome => {
  if (offer?.family !== "opportunity") return { _tag: "Allot", allotted: r.amount }
  const outcome = opportunityOutcome(offer.record, r.amount)
  if (outcome.kind === "cancel") {
    return { _tag: "Cancel", code: MINIMUM_RAISE_NOT_MET, reason: `${r.instrumentName} closed below its minimum raise; the issuer cancelled it` }
  }
  return { _tag: "Allot", allotted: outcome.allotted }
}
