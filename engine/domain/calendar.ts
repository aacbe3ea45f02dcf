/**
 * Exchange calendars: which exchanges exist, their time zones, trading hours and currencies, and whether one is
 * open at a given instant. Pure: the instant is an argument. Does not own prices (sim/market-feed) nor holidays
 * beyond the table below (a later issue fills in each exchange's holiday list).
 */

export interface Exchange {
  readonly code: ExchangeCode
  readonly name: string
  readonly mic: string
  readonly timeZone: string
  readonly currency: string
  /** Country suffix of its symbols (`SCOM.KE`), as the service writes them (decision D-080, facts 9.1.1). */
  readonly suffix: string
  /** Continuous session, local wall time, minutes after midnight. */
  readonly opensAt: number
  readonly closesAt: number
  /** ISO dates (local) when the exchange is closed although it is a weekday. */
  readonly holidays: ReadonlyArray<string>
}

const hm = (h: number, m = 0) => h * 60 + m

export const EXCHANGES: ReadonlyArray<Exchange> = [
  {
    code: "NSE",
    name: "Nairobi Securities Exchange",
    mic: "XNAI",
    timeZone: "Africa/Nairobi",
    currency: "KES",
    suffix: "KE",
    opensAt: hm(9),
    closesAt: hm(15),
    holidays: ["2026-12-25", "2026-12-26", "2027-01-01"]
  },
  {
    code: "JSE",
    name: "Johannesburg Stock Exchange",
    mic: "XJSE",
    timeZone: "Africa/Johannesburg",
    currency: "ZAR",
    suffix: "ZA",
    opensAt: hm(9),
    closesAt: hm(17),
    holidays: ["2026-12-16", "2026-12-25", "2026-12-26", "2027-01-01"]
  }
]

/** Every exchange code the spec names; those without a calendar above are known but not yet simulated. */
export const SPEC_EXCHANGE_CODES = ["NSE", "NGX", "JSE", "GSE", "BRVM", "ZSE", "BSE", "LUSE", "EGX", "DSE", "USE", "MSE", "CSE", "SEM"] as const
export type ExchangeCode = (typeof SPEC_EXCHANGE_CODES)[number]

export const findExchange = (code: string): Exchange | undefined => EXCHANGES.find((e) => e.code === code)

interface LocalParts {
  readonly date: string
  readonly weekday: number
  readonly minutes: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterFor = (timeZone: string): Intl.DateTimeFormat => {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      weekday: "short"
    })
    formatters.set(timeZone, f)
  }
  return f
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 }

/**
 * Local parts change once a minute, and every request asks for them per instrument: the last minute's answer per
 * time zone is kept (Intl formatting costs microseconds each time). Pure: same input, same output.
 */
const lastMinute = new Map<string, { readonly minute: number; readonly parts: LocalParts }>()

/** Local calendar date, ISO weekday and minute of day of `epochMillis` in `timeZone`. */
export const localParts = (epochMillis: number, timeZone: string): LocalParts => {
  const minute = Math.floor(epochMillis / 60_000)
  const cached = lastMinute.get(timeZone)
  if (cached !== undefined && cached.minute === minute) return cached.parts
  const parts = formatParts(minute * 60_000, timeZone)
  lastMinute.set(timeZone, { minute, parts })
  return parts
}

const formatParts = (epochMillis: number, timeZone: string): LocalParts => {
  const parts: Record<string, string> = {}
  for (const p of formatterFor(timeZone).formatToParts(epochMillis)) parts[p.type] = p.value
  return {
    date: `${parts.year}-${parts.month}-${parts.day}`,
    weekday: WEEKDAYS[parts.weekday ?? ""] ?? 0,
    minutes: Number(parts.hour) * 60 + Number(parts.minute)
  }
}

export type MarketPhase = "OPEN" | "CLOSED" | "HOLIDAY"

export const phaseAt = (exchange: Exchange, epochMillis: number): MarketPhase => {
  const local = localParts(epochMillis, exchange.timeZone)
  if (local.weekday >= 6) return "CLOSED"
  if (exchange.holidays.includes(local.date)) return "HOLIDAY"
  return local.minutes >= exchange.opensAt && local.minutes < exchange.closesAt ? "OPEN" : "CLOSED"
}

export const isOpen = (exchange: Exchange, epochMillis: number): boolean => phaseAt(exchange, epochMillis) === "OPEN"

/** First instant at or after `from`, on a 15-minute grid, when every exchange in `exchanges` is open (one-week search). */
export const nextInstantAllOpen = (from: number, exchanges: ReadonlyArray<Exchange> = EXCHANGES): number | undefined => {
  const step = 15 * 60_000
  if (exchanges.every((e) => isOpen(e, from))) return from
  const first = Math.ceil(from / step) * step
  for (let t = first; t < from + 8 * 86_400_000; t += step) {
    if (exchanges.every((e) => isOpen(e, t))) return t
  }
  return undefined
}
