/**
 * Usage's rules (D-064, E-141) as pure functions: what one authenticated answer counts (a request; an error when 4xx or
 * 5xx; rate-limited when 429), how hourly counts add up, the window a `GET /usage` report covers (the last 7 UTC days
 * by default, at most 31 days of hours or 366 days) and the report itself: the counts of each hour or day bucket, the
 * totals, and the orders and webhook deliveries the window saw. The meter (app/billing/usage-meter.ts) keeps the
 * counts in memory, writes them into the store's hourly documents and reads what a report needs.
 * Owns these rules and the UsageReport answer. Does not own the counters, their storage or the rate limit itself.
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000
/** Longest window of one report: 31 days of hours, 366 of days (E-141). */
export const MAX_HOURS = 31 * 24
export const MAX_DAYS = 366

const isoAt = (ms: number) => new Date(ms).toISOString()

export type Granularity = "hour" | "day"

export interface UsageCounts {
  readonly requests: number
  readonly errors: number
  readonly rateLimited: number
}

/** A partition's counts of one UTC hour, as stored. */
export interface UsageHour extends UsageCounts {
  readonly partition: string
  readonly hourStart: number
}

export const ZERO_COUNTS: UsageCounts = { requests: 0, errors: 0, rateLimited: 0 }

export const addCounts = (a: UsageCounts, b: UsageCounts): UsageCounts => ({
  requests: a.requests + b.requests,
  errors: a.errors + b.errors,
  rateLimited: a.rateLimited + b.rateLimited
})

/** The counts one answer adds: every authenticated answer is a request; 4xx and 5xx are errors; 429 is rate-limited. */
export const countsOf = (status: number): UsageCounts => ({ requests: 1, errors: status >= 400 ? 1 : 0, rateLimited: status === 429 ? 1 : 0 })

const stepOf = (granularity: Granularity) => (granularity === "hour" ? HOUR_MS : DAY_MS)

/** Start of the UTC hour or day containing `ms`. */
export const floorTo = (ms: number, granularity: Granularity) => {
  const step = stepOf(granularity)
  return ms - (((ms % step) + step) % step)
}

export interface UsageQuery {
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly granularity?: Granularity | undefined
}

export interface UsageWindow {
  readonly from: number
  readonly to: number
  readonly granularity: Granularity
}

/**
 * The window of a report: default the last 7 UTC days through the end of today; `from` after `to`, or more buckets
 * than MAX_HOURS / MAX_DAYS, is 400 VALIDATION_ERROR.
 */
export const usageWindow = (query: UsageQuery, now: number): UsageWindow | ApiFailure => {
  const granularity = query.granularity ?? "day"
  const to = query.to ?? floorTo(now, "day") + DAY_MS - 1
  const from = query.from ?? floorTo(to, "day") - 6 * DAY_MS
  if (from > to) return fail("VALIDATION_ERROR", "from must not be after to", { param: "from" })
  const buckets = Math.floor((floorTo(to, granularity) - floorTo(from, granularity)) / stepOf(granularity)) + 1
  const max = granularity === "hour" ? MAX_HOURS : MAX_DAYS
  if (buckets > max) return fail("VALIDATION_ERROR", `at most ${max} ${granularity === "hour" ? "hours" : "days"} per report`, { param: "to" })
  return { from, to, granularity }
}

/** The buckets of a window, each with the counts of the hours it holds, and the window's totals. */
export const bucketsOf = (window: UsageWindow, hours: ReadonlyArray<UsageHour>) => {
  const buckets = new Map<number, UsageCounts>()
  for (let start = floorTo(window.from, window.granularity); start <= window.to; start += stepOf(window.granularity)) buckets.set(start, ZERO_COUNTS)
  let totals = ZERO_COUNTS
  for (const h of hours) {
    const start = floorTo(h.hourStart, window.granularity)
    const bucket = buckets.get(start)
    if (bucket === undefined) continue
    buckets.set(start, addCounts(bucket, h))
    totals = addCounts(totals, h)
  }
  return { buckets, totals }
}

/** What a report reads: the partition's hours from the window's first hour, and the times of what it did. */
export interface UsageState {
  readonly environment: Schemas["UsageReport"]["environment"]
  readonly tier: Schemas["UsageReport"]["tier"]
  readonly rateLimitPerMinute: number
  readonly hours: ReadonlyArray<UsageHour>
  /** When each order was accepted and each webhook delivery made (all of them: the rule picks the window's). */
  readonly orderTimes: ReadonlyArray<number>
  readonly deliveryTimes: ReadonlyArray<number>
}

const within = (times: ReadonlyArray<number>, window: UsageWindow) => times.filter((t) => t >= window.from && t <= window.to).length

/** The `GET /usage` answer of an accepted window. */
export const usageReport = (window: UsageWindow, state: UsageState): Schemas["UsageReport"] => {
  const { buckets, totals } = bucketsOf(
    window,
    state.hours.filter((h) => h.hourStart <= window.to)
  )
  return {
    from: isoAt(window.from),
    to: isoAt(window.to),
    granularity: window.granularity,
    environment: state.environment,
    tier: state.tier,
    rateLimitPerMinute: state.rateLimitPerMinute,
    totals: { ...totals, orders: within(state.orderTimes, window), webhookDeliveries: within(state.deliveryTimes, window) },
    series: [...buckets].map(([start, c]) => ({ periodStart: isoAt(start), requests: c.requests, errors: c.errors, rateLimited: c.rateLimited }))
  }
}
