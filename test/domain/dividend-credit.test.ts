/**
 * A dividend raised by the operator (domain/corporate-actions/decide-dividend.ts, D-302, D-303): its terms (a positive
 * amount, at most 4 decimals), one credit per holder owed at least a cent (units x dividendPerShare at the reference
 * rate, rounded once), paid by the issuer; one `dividend.paid` per partner environment with its batch; the totals
 * are the sums of the credits.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decideDividend, type DividendHolder } from "../../engine/domain/corporate-actions/decide-dividend.ts"
import { dividendCents } from "../../engine/domain/corporate.ts"
import { ISSUER, sumOf, walletAccount } from "../../engine/domain/ledger.ts"
import { arbitraryHolders, holder, raise } from "./corporate-fixtures.ts"
import { accepted, codeOf, OPEN_AT, SCOM } from "./decider-fixtures.ts"

const KES_RATE = 129_250_000
const withIds = (holders: ReadonlyArray<ReturnType<typeof holder>>): ReadonlyArray<DividendHolder> =>
  holders.map((h) => ({ ...h, externalId: h.account === "master" ? null : `ext-${h.account}` }))
const pay = (holders: ReadonlyArray<DividendHolder>, dividendPerShare: number) =>
  decideDividend({ instrument: SCOM, listingStatus: "ACTIVE", holders }, raise("DIVIDEND", { dividendPerShare }), OPEN_AT, { dividendId: "div_1" })
const centsOf = (plan: ReturnType<typeof pay>, partition: string, account: string) =>
  accepted(plan)
    .credits.filter((c) => c.partition === partition)
    .flatMap((c) => c.entry.postings)
    .filter((p) => p.account === walletAccount(account))
    .reduce((sum, p) => sum + p.cents, 0)

describe("a dividend's terms", () => {
  it("needs an amount above 0 with at most 4 decimals", () => {
    for (const amount of [0, -1, 0.00001]) {
      const refused = pay([], amount)
      expect(codeOf(refused)).toBe("VALIDATION_ERROR")
      expect(refused).toMatchObject({ extras: { param: "dividendPerShare" } })
    }
    expect(codeOf(pay([], 0.0001))).toBe("accepted")
  })

  it("is recorded paid today at the exchange, in the listing's currency", () => {
    const plan = accepted(pay([], 1.5))
    expect(plan.dividend).toMatchObject({ dividendId: "div_1", symbol: SCOM.symbol, perShare: 15_000, currency: "KES", type: "CASH", announcedAt: OPEN_AT })
    expect(plan.dividend?.exDate).toBe(plan.dividend?.paymentDate)
    expect(plan.outcome).toMatchObject({ dividend: plan.dividend, accountsAffected: 0, totalUsdCents: 0 })
  })
})

describe("crediting holders", () => {
  it("credits 100 units at KES 1.50 with USD 1.16 from the issuer, named by the dividend", () => {
    const plan = accepted(pay(withIds([holder("ptn_a:sandbox", "usr_1", 100)]), 1.5))
    expect(plan.credits).toEqual([
      {
        partition: "ptn_a:sandbox",
        entry: {
          kind: "DIVIDEND",
          postings: [
            { account: ISSUER, cents: -116 },
            { account: walletAccount("usr_1"), cents: 116 }
          ],
          at: OPEN_AT,
          description: `Dividend on 100 ${SCOM.symbol} at KES 1.5 per share`,
          reference: "div_1"
        }
      }
    ])
  })

  it("a holder owed less than a cent gets no entry but is counted in its batch", () => {
    const plan = accepted(pay(withIds([holder("ptn_a:sandbox", "master", 1)]), 0.01))
    expect(plan.credits).toEqual([])
    expect(plan.events[0]?.data).toMatchObject({
      distributionCount: 1,
      totalUsdPaid: 0,
      distributions: [{ subAccountId: "master", externalId: null, units: 1, usdYield: 0 }]
    })
  })

  it("property: each holder is credited units x rate in cents rounded once, and money is conserved", () => {
    fc.assert(
      fc.property(arbitraryHolders(), fc.integer({ min: 1, max: 10_000_000 }), (holders, perShare) => {
        const plan = accepted(pay(withIds(holders), perShare / 10_000))
        let total = 0
        for (const h of holders) {
          const cents = centsOf(plan, h.partition, h.account)
          expect(cents).toBe(dividendCents(h.holding.quantity, perShare, KES_RATE))
          // rounded once: within half a cent of units x perShare / rate
          const exact = (h.holding.quantity * perShare * 100) / (KES_RATE / 1_000_000) / 10_000
          expect(Math.abs(cents - exact)).toBeLessThanOrEqual(0.5 + 1e-6)
          total += cents
        }
        for (const c of plan.credits) expect(sumOf(c.entry.postings)).toBe(0)
        const issuerPaid = plan.credits
          .flatMap((c) => c.entry.postings)
          .filter((p) => p.account === ISSUER)
          .reduce((s, p) => s - p.cents, 0)
        expect(issuerPaid).toBe(total)
        expect(plan.outcome.totalUsdCents).toBe(total)
        expect(plan.outcome.accountsAffected).toBe(holders.length)
      })
    )
  })

  it("property: one dividend.paid per partition holding the listing, its batch summing to what that partition was paid", () => {
    fc.assert(
      fc.property(arbitraryHolders(), fc.integer({ min: 1, max: 1_000_000 }), (holders, perShare) => {
        const plan = accepted(pay(withIds(holders), perShare / 10_000))
        const partitions = [...new Set(holders.map((h) => h.partition))]
        expect(plan.events.map((e) => e.partition)).toEqual(partitions)
        for (const event of plan.events) {
          expect(event.name).toBe("dividend.paid")
          const mine = holders.filter((h) => h.partition === event.partition)
          const paid = mine.reduce((s, h) => s + centsOf(plan, h.partition, h.account), 0)
          expect(event.data).toMatchObject({ symbol: SCOM.symbol, currency: "KES", distributionCount: mine.length, totalUsdPaid: paid / 100 })
        }
      })
    )
  })
})
