/**
 * Rights issues (domain/corporate-actions/decide-rights.ts, D-344..D-346): the terms; each holder on the record date
 * entitled to floor(units x ratioEntitled / ratioHeld) new units (none below one); take-ups until the deadline, never
 * more than is left, paid from the wallet to the issuer at the subscription price converted once; at the allotment
 * the units taken up are ALLOTTED and the rest lapse.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  allotmentAt,
  allottedAsBuys,
  decideAllotment,
  decideRightsIssue,
  decideTakeUp,
  type EntitlementRecord,
  entitledUnits,
  RIGHTS_ALLOT_JOB,
  takeUpUnits,
  withAllotted
} from "../../engine/domain/corporate-actions/decide-rights.ts"
import { ISSUER, sumOf, walletAccount } from "../../engine/domain/ledger.ts"
import { grossCents } from "../../engine/domain/money.ts"
import { DAY_MS } from "../../engine/domain/reference/seeded.ts"
import { arbitraryHolders, holder, PARTITIONS, raise } from "./corporate-fixtures.ts"
import { accepted, codeOf, OPEN_AT, SCOM } from "./decider-fixtures.ts"

const KES_RATE = 129_250_000
const terms = { ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 12.5 }
const issue = (holders: ReadonlyArray<ReturnType<typeof holder>>, over = {}) =>
  decideRightsIssue({ instrument: SCOM, listingStatus: "ACTIVE", holders, partitions: PARTITIONS }, raise("RIGHTS_ISSUE", { ...terms, ...over }), OPEN_AT, {
    actionId: "ca_r"
  })
const issued = (holders: ReadonlyArray<ReturnType<typeof holder>> = [holder("ptn_a:sandbox", "usr_1", 100)]) => accepted(issue(holders))
const takeUpState = (entitlement: EntitlementRecord, balance = 1_000_000) => {
  const action = issued().action
  if (action === undefined) throw new Error("the issue has no action")
  return { action, entitlement, balance, currentSymbol: SCOM.symbol }
}
const open = (over: Partial<EntitlementRecord> = {}): EntitlementRecord => ({
  actionId: "ca_r",
  partition: "ptn_a:sandbox",
  account: "usr_1",
  symbol: SCOM.symbol,
  entitled: 25,
  takenUp: 0,
  paidCents: 0,
  status: "OPEN",
  ...over
})

describe("raising a rights issue", () => {
  it("checks its ratios, its price and its deadline, naming the term refused", () => {
    for (const [over, param] of [
      [{ ratioHeld: 0 }, "ratioHeld"],
      [{ ratioEntitled: 1001 }, "ratioEntitled"],
      [{ subscriptionPrice: 0 }, "subscriptionPrice"],
      [{ subscriptionDeadline: "2020-01-01" }, "subscriptionDeadline"],
      [{ subscriptionDeadline: "2026-02-30" }, "subscriptionDeadline"]
    ] as const) {
      const refused = issue([], over)
      expect(codeOf(refused)).toBe("VALIDATION_ERROR")
      expect(refused).toMatchObject({ extras: { param } })
    }
  })

  it("is effective at 00:00 UTC after its deadline (15 weekdays on by default), and books its allotment then", () => {
    const plan = issued()
    const deadline = String(plan.action?.details.subscriptionDeadline)
    expect(plan.action?.effectiveAt).toBe(allotmentAt(deadline))
    expect(allotmentAt("2026-12-01")).toBe(Date.parse("2026-12-01T00:00:00Z") + DAY_MS)
    expect(plan.jobs).toEqual([{ kind: RIGHTS_ALLOT_JOB, dueAt: plan.action?.effectiveAt, payload: { actionId: "ca_r" } }])
    expect(plan.action?.completedAt).toBeNull()
    expect(plan.events.filter((e) => e.name === "corporateaction.rights_issue")).toHaveLength(PARTITIONS.length)
  })

  it("property: each holder is entitled to floor(units x ratioEntitled / ratioHeld), and one below a whole unit to nothing", () => {
    fc.assert(
      fc.property(arbitraryHolders(), fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 }), (holders, ratioHeld, ratioEntitled) => {
        const plan = accepted(issue(holders, { ratioHeld, ratioEntitled }))
        const expected = holders.map((h) => ({ h, units: Math.floor((h.holding.quantity * ratioEntitled) / ratioHeld) })).filter((x) => x.units > 0)
        expect(plan.entitlements.map((e) => [e.partition, e.account, e.entitled])).toEqual(expected.map((x) => [x.h.partition, x.h.account, x.units]))
        for (const e of plan.entitlements) expect(e).toMatchObject({ status: "OPEN", takenUp: 0, paidCents: 0, symbol: SCOM.symbol })
        expect(plan.outcome.accountsAffected).toBe(holders.length)
      })
    )
    expect(entitledUnits(3, 4, 1)).toBe(0)
  })
})

describe("taking rights up", () => {
  it("refuses a size that is not a whole number above 0", () => {
    expect(codeOf(takeUpUnits(0))).toBe("VALIDATION_ERROR")
    expect(codeOf(takeUpUnits(1.5))).toBe("VALIDATION_ERROR")
    expect(takeUpUnits(undefined)).toBeUndefined()
  })

  it("takes the whole entitlement by default, paying units x price at the rate from the wallet to the issuer", () => {
    const plan = accepted(decideTakeUp(takeUpState(open()), undefined, OPEN_AT))
    const cents = grossCents(25, 125_000, KES_RATE)
    expect(plan.credit?.entry.postings).toEqual([
      { account: walletAccount("usr_1"), cents: -cents },
      { account: ISSUER, cents }
    ])
    expect(plan.entitlement).toMatchObject({ takenUp: 25, paidCents: cents, status: "OPEN" })
    expect(plan.answer).toMatchObject({ entitledUnits: 25, takenUpUnits: 25, remainingUnits: 0, debitedUsd: cents / 100, paidUsd: cents / 100 })
  })

  it("refuses more than is left (CONFLICT), a wallet that cannot pay (INSUFFICIENT_FUNDS) and a closed subscription (CONFLICT)", () => {
    expect(codeOf(decideTakeUp(takeUpState(open({ takenUp: 20 })), 6, OPEN_AT))).toBe("CONFLICT")
    expect(codeOf(decideTakeUp(takeUpState(open({ takenUp: 25 })), undefined, OPEN_AT))).toBe("CONFLICT")
    expect(codeOf(decideTakeUp(takeUpState(open(), 0), 1, OPEN_AT))).toBe("INSUFFICIENT_FUNDS")
    expect(codeOf(decideTakeUp(takeUpState(open({ status: "LAPSED" })), 1, OPEN_AT))).toBe("CONFLICT")
    const state = takeUpState(open())
    expect(codeOf(decideTakeUp(state, 1, state.action.effectiveAt + DAY_MS))).toBe("CONFLICT")
  })

  it("property: take-ups never exceed the entitlement, and what was paid is what the wallet gave the issuer", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 500 }), fc.array(fc.integer({ min: 1, max: 200 }), { maxLength: 8 }), (entitled, sizes) => {
        let e = open({ entitled })
        let debited = 0
        for (const units of sizes) {
          const plan = decideTakeUp(takeUpState(e), units, OPEN_AT)
          if (units > entitled - e.takenUp) {
            expect(codeOf(plan)).toBe("CONFLICT")
            continue
          }
          const ok = accepted(plan)
          if (ok.credit !== undefined) expect(sumOf(ok.credit.entry.postings)).toBe(0)
          debited -= ok.credit?.entry.postings.find((p) => p.account === walletAccount("usr_1"))?.cents ?? 0
          e = ok.entitlement
        }
        expect(e.takenUp).toBeLessThanOrEqual(entitled)
        expect(e.paidCents).toBe(debited)
      })
    )
  })
})

describe("allotment", () => {
  it("allots the units taken up, lapses an entitlement with none, and leaves a decided one alone", () => {
    expect(decideAllotment(open({ takenUp: 5 }), OPEN_AT)).toMatchObject({ status: "ALLOTTED", allottedAt: OPEN_AT })
    expect(decideAllotment(open(), OPEN_AT)).toMatchObject({ status: "LAPSED" })
    expect(decideAllotment(open({ status: "ALLOTTED" }), OPEN_AT)).toBeUndefined()
    expect(withAllotted({ symbol: "X.KE", quantity: 100, reserved: 10 }, open({ takenUp: 5 }))).toEqual({ symbol: "X.KE", quantity: 105, reserved: 10 })
  })

  it("counts allotted units as BUY fills at their subscription cost, for the account's average cost", () => {
    const allotted = open({ takenUp: 5, paidCents: 48, status: "ALLOTTED", allottedAt: OPEN_AT })
    expect(allottedAsBuys([allotted, open({ account: "usr_2", status: "ALLOTTED" }), open({ status: "LAPSED" })], "usr_1")).toEqual([
      { account: "usr_1", side: "BUY", symbol: SCOM.symbol, fills: [{ quantity: 5, gross: 48, fee: 0, at: OPEN_AT }] }
    ])
  })
})
