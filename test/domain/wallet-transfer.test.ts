/**
 * Deposits and withdrawals (domain/wallets/decide-transfer.ts): only an active sub-account moves money; the paying
 * wallet (the master's for a deposit, the sub-account's for a withdrawal) never gives more than it has; the entry
 * moves the amount between the two wallets and nothing else; the confirmation reports the balances the ledger posted.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { sumOf, walletAccount } from "../../engine/domain/ledger.ts"
import { confirmTransfer, decideTransfer, type Direction, payer } from "../../engine/domain/wallets/decide-transfer.ts"
import { accepted, codeOf, OPEN_AT, subAccount } from "./decider-fixtures.ts"

const command = (direction: Direction, cents: number) => ({ direction, amounts: { cents, local: null }, request: { amount: cents / 100 } })

describe("who may move money", () => {
  it("refuses a frozen or closed sub-account (FORBIDDEN) before looking at funds", () => {
    expect(codeOf(decideTransfer({ subAccount: subAccount({ status: "frozen" }), available: 1_000 }, command("DEPOSIT", 100), OPEN_AT))).toBe("FORBIDDEN")
    expect(codeOf(decideTransfer({ subAccount: subAccount({ status: "closed" }), available: 1_000 }, command("WITHDRAWAL", 100), OPEN_AT))).toBe("FORBIDDEN")
  })

  it("a deposit is paid by the master wallet, a withdrawal by the sub-account's", () => {
    expect(payer("DEPOSIT", "usr_1")).toBe("master")
    expect(payer("WITHDRAWAL", "usr_1")).toBe("usr_1")
  })
})

describe("funds", () => {
  it("refuses a transfer the paying wallet cannot cover, and accepts exactly enough", () => {
    for (const direction of ["DEPOSIT", "WITHDRAWAL"] as const) {
      expect(codeOf(decideTransfer({ subAccount: subAccount(), available: 99 }, command(direction, 100), OPEN_AT))).toBe("INSUFFICIENT_FUNDS")
      expect(codeOf(decideTransfer({ subAccount: subAccount(), available: 100 }, command(direction, 100), OPEN_AT))).toBe("accepted")
    }
  })

  it("only the planted overdraw defect lets a withdrawal (never a deposit) take more than is available", () => {
    const planted = { subAccount: subAccount(), available: 0, overdrawPlanted: true }
    expect(accepted(decideTransfer(planted, command("WITHDRAWAL", 100), OPEN_AT)).entry.plantedOverdraw).toBe(true)
    expect(codeOf(decideTransfer(planted, command("DEPOSIT", 100), OPEN_AT))).toBe("INSUFFICIENT_FUNDS")
  })

  it("never takes more than is available, and the entry moves exactly the amount between the two wallets (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("DEPOSIT" as const, "WITHDRAWAL" as const),
        fc.integer({ min: 1, max: 10 ** 12 }),
        fc.integer({ min: 0, max: 10 ** 12 }),
        (d, cents, available) => {
          const plan = decideTransfer({ subAccount: subAccount(), available }, command(d, cents), OPEN_AT)
          if (plan instanceof ApiFailure) {
            expect(available).toBeLessThan(cents)
            return
          }
          expect(cents).toBeLessThanOrEqual(available)
          expect(sumOf(plan.entry.postings)).toBe(0)
          const paid = plan.entry.postings.find((p) => p.account === walletAccount(payer(d, "usr_1")))
          expect(paid?.cents).toBe(-cents)
          expect(plan.entry.postings).toHaveLength(2)
        }
      )
    )
  })
})

describe("confirmation", () => {
  it("reports the balances the ledger posted, the entry's id and the local leg", () => {
    const cmd = {
      direction: "DEPOSIT" as const,
      amounts: { cents: 12_345, local: { amount4: 15_950_000, currency: "KES", rate: 129_200_000 } },
      request: { amount: 123.45, note: "n" }
    }
    const plan = accepted(decideTransfer({ subAccount: subAccount(), available: 50_000 }, cmd, OPEN_AT))
    const posted = {
      entryId: "txn_1",
      after: new Map([
        [walletAccount("usr_1"), 12_345],
        [walletAccount("master"), 37_655]
      ])
    }
    const { event, answer } = confirmTransfer(plan, posted)
    expect(event).toEqual({
      name: "deposit.confirmed",
      data: {
        subAccountId: "usr_1",
        externalId: "ext-1",
        amount: 123.45,
        currency: "USD",
        newBalance: 123.45,
        localAmount: 1595,
        localCurrency: "KES",
        fxRate: 129.2
      }
    })
    expect(answer).toMatchObject({ transactionId: "txn_1", type: "DEPOSIT", newBalance: 123.45, masterWalletBalance: 376.55, note: "n", reference: null })
    expect(answer.createdAt).toBe(new Date(OPEN_AT).toISOString())
  })
})
