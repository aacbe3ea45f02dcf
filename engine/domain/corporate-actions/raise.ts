/**
 * The operator's corporate actions as commands (`POST /_sim/corporate-actions`, D-302) and the checks their terms
 * share: whole ratios, a split's direction, a price in the listing's currency. The control route hands the request
 * over already checked against the contract's schema; these are the rules the schema cannot say.
 * Owns: the command's type, its shared checks and the rejection codes of a listing's open orders (D-304). Does not own
 * what each action does (decide-*.ts).
 */
import { type ApiFailure, fail } from "../errors.ts"
import { MAX_RATIO } from "../corporate.ts"
import type { Instrument } from "../instruments.ts"
import { parseScaled, type Price4 } from "../money.ts"

export type RaiseType = "DIVIDEND" | "SPLIT" | "REVERSE_SPLIT" | "BONUS" | "SUSPENSION" | "RESUMPTION" | "DELISTING" | "RIGHTS_ISSUE" | "SYMBOL_CHANGE"

export interface RaiseInput {
  readonly actionType: RaiseType
  readonly symbol: string
  readonly exchange?: string | undefined
  readonly description?: string | undefined
  readonly dividendPerShare?: number | undefined
  readonly ratioFrom?: number | undefined
  readonly ratioTo?: number | undefined
  readonly reason?: string | undefined
  readonly expectedResumeAt?: string | undefined
  readonly ratioHeld?: number | undefined
  readonly ratioEntitled?: number | undefined
  readonly subscriptionPrice?: number | undefined
  readonly subscriptionDeadline?: string | undefined
  readonly newSymbol?: string | undefined
  readonly effectiveDate?: string | undefined
}

export type ListingStatus = Instrument["listingStatus"]

/** Rejection codes of the listing's open orders (D-304, extending D-008). */
export const REJECT_SPLIT = "CORPORATE_ACTION"
export const REJECT_SUSPENDED = "INSTRUMENT_SUSPENDED"
export const REJECT_DELISTED = "INSTRUMENT_DELISTED"

export const invalid = (param: string, message: string): ApiFailure => fail("VALIDATION_ERROR", message, { param })

/** A delisted listing takes no further action of any kind. */
export const refuseDelisted = (instrument: Instrument, status: ListingStatus): ApiFailure | undefined =>
  status === "DELISTED" ? fail("CONFLICT", `${instrument.symbol} is delisted: no further corporate actions`) : undefined

/** A ratio term: a whole number from 1 to MAX_RATIO. */
export const wholeRatio = (value: number | undefined, param: string): number | ApiFailure =>
  value !== undefined && Number.isSafeInteger(value) && value >= 1 && value <= MAX_RATIO
    ? value
    : invalid(param, `${param} must be a whole number from 1 to ${MAX_RATIO}`)

/** A price term in the listing's currency: above 0 with at most 4 decimals (Price4), else undefined. */
export const positivePrice4 = (value: number | undefined): Price4 | undefined => {
  const scaled = value === undefined ? undefined : parseScaled(value, 4)
  return scaled === undefined || scaled <= 0 ? undefined : scaled
}
