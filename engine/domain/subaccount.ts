/**
 * Sub-account rules. Pure: time comes in as an argument. Owns: the KYC assertion rules (D-024), the freeze, unfreeze
 * and close transitions (D-022, D-023), what a sub-account may do in each status (trade, move money), and the
 * wire projection of a sub-account. Does not own storing, events or balances (app/accounts.ts, app/ledger.ts).
 */
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "./errors.ts"
import { type Cents, centsToWire } from "./money.ts"

/** An end-user sub-account (spec "Sub-account"). Times in epoch millis. */
export interface SubAccountRecord {
  readonly subAccountId: string
  readonly partition: string
  readonly externalId: string
  /** The identity-provider uid of `POST /auto-register`, null for `POST /users`. */
  readonly uid: string | null
  readonly displayName: string | null
  readonly email: string | null
  /** Create-only (contract): kept, never returned. */
  readonly phone: string | null
  readonly country: string | null
  readonly kycStatus: "NONE" | "PENDING" | "VERIFIED" | "REJECTED"
  readonly kycLevel: "NONE" | "BASIC" | "FULL"
  readonly kycRejectionCode: string | null
  readonly kycRejectionReason: string | null
  readonly kycReviewedAt: number | null
  readonly kycReference: string | null
  readonly status: "active" | "frozen" | "closed"
  /** Who froze it (while frozen): a compliance freeze cannot be lifted by the partner (D-023). */
  readonly frozenBy: "partner" | "compliance" | null
  /** The reason given with the last freeze or unfreeze (kept for the audit log). */
  readonly statusReason: string | null
  readonly createdAt: number
  readonly closedAt: number | null
}
export type KycStatus = SubAccountRecord["kycStatus"]
export type KycLevel = SubAccountRecord["kycLevel"]
export type Actor = "partner" | "compliance"

export interface KycAssertion {
  readonly kycStatus: KycStatus
  readonly kycLevel?: KycLevel | undefined
  readonly reference?: string | undefined
  readonly rejectionCode?: string | undefined
  readonly rejectionReason?: string | undefined
}

/** The KYC fields of a sub-account. */
export type KycState = Pick<SubAccountRecord, "kycStatus" | "kycLevel" | "kycRejectionCode" | "kycRejectionReason" | "kycReviewedAt" | "kycReference">

/**
 * The KYC state an assertion asks for (D-024): VERIFIED needs level BASIC or FULL; PENDING, REJECTED (and NONE,
 * which only compliance may set) take level NONE; REJECTED needs its code and reason, which no other status takes.
 * `kycReviewedAt` is the time of the rejection decision, so it is set only on REJECTED. Undefined when the assertion
 * repeats the current state (answered without an event).
 */
export const nextKyc = (current: KycState, a: KycAssertion, actor: Actor, now: number): KycState | ApiFailure | undefined => {
  if (a.kycStatus === "NONE" && actor === "partner") return fail("VALIDATION_ERROR", "kycStatus NONE cannot be asserted", { param: "kycStatus" })
  if (a.kycStatus === "VERIFIED") {
    if (a.kycLevel === undefined) return fail("MISSING_PARAM", "kycLevel (BASIC or FULL) is required with VERIFIED", { param: "kycLevel" })
    if (a.kycLevel === "NONE") return fail("VALIDATION_ERROR", "VERIFIED needs kycLevel BASIC or FULL", { param: "kycLevel" })
  } else if (a.kycLevel !== undefined && a.kycLevel !== "NONE") {
    return fail("VALIDATION_ERROR", `kycLevel must be NONE or absent with ${a.kycStatus}`, { param: "kycLevel" })
  }
  const rejected = a.kycStatus === "REJECTED"
  if (rejected && a.rejectionCode === undefined) return fail("MISSING_PARAM", "rejectionCode is required with REJECTED", { param: "rejectionCode" })
  if (rejected && a.rejectionReason === undefined) return fail("MISSING_PARAM", "rejectionReason is required with REJECTED", { param: "rejectionReason" })
  if (!rejected && a.rejectionCode !== undefined) return fail("VALIDATION_ERROR", "rejectionCode is only taken with REJECTED", { param: "rejectionCode" })
  if (!rejected && a.rejectionReason !== undefined) return fail("VALIDATION_ERROR", "rejectionReason is only taken with REJECTED", { param: "rejectionReason" })
  const next: KycState = {
    kycStatus: a.kycStatus,
    kycLevel: a.kycStatus === "VERIFIED" ? (a.kycLevel ?? "NONE") : "NONE",
    kycRejectionCode: a.rejectionCode ?? null,
    kycRejectionReason: a.rejectionReason ?? null,
    kycReviewedAt: null,
    kycReference: a.reference ?? null
  }
  if (sameKyc(current, next)) return undefined
  return rejected ? { ...next, kycReviewedAt: now } : next
}

/** Two KYC states are the same assertion when everything but the review time matches. */
export const sameKyc = (a: KycState, b: KycState): boolean =>
  a.kycStatus === b.kycStatus &&
  a.kycLevel === b.kycLevel &&
  a.kycRejectionCode === b.kycRejectionCode &&
  a.kycRejectionReason === b.kycRejectionReason &&
  a.kycReference === b.kycReference

/** A closed sub-account stays readable and refuses every change (D-022). */
export const refuseClosed = (s: SubAccountRecord, what: string): ApiFailure | undefined =>
  s.status === "closed" ? fail("FORBIDDEN", `sub-account ${s.subAccountId} is closed: ${what} is not possible`) : undefined

/** Deposits, withdrawals and trades need an active sub-account (D-023: frozen and closed ones are refused). */
export const refuseInactive = (s: SubAccountRecord, what: string): ApiFailure | undefined =>
  s.status === "active" ? undefined : fail("FORBIDDEN", `sub-account ${s.subAccountId} is ${s.status}: ${what} is not allowed`)

/** Trading also needs KYC VERIFIED (spec: "VERIFIED is required for trading"; REJECTED stays gated). */
export const refuseTrading = (s: SubAccountRecord): ApiFailure | undefined =>
  refuseInactive(s, "trading") ??
  (s.kycStatus === "VERIFIED" ? undefined : fail("KYC_REQUIRED", `sub-account ${s.subAccountId} has kycStatus ${s.kycStatus}: trading needs VERIFIED`))

/**
 * Freeze (`frozen: true`) or unfreeze by `actor`; undefined when the account is already in that state (no event).
 * A compliance freeze cannot be lifted by the partner (D-023).
 */
export const nextFreeze = (s: SubAccountRecord, frozen: boolean, actor: Actor): SubAccountRecord | ApiFailure | undefined => {
  const closed = refuseClosed(s, frozen ? "freezing" : "unfreezing")
  if (closed !== undefined) return closed
  if (frozen) return s.status === "frozen" ? undefined : { ...s, status: "frozen", frozenBy: actor }
  if (s.status === "active") return undefined
  if (s.frozenBy === "compliance" && actor === "partner") {
    return fail("FORBIDDEN", `sub-account ${s.subAccountId} was frozen by service compliance; only compliance can unfreeze it`)
  }
  return { ...s, status: "active", frozenBy: null }
}

export interface ClosureBlocker {
  readonly reason: "NON_ZERO_BALANCE" | "OPEN_ORDERS" | "OPEN_POSITIONS" | "PENDING_SUBSCRIPTIONS" | "PENDING_SETTLEMENT"
  readonly cents: Cents | null
  readonly count: number | null
}

/** Cash held for PENDING asset subscriptions and how many there are (D-275). */
export interface PendingSubscriptions {
  readonly cents: Cents
  readonly count: number
}

/** What keeps the account from closing (D-022, D-029, D-275): cash, open orders, positions, pending subscriptions. */
export const closureBlockers = (
  wallet: Cents,
  escrow: Cents,
  openOrders: number,
  positions: number,
  pending: PendingSubscriptions = { cents: 0, count: 0 }
): ReadonlyArray<ClosureBlocker> => [
  ...(wallet !== 0 ? [{ reason: "NON_ZERO_BALANCE" as const, cents: wallet, count: null }] : []),
  ...(openOrders > 0 || escrow > 0 ? [{ reason: "OPEN_ORDERS" as const, cents: escrow, count: openOrders }] : []),
  ...(positions > 0 ? [{ reason: "OPEN_POSITIONS" as const, cents: null, count: positions }] : []),
  ...(pending.count > 0 || pending.cents > 0 ? [{ reason: "PENDING_SUBSCRIPTIONS" as const, cents: pending.cents, count: pending.count }] : [])
]

const BLOCKER_MESSAGE: Record<ClosureBlocker["reason"], string> = {
  NON_ZERO_BALANCE: "the wallet holds cash: withdraw it to the master wallet first",
  OPEN_ORDERS: "orders are still open: wait for them to settle or cancel them",
  OPEN_POSITIONS: "the account holds positions: sell them first",
  PENDING_SUBSCRIPTIONS: "asset subscriptions are pending allotment: wait for them to be allotted or rejected",
  PENDING_SETTLEMENT: "trades are pending settlement"
}

export const blockerToWire = (b: ClosureBlocker): Schemas["CurrencyClosureBlocker"] => ({
  currency: "USD",
  reason: b.reason,
  amount: b.cents === null ? null : centsToWire(b.cents),
  count: b.count,
  message: BLOCKER_MESSAGE[b.reason]
})

const isoOf = (ms: number) => new Date(ms).toISOString()

/** The contract's SubAccount; `walletBalance` is the available cash (escrow excluded), mirrored in `wallet` (D-087). */
export const subAccountToWire = (s: SubAccountRecord, walletCents: Cents): Schemas["SubAccount"] => ({
  subAccountId: s.subAccountId,
  userId: s.subAccountId,
  externalId: s.externalId,
  displayName: s.displayName,
  email: s.email,
  kycStatus: s.kycStatus,
  kycLevel: s.kycLevel,
  kycRejectionCode: s.kycRejectionCode,
  kycRejectionReason: s.kycRejectionReason,
  kycReviewedAt: s.kycReviewedAt === null ? null : isoOf(s.kycReviewedAt),
  status: s.status,
  walletBalance: centsToWire(walletCents),
  wallet: { currency: "USD", balance: centsToWire(walletCents) }
})
