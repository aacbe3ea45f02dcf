/**
 * Subscribing to an offer and its decisions (domain/subscriptions/decide-subscription.ts): the request's terms, who
 * may subscribe and when the window is open, amount + fee escrowed only when the wallet covers it, the allotment job
 * booked at acceptance, and what the scheduled allotment does (a private raise below its minimum is cancelled).
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import type { BondRecord, OpportunityRecord } from "../../engine/domain/reference/offers.ts"
import { subscriptionPostings } from "../../engine/domain/subscription.ts"
import {
  acceptSubscription,
  decideAllot,
  decideDecline,
  decideSubscribe,
  scheduledAllotment,
  subscriptionTerms
} from "../../engine/domain/subscriptions/decide-subscription.ts"
import type { Offer } from "../../engine/domain/subscriptions/offer.ts"
import { accepted, codeOf, OPEN_AT, PARTITION, subAccount } from "./decider-fixtures.ts"

const DAY = 86_400_000

const bill: BondRecord = {
  bondId: "bnd_1",
  instrumentType: "TREASURY_BILL",
  name: "Kenya 91-day Treasury Bill",
  issuer: "Central Bank of Kenya",
  country: "KE",
  currency: "KES",
  exchange: "NSE",
  isin: null,
  couponBps: null,
  yieldBps: 1000,
  tenorDays: 91,
  issueDate: "2026-11-20",
  maturityDate: "2027-02-19",
  faceValue: 1_000_000,
  minimumSubscription: 10_000,
  opensAt: OPEN_AT - DAY,
  closesAt: OPEN_AT + DAY
}
const billOffer: Offer = { family: "bond", record: bill }

const raise = (fillPermille: number): Offer => {
  const record: OpportunityRecord = {
    opportunityId: "opp_1",
    opportunityType: "PRE_IPO",
    name: "Tembo Pre-IPO",
    issuer: "Tembo Ltd",
    sector: "Fintech",
    country: "KE",
    currency: "KES",
    targetRaise: 100_000_000,
    fillPermille,
    minimumSubscription: 10_000,
    expectedReturnBps: null,
    tenorMonths: null,
    opensAt: OPEN_AT - DAY,
    closesAt: OPEN_AT + DAY
  }
  return { family: "opportunity", record }
}

const input = (amount: number) => ({ assetClass: "TREASURY_BILL" as const, instrumentId: "bnd_1", amount })
const terms = (amount: number) => accepted(subscriptionTerms(input(amount), billOffer))
const command = (amount: number) => ({ partition: PARTITION, account: "usr_1", markupBps: 0, input: input(amount), terms: terms(amount) })

describe("a subscription's terms", () => {
  it("refuses an unknown offer, the wrong asset class, and an amount below the minimum", () => {
    expect(codeOf(subscriptionTerms(input(200), undefined))).toBe("NOT_FOUND")
    expect(codeOf(subscriptionTerms({ ...input(200), assetClass: "BOND" }, billOffer))).toBe("VALIDATION_ERROR")
    expect(codeOf(subscriptionTerms(input(99.99), billOffer))).toBe("VALIDATION_ERROR")
    expect(codeOf(subscriptionTerms(input(100.001), billOffer))).toBe("VALIDATION_ERROR")
    expect(terms(100).amount).toBe(10_000)
  })
})

describe("who may subscribe, and when", () => {
  it("refuses an unverified sub-account, and an offer whose window is not open", () => {
    expect(codeOf(acceptSubscription(subAccount({ kycStatus: "PENDING" }), terms(200), OPEN_AT))).toBe("KYC_REQUIRED")
    expect(codeOf(acceptSubscription(null, terms(200), bill.opensAt - 1))).toBe("OFFER_NOT_OPEN")
    expect(codeOf(acceptSubscription(null, terms(200), bill.closesAt))).toBe("OFFER_NOT_OPEN")
    expect(acceptSubscription(subAccount(), terms(200), OPEN_AT)).toBe("ext-1")
  })
})

describe("escrow at acceptance", () => {
  it("escrows amount + fee and books the allotment at the offer's close", () => {
    const plan = accepted(decideSubscribe(command(200), "ext-1", 1_000_000, OPEN_AT, { subscriptionId: "sub_1" }))
    expect(plan.kind).toBe("SUBSCRIPTION_PLACED")
    expect(plan.movements).toEqual({ wallet: -20_150, escrowDelta: 20_150, feesCollected: 0, market: 0 })
    expect(plan.allotJob).toEqual({ dueAt: bill.closesAt, subscriptionId: "sub_1" })
    expect(plan.answer.subscriptionId).toBe("sub_1")
  })

  it("never escrows more than the wallet holds, and what it books balances (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 10_000, max: 10_000_000 }), fc.integer({ min: 0, max: 20_000_000 }), (cents, available) => {
        const plan = decideSubscribe(command(cents / 100), null, available, OPEN_AT, { subscriptionId: "sub_1" })
        if (plan instanceof ApiFailure) {
          expect(plan.code).toBe("INSUFFICIENT_FUNDS")
          return
        }
        expect(-plan.movements.wallet).toBeLessThanOrEqual(available)
        expect(subscriptionPostings("usr_1", plan.movements)).toBeDefined()
      })
    )
  })
})

describe("decisions", () => {
  const pending = accepted(decideSubscribe(command(200), null, 1_000_000, OPEN_AT, { subscriptionId: "sub_1" })).record

  it("a full allotment pays the issuer and the fee out of escrow; a decided subscription cannot be decided again", () => {
    const plan = accepted(decideAllot(pending, pending.amount, 2_000_000, OPEN_AT))
    expect(plan.movements).toEqual({ wallet: 0, escrowDelta: -20_150, feesCollected: 150, market: 20_000 })
    expect(codeOf(decideDecline(plan.record, "REJECTED", "X", "y", OPEN_AT))).toBe("CONFLICT")
  })

  it("a rejection gives the whole escrow back", () => {
    const plan = accepted(decideDecline(pending, "REJECTED", "COMPLIANCE", "no", OPEN_AT))
    expect(plan.kind).toBe("SUBSCRIPTION_REJECTED")
    expect(plan.movements.wallet).toBe(pending.escrow)
  })

  it("the scheduled allotment allots a bill in full, cancels a raise below its minimum, scales an oversubscribed one", () => {
    expect(scheduledAllotment(pending, billOffer)).toEqual({ _tag: "Allot", allotted: 20_000 })
    expect(scheduledAllotment(pending, raise(500))).toMatchObject({ _tag: "Cancel", code: "MINIMUM_RAISE_NOT_MET" })
    expect(scheduledAllotment(pending, raise(2000))).toEqual({ _tag: "Allot", allotted: 10_000 })
  })
})
