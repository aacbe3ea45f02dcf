/**
 * Loaded state for the corporate actions' rules (domain/corporate-actions/): holders of SCOM.KE across partner
 * environments, as app/holders.ts reads them, and generators of them for properties. No store: the rules are pure.
 */
import * as fc from "fast-check"
import type { Holder } from "../../engine/domain/corporate-actions/plan.ts"
import type { RaiseInput, RaiseType } from "../../engine/domain/corporate-actions/raise.ts"
import { SCOM } from "./decider-fixtures.ts"

export const PARTITIONS = ["ptn_a:sandbox", "ptn_a:production", "ptn_b:production"] as const
export const ACCOUNTS = ["master", "usr_1", "usr_2", "usr_3"] as const

export const holder = (partition: string, account: string, quantity: number, reserved = 0): Holder => ({
  partition,
  account,
  holding: { symbol: SCOM.symbol, quantity, reserved }
})

export const raise = (actionType: RaiseType, over: Partial<RaiseInput> = {}): RaiseInput => ({ actionType, symbol: SCOM.symbol, ...over })

/** Distinct accounts holding at least one unit (some of them reserved), in partition then account order like holdersOf. */
export const arbitraryHolders = (maxUnits = 5_000_000) =>
  fc
    .uniqueArray(
      fc.record({
        partition: fc.constantFrom(...PARTITIONS),
        account: fc.constantFrom(...ACCOUNTS),
        quantity: fc.integer({ min: 1, max: maxUnits }),
        reservedShare: fc.double({ min: 0, max: 1, noNaN: true })
      }),
      { selector: (h) => `${h.partition}|${h.account}`, maxLength: 12 }
    )
    .map((hs) =>
      hs
        .map((h) => holder(h.partition, h.account, h.quantity, Math.floor(h.quantity * h.reservedShare)))
        .sort((a, b) => PARTITIONS.indexOf(a.partition as never) - PARTITIONS.indexOf(b.partition as never) || a.account.localeCompare(b.account))
    )
