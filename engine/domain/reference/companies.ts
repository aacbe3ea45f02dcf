/**
 * Company profiles and ETF fund facts of the catalogue's listings, seeded per (seed, symbol): industry, employees,
 * shares outstanding, listing date, ISIN, website; issuer, expense ratio, index and NAV premium of an ETF. Pure.
 * Does not own prices: market capitalisation and NAV are computed from the feed's delayed price by the caller
 * (`marketCap`, `etfNav`), so a profile and a quote never disagree.
 */
import { findExchange } from "../calendar.ts"
import { rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { divRound, type Price4 } from "../money.ts"
import { addWeekdays, DAY_MS, dateMs, drawsFor, isinFor, isoDate } from "./seeded.ts"

export interface CompanyFacts {
  readonly country: string
  readonly currency: string
  readonly industry: string
  readonly description: string
  readonly website: string
  readonly employees: number
  readonly sharesOutstanding: bigint
  readonly listingDate: string
  readonly isin: string
}

const INDUSTRIES: Readonly<Record<string, ReadonlyArray<string>>> = {
  Telecommunications: ["Mobile telecommunications", "Fixed-line and broadband", "Telecom towers"],
  Financials: ["Commercial banking", "Insurance", "Asset management", "Investment banking"],
  "Consumer Staples": ["Brewers", "Food producers", "Tobacco", "Food retail"],
  "Consumer Discretionary": ["Retail", "Hotels and leisure", "Automobiles"],
  Technology: ["Internet and e-commerce", "Software", "IT services"],
  Energy: ["Oil and gas", "Fuel distribution", "Power generation"],
  Materials: ["Mining", "Cement", "Chemicals"],
  Industrials: ["Construction", "Transport and logistics", "Engineering"],
  Utilities: ["Electricity", "Water"],
  "Health Care": ["Pharmaceuticals", "Hospitals"],
  "Real Estate": ["Real estate investment", "Property development"],
  Agriculture: ["Tea and coffee", "Agribusiness", "Sugar"]
}

/** Listing dates fall between these days. */
const FIRST_LISTING = dateMs("1990-01-02")
const LAST_LISTING = dateMs("2021-12-31")

/** The instrument's country: its exchange's symbol suffix is the ISO 3166 alpha-2 code (D-080). */
export const countryOf = (instrument: Instrument): string => findExchange(instrument.exchange)?.suffix ?? instrument.symbol.split(".").at(-1) ?? "ZZ"
export const currencyOf = (instrument: Instrument): string => findExchange(instrument.exchange)?.currency ?? "USD"

export const companyFacts = (seed: number, instrument: Instrument): CompanyFacts => {
  const draws = drawsFor(seed, `company|${instrument.symbol}`)
  const country = countryOf(instrument)
  const currency = currencyOf(instrument)
  const industries = INDUSTRIES[instrument.sector ?? ""] ?? [instrument.sector ?? "Diversified holdings"]
  const industry = draws.pick(industries)
  // A capitalisation between USD 50 million and 30 billion at the path's starting price sets the share count.
  const usdCapMillions = BigInt(draws.between(5, 30) * 10 ** draws.between(1, 3))
  const rate = BigInt(rateFor(currency) ?? 1_000_000)
  const localCapUnits = (usdCapMillions * 1_000_000n * rate) / 1_000_000n
  const shares = divRound(localCapUnits * 10_000n, BigInt(Math.max(1, instrument.basePrice)) * 1_000n) * 1_000n
  const exchange = findExchange(instrument.exchange)
  return {
    country,
    currency,
    industry,
    description: `${instrument.name} works in ${industry.toLowerCase()} and is listed on the ${exchange?.name ?? instrument.exchange}. Synthetic profile from the Sokoni simulator.`,
    website: `https://www.${instrument.ticker.toLowerCase()}.example.com`,
    employees: 100 * draws.between(2, 600),
    sharesOutstanding: shares > 0n ? shares : 1_000n,
    listingDate: isoDate(addWeekdays(FIRST_LISTING + draws.int(Math.floor((LAST_LISTING - FIRST_LISTING) / DAY_MS)) * DAY_MS, 1)),
    isin: isinFor(country, draws)
  }
}

/** Market capitalisation in whole units of the local currency at `price`. */
export const marketCap = (facts: CompanyFacts, price: Price4): bigint => divRound(facts.sharesOutstanding * BigInt(price), 10_000n)

export interface EtfFacts {
  readonly issuer: string
  /** Total expense ratio in basis points (0.40 % = 40). */
  readonly expenseRatioBps: number
  readonly underlyingIndex: string
  /** NAV against the traded price, basis points either way (an ETF trades near, not at, its NAV). */
  readonly navDiscountBps: number
}

export const etfFacts = (seed: number, instrument: Instrument): EtfFacts => {
  const draws = drawsFor(seed, `etf|${instrument.symbol}`)
  const name = instrument.name
  const underlyingIndex = /gold/i.test(name)
    ? "Gold spot"
    : /bond/i.test(name)
      ? `${instrument.exchange} government bond index`
      : draws.pick([`${instrument.exchange} Top 40 Index`, `${instrument.exchange} All Share Index`, `${instrument.exchange} Dividend Index`])
  return {
    issuer: name.split(" ")[0] ?? name,
    expenseRatioBps: draws.between(10, 95),
    underlyingIndex,
    navDiscountBps: draws.between(-25, 25)
  }
}

/** The ETF's NAV per unit at a traded `price`, in Price4. */
export const etfNav = (facts: EtfFacts, price: Price4): Price4 => Number(divRound(BigInt(price) * BigInt(10_000 + facts.navDiscountBps), 10_000n))
