/**
 * Asset subscriptions (D-040, D-270..D-276): commitments of USD to a primary-market offer (treasury bill, bond, fund,
 * private credit, pre-IPO). Pure: time, ids and prices come in as arguments. Owns: the subscription record and its
 * state machine (PENDING -> ALLOTTED | PARTIALLY_ALLOTTED | REJECTED | CANCELLED, terminal states final), the fee,
 * the money each transition moves (as ledger postings that sum to zero), units from a price, the allotment a closing
 * offer gives, who may subscribe, and the wire projection. Does not own storing, scheduling or the offers themselves
 * (app/subscriptions/, domain/subscriptions/, domain/reference/offers.ts).
 */
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "./errors.ts"
import { FEES, MARKET, type Posting, subscriptionEscrowAccount, sumOf, walletAccount } from "./ledger.ts"
import { type Cents, centsToWire, divRound, fees, type Price4, type Rate6, toWireNumber } from "./money.ts"
import type { OpportunityRecord } from "./reference/offers.ts"
import { refuseInactive, type SubAccountRecord } from "./subaccount.ts"

export type AssetClass = Schemas["AssetClass"]
export type SubscriptionStatus = Schemas["SubscriptionStatus"]

export const ASSET_CLASSES: ReadonlyArray<AssetClass> = ["TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"]
export const SUBSCRIPTION_STATUSES: ReadonlyArray<SubscriptionStatus> = ["PENDING", "ALLOTTED", "PARTIALLY_ALLOTTED", "REJECTED", "CANCELLED"]

/** Largest amount one subscription takes (USD 100 million): beyond any seeded offer's size, and safe in cents. */
export const MAX_SUBSCRIPTION_CENTS: Cents = 100_000_000_00

/** An issuer that cancels a raise that fell short of its minimum (D-273). */
export const MINIMUM_RAISE_NOT_MET = "MINIMUM_RAISE_NOT_MET"
/** A raise below this share of its target (permille) is cancelled by the issuer at the close (D-273). */
export const MINIMUM_FILL_PERMILLE = 600
/** Funds deal once a day: a subscription is allotted at the NAV one day after acceptance (D-272). */
export const FUND_DEALING_DELAY_MS = 86_400_000

export interface SubscriptionRecord {
  readonly subscriptionId: string
  /** `partnerId:environment`. */
  readonly partition: string
  /** `master` or a sub-account id. */
  readonly account: string
  readonly externalId: string | null
  readonly assetClass: AssetClass
  readonly instrumentId: string
  readonly instrumentName: string
  /** The offer's currency (units are counted in it). */
  readonly offerCurrency: string
  readonly amount: Cents
  readonly markupBps: number
  readonly fee: Cents
  readonly totalAmount: Cents
  /** Cash still held for this subscription: totalAmount while PENDING, 0 once decided. */
  readonly escrow: Cents
  readonly status: SubscriptionStatus
  readonly allottedAmount: Cents | null
  /** Fee charged on the allotted amount (the rest of `fee` is refunded with the surplus). */
  readonly allottedFee: Cents | null
  /** Units allotted, in 1/10000. */
  readonly units4: number | null
  readonly rejectionCode: string | null
  readonly rejectionReason: string | null
  readonly clientReference: string | null
  readonly createdAt: number
  readonly allottedAt: number | null
  readonly decidedAt: number | null
  /** When the scheduled allotment falls due (the offer's close, or the fund's next dealing day). */
  readonly allotAt: number
}

export interface AcceptInput {
  readonly subscriptionId: string
  readonly partition: string
  readonly account: string
  readonly externalId: string | null
  readonly assetClass: AssetClass
  readonly instrumentId: string
  readonly instrumentName: string
  readonly offerCurrency: string
  readonly amount: Cents
  readonly markupBps: number
  readonly clientReference: string | null
  readonly now: number
  readonly allotAt: number
}

/** The money a transition moves, from the account's point of view; `escrowDelta` is the subscription's escrow change. */
export interface SubscriptionMovements {
  readonly wallet: Cents
  readonly escrowDelta: Cents
  readonly feesCollected: Cents
  /** Cash paid to the issuer (the primary market). */
  readonly market: Cents
}

export interface SubscriptionTransition {
  readonly record: SubscriptionRecord
  readonly movements: SubscriptionMovements
}

/** Subscribing needs an active sub-account with KYC VERIFIED (spec: "VERIFIED is required for ... asset subscriptions"). */
export const refuseSubscribing = (s: SubAccountRecord): ApiFailure | undefined =>
  refuseInactive(s, "subscribing") ??
  (s.kycStatus === "VERIFIED"
    ? undefined
    : fail("KYC_REQUIRED", `sub-account ${s.subAccountId} has kycStatus ${s.kycStatus}: asset subscriptions need VERIFIED`))

/** The asset class an instrument subscribes as: bonds split by type, opportunities by theirs. */
export const bondClass = (instrumentType: string): AssetClass => (instrumentType === "TREASURY_BILL" ? "TREASURY_BILL" : "BOND")

/** A new PENDING subscription: amount + fee (base 0.75% + the partner's markup, as for orders) held in escrow. */
export const accept = (input: AcceptInput): SubscriptionRecord => {
  const fee = fees(input.amount, input.markupBps).fee
  return {
    subscriptionId: input.subscriptionId,
    partition: input.partition,
    account: input.account,
    externalId: input.externalId,
    assetClass: input.assetClass,
    instrumentId: input.instrumentId,
    instrumentName: input.instrumentName,
    offerCurrency: input.offerCurrency,
    amount: input.amount,
    markupBps: input.markupBps,
    fee,
    totalAmount: input.amount + fee,
    escrow: input.amount + fee,
    status: "PENDING",
    allottedAmount: null,
    allottedFee: null,
    units4: null,
    rejectionCode: null,
    rejectionReason: null,
    clientReference: input.clientReference,
    createdAt: input.now,
    allottedAt: null,
    decidedAt: null,
    allotAt: input.allotAt
  }
}

/** Acceptance moves the total from the wallet into the subscription's escrow. */
export const acceptMovements = (r: SubscriptionRecord): SubscriptionMovements => ({
  wallet: -r.totalAmount,
  escrowDelta: r.totalAmount,
  feesCollected: 0,
  market: 0
})

const notPending = (r: SubscriptionRecord): ApiFailure | undefined =>
  r.status === "PENDING" ? undefined : fail("CONFLICT", `subscription ${r.subscriptionId} is ${r.status}: only a PENDING subscription can be decided`)

/**
 * Allots `allotted` cents of the amount (all of it by default) at `units4`: the issuer receives the allotted amount,
 * the fee on it is collected, and the surplus (the unallotted amount and its fee) returns to the wallet.
 * ALLOTTED when the whole amount is allotted, else PARTIALLY_ALLOTTED.
 */
export const allot = (r: SubscriptionRecord, allotted: Cents, units4: number | null, now: number): SubscriptionTransition | ApiFailure => {
  const conflict = notPending(r)
  if (conflict !== undefined) return conflict
  if (!Number.isSafeInteger(allotted) || allotted <= 0 || allotted > r.amount) {
    return fail("VALIDATION_ERROR", `the allotted amount must be above 0 and at most the amount subscribed (${centsToWire(r.amount)} USD)`, {
      param: "amount"
    })
  }
  const full = allotted === r.amount
  const charged = full ? r.fee : fees(allotted, r.markupBps).fee
  const refund = r.escrow - allotted - charged
  return {
    record: {
      ...r,
      status: full ? "ALLOTTED" : "PARTIALLY_ALLOTTED",
      escrow: 0,
      allottedAmount: allotted,
      allottedFee: charged,
      units4,
      allottedAt: now,
      decidedAt: now
    },
    movements: { wallet: refund, escrowDelta: -r.escrow, feesCollected: charged, market: allotted }
  }
}

/** Rejected (by the service) or cancelled (by the issuer): the whole escrow returns to the wallet, nothing is charged. */
export const decline = (
  r: SubscriptionRecord,
  status: "REJECTED" | "CANCELLED",
  code: string,
  reason: string,
  now: number
): SubscriptionTransition | ApiFailure => {
  const conflict = notPending(r)
  if (conflict !== undefined) return conflict
  return {
    record: { ...r, status, escrow: 0, rejectionCode: code, rejectionReason: reason, decidedAt: now },
    movements: { wallet: r.escrow, escrowDelta: -r.escrow, feesCollected: 0, market: 0 }
  }
}

/** The ledger postings of a transition on `account`; undefined when they would not balance (a bug, never posted). */
export const subscriptionPostings = (account: string, m: SubscriptionMovements): ReadonlyArray<Posting> | undefined => {
  const postings = [
    { account: walletAccount(account), cents: m.wallet },
    { account: subscriptionEscrowAccount(account), cents: m.escrowDelta },
    { account: FEES, cents: m.feesCollected },
    { account: MARKET, cents: m.market }
  ].filter((p) => p.cents !== 0)
  return sumOf(postings) === 0 ? postings : undefined
}

/**
 * Units bought by `cents` USD at `price4` (offer currency per unit, 1/10000) with `rate6` (offer currency per USD):
 * (cents/100 × rate6/1e6) / (price4/1e4) units, i.e. cents × rate6 / price4 in 1/10000 of a unit, rounded once.
 */
export const unitsFor = (cents: Cents, rate6: Rate6, price4: Price4): number => Number(divRound(BigInt(cents) * BigInt(rate6), BigInt(price4)))

/**
 * The price of one unit of a bond or bill (D-274): a treasury bill is sold at a discount to its face value (simple
 * yield on a 365-day year: face / (1 + yield × days / 365)); coupon bonds are issued at par.
 */
export const bondPrice4 = (faceValue4: Price4, instrumentType: string, yieldBps: number, tenorDays: number): Price4 =>
  instrumentType === "TREASURY_BILL" ? Number(divRound(BigInt(faceValue4) * 3_650_000n, 3_650_000n + BigInt(yieldBps) * BigInt(tenorDays))) : faceValue4

/** Private-market units are counted in the offer's currency: one unit per currency unit committed (D-274). */
export const OPPORTUNITY_UNIT_PRICE4: Price4 = 10_000

/**
 * What a private-market raise gives at its close (D-273): cancelled by the issuer below the minimum fill, allotted pro
 * rata when oversubscribed (the amount scaled by target / demand, rounded once), else in full.
 */
export const opportunityOutcome = (
  o: Pick<OpportunityRecord, "fillPermille">,
  amount: Cents
): { readonly kind: "allot"; readonly allotted: Cents } | { readonly kind: "cancel" } => {
  if (o.fillPermille < MINIMUM_FILL_PERMILLE) return { kind: "cancel" }
  if (o.fillPermille <= 1000) return { kind: "allot", allotted: amount }
  return { kind: "allot", allotted: Math.max(1, Number(divRound(BigInt(amount) * 1000n, BigInt(o.fillPermille)))) }
}

const isoOf = (ms: number) => new Date(ms).toISOString()

export const subscriptionToWire = (r: SubscriptionRecord): Schemas["Subscription"] => ({
  subscriptionId: r.subscriptionId,
  assetClass: r.assetClass,
  instrumentId: r.instrumentId,
  instrumentName: r.instrumentName,
  subAccountId: r.account === "master" ? null : r.account,
  externalId: r.externalId,
  amount: centsToWire(r.amount),
  fee: centsToWire(r.fee),
  totalAmount: centsToWire(r.totalAmount),
  currency: "USD",
  status: r.status,
  allottedAmount: r.allottedAmount === null ? null : centsToWire(r.allottedAmount),
  units: r.units4 === null ? null : toWireNumber(r.units4, 4),
  rejectionCode: r.rejectionCode,
  rejectionReason: r.rejectionReason,
  clientReference: r.clientReference,
  createdAt: isoOf(r.createdAt),
  allottedAt: r.allottedAt === null ? null : isoOf(r.allottedAt)
})
