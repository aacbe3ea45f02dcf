/**
 * Market-calendar routes (contract tag "Market data"): exchange phases, exchanges and holidays (D-043, D-092, D-093),
 * each also under its deprecated `/market-data/**` alias. Decoding only; the work is MarketCalendarService's.
 */
import { MarketCalendarService } from "../../app/market-calendar.ts"
import { fail } from "../../domain/errors.ts"
import { type Decoder, optional, text } from "../query.ts"
import { partnerRoute } from "../route.ts"

/** A calendar date `YYYY-MM-DD` that exists (the contract's `format: date`), else VALIDATION_ERROR. */
export const isoDate: Decoder<string> = (raw, name) => {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw)
  const [y, mo, d] = m === null ? [0, 0, 0] : [Number(m[1]), Number(m[2]), Number(m[3])]
  const real = m !== null && mo >= 1 && mo <= 12 && d >= 1 && d <= new Date(Date.UTC(y, mo, 0)).getUTCDate()
  return real ? raw : fail("VALIDATION_ERROR", `${name} must be a date on the calendar (YYYY-MM-DD), got ${JSON.stringify(raw)}`, { param: name })
}

const exchangeQuery = { exchange: optional(text) }
const holidaysQuery = { exchange: optional(text), from: optional(isoDate), to: optional(isoDate) }

export const marketCalendarRoutes = [
  partnerRoute("getMarketStatus", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.status(query)) }),
  partnerRoute("getMarketDataStatus", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.status(query)) }),
  partnerRoute("getMarketExchanges", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.exchanges(query)) }),
  partnerRoute("getMarketDataExchanges", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.exchanges(query)) }),
  partnerRoute("getMarketHolidays", 200, { query: holidaysQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.holidays(query)) }),
  partnerRoute("getMarketDataHolidays", 200, { query: holidaysQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.holidays(query)) })
]
