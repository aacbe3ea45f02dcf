/**
 * Issuing a quote and its expiry (spec "Quotes": single use, 60 s). Pure: the dispatcher (app/trading/quotes.ts)
 * resolves the symbol, checks the sub-account exists, observes the price, draws the quote's id once the request is
 * accepted (E-350), books the expiry job and writes the quote.
 * Owns: the request's checks, what a quote binds (its side, its quantity or cashValue and the units a cashValue
 * buys), the Quote answer, and what the expiry does (EXPIRED, `quote.expired`). Does not own using a quote
 * (decide-quote.ts) nor prices (sim/market-feed.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { type Exchange, phaseAt } from "../calendar.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { centsToWire, fees, grossCents, parseScaled, type Price4, price4ToWire, quantityForCash, type Rate6, rate6ToWire, usdPrice4 } from "../money.ts"
import type { Side } from "../order.ts"
import type { QuoteRecord } from "./decide-quote.ts"
import { isoOf } from "../strings.ts"

export const QUOTE_TTL_SECONDS = 60
export const QUOTE_EXPIRE_JOB = "quote.expire"

export interface QuoteQuery {
  readonly side?: Side | undefined
  readonly quantity?: number | undefined
  readonly cashValue?: number | undefined
  readonly subAccountId?: string | undefined
  readonly exchange?: string | undefined
}

const isoAt = isoOf

/** The checked terms of a quote request: one of quantity or cashValue (cents), the account, the listing's currency and rate. */
export const quoteTerms = (query: QuoteQuery, exchange: Exchange | undefined) => {
  if (query.quantity !== undefined && query.cashValue !== undefined) {
    return fail("VALIDATION_ERROR", "give quantity or cashValue, not both", { params: ["quantity", "cashValue"] })
  }
  if (query.quantity !== undefined && (!Number.isSafeInteger(query.quantity) || query.quantity <= 0)) {
    return fail("VALIDATION_ERROR", "quantity must be a whole number above 0", { param: "quantity" })
  }
  const cashValue = query.cashValue === undefined ? null : parseScaled(query.cashValue, 2)
  if (cashValue !== null && (cashValue === undefined || cashValue <= 0)) {
    return fail("VALIDATION_ERROR", "cashValue must be a positive USD amount with at most 2 decimals", { param: "cashValue" })
  }
  const currency = exchange?.currency ?? "USD"
  const rate = rateFor(currency)
  if (rate === undefined) return fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`)
  return { query, cashValue, side: query.side ?? null, account: query.subAccountId ?? "master", exchange, currency, rate }
}

export type QuoteTerms = Exclude<ReturnType<typeof quoteTerms>, ApiFailure>

/**
 * The units a cashValue quote shows and binds at `price` (BUY: gross + fee within cash; SELL: gross within cash),
 * null for a quantity or unsized quote; VALIDATION_ERROR when the cash buys no whole unit.
 */
export const derivedUnits = (terms: QuoteTerms, price: Price4, markupBps: number): number | null | ApiFailure => {
  const derived = terms.cashValue === null ? null : quantityForCash(terms.cashValue, price, terms.rate, terms.side === "SELL" ? 0 : markupBps)
  if (derived === 0) return fail("VALIDATION_ERROR", "cashValue does not buy a single unit at the current price", { param: "cashValue" })
  return derived
}

export interface QuotePlan {
  /** The quote to store (its expiry job's seq is added once the job is booked). */
  readonly quote: QuoteRecord
  readonly expiryJob: { readonly dueAt: number; readonly quoteId: string }
  readonly answer: Schemas["Quote"]
}

/** An accepted request's quote: OPEN for 60 s at the observed price and today's rate, with its estimated totals. */
export const decideQuote = (
  terms: QuoteTerms,
  placer: { readonly partition: string; readonly markupBps: number },
  instrument: Instrument,
  observed: { readonly price: Price4; readonly derived: number | null },
  now: number,
  ids: { readonly quoteId: string }
): QuotePlan => {
  const { rate, side } = terms
  const quote: QuoteRecord = {
    quoteId: ids.quoteId,
    partition: placer.partition,
    account: terms.account,
    symbol: instrument.symbol,
    side,
    quantity: terms.query.quantity ?? null,
    cashValue: terms.cashValue,
    derivedQuantity: observed.derived,
    price: observed.price,
    rate,
    issuedAt: now,
    expiresAt: now + QUOTE_TTL_SECONDS * 1000,
    status: "OPEN"
  }
  return { quote, expiryJob: { dueAt: quote.expiresAt, quoteId: ids.quoteId }, answer: quoteToWire(quote, terms, instrument, placer.markupBps, now) }
}

const estimates = (quote: QuoteRecord, rate: Rate6, markupBps: number) => {
  const units = quote.quantity ?? quote.derivedQuantity
  const gross = units === null ? null : grossCents(units, quote.price, rate)
  const fee = gross === null ? null : fees(gross, markupBps).fee
  return { units, gross, fee }
}

const quoteToWire = (quote: QuoteRecord, terms: QuoteTerms, instrument: Instrument, markupBps: number, now: number): Schemas["Quote"] => {
  const { rate, exchange } = terms
  const { units, gross, fee } = estimates(quote, rate, markupBps)
  return {
    quoteId: quote.quoteId,
    symbol: instrument.symbol,
    name: instrument.name,
    exchange: instrument.exchange,
    currency: terms.currency,
    price: price4ToWire(quote.price),
    usdPrice: price4ToWire(usdPrice4(quote.price, rate)),
    fxRate: rate6ToWire(rate),
    side: quote.side,
    quantity: units,
    cashValue: quote.cashValue === null ? null : centsToWire(quote.cashValue),
    subAccountId: terms.query.subAccountId ?? null,
    estimatedGross: gross === null ? null : centsToWire(gross),
    estimatedFee: fee === null ? null : centsToWire(fee),
    estimatedTotal: gross === null || fee === null ? null : centsToWire(quote.side === "SELL" ? gross - fee : gross + fee),
    marketStatus: exchange !== undefined && phaseAt(exchange, now) === "OPEN" ? "OPEN" : "CLOSED",
    issuedAt: isoAt(quote.issuedAt),
    expiresAt: isoAt(quote.expiresAt),
    ttlSeconds: QUOTE_TTL_SECONDS,
    singleUse: true
  }
}

/**
 * The `quote.expire` job: a quote still OPEN at its TTL becomes EXPIRED and is announced (QuoteExpiredData, D-075,
 * E-221: its size as it showed it, the symbol it was issued for even after a symbol change (D-343), its listing's
 * exchange). Undefined when it was used, expired or wiped meanwhile.
 */
export const decideQuoteExpiry = <Q extends QuoteRecord>(quote: Q | undefined, exchangeCode: string) => {
  if (quote === undefined || quote.status !== "OPEN") return undefined
  const expired: Q = { ...quote, status: "EXPIRED" }
  const data = {
    quoteId: quote.quoteId,
    symbol: quote.symbol,
    exchange: exchangeCode,
    subAccountId: quote.account === "master" ? null : quote.account,
    side: quote.side,
    quantity: quote.quantity ?? quote.derivedQuantity,
    cashValue: quote.cashValue === null ? null : centsToWire(quote.cashValue),
    issuedAt: isoAt(quote.issuedAt),
    expiresAt: isoAt(quote.expiresAt)
  }
  return { quote: expired, event: { name: "quote.expired", data } as const }
}
