/**
 * ReferenceData: the run's reference book (engine/domain/reference/book.ts) built once from the engine's seed, the
 * price feed's origin (the run's start) and the catalogue, shared by the reference services so each generated list
 * is computed once. Owns nothing but that wiring; the checks every reference list applies to its filters are below.
 */
import { Context, Effect, Layer } from "effect"
import { EXCHANGES, type ExchangeCode, findExchange } from "../domain/calendar.ts"
import { ApiFailure, fail } from "../domain/errors.ts"
import { INSTRUMENTS, type Instrument } from "../domain/instruments.ts"
import { makeReferenceBook, type ReferenceBook } from "../domain/reference/book.ts"
import { MarketFeed } from "../sim/market-feed.ts"
import { Entropy } from "../sim/random.ts"

export class ReferenceData extends Context.Service<ReferenceData, { readonly book: ReferenceBook }>()("sokoni/ReferenceData") {
  static readonly layer = Layer.effect(
    ReferenceData,
    Effect.gen(function* () {
      const entropy = yield* Entropy
      const feed = yield* MarketFeed
      return ReferenceData.of({ book: makeReferenceBook(entropy.seed, feed.origin, INSTRUMENTS, EXCHANGES) })
    })
  )
}

/** An `exchange` filter: a simulated exchange's code, case-insensitive, else 400 UNKNOWN_EXCHANGE. */
export const exchangeFilter = (exchange: string | undefined): ExchangeCode | undefined | ApiFailure => {
  if (exchange === undefined) return undefined
  const found = findExchange(exchange.toUpperCase())
  return found === undefined ? fail("UNKNOWN_EXCHANGE", `exchange ${exchange} is not recognised`, { param: "exchange" }) : found.code
}

/**
 * A `symbol` filter (D-160): the listing it names (resolved by `resolve`, app/symbols.ts), with the path parameter's errors (INVALID_SYMBOL, ambiguous
 * VALIDATION_ERROR), except that a symbol no listing has is 400 VALIDATION_ERROR rather than 404: a filter names
 * no resource.
 */
export const symbolFilter = (
  resolve: (symbol: string, exchange?: string) => Instrument | ApiFailure,
  symbol: string | undefined,
  exchange?: string
): Instrument | undefined | ApiFailure => {
  if (symbol === undefined) return undefined
  const found = resolve(symbol, exchange)
  if (!(found instanceof ApiFailure)) return found
  return found.code === "NOT_FOUND" ? fail("VALIDATION_ERROR", `symbol ${symbol} is not listed`, { param: "symbol" }) : found
}

/** `from` after `to` is 400 (spec: "Invalid or reversed bounds give 400"). */
export const rangeCheck = (from: number | undefined, to: number | undefined): ApiFailure | undefined =>
  from !== undefined && to !== undefined && from > to ? fail("VALIDATION_ERROR", "from is after to", { param: "from", params: ["from", "to"] }) : undefined

/** A filter that must match `pattern` (ISO codes), else 400 VALIDATION_ERROR naming it. */
export const patternCheck = (value: string | undefined, pattern: RegExp, name: string, what: string): ApiFailure | undefined =>
  value === undefined || pattern.test(value) ? undefined : fail("VALIDATION_ERROR", `${name} must be ${what}`, { param: name })

export const COUNTRY = /^[A-Z]{2}$/
export const CURRENCY = /^[A-Z]{3}$/

export { localDate } from "../domain/calendar.ts"
