/**
 * Unit and property tests of engine/domain/ledger.ts: account names, how entries read in a history, compacting
 * postings, and order postings that always balance (or are refused).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  compact,
  escrowAccount,
  mustStayNonNegative,
  orderPostings,
  sumOf,
  transactionTypeOf,
  transfer,
  walletAccount,
  walletOwner
} from "../../engine/domain/ledger.ts"

const NONE = { wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 }

describe("ledger accounts", () => {
  it("names wallets and escrows, and tells whose wallet an account is", () => {
    expect(walletAccount("usr_1")).toBe("wallet:usr_1")
    expect(escrowAccount("master")).toBe("escrow:master")
    expect(walletOwner("wallet:usr_1")).toBe("usr_1")
    expect(walletOwner("wallet:master")).toBe("master")
    expect(walletOwner("escrow:usr_1")).toBeUndefined()
    expect(walletOwner("fees")).toBeUndefined()
  })

  it("wallets and escrows may not go negative; the other accounts may", () => {
    expect(mustStayNonNegative("wallet:usr_1")).toBe(true)
    expect(mustStayNonNegative("escrow:master")).toBe(true)
    for (const a of ["fees", "market", "equity:seed", "equity:credit", "xwallet:1"]) expect(mustStayNonNegative(a)).toBe(false)
  })

  it("reads each kind of entry as the contract's transaction type", () => {
    expect(transactionTypeOf("DEPOSIT", null)).toBe("DEPOSIT")
    expect(transactionTypeOf("WITHDRAWAL", null)).toBe("WITHDRAWAL")
    expect(transactionTypeOf("ORDER_PLACED", "BUY")).toBe("ORDER_ESCROW")
    expect(transactionTypeOf("ORDER_FILLED", "BUY")).toBe("ORDER_REFUND")
    expect(transactionTypeOf("ORDER_FILLED", "SELL")).toBe("ORDER_PROCEEDS")
    expect(transactionTypeOf("ORDER_REJECTED", "SELL")).toBe("ORDER_REFUND")
    expect(transactionTypeOf("SEED", null)).toBe("ADJUSTMENT")
    expect(transactionTypeOf("CREDIT", null)).toBe("ADJUSTMENT")
  })
})

describe("postings", () => {
  it("compact sums per account in first-seen order and drops zeros", () => {
    expect(
      compact([
        { account: "b", cents: 5 },
        { account: "a", cents: 0 },
        { account: "b", cents: -2 },
        { account: "c", cents: 4 },
        { account: "c", cents: -4 },
        { account: "a", cents: 1 }
      ])
    ).toEqual([
      { account: "b", cents: 3 },
      { account: "a", cents: 1 }
    ])
    expect(
      sumOf([
        { account: "x", cents: 7 },
        { account: "y", cents: -3 }
      ])
    ).toBe(4)
    expect(sumOf([])).toBe(0)
  })

  it("transfer takes from one account and gives to the other", () => {
    expect(transfer("wallet:master", "wallet:usr_1", 250)).toEqual([
      { account: "wallet:master", cents: -250 },
      { account: "wallet:usr_1", cents: 250 }
    ])
  })

  it("posts each order transition between the wallet, the escrow, the fees and the market", () => {
    // BUY placed: 1000 from the wallet into escrow
    expect(orderPostings("usr_1", { ...NONE, wallet: -1000 }, 1000)).toEqual([
      { account: "wallet:usr_1", cents: -1000 },
      { account: "escrow:usr_1", cents: 1000 }
    ])
    // BUY filled for 900 + 7 fee: escrow pays the market and the fee, 93 comes back
    expect(orderPostings("usr_1", { ...NONE, wallet: 93, feesCollected: 7, marketNet: -900, shares: 10 }, -1000)).toEqual([
      { account: "wallet:usr_1", cents: 93 },
      { account: "escrow:usr_1", cents: -1000 },
      { account: "fees", cents: 7 },
      { account: "market", cents: 900 }
    ])
    // SELL filled for 500 less a 4 fee
    expect(orderPostings("master", { ...NONE, wallet: 496, feesCollected: 4, marketNet: 500 }, 0)).toEqual([
      { account: "wallet:master", cents: 496 },
      { account: "fees", cents: 4 },
      { account: "market", cents: -500 }
    ])
    // SELL placed: shares only, no money
    expect(orderPostings("master", { ...NONE, sharesReserved: 3 }, 0)).toEqual([])
  })

  it("refuses an order transition that does not balance", () => {
    expect(orderPostings("usr_1", { ...NONE, wallet: -1000 }, 999)).toBeUndefined()
    expect(orderPostings("usr_1", { ...NONE, feesCollected: 1 }, 0)).toBeUndefined()
  })

  it("any balancing escrow change gives postings that sum to zero, with no zero posting", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 1e7 }), fc.integer({ min: -1e9, max: 1e9 }), (wallet, fee, marketNet) => {
        const escrowDelta = -(wallet + fee - marketNet)
        const postings = orderPostings("usr_1", { ...NONE, wallet, feesCollected: fee, marketNet }, escrowDelta)
        expect(postings).toBeDefined()
        expect(sumOf(postings ?? [])).toBe(0)
        expect((postings ?? []).every((p) => p.cents !== 0)).toBe(true)
        expect(orderPostings("usr_1", { ...NONE, wallet, feesCollected: fee, marketNet }, escrowDelta + 1)).toBeUndefined()
      }),
      { numRuns: 300 }
    )
  })
})
