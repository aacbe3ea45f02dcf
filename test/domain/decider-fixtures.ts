/**
 * Loaded state for the deciders' unit tests (domain/trading/, domain/wallets/): a listing, an open exchange instant, a quote,
 * a verified sub-account and the commands built from them. No store, no runtime: the deciders are pure.
 */
import { findExchange, isOpen } from "../../engine/domain/calendar.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { INSTRUMENTS, type Instrument } from "../../engine/domain/instruments.ts"
import type { Side } from "../../engine/domain/order.ts"
import type { SubAccountRecord } from "../../engine/domain/subaccount.ts"
import type { QuoteRecord } from "../../engine/domain/trading/decide-quote.ts"
import type { MarketOrderCommand, MarketOrderState } from "../../engine/domain/trading/decide-order.ts"

export const PARTITION = "ptn_test|sandbox"

const scom = INSTRUMENTS.find((i) => i.symbol === "SCOM.KE")
if (scom === undefined) throw new Error("the catalogue lost SCOM.KE")
export const SCOM: Instrument = scom
export const NSE = findExchange(SCOM.exchange)

/** The first whole hour of 2026-11 at which the NSE is open (a weekday mid-session). */
export const OPEN_AT = (() => {
  for (let t = Date.UTC(2026, 10, 2, 0); ; t += 3_600_000) if (NSE !== undefined && isOpen(NSE, t)) return t + 3_600_000
})()

export const subAccount = (over: Partial<SubAccountRecord> = {}): SubAccountRecord => ({
  subAccountId: "usr_1",
  partition: PARTITION,
  externalId: "ext-1",
  uid: null,
  displayName: null,
  email: null,
  phone: null,
  country: null,
  kycStatus: "VERIFIED",
  kycLevel: "FULL",
  kycRejectionCode: null,
  kycRejectionReason: null,
  kycReviewedAt: null,
  kycReference: null,
  status: "active",
  frozenBy: null,
  statusReason: null,
  createdAt: 0,
  closedAt: null,
  ...over
})

/** An open quote for SCOM.KE issued just now on the master account, with no side or size bound. */
export const quote = (over: Partial<QuoteRecord> = {}): QuoteRecord => ({
  quoteId: "qt_1",
  partition: PARTITION,
  account: "master",
  symbol: SCOM.symbol,
  side: null,
  quantity: null,
  cashValue: null,
  derivedQuantity: null,
  price: 180_000,
  rate: 129_250_000,
  issuedAt: OPEN_AT - 10_000,
  expiresAt: OPEN_AT + 50_000,
  status: "OPEN",
  expiryJob: 41,
  ...over
})

export const marketState = (over: Partial<MarketOrderState<QuoteRecord>> = {}): MarketOrderState<QuoteRecord> => ({
  subAccount: null,
  committedSymbol: SCOM.symbol,
  quote: quote(),
  quoteSymbolNow: SCOM.symbol,
  listingStatus: "ACTIVE",
  exchange: NSE,
  ...over
})

export const marketCommand = (side: Side, quantity: number | undefined, cashValue?: number, account = "master"): MarketOrderCommand => ({
  placer: { partition: PARTITION, account, markupBps: 25 },
  input: { symbol: SCOM.symbol, type: side, quantity, cashValue: cashValue === undefined ? undefined : cashValue / 100, quoteId: "qt_1" },
  fields: { quoteId: "qt_1", quantity, cashValue },
  instrument: SCOM
})

/** The value of a decision that must have succeeded (a refusal fails the test with its code). */
export const accepted = <A>(value: A | ApiFailure): A => {
  if (value instanceof ApiFailure) throw new Error(`refused: ${value.code} ${value.message}`)
  return value
}

/** The refusal's code, or "accepted". */
export const codeOf = (value: unknown): string => (value instanceof ApiFailure ? value.code : "accepted")
