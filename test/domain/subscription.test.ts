/**
 * The subscription rules (domain/subscription.ts): fee and escrow at acceptance, the state machine (terminal states
 * final), the money of each transition (balanced postings, never taking from the wallet after acceptance), units,
 * the bill's discount price and what a closing private raise gives.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import {
  accept,
  acceptMovements,
  allot,
  bondPrice4,
  decline,
  opportunityOutcome,
  refuseSubscribing,
  type SubscriptionRecord,
  subscriptionPostings,
  subscriptionToWire,
  unitsFor
} from "../../engine/domain/subscription.ts"
import type { SubAccountRecord } from "../../engine/domain/subaccount.ts"

const T0 = Date.parse("2026-11-23T08:00:00.000Z")

const record = (amount: number, markupBps = 0): SubscriptionRecord =>
  accept({
    subscriptionId: "sub_1",
    partition: "ptn_1:sandbox",
    account: "usr_1",
    externalId: "cust-1",
    assetClass: "TREASURY_BILL",
    instrumentId: "bnd_1",
    instrumentName: "Kenya 91-day Treasury Bill",
    offerCurrency: "KES",
    amount,
    markupBps,
    clientReference: null,
    now: T0,
    allotAt: T0 + 86_400_000
  })

const ok = <A>(x: A | ApiFailure): A => {
  if (x instanceof ApiFailure) throw new Error(`unexpected failure ${x.code}: ${x.message}`)
  return x
}

describe("subscription rules", () => {
  it("accepts PENDING with amount + fee (0.75% + markup) escrowed, as the contract's example shows", () => {
    const r = record(20_000)
    expect(r).toMatchObject({ status: "PENDING", fee: 150, totalAmount: 20_150, escrow: 20_150 })
    expect(record(20_000, 50).fee).toBe(250)
    expect(acceptMovements(r)).toEqual({ wallet: -20_150, escrowDelta: 20_150, feesCollected: 0, market: 0 })
    expect(subscriptionToWire(r)).toMatchObject({ amount: 200, fee: 1.5, totalAmount: 201.5, subAccountId: "usr_1", createdAt: "2026-11-23T08:00:00.000Z" })
  })

  it("allots in full, or in part charging the fee on the allotted amount only", () => {
    const full = ok(allot(record(20_000), 20_000, 2_637_755, T0))
    expect(full.record).toMatchObject({ status: "ALLOTTED", escrow: 0, allottedAmount: 20_000, allottedFee: 150, allottedAt: T0 })
    expect(full.movements).toEqual({ wallet: 0, escrowDelta: -20_150, feesCollected: 150, market: 20_000 })
    expect(subscriptionToWire(full.record).units).toBe(263.7755)
    const part = ok(allot(record(20_000), 15_000, null, T0))
    expect(part.record.status).toBe("PARTIALLY_ALLOTTED")
    expect(part.movements).toEqual({ wallet: 20_150 - 15_000 - 113, escrowDelta: -20_150, feesCollected: 113, market: 15_000 })
  })

  it("refuses to allot nothing, more than subscribed, or a decided subscription; decided states are final", () => {
    for (const bad of [0, -1, 20_001, 1.5]) expect((allot(record(20_000), bad, null, T0) as ApiFailure).code).toBe("VALIDATION_ERROR")
    const decided = [
      ok(allot(record(20_000), 20_000, null, T0)).record,
      ok(allot(record(20_000), 1, null, T0)).record,
      ok(decline(record(20_000), "REJECTED", "X", "y", T0)).record,
      ok(decline(record(20_000), "CANCELLED", "X", "y", T0)).record
    ]
    for (const r of decided) {
      expect((allot(r, 1, null, T0) as ApiFailure).code).toBe("CONFLICT")
      expect((decline(r, "REJECTED", "X", "y", T0) as ApiFailure).code).toBe("CONFLICT")
      expect((decline(r, "CANCELLED", "X", "y", T0) as ApiFailure).code).toBe("CONFLICT")
    }
  })

  it("declines return the whole escrow and charge nothing", () => {
    const t = ok(decline(record(10_000, 25), "CANCELLED", "OFFER_WITHDRAWN", "withdrawn", T0))
    expect(t.record).toMatchObject({ status: "CANCELLED", rejectionCode: "OFFER_WITHDRAWN", rejectionReason: "withdrawn", allottedAmount: null })
    expect(t.movements).toEqual({ wallet: 10_100, escrowDelta: -10_100, feesCollected: 0, market: 0 })
  })

  it("every transition balances: acceptance, then any decision, moves exactly the escrow and never takes from the wallet", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000_000_000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom("allot", "reject", "cancel"),
        (amount, markup, share, action) => {
          const r = record(amount, markup)
          const placed = subscriptionPostings("usr_1", acceptMovements(r))
          expect(placed?.reduce((s, p) => s + p.cents, 0)).toBe(0)
          const allotted = Math.max(1, Math.floor(amount * share))
          const t = ok(action === "allot" ? allot(r, allotted, null, T0) : decline(r, action === "reject" ? "REJECTED" : "CANCELLED", "X", "y", T0))
          const postings = subscriptionPostings("usr_1", t.movements)
          expect(postings).toBeDefined()
          expect(postings?.reduce((s, p) => s + p.cents, 0)).toBe(0)
          expect(t.movements.wallet).toBeGreaterThanOrEqual(0)
          expect(t.movements.escrowDelta).toBe(-r.totalAmount)
          expect(t.record.escrow).toBe(0)
          if (action === "allot") expect(t.movements.feesCollected).toBeLessThanOrEqual(r.fee)
        }
      ),
      { numRuns: 500 }
    )
  })

  it("prices a bill at a discount and a coupon bond at par; units are cents × rate / price, rounded once", () => {
    // 100.0000 face, 10% a year for 91 days: 100 / (1 + 0.1 × 91/365) = 97.56749...
    expect(bondPrice4(1_000_000, "TREASURY_BILL", 1000, 91)).toBe(975_675)
    expect(bondPrice4(1_000_000, "GOVERNMENT_BOND", 1000, 1820)).toBe(1_000_000)
    // 200 USD at 129.25 KES/USD at 98 KES a unit: 263.77551...
    expect(unitsFor(20_000, 129_250_000, 980_000)).toBe(2_637_755)
  })

  it("a closing private raise: cancelled below 60% of its target, pro rata when oversubscribed, else in full", () => {
    expect(opportunityOutcome({ fillPermille: 599 }, 1_000_000)).toEqual({ kind: "cancel" })
    expect(opportunityOutcome({ fillPermille: 600 }, 1_000_000)).toEqual({ kind: "allot", allotted: 1_000_000 })
    expect(opportunityOutcome({ fillPermille: 1000 }, 1_000_000)).toEqual({ kind: "allot", allotted: 1_000_000 })
    expect(opportunityOutcome({ fillPermille: 1250 }, 1_000_000)).toEqual({ kind: "allot", allotted: 800_000 })
    expect(opportunityOutcome({ fillPermille: 1300 }, 1)).toEqual({ kind: "allot", allotted: 1 })
  })

  it("only an active, KYC-verified sub-account may subscribe", () => {
    const s = { subAccountId: "usr_1", status: "active", kycStatus: "VERIFIED" } as SubAccountRecord
    expect(refuseSubscribing(s)).toBeUndefined()
    expect(refuseSubscribing({ ...s, kycStatus: "REJECTED" })?.code).toBe("KYC_REQUIRED")
    expect(refuseSubscribing({ ...s, status: "frozen" })?.code).toBe("FORBIDDEN")
    expect(refuseSubscribing({ ...s, status: "closed", kycStatus: "NONE" })?.code).toBe("FORBIDDEN")
  })
})
