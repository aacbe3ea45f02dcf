/**
 * The instrument catalogue the simulator lists: symbol, exchange, name, sector, asset type and the seed price of
 * its path. Pure data plus lookup. Does not own live prices (sim/market-feed) nor FX (domain/fx.ts).
 */
import { type ExchangeCode, findExchange } from "./calendar.ts"
import type { Price4 } from "./money.ts"

export interface Instrument {
  /**
   * The listing's stable identity: its catalogue symbol, kept through symbol changes (D-340). Price paths, listing
   * statuses and the seeded reference data key on it, so a renamed listing continues the same path.
   */
  readonly id: string
  /** Exchange-qualified symbol with the country suffix (`SCOM.KE`, D-080): the wire symbol, the current one after a symbol change. */
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

const stock = (
  ticker: string,
  exchange: ExchangeCode,
  name: string,
  sector: string,
  basePrice: number,
  assetType: "STOCK" | "ETF" = "STOCK",
  listingStatus: Instrument["listingStatus"] = "ACTIVE"
): Instrument => ({
  id: `${ticker}.${findExchange(exchange)?.suffix ?? exchange}`,
  symbol: `${ticker}.${findExchange(exchange)?.suffix ?? exchange}`,
  ticker,
  exchange,
  name,
  sector,
  assetType,
  listingStatus,
  // Prices are written in local units with at most 4 decimals; rounded once so 5.2 is exactly 52000.
  basePrice: Math.round(basePrice * 10_000)
})

const etf = (ticker: string, exchange: ExchangeCode, name: string, basePrice: number): Instrument => stock(ticker, exchange, name, "Index", basePrice, "ETF")
const suspended = (ticker: string, exchange: ExchangeCode, name: string, sector: string, basePrice: number): Instrument =>
  stock(ticker, exchange, name, sector, basePrice, "STOCK", "SUSPENDED")
const delisted = (ticker: string, exchange: ExchangeCode, name: string, sector: string, basePrice: number): Instrument =>
  stock(ticker, exchange, name, sector, basePrice, "STOCK", "DELISTED")

/**
 * The catalogue (D-300): 4-10 listings on each of the 14 exchanges, real companies with illustrative late-2026 prices
 * in local currency (not market data). The first eight are the original catalogue: their symbols and base prices
 * never change, so price paths and scenario trace hashes stay as they were. Two listings are SUSPENDED and four
 * DELISTED (D-301); `GLD` is listed on NSE and JSE, so the bare ticker is ambiguous (VALIDATION_ERROR, D-080).
 */
export const INSTRUMENTS: ReadonlyArray<Instrument> = [
  stock("SCOM", "NSE", "Safaricom PLC", "Telecommunications", 18),
  stock("EQTY", "NSE", "Equity Group Holdings PLC", "Financials", 46),
  stock("KCB", "NSE", "KCB Group PLC", "Financials", 38),
  stock("EABL", "NSE", "East African Breweries PLC", "Consumer Staples", 160),
  stock("NPN", "JSE", "Naspers Ltd", "Technology", 3900),
  stock("SBK", "JSE", "Standard Bank Group Ltd", "Financials", 230),
  stock("MTN", "JSE", "MTN Group Ltd", "Telecommunications", 120),
  etf("STX40", "JSE", "Satrix 40 ETF", 85),
  // NSE (KES)
  stock("COOP", "NSE", "Co-operative Bank of Kenya Ltd", "Financials", 17),
  stock("ABSA", "NSE", "Absa Bank Kenya PLC", "Financials", 19.5),
  stock("BAT", "NSE", "BAT Kenya PLC", "Consumer Staples", 390),
  etf("GLD", "NSE", "NewGold ETF", 4200),
  suspended("ARM", "NSE", "ARM Cement PLC", "Materials", 5),
  delisted("BAMB", "NSE", "Bamburi Cement PLC", "Materials", 55),
  // NGX (NGN)
  stock("MTNN", "NGX", "MTN Nigeria Communications PLC", "Telecommunications", 480),
  stock("DANGCEM", "NGX", "Dangote Cement PLC", "Materials", 510),
  stock("ZENITHBANK", "NGX", "Zenith Bank PLC", "Financials", 52),
  stock("GTCO", "NGX", "Guaranty Trust Holding Company PLC", "Financials", 78),
  stock("NESTLE", "NGX", "Nestle Nigeria PLC", "Consumer Staples", 1450),
  stock("SEPLAT", "NGX", "Seplat Energy PLC", "Energy", 5600),
  etf("STANBICETF30", "NGX", "Stanbic IBTC ETF 30", 420),
  delisted("UBN", "NGX", "Union Bank of Nigeria PLC", "Financials", 7.2),
  // JSE (ZAR)
  stock("FSR", "JSE", "FirstRand Ltd", "Financials", 76),
  stock("AGL", "JSE", "Anglo American PLC", "Materials", 610),
  stock("SOL", "JSE", "Sasol Ltd", "Energy", 112),
  etf("GLD", "JSE", "NewGold ETF", 720),
  suspended("TON", "JSE", "Tongaat Hulett Ltd", "Agriculture", 1.2),
  delisted("DGH", "JSE", "Distell Group Holdings Ltd", "Consumer Staples", 180),
  // GSE (GHS)
  stock("MTNGH", "GSE", "MTN Ghana PLC", "Telecommunications", 3.1),
  stock("GCB", "GSE", "GCB Bank PLC", "Financials", 7.2),
  stock("EGH", "GSE", "Ecobank Ghana PLC", "Financials", 7.5),
  stock("GOIL", "GSE", "GOIL PLC", "Energy", 1.55),
  stock("TOTAL", "GSE", "TotalEnergies Marketing Ghana PLC", "Energy", 12.5),
  // BRVM (XOF)
  stock("SNTS", "BRVM", "Sonatel SA", "Telecommunications", 25500),
  stock("ORAC", "BRVM", "Orange Cote d'Ivoire SA", "Telecommunications", 14800),
  stock("SGBC", "BRVM", "Societe Generale Cote d'Ivoire", "Financials", 28000),
  stock("ETIT", "BRVM", "Ecobank Transnational Inc", "Financials", 18),
  stock("PALC", "BRVM", "Palm Cote d'Ivoire", "Agriculture", 7600),
  // ZSE (ZWG)
  stock("DLTA", "ZSE", "Delta Corporation Ltd", "Consumer Staples", 14.5),
  stock("CBZ", "ZSE", "CBZ Holdings Ltd", "Financials", 8.2),
  stock("FBC", "ZSE", "FBC Holdings Ltd", "Financials", 9.6),
  stock("SIM", "ZSE", "Simbisa Brands Ltd", "Consumer Discretionary", 9.1),
  delisted("ECO", "ZSE", "Econet Wireless Zimbabwe Ltd", "Telecommunications", 4.3),
  // BSE (BWP)
  stock("FNBB", "BSE", "First National Bank of Botswana Ltd", "Financials", 4.6),
  stock("BIHL", "BSE", "Botswana Insurance Holdings Ltd", "Financials", 19),
  stock("SEFALANA", "BSE", "Sefalana Holdings Company Ltd", "Consumer Staples", 13.2),
  stock("LETSHEGO", "BSE", "Letshego Holdings Ltd", "Financials", 1.05),
  // LUSE (ZMW)
  stock("ZCCM", "LUSE", "ZCCM Investments Holdings PLC", "Materials", 100),
  stock("ZANACO", "LUSE", "Zambia National Commercial Bank PLC", "Financials", 5.2),
  stock("CECZ", "LUSE", "Copperbelt Energy Corporation PLC", "Utilities", 20),
  stock("ZMBF", "LUSE", "Zambeef Products PLC", "Agriculture", 1.6),
  stock("ZSUG", "LUSE", "Zambia Sugar PLC", "Agriculture", 7.4),
  // EGX (EGP)
  stock("COMI", "EGX", "Commercial International Bank Egypt", "Financials", 82),
  stock("ETEL", "EGX", "Telecom Egypt", "Telecommunications", 52),
  stock("HRHO", "EGX", "EFG Holding", "Financials", 25.5),
  stock("SWDY", "EGX", "Elsewedy Electric", "Industrials", 78),
  stock("TMGH", "EGX", "Talaat Moustafa Group Holding", "Real Estate", 61),
  stock("EAST", "EGX", "Eastern Company", "Consumer Staples", 28),
  etf("EGX30ETF", "EGX", "EGX 30 Index ETF", 18.5),
  // DSE (TZS)
  stock("CRDB", "DSE", "CRDB Bank PLC", "Financials", 650),
  stock("NMB", "DSE", "NMB Bank PLC", "Financials", 6000),
  stock("TBL", "DSE", "Tanzania Breweries PLC", "Consumer Staples", 10900),
  stock("TPCC", "DSE", "Tanzania Portland Cement PLC", "Materials", 4500),
  stock("VODA", "DSE", "Vodacom Tanzania PLC", "Telecommunications", 600),
  // USE (UGX)
  stock("MTNU", "USE", "MTN Uganda Ltd", "Telecommunications", 250),
  stock("SBU", "USE", "Stanbic Bank Uganda Ltd", "Financials", 50),
  stock("BOBU", "USE", "Bank of Baroda Uganda Ltd", "Financials", 150),
  stock("DFCU", "USE", "dfcu Ltd", "Financials", 500),
  stock("NVL", "USE", "New Vision Printing and Publishing Company Ltd", "Consumer Discretionary", 400),
  // MSE (MWK)
  stock("AIRTEL", "MSE", "Airtel Malawi PLC", "Telecommunications", 105),
  stock("NBM", "MSE", "National Bank of Malawi PLC", "Financials", 5200),
  stock("STANDARD", "MSE", "Standard Bank Malawi PLC", "Financials", 7100),
  stock("ILLOVO", "MSE", "Illovo Sugar Malawi PLC", "Agriculture", 2450),
  stock("TNM", "MSE", "Telekom Networks Malawi PLC", "Telecommunications", 31),
  // CSE (MAD)
  stock("IAM", "CSE", "Itissalat Al-Maghrib (Maroc Telecom)", "Telecommunications", 101),
  stock("ATW", "CSE", "Attijariwafa Bank", "Financials", 655),
  stock("BCP", "CSE", "Banque Centrale Populaire", "Financials", 285),
  stock("LHM", "CSE", "LafargeHolcim Maroc", "Materials", 1900),
  stock("MNG", "CSE", "Managem", "Materials", 4100),
  stock("TQM", "CSE", "Taqa Morocco", "Utilities", 1200),
  etf("MASI20ETF", "CSE", "MASI 20 Index ETF", 105),
  // SEM (MUR)
  stock("MCBG", "SEM", "MCB Group Ltd", "Financials", 455),
  stock("SBMH", "SEM", "SBM Holdings Ltd", "Financials", 5.4),
  stock("IBLL", "SEM", "IBL Ltd", "Industrials", 35),
  stock("NMH", "SEM", "New Mauritius Hotels Ltd", "Consumer Discretionary", 12.5),
  stock("ENL", "SEM", "ENL Ltd", "Industrials", 25)
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
 * by `exchange`), case-insensitively, in `catalogue` (the listings under their current symbols, app/symbols.ts). The
 * older `SCOM.NSE` form is not a symbol (D-080 revised): NotFound.
 */
export const lookupSymbol = (raw: string, exchange?: string, catalogue: ReadonlyArray<Instrument> = INSTRUMENTS): SymbolLookup => {
  if (!SYMBOL_FORMAT.test(raw)) return { _tag: "InvalidFormat" }
  const wanted = raw.toUpperCase()
  const exact = catalogue.find((i) => i.symbol === wanted && (exchange === undefined || i.exchange === exchange.toUpperCase()))
  if (exact !== undefined) return { _tag: "Found", instrument: exact }
  const byTicker = catalogue.filter((i) => i.ticker === wanted && (exchange === undefined || i.exchange === exchange.toUpperCase()))
  if (byTicker.length === 1 && byTicker[0] !== undefined) return { _tag: "Found", instrument: byTicker[0] }
  if (byTicker.length > 1) return { _tag: "Ambiguous", candidates: byTicker.map((i) => i.symbol) }
  return { _tag: "NotFound" }
}

/** The listing under a new exchange-qualified symbol (D-340): same identity, path and facts; ticker from the symbol. */
export const renamed = (instrument: Instrument, symbol: string): Instrument => ({
  ...instrument,
  symbol,
  ticker: symbol.slice(0, symbol.lastIndexOf(".") === -1 ? symbol.length : symbol.lastIndexOf("."))
})
