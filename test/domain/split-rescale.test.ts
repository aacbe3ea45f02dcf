/**
 * Splits, reverse splits and bonus issues (domain/corporate-actions/decide-split.ts, D-303, D-304): the ratios must
 * change the number of units in the direction the type says; every holding is rescaled to whole units, the fraction
 * paid in cash at the price before the change, so a holder's value is kept up to the rounding of that cash; the
 * action is recorded completed and announced to every active partition.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { acceptSplit, decideSplit, type SplitType } from "../../engine/domain/corporate-actions/decide-split.ts"
import { ISSUER, sumOf, walletAccount } from "../../engine/domain/ledger.ts"
import { arbitraryHolders, holder, PARTITIONS, raise } from "./corporate-fixtures.ts"
import { accepted, codeOf, OPEN_AT, SCOM } from "./decider-fixtures.ts"

const KES_RATE = 129_250_000n
const split = (actionType: SplitType, ratioFrom: number, ratioTo: number) => accepted(acceptSplit(SCOM, actionType, raise(actionType, { ratioFrom, ratioTo })))
const state = (holders: ReturnType<typeof holder>[], price = 180_000) => ({
  instrument: SCOM,
  listingStatus: "ACTIVE" as const,
  ordersRejected: ["ord_1"],
  price,
  holders,
  partitions: PARTITIONS
})
const ids = { actionId: "ca_1", unitChangeSeq: 7 }

describe("a split's terms", () => {
  it("a split and a bonus issue must add units, a reverse split remove them", () => {
    expect(codeOf(acceptSplit(SCOM, "SPLIT", raise("SPLIT", { ratioFrom: 2, ratioTo: 1 })))).toBe("VALIDATION_ERROR")
    expect(codeOf(acceptSplit(SCOM, "BONUS", raise("BONUS", { ratioFrom: 3, ratioTo: 3 })))).toBe("VALIDATION_ERROR")
    expect(codeOf(acceptSplit(SCOM, "REVERSE_SPLIT", raise("REVERSE_SPLIT", { ratioFrom: 1, ratioTo: 10 })))).toBe("VALIDATION_ERROR")
    expect(split("REVERSE_SPLIT", 10, 1).what).toBe("1-for-10 share consolidation")
    expect(split("SPLIT", 1, 2).what).toBe("2-for-1 share split")
    expect(split("BONUS", 10, 11).what).toBe("Bonus issue: 11 shares for every 10 held")
  })

  it("ratios are whole numbers from 1 to 1000, each named when refused", () => {
    for (const [ratioFrom, ratioTo, param] of [
      [0, 2, "ratioFrom"],
      [1.5, 2, "ratioFrom"],
      [1, 1001, "ratioTo"],
      [1, undefined, "ratioTo"]
    ] as const) {
      const refused = acceptSplit(SCOM, "SPLIT", raise("SPLIT", { ratioFrom, ratioTo }))
      expect(codeOf(refused)).toBe("VALIDATION_ERROR")
      expect(refused).toMatchObject({ extras: { param } })
    }
  })

  it("the open orders are rejected with a reason that says what to do, and the operator's description wins", () => {
    expect(split("SPLIT", 1, 2).rejectReason).toBe(`2-for-1 share split of ${SCOM.symbol}: place the order again at the adjusted price`)
    expect(accepted(acceptSplit(SCOM, "SPLIT", raise("SPLIT", { ratioFrom: 1, ratioTo: 2, description: "Board split" }))).description).toBe("Board split")
  })
})

describe("rescaling holdings", () => {
  it("a 2-for-1 split doubles every holding and pays no cash", () => {
    const plan = decideSplit(state([holder("ptn_a:sandbox", "master", 100, 40)]), split("SPLIT", 1, 2), OPEN_AT, ids)
    expect(plan.holdings).toEqual([holder("ptn_a:sandbox", "master", 200, 80)])
    expect(plan.credits).toEqual([])
  })

  it("a 1-for-3 consolidation keeps whole units and pays the fraction from the issuer at the old price", () => {
    // 200 units -> 66 whole units and 2/3 of one: 2 old units at KES 18 = KES 36 = USD 0.2785... -> 28 cents
    const plan = decideSplit(state([holder("ptn_a:sandbox", "usr_1", 200)]), split("REVERSE_SPLIT", 3, 1), OPEN_AT, ids)
    expect(plan.holdings[0]?.holding.quantity).toBe(66)
    expect(plan.credits).toHaveLength(1)
    expect(plan.credits[0]?.entry).toMatchObject({ kind: "CASH_IN_LIEU", reference: "ca_1" })
    expect(plan.credits[0]?.entry.postings).toEqual([
      { account: ISSUER, cents: -28 },
      { account: walletAccount("usr_1"), cents: 28 }
    ])
  })

  it("property: no fractional unit is kept, reserved units never exceed the units held, and value is kept up to half a cent", () => {
    const ratios = fc.tuple(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 1000 })).filter(([a, b]) => a !== b)
    fc.assert(
      fc.property(arbitraryHolders(), ratios, fc.integer({ min: 1, max: 50_000_000 }), (holders, [ratioFrom, ratioTo], price) => {
        const type: SplitType = ratioTo > ratioFrom ? "SPLIT" : "REVERSE_SPLIT"
        const plan = decideSplit(state(holders, price), split(type, ratioFrom, ratioTo), OPEN_AT, ids)
        expect(plan.holdings).toHaveLength(holders.length)
        holders.forEach((before, i) => {
          const after = plan.holdings[i]?.holding
          if (after === undefined) throw new Error("a holder was dropped")
          expect(Number.isSafeInteger(after.quantity)).toBe(true)
          expect(after.reserved).toBeLessThanOrEqual(after.quantity)
          // Whole new units plus a fraction below one new unit make up exactly the old units' worth.
          const fraction = before.holding.quantity * ratioTo - after.quantity * ratioFrom
          expect(fraction).toBeGreaterThanOrEqual(0)
          expect(fraction).toBeLessThan(ratioFrom)
          const credit = plan.credits.find((c) => c.partition === before.partition && c.entry.postings.some((p) => p.account === walletAccount(before.account)))
          const cents = BigInt(credit?.entry.postings.find((p) => p.account === walletAccount(before.account))?.cents ?? 0)
          // cash = fraction x price / ratioTo in local 1/10000, in USD cents at the rate, rounded once: off by at most half a cent
          const exact = BigInt(fraction) * BigInt(price) * 100_000_000n
          const scale = BigInt(ratioTo) * KES_RATE * 10_000n
          const error = cents * scale - exact
          expect(2n * error >= -scale && 2n * error <= scale).toBe(true)
        })
      })
    )
  })

  it("property: every credit balances (the issuer pays what the wallets receive) and only holders left with a fraction are paid", () => {
    fc.assert(
      fc.property(arbitraryHolders(), fc.integer({ min: 2, max: 1000 }), (holders, ratioFrom) => {
        const plan = decideSplit(state(holders), split("REVERSE_SPLIT", ratioFrom, 1), OPEN_AT, ids)
        for (const c of plan.credits) expect(sumOf(c.entry.postings)).toBe(0)
        const withFraction = new Set(holders.filter((h) => h.holding.quantity % ratioFrom !== 0).map((h) => `${h.partition} ${walletAccount(h.account)}`))
        const paid = plan.credits.map((c) => `${c.partition} ${c.entry.postings.find((p) => p.cents > 0)?.account}`)
        for (const wallet of paid) expect(withFraction.has(wallet)).toBe(true)
      })
    )
  })
})

describe("the action", () => {
  it("is completed now, carries the unit-change position, reports the rejected orders and is announced twice per active partition", () => {
    const plan = decideSplit(state([holder("ptn_a:sandbox", "master", 10)]), split("SPLIT", 1, 2), OPEN_AT, ids)
    expect(plan.action).toMatchObject({ actionId: "ca_1", actionType: "SPLIT", completedAt: OPEN_AT, seq: 7, details: { ratioFrom: 1, ratioTo: 2 } })
    expect(plan.outcome).toMatchObject({ accountsAffected: 1, ordersRejected: ["ord_1"], rescale: { ratioFrom: 1, ratioTo: 2 }, listingStatus: "ACTIVE" })
    expect(plan.events.map((e) => `${e.partition} ${e.name}`)).toEqual(
      PARTITIONS.flatMap((p) => [`${p} corporateaction.split`, `${p} corporateaction.declared`])
    )
    expect(plan.events[0]?.data).toMatchObject({ actionId: "ca_1", ratioFrom: 1, ratioTo: 2 })
  })
})
