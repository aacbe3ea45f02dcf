/**
 * MarketViews: the read-only views over the delayed stock items: informational quotes for one or many symbols
 * (`/market/quotes`, D-042), movers (`/market/movers`, D-044) and the compact snapshot (`/market/snapshot`, D-091).
 * Owns: resolving symbol lists (format, batch limit, duplicates, unknown symbols), ranking movers, the snapshot row.
 * Does not own the price path or the items' fields (sim/market-feed.ts, app/market.ts `stockItem`), nor tradeable
 * quotes (`MarketService.issueQuote`).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { EXCHANGES } from "../domain/calendar.ts"
import { ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import type { Instrument, SymbolLookup } from "../domain/instruments.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Listings } from "./listings.ts"
import { MarketService } from "./market.ts"
import { Symbols } from "./symbols.ts"

/** Symbols per batch call (`symbols=`), spec "Market data": at most 50. */
export const MAX_SYMBOLS = 50
export const MOVERS_DEFAULT_LIMIT = 10

export type SymbolsResolution = { readonly found: ReadonlyArray<Instrument>; readonly notFound: ReadonlyArray<string> } | ApiFailure

/**
 * A comma-separated symbol list, resolved in request order: duplicates answered once (an exchange-qualified symbol
 * and its bare ticker are the same listing), malformed ones refused together (INVALID_SYMBOL with `invalid`), more
 * than MAX_SYMBOLS refused (BATCH_LIMIT_EXCEEDED with `max` and `received`), a bare ticker on several exchanges
 * refused (VALIDATION_ERROR), well-formed unknown ones (a symbol retired by a symbol change too) listed in `notFound`.
 * Pure given `lookupSymbol` (app/symbols.ts: the current symbols).
 */
export const resolveSymbols = (
  lookupSymbol: (symbol: string, exchange?: string) => SymbolLookup,
  raw: string,
  exchange: string | undefined
): SymbolsResolution => {
  const requested = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")
  if (requested.length === 0) return fail("MISSING_PARAM", "symbols must name at least one symbol", { param: "symbols" })
  if (requested.length > MAX_SYMBOLS) {
    return fail("BATCH_LIMIT_EXCEEDED", `at most ${MAX_SYMBOLS} symbols per call, got ${requested.length}`, {
      param: "symbols",
      max: MAX_SYMBOLS,
      received: requested.length
    })
  }
  const lookups = requested.map((symbol) => ({ symbol, found: lookupSymbol(symbol, exchange) }))
  const invalid = lookups.filter((l) => l.found._tag === "InvalidFormat").map((l) => l.symbol)
  if (invalid.length > 0) {
    return fail("INVALID_SYMBOL", `malformed symbols: ${invalid.join(", ")} (2-20 letters or digits, optionally dot-separated)`, {
      param: "symbols",
      invalid
    })
  }
  const found: Array<Instrument> = []
  const notFound: Array<string> = []
  for (const { symbol, found: lookup } of lookups) {
    switch (lookup._tag) {
      case "Found":
        if (!found.includes(lookup.instrument)) found.push(lookup.instrument)
        break
      case "Ambiguous":
        return fail("VALIDATION_ERROR", `symbol ${symbol} matches several listings (${lookup.candidates.join(", ")}); qualify it or pass exchange`, {
          param: "symbols"
        })
      default:
        if (!notFound.includes(symbol)) notFound.push(symbol)
    }
  }
  return { found, notFound }
}

/** The exchange filter as given (case-insensitive), or UNKNOWN_EXCHANGE. */
export const exchangeFilter = (exchange: string | undefined): string | undefined | ApiFailure => {
  if (exchange === undefined) return undefined
  const code = exchange.toUpperCase()
  return EXCHANGES.some((e) => e.code === code) ? code : fail("UNKNOWN_EXCHANGE", `exchange ${exchange} is not recognised`, { param: "exchange" })
}

/**
 * Gainers: changePct > 0, highest first; losers: changePct < 0, lowest first; ties by volume (highest first), then
 * symbol; items without a changePct left out (D-044). Pure.
 */
export const rankMovers = <I extends { readonly symbol: string; readonly changePct: number | null; readonly volume: number | null }>(
  items: ReadonlyArray<I>,
  direction: "gainers" | "losers",
  limit: number
): ReadonlyArray<I> =>
  items
    .filter((i) => i.changePct !== null && (direction === "gainers" ? i.changePct > 0 : i.changePct < 0))
    .sort((a, b) => {
      const byChange = direction === "gainers" ? (b.changePct as number) - (a.changePct as number) : (a.changePct as number) - (b.changePct as number)
      if (byChange !== 0) return byChange
      const byVolume = (b.volume ?? 0) - (a.volume ?? 0)
      return byVolume !== 0 ? byVolume : a.symbol < b.symbol ? -1 : a.symbol > b.symbol ? 1 : 0
    })
    .slice(0, limit)

const snapshotRow = (item: Schemas["StockItem"]): Schemas["SnapshotItem"] => ({
  symbol: item.symbol,
  name: item.name,
  exchange: item.exchange,
  currency: item.currency,
  price: item.price,
  usdPrice: item.usdPrice,
  change: item.change,
  changePct: item.changePct,
  previousClose: item.previousClose,
  volume: item.volume,
  marketStatus: item.marketStatus === "OPEN" ? "OPEN" : "CLOSED",
  asOf: item.asOf ?? null,
  stale: item.stale ?? false
})

export interface QuotesQuery {
  readonly symbol?: string | undefined
  readonly symbols?: string | undefined
  readonly exchange?: string | undefined
}

export class MarketViews extends Context.Service<
  MarketViews,
  {
    readonly quotes: (query: QuotesQuery) => Effect.Effect<Schemas["MarketQuotesResponse"], ApiFailure>
    readonly movers: (query: {
      readonly direction?: "gainers" | "losers" | undefined
      readonly exchange?: string | undefined
      readonly limit?: number | undefined
    }) => Effect.Effect<Schemas["MoversResponse"], ApiFailure>
    readonly snapshot: (query: {
      readonly symbols?: string | undefined
      readonly exchange?: string | undefined
    }) => Effect.Effect<Schemas["SnapshotResponse"], ApiFailure>
  }
>()("sokoni/MarketViews") {
  static readonly make = Effect.gen(function* () {
    const market = yield* MarketService
    const clock = yield* EngineClock
    const listings = yield* Listings
    const symbols = yield* Symbols
    const itemsOf = (instruments: ReadonlyArray<Instrument>) => Effect.forEach(instruments, (i) => market.stockItem(i))
    const meta = (requested: number, count: number, exchange: string | undefined, now: number): Schemas["MarketQuotesMeta"] => ({
      requested,
      count,
      maxSymbols: MAX_SYMBOLS,
      exchange: (exchange ?? null) as Schemas["MarketQuotesMeta"]["exchange"],
      asOf: isoAt(now)
    })

    const quotes = Effect.fn("MarketViews.quotes")(function* (query: QuotesQuery) {
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      if (query.symbol !== undefined && query.symbols !== undefined) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "give symbol or symbols, not both", { param: "symbols", params: ["symbol", "symbols"] }))
      }
      const now = yield* clock.nowHere()
      if (query.symbol !== undefined) {
        const lookup = symbols.lookup(query.symbol, exchange)
        if (lookup._tag === "InvalidFormat") {
          return yield* Effect.fail(fail("INVALID_SYMBOL", `symbol ${JSON.stringify(query.symbol)} is malformed`, { param: "symbol", invalid: [query.symbol] }))
        }
        if (lookup._tag === "Ambiguous") {
          return yield* Effect.fail(
            fail("VALIDATION_ERROR", `symbol ${query.symbol} matches several listings (${lookup.candidates.join(", ")}); qualify it or pass exchange`, {
              param: "symbol"
            })
          )
        }
        // NOT_FOUND, naming the successor of a symbol retired by a symbol change (D-341)
        if (lookup._tag === "NotFound") {
          const missing = symbols.resolve(query.symbol, exchange)
          return yield* Effect.fail(missing instanceof ApiFailure ? missing : fail("NOT_FOUND", `symbol ${query.symbol} was not found`))
        }
        const single: Schemas["MarketQuoteSingleResponse"] = {
          data: (yield* market.stockItem(lookup.instrument)) as Schemas["MarketQuoteItem"],
          meta: meta(1, 1, exchange, now)
        }
        return single
      }
      if (query.symbols === undefined) {
        return yield* Effect.fail(fail("MISSING_PARAM", "symbol or symbols is required", { param: "symbol", params: ["symbol", "symbols"] }))
      }
      const resolved = yield* liftFailure(resolveSymbols(symbols.lookup, query.symbols, exchange))
      const data = (yield* itemsOf(resolved.found)) as Array<Schemas["MarketQuoteItem"]>
      const requested = resolved.found.length + resolved.notFound.length
      const batch: Schemas["MarketQuoteBatchResponse"] = { data, not_found: [...resolved.notFound], meta: meta(requested, data.length, exchange, now) }
      return batch
    })

    const movers = Effect.fn("MarketViews.movers")(function* (query: {
      readonly direction?: "gainers" | "losers" | undefined
      readonly exchange?: string | undefined
      readonly limit?: number | undefined
    }) {
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const direction = query.direction ?? "gainers"
      const listed = symbols.catalogue().filter((i) => listings.statusOf(i) === "ACTIVE" && (exchange === undefined || i.exchange === exchange))
      const items = (yield* itemsOf(listed)) as Array<Schemas["MarketQuoteItem"]>
      const ranked = rankMovers(items, direction, query.limit ?? MOVERS_DEFAULT_LIMIT)
      const answer: Schemas["MoversResponse"] = {
        direction,
        exchange: (exchange ?? null) as Schemas["MoversResponse"]["exchange"],
        movers: [...ranked],
        count: ranked.length,
        asOf: isoAt(yield* clock.nowHere())
      }
      return answer
    })

    const snapshot = Effect.fn("MarketViews.snapshot")(function* (query: { readonly symbols?: string | undefined; readonly exchange?: string | undefined }) {
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const now = yield* clock.nowHere()
      if (query.symbols === undefined) {
        if (exchange === undefined) {
          return yield* Effect.fail(fail("MISSING_PARAM", "symbols or exchange is required", { param: "symbols", params: ["symbols", "exchange"] }))
        }
        const listed = symbols
          .catalogue()
          .filter((i) => listings.statusOf(i) === "ACTIVE" && i.exchange === exchange)
          .sort((a, b) => (a.symbol < b.symbol ? -1 : 1))
        const rows = (yield* itemsOf(listed)).map(snapshotRow)
        const whole: Schemas["SnapshotResponse"] = { data: rows, not_found: [], meta: meta(0, rows.length, exchange, now) }
        return whole
      }
      const resolved = yield* liftFailure(resolveSymbols(symbols.lookup, query.symbols, exchange))
      // With an exchange as well, the watchlist is filtered to that exchange.
      const onExchange = resolved.found.filter((i) => exchange === undefined || i.exchange === exchange)
      const rows = (yield* itemsOf(onExchange)).map(snapshotRow)
      const requested = resolved.found.length + resolved.notFound.length
      const watchlist: Schemas["SnapshotResponse"] = { data: rows, not_found: [...resolved.notFound], meta: meta(requested, rows.length, exchange, now) }
      return watchlist
    })

    return MarketViews.of({ quotes, movers, snapshot })
  })

  static readonly layer = Layer.effect(MarketViews, MarketViews.make)
}
