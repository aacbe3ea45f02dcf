/**
 * Deposit and withdrawal amounts (D-025). Pure. Owns: the USD amount's precision, and the local-currency fields the
 * partner reports: the partner does the FX, the service records what it is told and derives only what is missing.
 * Does not own balances or funds checks (domain/wallets/decide-transfer.ts).
 */
import { type ApiFailure, fail } from "./errors.ts"
import { rateFor } from "./fx.ts"
import { type Cents, divRound, parseScaled, type Rate6, RATE_SCALE } from "./money.ts"

/** Local amounts are recorded with up to 4 decimals; rates with up to 6 (local units per USD). */
export const LOCAL_DECIMALS = 4

export interface TransferInput {
  readonly amount: number
  readonly localAmount?: number | undefined
  readonly localCurrency?: string | undefined
  readonly fxRate?: number | undefined
}

export interface LocalLeg {
  /** In 1/10000 of the local unit. */
  readonly amount4: number
  readonly currency: string
  readonly rate: Rate6
}

export interface TransferAmounts {
  readonly cents: Cents
  readonly local: LocalLeg | null
}

const safe = (value: bigint): number | undefined => {
  const n = Number(value)
  return Number.isSafeInteger(n) ? n : undefined
}

/**
 * The USD cents and the local leg of a transfer: `localAmount` and `fxRate` are kept as given; when one of them is
 * missing it is derived from the other (`localAmount = amount x fxRate`, rounded to the local cent); with
 * `localCurrency` alone the service's reference rate is used. Either number without `localCurrency` is refused.
 */
export const transferAmounts = (input: TransferInput): TransferAmounts | ApiFailure => {
  const cents = parseScaled(input.amount, 2)
  if (cents === undefined || cents <= 0) return fail("VALIDATION_ERROR", "amount must be a positive USD amount with at most 2 decimals", { param: "amount" })
  const { localAmount, fxRate, localCurrency } = input
  if (localCurrency === undefined) {
    if (localAmount !== undefined || fxRate !== undefined) {
      return fail("VALIDATION_ERROR", "localCurrency is required with localAmount or fxRate", { param: "localCurrency" })
    }
    return { cents, local: null }
  }
  const given4 = localAmount === undefined ? undefined : parseScaled(localAmount, LOCAL_DECIMALS)
  if (localAmount !== undefined && (given4 === undefined || given4 <= 0)) {
    return fail("VALIDATION_ERROR", `localAmount must be positive with at most ${LOCAL_DECIMALS} decimals`, { param: "localAmount" })
  }
  const givenRate = fxRate === undefined ? undefined : parseScaled(fxRate, 6)
  if (fxRate !== undefined && (givenRate === undefined || givenRate <= 0)) {
    return fail("VALIDATION_ERROR", "fxRate must be positive with at most 6 decimals", { param: "fxRate" })
  }
  let rate = givenRate
  if (rate === undefined && given4 !== undefined) {
    // localAmount / amount, to 6 decimals: local4 / 1e4 / (cents / 100) * 1e6
    rate = safe(divRound(BigInt(given4) * 10_000n, BigInt(cents)))
    if (rate === undefined || rate <= 0) return fail("VALIDATION_ERROR", "localAmount / amount is not a usable rate", { param: "localAmount" })
  }
  rate ??= rateFor(localCurrency)
  if (rate === undefined) {
    return fail("VALIDATION_ERROR", `no reference rate for ${localCurrency}: send the fxRate or the localAmount you applied`, { param: "localCurrency" })
  }
  // amount x rate, rounded to the local cent: cents * rate6 / 1e6 local cents, times 100 for 1/10000 units.
  const amount4 = given4 ?? safe(divRound(BigInt(cents) * BigInt(rate), RATE_SCALE) * 100n)
  if (amount4 === undefined) return fail("VALIDATION_ERROR", "amount x fxRate is out of range", { param: "fxRate" })
  return { cents, local: { amount4, currency: localCurrency, rate } }
}
