/**
 * The arithmetic of corporate actions on a holding, in integers only (D-303): a dividend's USD credit, the units a
 * split, reverse split or bonus issue leaves and the fraction paid in cash, and the cost basis carried through. Pure.
 * Does not own who holds what (app/ledger.ts), prices (sim/market-feed.ts) nor the actions (app/corporate-actions.ts).
 */
import { type Cents, divRound, type Price4, type Rate6 } from "./money.ts"

const PRICE_SCALE = 10_000n
const RATE_SCALE = 1_000_000n

/** USD cents of a dividend of `perShare` (local, Price4) on `units`, converted at `rate`, rounded half up once. */
export const dividendCents = (units: number, perShare: Price4, rate: Rate6): Cents =>
  Number(divRound(BigInt(units) * BigInt(perShare) * RATE_SCALE * 100n, BigInt(rate) * PRICE_SCALE))

export interface Split {
  /** Whole units held after the action: floor(units x ratioTo / ratioFrom). */
  readonly units: number
  /** The fraction left over, in 1/ratioFrom of a new unit (0 <= fraction < ratioFrom): paid in cash. */
  readonly fraction: number
}

/** `ratioFrom` old units become `ratioTo` new ones (a 2-for-1 split is 1 -> 2, a 1-for-10 consolidation 10 -> 1). */
export const splitUnits = (units: number, ratioFrom: number, ratioTo: number): Split => {
  const scaled = BigInt(units) * BigInt(ratioTo)
  const whole = scaled / BigInt(ratioFrom)
  return { units: Number(whole), fraction: Number(scaled - whole * BigInt(ratioFrom)) }
}

/**
 * USD cents paid for a fraction left by a split: `fraction`/ratioFrom of a new unit, each worth `price` (an old unit's
 * price) x ratioFrom / ratioTo, which is `fraction` x `price` / ratioTo; converted at `rate`, rounded once.
 */
export const cashInLieuCents = (fraction: number, ratioTo: number, price: Price4, rate: Rate6): Cents =>
  Number(divRound(BigInt(fraction) * BigInt(price) * RATE_SCALE * 100n, BigInt(ratioTo) * BigInt(rate) * PRICE_SCALE))

/** A split ratio the engine accepts: whole numbers from 1 to 1000, and a change in the number of units. */
export const MAX_RATIO = 1_000

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b))

/**
 * Units bought, as the rational `units / per`: a split multiplies by ratioTo/ratioFrom what was bought before it, so
 * the average cost (cost / units) follows exactly. Reduced after each step so the numbers stay small.
 */
export const scaleUnits = (units: number, per: number, ratioFrom: number, ratioTo: number): { readonly units: number; readonly per: number } => {
  const u = units * ratioTo
  const p = per * ratioFrom
  const g = gcd(u, p) || 1
  return { units: u / g, per: p / g }
}
