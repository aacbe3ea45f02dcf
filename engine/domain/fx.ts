/**
 * Reference FX rates (local currency units per USD) the simulator converts with, for the currency of every exchange
 * the spec names, and their publication on the market-data refresh cadence. Pure data and arithmetic on integers:
 * a later issue may move the rates onto a seeded path of their own. Does not own conversion of amounts (money.ts).
 *
 * The values are illustrative mid rates of late 2026, not market data (README, "does not simulate").
 */
import { divRound, type Rate6 } from "./money.ts"

const RATES: Record<string, Rate6> = {
  USD: 1_000_000,
  KES: 129_250_000,
  NGN: 1_530_500_000,
  ZAR: 17_850_000,
  GHS: 12_400_000,
  XOF: 565_000_000,
  ZWG: 26_800_000,
  BWP: 13_450_000,
  ZMW: 23_500_000,
  EGP: 48_500_000,
  TZS: 2_450_000_000,
  UGX: 3_600_000_000,
  MWK: 1_735_000_000,
  MAD: 9_150_000,
  MUR: 45_600_000
}

export const FX_SOURCE = "sokoni-sim-reference"
/** The base of every rate. */
export const FX_BASE = "USD"

export const rateFor = (currency: string): Rate6 | undefined => RATES[currency]

/** Every currency quoted against USD, by code (USD itself is the base, not a rate). */
export const FX_CURRENCIES: ReadonlyArray<string> = Object.keys(RATES)
  .filter((c) => c !== FX_BASE)
  .sort()

/** Decimals of an inverse rate on the wire (USD per unit of a currency with thousands per USD needs them). */
export const INVERSE_DECIMALS = 10

/** USD per one unit of the currency, scaled by 10^INVERSE_DECIMALS and rounded once: 1e6 / rate6. */
export const inverseRate = (rate: Rate6): bigint => divRound(10n ** BigInt(INVERSE_DECIMALS + 6), BigInt(rate))

/** Rates are republished on the market-data refresh cadence (900 s): the last publication at or before `now`. */
export const FX_REFRESH_SECONDS = 900
export const fxAsOf = (now: number): number => Math.floor(now / (FX_REFRESH_SECONDS * 1000)) * FX_REFRESH_SECONDS * 1000
