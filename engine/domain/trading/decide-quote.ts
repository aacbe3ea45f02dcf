/**
 * Quotes: single use, 60 s, bound to what they name (spec "Quotes"; D-343 for a listing whose symbol changed).
 * Pure. Owns: whether a MARKET order may use a quote, and what using it leaves (status USED). Does not own issuing
 * quotes nor their expiry job (app/market.ts), nor the order the quote prices (decide-order.ts).
 */
import { type ApiFailure, fail } from "../errors.ts"
import { quantityForCash } from "../money.ts"
import type { Side } from "../order.ts"

/** A stored quote (app/docs.ts Quotes): single use, 60 s. */
export interface QuoteRecord {
  readonly quoteId: string
  readonly partition: string
  readonly account: string
  readonly symbol: string
  readonly side: Side | null
  readonly quantity: number | null
  /** Cents. */
  readonly cashValue: number | null
  /** Whole units a cashValue quote buys at its price: the quantity an order on this quote gets. */
  readonly derivedQuantity: number | null
  readonly price: number
  readonly rate: number
  readonly issuedAt: number
  readonly expiresAt: number
  readonly status: "OPEN" | "USED" | "EXPIRED"
  /** The seq of its `quote.expire` job, deleted when the quote is used (absent on quotes stored before). */
  readonly expiryJob?: number | undefined
}

/** What an order asks of its quote. */
export interface QuoteUse {
  readonly quoteId: string
  readonly partition: string
  readonly account: string
  /** The order's listing symbol now. */
  readonly symbol: string
  readonly side: Side
  readonly quantity: number | undefined
  readonly cashValue: number | undefined
}

/**
 * Which field of the order differs from what its quote was issued for (spec QUOTE_ORDER_MISMATCH: symbol, side,
 * quantity or cashValue). A quote binds what it names: a side, and either a quantity or a cashValue, never the other.
 */
export const quoteMismatch = (
  quote: Pick<QuoteRecord, "symbol" | "side" | "quantity" | "cashValue">,
  symbol: string,
  side: Side,
  quantity: number | undefined,
  cashValue: number | undefined
): "symbol" | "side" | "quantity" | "cashValue" | undefined => {
  if (quote.symbol !== symbol) return "symbol"
  if (quote.side !== null && quote.side !== side) return "side"
  if (quote.quantity !== null && quote.quantity !== quantity) return "quantity"
  if (quote.cashValue !== null && quote.cashValue !== cashValue) return "cashValue"
  return undefined
}

/**
 * The quote `use` may trade on, or why not: never issued to this key (QUOTE_NOT_FOUND), issued for another account
 * (QUOTE_SCOPE_MISMATCH), used or past its 60 s (STALE_QUOTE), issued for another order (QUOTE_ORDER_MISMATCH).
 * `symbolNow` is the quote's listing symbol now: a quote issued before a symbol change binds the listing (D-343).
 * `ignoreExpiry` is the planted quote-ttl defect only (TEST ONLY, sim/defects.ts, E-190): expiry forgotten, single use kept.
 */
export const acceptQuote = <Q extends QuoteRecord>(
  quote: Q | undefined,
  symbolNow: string,
  use: QuoteUse,
  now: number,
  ignoreExpiry = false
): Q | ApiFailure => {
  if (quote === undefined || quote.partition !== use.partition) {
    return fail("QUOTE_NOT_FOUND", `quote ${use.quoteId} is unknown to this key: never issued to it, or expired and collected`, { param: "quoteId" })
  }
  if (quote.account !== use.account) {
    return fail("QUOTE_SCOPE_MISMATCH", "the quote was issued for another account: fetch it with the subAccountId you trade on", { param: "quoteId" })
  }
  const expired = ignoreExpiry ? false : quote.status !== "OPEN" || now >= quote.expiresAt
  if (quote.status === "USED" || expired) {
    const why = quote.status === "USED" ? "the quote was already used" : "the quote expired (60 s TTL); fetch a new one"
    return fail("STALE_QUOTE", why, { param: "quoteId" })
  }
  const mismatch = quoteMismatch({ ...quote, symbol: symbolNow }, use.symbol, use.side, use.quantity, use.cashValue)
  if (mismatch !== undefined) return fail("QUOTE_ORDER_MISMATCH", `the quote does not match the order's ${mismatch}`, { param: mismatch })
  return quote
}

/** The quote after an order used it: USED, so a second order on it is STALE_QUOTE. */
export const usedQuote = <Q extends QuoteRecord>(quote: Q): Q => ({ ...quote, status: "USED" })

/** Whole units a cashValue buys (BUY: gross + fee within cash; SELL: gross within cash). */
export const quantityFromCash = (cash: number, price: number, rate: number, markupBps: number, side: Side): number =>
  side === "BUY" ? quantityForCash(cash, price, rate, markupBps) : quantityForCash(cash, price, rate, 0)

/** The units an order on `quote` trades: its own quantity, the quote's derived units, or what its cashValue buys. */
export const orderQuantity = (quote: QuoteRecord, use: QuoteUse, markupBps: number): number =>
  use.quantity ?? quote.derivedQuantity ?? quantityFromCash(use.cashValue ?? 0, quote.price, quote.rate, markupBps, use.side)
