/**
 * Market: the stock list and tradeable quotes. Owns: stock items as the spec shows them, and the wiring of quote
 * issuance and expiry (rules: domain/trading/issue-quote.ts; dispatcher: app/trading/quotes.ts). Does not own prices
 * (sim/market-feed) nor the use of a quote (domain/trading/decide-quote.ts, app/trading/place.ts).
 */
import { Context, Effect, Layer } from "effect"
import { EXCHANGES, findExchange, phaseAt } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { rateFor } from "../domain/fx.ts"
import type { Instrument } from "../domain/instruments.ts"
import { divRound, price4ToWire, toWireNumber, usdPrice4 } from "../domain/money.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { DELAY_SECONDS, MarketFeed, type Observation, REFRESH_SECONDS, STALE_AFTER_SECONDS } from "../sim/market-feed.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { Store, type StoreError } from "../store/port.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { Listings } from "./listings.ts"
import { Symbols } from "./symbols.ts"
import type { Principal } from "./principal.ts"
import type { QuoteQuery } from "../domain/trading/issue-quote.ts"
import { quoting } from "./trading/quotes.ts"
import type { Schemas } from "../contract/wire.ts"

export interface StockQuery {
  readonly exchange?: string | undefined
  readonly sector?: string | undefined
  readonly assetType?: string | undefined
  readonly search?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export class MarketService extends Context.Service<
  MarketService,
  {
    readonly listStocks: (query: StockQuery, scope: string) => Effect.Effect<Schemas["StockList"], ApiFailure>
    readonly stockItem: (instrument: Instrument) => Effect.Effect<Schemas["StockItem"]>
    readonly issueQuote: (principal: Principal, symbol: string, query: QuoteQuery) => Effect.Effect<Schemas["Quote"], ApiFailure | StoreError>
  }
>()("sokoni/MarketService") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const feed = yield* MarketFeed
    const store = yield* Store
    const entropy = yield* Entropy
    const scheduler = yield* Scheduler
    const events = yield* EventLog
    const listings = yield* Listings
    const symbols = yield* Symbols

    // A stock item is a pure function of the instrument, its published observation and the current second
    // (freshness and market status move by the second); it is built once per second, not once per request.
    const items = new Map<string, { readonly key: string; readonly item: Schemas["StockItem"] }>()
    const stockItemAt = (instrument: Instrument, now: number) =>
      Effect.map(feed.observe(instrument, now), (o) => {
        // The listing status and symbol corporate actions set (app/listings.ts, app/symbols.ts) are part of the item
        // and of its cache key.
        const listed = listings.current(symbols.current(instrument))
        const key = `${Math.floor(now / 1000)}|${o.asOf}|${o.price}|${o.dayHigh}|${o.dayLow}|${o.volume}|${listed.listingStatus}|${listed.symbol}`
        const cached = items.get(instrument.id)
        if (cached !== undefined && cached.key === key) return cached.item
        const item = stockItemOf(listed, o, now)
        items.set(instrument.id, { key, item })
        return item
      })
    const stockItem = (instrument: Instrument) => Effect.flatMap(clock.now, (now) => stockItemAt(instrument, now))
    // Likewise a page of the list, per caller scope and query, for the current second (the same object is answered,
    // so the HTTP layer serialises it once). Bounded: cleared when the second changes.
    const pages = new Map<string, Schemas["StockList"]>()
    let pagesSecond = -1

    const listStocks = Effect.fnUntraced(function* (query: StockQuery, scope: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      if (query.exchange !== undefined && !EXCHANGES.some((e) => e.code === query.exchange?.toUpperCase())) {
        return yield* Effect.fail(fail("UNKNOWN_EXCHANGE", `exchange ${query.exchange} is not recognised`, { param: "exchange" }))
      }
      const now = yield* clock.nowHere()
      const second = Math.floor(now / 1000)
      if (second !== pagesSecond) {
        pages.clear()
        pagesSecond = second
      }
      // A corporate action may change a listing's status or symbol within the second: the page's key carries both versions.
      const pageKey = `${scope}|${query.exchange}|${query.sector}|${query.assetType}|${query.search}|${limit}|${query.cursor}|${listings.version()}|${symbols.version()}`
      const cachedPage = pages.get(pageKey)
      if (cachedPage !== undefined) return cachedPage
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(`stocks|${scope}`, query.cursor))
      const search = query.search?.toLowerCase()
      const matching = symbols
        .catalogue()
        .filter(
          (i) =>
            (query.exchange === undefined || i.exchange === query.exchange.toUpperCase()) &&
            (query.sector === undefined || i.sector?.toLowerCase() === query.sector.toLowerCase()) &&
            (query.assetType === undefined || i.assetType === query.assetType) &&
            (search === undefined || i.symbol.toLowerCase().includes(search) || i.name.toLowerCase().includes(search))
        )
        .sort((a, b) => (a.symbol < b.symbol ? -1 : 1))
      const rest = after === undefined ? matching : matching.filter((i) => i.symbol > after)
      const page = rest.slice(0, limit)
      const hasMore = rest.length > page.length
      const last = page.at(-1)
      const list: Schemas["StockList"] = {
        stocks: yield* Effect.forEach(page, (i) => stockItemAt(i, now)),
        count: page.length,
        totalCount: matching.length,
        hasMore,
        nextCursor: hasMore && last !== undefined ? encodeCursor(`stocks|${scope}`, last.symbol) : null
      }
      if (pages.size < 1_000) pages.set(pageKey, list)
      return list
    })

    // Quotes: rules in domain/trading/issue-quote.ts, dispatched by app/trading/quotes.ts.
    const { issueQuote, registerExpiry } = quoting({ store, clock, feed, entropy, scheduler, events, symbols })
    yield* registerExpiry

    return MarketService.of({ listStocks, stockItem, issueQuote })
  })

  static readonly layer = Layer.effect(MarketService, MarketService.make)
}

/** The spec's stock / quote item for an instrument and its latest published observation. */
export const stockItemOf = (instrument: Instrument, o: Observation, now: number): Schemas["StockItem"] => {
  const exchange = findExchange(instrument.exchange)
  const currency = exchange?.currency ?? "USD"
  const rate = rateFor(currency) ?? 1_000_000
  const ageSeconds = Math.max(0, Math.floor((now - o.asOf) / 1000))
  const changeBps = o.previousClose === 0 ? 0n : divRound(BigInt(o.price - o.previousClose) * 10_000n, BigInt(o.previousClose))
  return {
    id: instrument.symbol,
    symbol: instrument.symbol,
    name: instrument.name,
    slug: instrument.symbol.toLowerCase(),
    exchange: instrument.exchange,
    exchangeMic: exchange?.mic ?? null,
    currency,
    sector: instrument.sector,
    assetType: instrument.assetType,
    listingStatus: instrument.listingStatus,
    price: price4ToWire(o.price),
    usdPrice: price4ToWire(usdPrice4(o.price, rate)),
    change: price4ToWire(o.price - o.previousClose),
    // A fraction (0.0123 = 1.23 %), as the service answers (D-085, facts 9.2.3): basis points with 4 decimals.
    changePct: toWireNumber(changeBps, 4),
    open: price4ToWire(o.open),
    dayHigh: price4ToWire(o.dayHigh),
    dayLow: price4ToWire(o.dayLow),
    previousClose: price4ToWire(o.previousClose),
    volume: o.volume,
    logoUrl: null,
    // When the service published the observation (its capture plus the 15-minute delay); `asOf` is the capture.
    lastPriceUpdate: isoAt(o.publishedAt),
    marketStatus: exchange !== undefined && phaseAt(exchange, now) === "OPEN" ? "OPEN" : "CLOSED",
    bid: null,
    ask: null,
    dataFreshnessSeconds: ageSeconds,
    asOf: isoAt(o.asOf),
    stale: ageSeconds > STALE_AFTER_SECONDS,
    dataQuality: {
      delayedBySeconds: DELAY_SECONDS,
      refreshTargetSeconds: REFRESH_SECONDS,
      staleAfterSeconds: STALE_AFTER_SECONDS,
      source: "sokoni-sim-feed"
    }
  }
}
