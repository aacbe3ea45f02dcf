/**
 * The instrument catalogue the simulator lists: symbol, exchange, name, sector, asset type and the seed price of
 * its path. Pure data plus lookup. Does not own live prices (sim/market-feed) nor FX (domain/fx.ts).
 */
import { type ExchangeCode, findExchange } from "./calendar.ts"
import type { Price4 } from "./money.ts"

export interface Instrument {
  /** Exchange-qualified symbol with the country suffix (`SCOM.KE`, D-080); also the instrument id and the wire symbol. */
  readonly symbol: string
  readonly ticker: string
  readonly exchange: ExchangeCode
  readonly name: string
  readonly sector: string | null
  readonly assetType: "STOCK" | "ETF"
  readonly listingStatus: "ACTIVE" | "SUSPENDED" | "DELISTED"
  /** Price at the start of the simulated path, in 1/10000 of the local currency. */
  readonly basePrice: Price4
}

const stock = (ticker: string, exchange: ExchangeCode, name: string, sector: string, basePrice: number, assetType: "STOCK" | "ETF" = "STOCK"): Instrument => ({
  symbol: `${ticker}.${findExchange(exchange)?.suffix ?? exchange}`,
  ticker,
  exchange,
  name,
  sector,
  assetType,
  listingStatus: "ACTIVE",
  basePrice: basePrice * 10_000
})

export const INSTRUMENTS: ReadonlyArray<Instrument> = [
  stock("SCOM", "NSE", "Safaricom PLC", "Telecommunications", 18),
  stock("EQTY", "NSE", "Equity Group Holdings PLC", "Financials", 46),
  stock("KCB", "NSE", "KCB Group PLC", "Financials", 38),
  stock("EABL", "NSE", "East African Breweries PLC", "Consumer Staples", 160),
  stock("NPN", "JSE", "Naspers Ltd", "Technology", 3900),
  stock("SBK", "JSE", "Standard Bank Group Ltd", "Financials", 230),
  stock("MTN", "JSE", "MTN Group Ltd", "Telecommunications", 120),
  stock("STX40", "JSE", "Satrix 40 ETF", "Index", 85, "ETF")
]

/** Symbol format from the spec: 2-20 alphanumerics, optionally dot-separated. */
export const SYMBOL_FORMAT = /^(?=.{2,20}$)[A-Za-z0-9]+(?:\.[A-Za-z0-9]+)*$/

export type SymbolLookup =
  | { readonly _tag: "Found"; readonly instrument: Instrument }
  | { readonly _tag: "InvalidFormat" }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "Ambiguous"; readonly candidates: ReadonlyArray<string> }

/**
 * Resolves `SCOM.KE` (the qualified form) or a bare `SCOM` when only one listing has that ticker (optionally narrowed
 * by `exchange`), case-insensitively. The older `SCOM.NSE` form is not a symbol (D-080 revised): NotFound.
 */
export const lookupSymbol = (raw: string, exchange?: string): SymbolLookup => {
  if (!SYMBOL_FORMAT.test(raw)) return { _tag: "InvalidFormat" }
  const wanted = raw.toUpperCase()
  const exact = INSTRUMENTS.find((i) => i.symbol === wanted && (exchange === undefined || i.exchange === exchange.toUpperCase()))
  if (exact !== undefined) return { _tag: "Found", instrument: exact }
  const byTicker = INSTRUMENTS.filter((i) => i.ticker === wanted && (exchange === undefined || i.exchange === exchange.toUpperCase()))
  if (byTicker.length === 1 && byTicker[0] !== undefined) return { _tag: "Found", instrument: byTicker[0] }
  if (byTicker.length > 1) return { _tag: "Ambiguous", candidates: byTicker.map((i) => i.symbol) }
  return { _tag: "NotFound" }
}
