/**
 * An offer of the reference book as asset subscriptions see it (D-168, D-272): its family, id, asset class, window
 * at an instant, and when a subscription accepted now is allotted. Pure.
 * Owns: these views of an offer. Does not own the offers themselves (domain/reference/offers.ts).
 */
import type { OfferStatus } from "../reference/offers.ts"
import { type BondRecord, type FundRecord, type OpportunityRecord, windowStatus } from "../reference/offers.ts"
import { type AssetClass, bondClass, FUND_DEALING_DELAY_MS } from "../subscription.ts"

/** One offer of the reference book, whatever its family. */
export type Offer =
  | { readonly family: "bond"; readonly record: BondRecord }
  | { readonly family: "fund"; readonly record: FundRecord }
  | { readonly family: "opportunity"; readonly record: OpportunityRecord }

export const offerId = (o: Offer) => (o.family === "bond" ? o.record.bondId : o.family === "fund" ? o.record.fundId : o.record.opportunityId)

export const classOf = (o: Offer): AssetClass =>
  o.family === "bond" ? bondClass(o.record.instrumentType) : o.family === "fund" ? "FUND" : o.record.opportunityType

/** The window at `now` (D-168): a fund is CLOSED to new money, UPCOMING before its launch, else OPEN. */
export const statusOf = (o: Offer, now: number): OfferStatus =>
  o.family === "fund" ? (o.record.closed ? "CLOSED" : windowStatus(o.record.opensAt, null, now)) : windowStatus(o.record.opensAt, o.record.closesAt, now)

/** When a subscription accepted at `now` is allotted (D-272): at the close, or on the fund's next dealing day. */
export const allotAtOf = (o: Offer, now: number): number => (o.family === "fund" ? now + FUND_DEALING_DELAY_MS : o.record.closesAt)
