/**
 * Money and prices as integers. Owns: the units (USD cents, local prices in 1/10000, FX rates in 1/1000000),
 * the one rounding rule (half away from zero, at the last step only), the broker fee, and the wire formatting.
 * Does not own: balances or ledgers (app/), nor where prices come from (sim/market-feed).
 *
 * Nothing here uses floating point arithmetic: every computation runs on bigint and is rounded once.
 * JSON numbers are produced only at the edge, from an exact decimal string.
 */

/** USD amount in cents. Always a safe integer. */
export type Cents = number
/** Local price in 1/10000 of the local currency unit (4 decimals). */
export type Price4 = number
/** FX rate: local currency units per 1 USD, in 1/1000000 (6 decimals). */
export type Rate6 = number

export const PRICE_SCALE = 10_000n
export const RATE_SCALE = 1_000_000n
/** Base broker fee: 0.75% of gross = 75 basis points. */
export const BASE_FEE_BPS = 75

const toSafe = (value: bigint): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n)) throw new RangeError(`amount out of range: ${value}`)
  return n
}

/** Divides and rounds half away from zero. The single rounding rule of the engine. */
export const divRound = (numerator: bigint, denominator: bigint): bigint => {
  if (denominator === 0n) throw new RangeError("division by zero")
  const negative = numerator < 0n !== denominator < 0n
  const n = numerator < 0n ? -numerator : numerator
  const d = denominator < 0n ? -denominator : denominator
  const q = (n * 2n + d) / (2n * d)
  return negative ? -q : q
}

/** USD price of one unit in 1/10000 USD: (price/1e4) / (rate/1e6) USD = price * 1e6 / rate, in 1e-4 USD. */
export const usdPrice4 = (price: Price4, rate: Rate6): number => toSafe(divRound(BigInt(price) * RATE_SCALE, BigInt(rate)))

/** Gross USD value of `quantity` units at `price` (local) converted at `rate`, rounded to the cent. */
export const grossCents = (quantity: number, price: Price4, rate: Rate6): Cents =>
  // quantity * price/1e4 local units / (rate/1e6) local per USD * 100 cents
  toSafe(divRound(BigInt(quantity) * BigInt(price) * RATE_SCALE * 100n, BigInt(rate) * PRICE_SCALE))

/** Gross USD cents of a notional (sum of quantity × Price4) converted at `rate`, rounded to the cent. */
export const grossOfNotional = (notional: bigint, rate: Rate6): Cents => toSafe(divRound(notional * RATE_SCALE * 100n, BigInt(rate) * PRICE_SCALE))

/** A fee of `bps` basis points on `gross`, rounded to the cent. */
export const bpsOf = (gross: Cents, bps: number): Cents => toSafe(divRound(BigInt(gross) * BigInt(bps), 10_000n))

export interface FeeBreakdown {
  readonly baseFee: Cents
  readonly partnerMarkupFee: Cents
  readonly fee: Cents
}

/** Each component is rounded on its own, and the total is their sum, so the parts always add up on the wire. */
export const fees = (gross: Cents, markupBps: number): FeeBreakdown => {
  const baseFee = bpsOf(gross, BASE_FEE_BPS)
  const partnerMarkupFee = markupBps === 0 ? 0 : bpsOf(gross, markupBps)
  return { baseFee, partnerMarkupFee, fee: baseFee + partnerMarkupFee }
}

/** Largest whole quantity whose BUY total (gross + fees) fits in `cash`. Used for cashValue orders. */
export const quantityForCash = (cash: Cents, price: Price4, rate: Rate6, markupBps: number): number => {
  const cost = (q: number) => {
    const gross = grossCents(q, price, rate)
    return gross + fees(gross, markupBps).fee
  }
  if (cash <= 0 || price <= 0) return 0
  // The cost never falls as the quantity grows, so binary-search the largest q with cost(q) <= cash. Rounding the
  // gross can hide up to half a cent, so no q beyond what cash + 1 cent buys at the exact unit price can fit.
  let low = 0
  let high = Number((BigInt(cash + 1) * BigInt(rate) * PRICE_SCALE) / (BigInt(price) * RATE_SCALE * 100n)) + 1
  while (low < high) {
    const mid = Math.floor((low + high + 1) / 2)
    if (cost(mid) <= cash) low = mid
    else high = mid - 1
  }
  return low
}

/** Exact decimal string of an integer scaled by 10^decimals. */
export const formatScaled = (value: number | bigint, decimals: number): string => {
  // A safe integer's digits are written by String as exactly as by BigInt, without making a BigInt (E-410).
  const safe = typeof value === "number" && Number.isSafeInteger(value)
  const v = safe ? 0n : BigInt(value)
  const negative = safe ? value < 0 : v < 0n
  const digits = (safe ? String(Math.abs(value)) : (negative ? -v : v).toString()).padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const frac = digits.slice(digits.length - decimals)
  return `${negative ? "-" : ""}${whole}${decimals > 0 ? `.${frac}` : ""}`
}

/** JSON number for the wire, parsed from the exact decimal string (never computed in floating point). */
export const toWireNumber = (value: number | bigint, decimals: number): number =>
  // For a safe integer, `value / 10^decimals` IS the number the decimal text parses to: both operands are exact
  // doubles, and a division, like parsing, gives the double nearest the exact quotient. No text is made (E-410); zero
  // is 0, as the text "0.00" gives, never -0.
  typeof value === "number" && Number.isSafeInteger(value) && decimals >= 0 && decimals <= 15 && Number.isInteger(decimals)
    ? value === 0
      ? 0
      : value / 10 ** decimals
    : Number(formatScaled(value, decimals))

export const centsToWire = (cents: Cents): number => toWireNumber(cents, 2)
export const price4ToWire = (price: Price4): number => toWireNumber(price, 4)
export const rate6ToWire = (rate: Rate6): number => toWireNumber(rate, 6)

/**
 * Parses a wire number into an integer with `decimals` decimals, exactly, from its shortest decimal
 * representation. Returns undefined when it has more decimals than allowed or is not finite.
 */
export const parseScaled = (value: number, decimals: number): number | undefined => {
  if (!Number.isFinite(value)) return undefined
  const text = value.toString()
  if (/e/i.test(text)) return undefined
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  const frac = match[3] ?? ""
  if (frac.length > decimals) return undefined
  const scaled = BigInt(`${match[2]}${frac.padEnd(decimals, "0")}`) * (match[1] === "-" ? -1n : 1n)
  const n = Number(scaled)
  return Number.isSafeInteger(n) ? n : undefined
}
