/**
 * Price-history routes (contract tag "Market data"): candles, daily history and the older end-of-day OHLCV with its
 * `/market-data` alias (D-088, D-089, D-090). Decoding only; the work is PriceHistoryService's.
 */
import { PriceHistoryService } from "../../app/price-history.ts"
import { fail } from "../../domain/errors.ts"
import { calendarDateMs } from "../../domain/reference/seeded.ts"
import { type Decoder, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"

/** A UTC calendar date (`YYYY-MM-DD`, format: date in the contract): the epoch millis of its 00:00. */
export const utcDay: Decoder<number> = (raw, name) =>
  calendarDateMs(raw) ?? fail("VALIDATION_ERROR", `${name} must be a calendar date (YYYY-MM-DD), got ${JSON.stringify(raw)}`, { param: name })

const symbolPath = { symbol: required(text) }
const ohlcvQuery = {
  symbol: required(text),
  exchange: optional(text),
  timeframe: optional(oneOf(["1D", "1W", "1M"])),
  from: optional(utcDay),
  to: optional(utcDay)
}

export const priceHistoryRoutes = [
  partnerRoute("getStockCandles", 200, {
    params: symbolPath,
    query: {
      interval: optional(oneOf(["15m", "1h", "1d", "1w", "1mo"])),
      from: optional(utcDay),
      to: optional(utcDay),
      adjustment: optional(oneOf(["raw"])),
      exchange: optional(text)
    },
    handle: ({ params, query, principal }) => PriceHistoryService.use((h) => h.candles(principal, params.symbol, query))
  }),
  partnerRoute("getStockHistory", 200, {
    params: symbolPath,
    query: { period: optional(oneOf(["1W", "1M", "1MO", "3MO", "6MO", "1Y", "2Y", "5Y"])), exchange: optional(text) },
    handle: ({ params, query }) => PriceHistoryService.use((h) => h.history(params.symbol, query.period ?? "1Y", query.exchange))
  }),
  partnerRoute("getMarketOhlcv", 200, { query: ohlcvQuery, handle: ({ query }) => PriceHistoryService.use((h) => h.ohlcv(query)) }),
  partnerRoute("getMarketDataOhlcv", 200, { query: ohlcvQuery, handle: ({ query }) => PriceHistoryService.use((h) => h.ohlcv(query)) })
]
