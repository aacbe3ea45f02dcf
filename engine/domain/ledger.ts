/**
 * The double-entry ledger's rules. Pure. Owns: the ledger accounts of a partition, the postings each kind of money
 * movement makes, the balance check (every entry sums to zero) and which balances may never go negative, and how an
 * entry reads in a sub-account's transaction history. Does not own storing entries or balances (app/ledger.ts).
 *
 * Accounts of one partition (partner + environment), all in USD cents:
 *   wallet:<account>  available cash of `master` or a sub-account       never negative
 *   escrow:<account>  cash held for that account's open BUY orders      never negative
 *   escrow:<account>:subscriptions  cash held for its PENDING asset subscriptions (amount + fee)   never negative
 *   fees              fees the broker collected
 *   market            cash paid to the market for BUY fills and allotted subscriptions (the primary market),
 *                     less the proceeds of SELL fills
 *   equity:seed       where seeded (virtual) money comes from           its negation is "seeded"
 *   equity:credit     where operator top-ups come from                  its negation is "credited"
 *   equity:issuer     where dividends and cash in lieu of fractional units come from (issuers paying holders,
 *                     D-303)                                            its negation is "distributed"
 * Because every entry sums to zero, the partition's balances sum to zero, which is the conservation invariant:
 *   master + sub-wallets + escrow + fees + market = seeded + credited + distributed   (market is 0 until a fill).
 */
import type { Cents } from "./money.ts"
import type { Side } from "./order.ts"
import type { Movements } from "./order-transitions.ts"
import { joinFlat, shared } from "./strings.ts"

export const MASTER = "master"
export const FEES = "fees"
export const MARKET = "market"
export const SEEDED = "equity:seed"
export const CREDITED = "equity:credit"
export const ISSUER = "equity:issuer"

// Shared (E-485): every posting names one, and a journal keeps its postings for good.
export const walletAccount = (account: string) => shared(joinFlat(["wallet:", account]))
export const escrowAccount = (account: string) => shared(joinFlat(["escrow:", account]))
/** Cash held for the account's PENDING asset subscriptions (D-271): apart from order escrow, so each is checkable. */
export const subscriptionEscrowAccount = (account: string) => `escrow:${account}:subscriptions`

/** The sub-account (or `master`) a wallet account belongs to, or undefined for any other account. */
export const walletOwner = (ledgerAccount: string): string | undefined => (ledgerAccount.startsWith("wallet:") ? ledgerAccount.slice(7) : undefined)

/** Balances that are money someone holds; they may never go below zero. */
export const mustStayNonNegative = (ledgerAccount: string): boolean => ledgerAccount.startsWith("wallet:") || ledgerAccount.startsWith("escrow:")

export interface Posting {
  readonly account: string
  readonly cents: Cents
}

/** Why money moved. */
export type EntryKind =
  | "SEED"
  | "CREDIT"
  | "DEPOSIT"
  | "WITHDRAWAL"
  | "ORDER_PLACED"
  | "ORDER_FILLED"
  | "ORDER_REJECTED"
  | "ORDER_CANCELLED"
  /** An expiry's release of escrow (D-004). */
  | "ORDER_EXPIRED"
  /** A replace that lowered a BUY's escrow: the surplus back to the wallet (D-035; a raise posts ORDER_PLACED). */
  | "ORDER_REPLACED"
  | "SUBSCRIPTION_PLACED"
  | "SUBSCRIPTION_ALLOTTED"
  | "SUBSCRIPTION_REJECTED"
  | "SUBSCRIPTION_CANCELLED"
  | "DIVIDEND"
  | "CASH_IN_LIEU"
  /** Rights taken up: the subscription price paid to the issuer (D-345; history type ADJUSTMENT). */
  | "RIGHTS_SUBSCRIBED"

/** The contract's TransactionType (D-026): how a wallet posting reads in a sub-account's history. */
export type TransactionType =
  | "DEPOSIT"
  | "WITHDRAWAL"
  | "ORDER_ESCROW"
  | "ORDER_REFUND"
  | "ORDER_PROCEEDS"
  | "DIVIDEND"
  | "SUBSCRIPTION_ESCROW"
  | "SUBSCRIPTION_REFUND"
  | "ADJUSTMENT"

export const TRANSACTION_TYPES: ReadonlyArray<TransactionType> = [
  "DEPOSIT",
  "WITHDRAWAL",
  "ORDER_ESCROW",
  "ORDER_REFUND",
  "ORDER_PROCEEDS",
  "DIVIDEND",
  "SUBSCRIPTION_ESCROW",
  "SUBSCRIPTION_REFUND",
  "ADJUSTMENT"
]

/** The history type of an entry's wallet posting: fills credit a BUY's unused escrow or a SELL's proceeds. */
export const transactionTypeOf = (kind: EntryKind, side: Side | null): TransactionType => {
  switch (kind) {
    case "DEPOSIT":
      return "DEPOSIT"
    case "WITHDRAWAL":
      return "WITHDRAWAL"
    case "ORDER_PLACED":
      return "ORDER_ESCROW"
    case "ORDER_FILLED":
      return side === "SELL" ? "ORDER_PROCEEDS" : "ORDER_REFUND"
    case "ORDER_REJECTED":
    case "ORDER_CANCELLED":
    case "ORDER_EXPIRED":
    case "ORDER_REPLACED":
      return "ORDER_REFUND"
    case "SUBSCRIPTION_PLACED":
      return "SUBSCRIPTION_ESCROW"
    case "SUBSCRIPTION_ALLOTTED":
    case "SUBSCRIPTION_REJECTED":
    case "SUBSCRIPTION_CANCELLED":
      return "SUBSCRIPTION_REFUND"
    case "DIVIDEND":
      return "DIVIDEND"
    default:
      return "ADJUSTMENT"
  }
}

/** Postings without zero amounts, one per account, in first-seen order. */
export const compact = (postings: ReadonlyArray<Posting>): ReadonlyArray<Posting> => {
  const sums = new Map<string, Cents>()
  for (const p of postings) sums.set(p.account, (sums.get(p.account) ?? 0) + p.cents)
  const kept: Array<Posting> = []
  sums.forEach((cents, account) => {
    if (cents !== 0) kept.push({ account, cents })
  })
  // A copy of its exact length: an array pushed into from empty has room for 17, and a journal entry keeps its
  // postings for good, 120 bytes of empty slots an order (E-487).
  return kept.slice()
}

export const sumOf = (postings: ReadonlyArray<Posting>): Cents => postings.reduce((sum, p) => sum + p.cents, 0)

/** `cents` from one account to another. */
export const transfer = (from: string, to: string, cents: Cents): ReadonlyArray<Posting> => [
  { account: from, cents: -cents },
  { account: to, cents }
]

/**
 * The postings of an order transition on `account`: its wallet, its escrow (changed by `escrowDelta`, the order's
 * escrow after minus before), the fees and the market (which receives what the account paid: `-marketNet`).
 * A transition that does not balance is a bug in the order arithmetic: undefined, and never posted.
 */
export const orderPostings = (account: string, movements: Movements, escrowDelta: Cents): ReadonlyArray<Posting> | undefined => {
  const postings = compact([
    { account: walletAccount(account), cents: movements.wallet },
    { account: escrowAccount(account), cents: escrowDelta },
    { account: FEES, cents: movements.feesCollected },
    { account: MARKET, cents: -movements.marketNet }
  ])
  return sumOf(postings) === 0 ? postings : undefined
}
