/**
 * Market-calendar routes (contract tag "Market data"): exchange phases, exchanges and holidays (D-043, D-092, D-093),
 * each also under its deprecated `/market-data/**` alias. Decoding only; the work is MarketCalendarService's.
 */
import { MarketCalendarService } from "../../app/market-calendar.ts"
import { fail } from "../../domain/errors.ts"
import { isCalendarDate } from "../../domain/reference/seeded.ts"
import { type Decoder, optional, text } from "../query.ts"
import { partnerRoute } from "../route.ts"

/** A calendar date `YYYY-MM-DD` that exists (the contract's `format: date`), else VALIDATION_ERROR. */
export const calendarDate: Decoder<string> = (raw, name) =>
  isCalendarDate(raw) ? raw : fail("VALIDATION_ERROR", `${name} must be a date on the calendar (YYYY-MM-DD), got ${JSON.stringify(raw)}`, { param: name })

const exchangeQuery = { exchange: optional(text) }
const holidaysQuery = { exchange: optional(text), from: optional(calendarDate), to: optional(calendarDate) }

export const marketCalendarRoutes = [
  partnerRoute("getMarketStatus", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.status(query)) }),
  partnerRoute("getMarketDataStatus", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.status(query)) }),
  partnerRoute("getMarketExchanges", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.exchanges(query)) }),
  partnerRoute("getMarketDataExchanges", 200, { query: exchangeQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.exchanges(query)) }),
  partnerRoute("getMarketHolidays", 200, { query: holidaysQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.holidays(query)) }),
  partnerRoute("getMarketDataHolidays", 200, { query: holidaysQuery, handle: ({ query }) => MarketCalendarService.use((c) => c.holidays(query)) })
]
