/**
 * Seeded primary-market offers of the countries of the simulated exchanges (D-047, D-048, D-049), a pure function of
 * (seed, exchanges, catalogue, origin): treasury bills (91, 182, 364 days), a government bond and sometimes an
 * infrastructure bond per country, a corporate bond of a listed financial; money-market, fixed-income, equity and
 * balanced funds (sometimes real estate); a private-credit note and a pre-IPO round per country. Subscription windows
 * are placed around the run's start, so offers open and close as simulated time passes. Amounts are integers (USD
 * cents, basis points, Price4). Does not own subscriptions (domain/subscription.ts) nor NAVs that follow the
 * market (app/offers.ts applies the feed to `marketLinkPct`).
 */
import type { Exchange } from "../calendar.ts"
import type { Instrument } from "../instruments.ts"
import type { Cents, Price4 } from "../money.ts"
import { countryName, DAY_MS, dayStart, drawsFor, isinFor, isoDate, onWeekday, refId } from "./seeded.ts"

export type OfferStatus = "UPCOMING" | "OPEN" | "CLOSED"

/** UPCOMING before the window opens, OPEN inside it, CLOSED from its close. */
export const windowStatus = (opensAt: number | null, closesAt: number | null, now: number): OfferStatus =>
  opensAt !== null && now < opensAt ? "UPCOMING" : closesAt !== null && now >= closesAt ? "CLOSED" : "OPEN"

export type BondType = "TREASURY_BILL" | "GOVERNMENT_BOND" | "CORPORATE_BOND" | "INFRASTRUCTURE_BOND"

export interface BondRecord {
  readonly bondId: string
  readonly instrumentType: BondType
  readonly name: string
  readonly issuer: string
  readonly country: string
  readonly currency: string
  /** The exchange whose country issued it (the `exchange` filter, D-165). */
  readonly exchange: string
  readonly isin: string | null
  readonly couponBps: number | null
  readonly yieldBps: number
  readonly tenorDays: number
  readonly issueDate: string
  readonly maturityDate: string
  readonly faceValue: Price4
  readonly minimumSubscription: Cents
  readonly opensAt: number
  readonly closesAt: number
}

/** Indicative one-year government yield per country, basis points (illustrative). */
const BASE_YIELD_BPS: Readonly<Record<string, number>> = {
  KE: 980,
  NG: 1850,
  ZA: 780,
  GH: 2400,
  CI: 620,
  ZW: 3200,
  BW: 700,
  ZM: 1750,
  EG: 2450,
  TZ: 1150,
  UG: 1450,
  MW: 2600,
  MA: 290,
  MU: 430
}
const HOUR_MS = 3_600_000

const baseYield = (country: string) => BASE_YIELD_BPS[country] ?? 1000

/** A subscription window placed between `earliest` and `latest` days from the run's start, open 3 to `maxDays` days. */
const windowAround = (draws: ReturnType<typeof drawsFor>, origin: number, earliest: number, latest: number, maxDays: number) => {
  const opensAt = onWeekday(dayStart(origin) + draws.between(earliest, latest) * DAY_MS) + 6 * HOUR_MS
  const closesAt = onWeekday(opensAt + draws.between(3, maxDays) * DAY_MS) + 11 * HOUR_MS
  return { opensAt, closesAt }
}

const bondsOfCountry = (seed: number, exchange: Exchange, instruments: ReadonlyArray<Instrument>, origin: number): Array<BondRecord> => {
  const country = exchange.suffix
  const name = countryName(country)
  const out: Array<BondRecord> = []
  const make = (key: string, type: BondType, label: string, issuer: string, tenorDays: number, premiumBps: number, coupon: boolean) => {
    const draws = drawsFor(seed, `bond|${country}|${key}`)
    const { opensAt, closesAt } = windowAround(draws, origin, -12, 20, 10)
    const issueAt = onWeekday(dayStart(closesAt) + draws.between(1, 4) * DAY_MS)
    const yieldBps = baseYield(country) + premiumBps + draws.between(-50, 50)
    out.push({
      bondId: refId("bnd", seed, `${country}|${key}`),
      instrumentType: type,
      name: label,
      issuer,
      country,
      currency: exchange.currency,
      exchange: exchange.code,
      isin: type === "TREASURY_BILL" ? null : isinFor(country, draws),
      couponBps: coupon ? Math.round(yieldBps / 25) * 25 : null,
      yieldBps,
      tenorDays,
      issueDate: isoDate(issueAt),
      maturityDate: isoDate(issueAt + tenorDays * DAY_MS),
      faceValue: 100 * 10_000,
      minimumSubscription: (type === "TREASURY_BILL" ? 100 : 1_000) * 100,
      opensAt,
      closesAt
    })
  }
  const bank = `Central Bank of ${name}`
  for (const days of [91, 182, 364]) make(`tbill-${days}`, "TREASURY_BILL", `${name} ${days}-day Treasury Bill`, bank, days, Math.floor(days / 2), false)
  const years = drawsFor(seed, `bond-tenor|${country}`).pick([2, 5, 10, 15])
  make("government", "GOVERNMENT_BOND", `${name} ${years}-year Treasury Bond`, `Government of ${name}`, years * 364, 150 + years * 40, true)
  if (drawsFor(seed, `bond-infra|${country}`).chance(500)) {
    make("infrastructure", "INFRASTRUCTURE_BOND", `${name} 12-year Infrastructure Bond`, `Government of ${name}`, 12 * 364, 500, true)
  }
  const financials = instruments.filter(
    (i) => i.exchange === exchange.code && i.assetType === "STOCK" && i.sector === "Financials" && i.listingStatus === "ACTIVE"
  )
  if (financials.length > 0) {
    const issuer = drawsFor(seed, `bond-corporate|${country}`).pick(financials)
    make("corporate", "CORPORATE_BOND", `${issuer.name} 5-year Senior Note`, issuer.name, 5 * 364, 350, true)
  }
  return out
}

/** Every bond and bill of the exchanges' countries (one set per country, from its first exchange). */
export const bondsOf = (seed: number, exchanges: ReadonlyArray<Exchange>, instruments: ReadonlyArray<Instrument>, origin: number): Array<BondRecord> =>
  firstPerCountry(exchanges).flatMap((e) => bondsOfCountry(seed, e, instruments, origin))

const firstPerCountry = (exchanges: ReadonlyArray<Exchange>): Array<Exchange> =>
  exchanges.filter((e, i) => exchanges.findIndex((other) => other.suffix === e.suffix) === i)

export type FundType = "MONEY_MARKET" | "FIXED_INCOME" | "EQUITY" | "BALANCED" | "REAL_ESTATE"

export interface FundRecord {
  readonly fundId: string
  readonly name: string
  readonly manager: string
  readonly fundType: FundType
  readonly country: string
  readonly currency: string
  readonly exchange: string
  /** NAV per unit at the run's start. */
  readonly baseNav: Price4
  /** How much of the NAV follows the exchange's listed prices: 0 (money market, bonds), 50 (balanced), 100 (equity). */
  readonly marketLinkPct: number
  readonly yieldBps: number | null
  readonly feesBps: number
  readonly riskRating: number
  readonly minimumSubscription: Cents
  /** A fund closed to new money, or one launching at `opensAt`. */
  readonly closed: boolean
  readonly opensAt: number | null
}

const HOUSES = ["Baobab", "Kilima", "Savanna", "Acacia", "Jacaranda", "Mvule", "Sahel", "Zambezi", "Limpopo", "Atlas", "Delta", "Rift"] as const
const FUND_LABEL: Readonly<Record<FundType, string>> = {
  MONEY_MARKET: "Money Market Fund",
  FIXED_INCOME: "Fixed Income Fund",
  EQUITY: "Equity Fund",
  BALANCED: "Balanced Fund",
  REAL_ESTATE: "Property Income Fund"
}

export const fundsOf = (seed: number, exchanges: ReadonlyArray<Exchange>, origin: number): Array<FundRecord> =>
  firstPerCountry(exchanges).flatMap((exchange) => {
    const country = exchange.suffix
    const types: Array<FundType> = ["MONEY_MARKET", "FIXED_INCOME", "EQUITY", "BALANCED"]
    if (drawsFor(seed, `fund-reit|${country}`).chance(400)) types.push("REAL_ESTATE")
    return types.map((fundType): FundRecord => {
      const draws = drawsFor(seed, `fund|${country}|${fundType}`)
      const house = draws.pick(HOUSES)
      const usd = fundType === "MONEY_MARKET" && draws.chance(250)
      const state = draws.int(100)
      const risk: Record<FundType, number> = {
        MONEY_MARKET: 1,
        FIXED_INCOME: draws.between(2, 3),
        BALANCED: 4,
        EQUITY: draws.between(5, 6),
        REAL_ESTATE: draws.between(4, 5)
      }
      return {
        fundId: refId("fnd", seed, `${country}|${fundType}`),
        name: `${house} ${countryName(country)} ${usd ? "USD " : ""}${FUND_LABEL[fundType]}`,
        manager: `${house} Asset Management`,
        fundType,
        country,
        currency: usd ? "USD" : exchange.currency,
        exchange: exchange.code,
        baseNav: fundType === "MONEY_MARKET" ? 10_000 : draws.between(80, 250) * 10_000 + draws.between(0, 99) * 100,
        marketLinkPct: fundType === "EQUITY" ? 100 : fundType === "BALANCED" ? 50 : 0,
        yieldBps: fundType === "EQUITY" ? null : Math.max(100, baseYield(country) - draws.between(0, 300)),
        feesBps: draws.between(fundType === "EQUITY" ? 200 : 100, fundType === "EQUITY" ? 300 : 200),
        riskRating: risk[fundType],
        minimumSubscription: draws.pick([10, 50, 100]) * 100,
        closed: state < 10,
        opensAt: state >= 10 && state < 18 ? onWeekday(dayStart(origin) + draws.between(7, 60) * DAY_MS) + 6 * HOUR_MS : null
      }
    })
  })

export type OpportunityType = "PRIVATE_CREDIT" | "PRE_IPO"

export interface OpportunityRecord {
  readonly opportunityId: string
  readonly opportunityType: OpportunityType
  readonly name: string
  readonly issuer: string
  readonly sector: string
  readonly country: string
  readonly currency: string
  readonly targetRaise: Cents
  /** The share of the target raised by the close, in permille (over 1000 means oversubscribed; capped at the target). */
  readonly fillPermille: number
  readonly minimumSubscription: Cents
  readonly expectedReturnBps: number | null
  readonly tenorMonths: number | null
  readonly opensAt: number
  readonly closesAt: number
}

const VENTURES = ["Tembo", "Nyota", "Jua", "Mawingu", "Kijani", "Umoja", "Sankofa", "Ubuntu", "Imara", "Bahari"] as const
const PRE_IPO_SECTORS = ["Fintech", "Logistics", "Renewable energy", "Healthcare", "E-commerce", "Agritech"] as const
const CREDIT_SECTORS = ["Trade finance", "SME lending", "Agriculture", "Asset finance"] as const

/** The amount raised by `now`: the fill reached linearly over the window, never above the target. */
export const raisedBy = (o: OpportunityRecord, now: number): Cents | null => {
  if (now < o.opensAt) return null
  const elapsed = BigInt(Math.min(now, o.closesAt) - o.opensAt)
  const span = BigInt(o.closesAt - o.opensAt)
  const raised = (BigInt(o.targetRaise) * BigInt(o.fillPermille) * elapsed) / (1000n * span)
  return Number(raised > BigInt(o.targetRaise) ? BigInt(o.targetRaise) : raised)
}

export const opportunitiesOf = (seed: number, exchanges: ReadonlyArray<Exchange>, origin: number): Array<OpportunityRecord> =>
  firstPerCountry(exchanges).flatMap((exchange) => {
    const country = exchange.suffix
    const make = (type: OpportunityType, n: number): OpportunityRecord => {
      const key = `${country}|${type}|${n}`
      const draws = drawsFor(seed, `opportunity|${key}`)
      const venture = draws.pick(VENTURES)
      const credit = type === "PRIVATE_CREDIT"
      const { opensAt, closesAt } = windowAround(draws, origin, -40, 25, 70)
      return {
        opportunityId: refId("opp", seed, key),
        opportunityType: type,
        name: credit
          ? `${venture} ${draws.pick(CREDIT_SECTORS)} Note ${isoDate(opensAt).slice(0, 4)}-${"ABC"[n]}`
          : `${venture} ${countryName(country)} pre-IPO round`,
        issuer: credit ? `${venture} Credit Ltd` : `${venture} Holdings Ltd`,
        sector: credit ? "Financial services" : draws.pick(PRE_IPO_SECTORS),
        country,
        currency: credit && draws.chance(600) ? "USD" : exchange.currency,
        targetRaise: draws.between(10, 200) * 50_000 * 100,
        fillPermille: draws.between(400, 1300),
        minimumSubscription: (credit ? 1_000 : 5_000) * 100,
        expectedReturnBps: credit ? draws.between(40, 72) * 25 : null,
        tenorMonths: credit ? draws.pick([6, 12, 18, 24, 36]) : null,
        opensAt,
        closesAt
      }
    }
    const credits = drawsFor(seed, `opportunity-count|${country}`).between(1, 2)
    return [...Array.from({ length: credits }, (_, n) => make("PRIVATE_CREDIT", n)), make("PRE_IPO", 0)]
  })
