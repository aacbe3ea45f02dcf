/**
 * Usage counting and reports (domain/billing/usage.ts): every answer is a request, 4xx and 5xx errors, 429 also
 * rate-limited; a report's window defaults to the last 7 UTC days through the end of today and refuses a reversed or
 * too long one; its buckets cover the window without a gap, each hour counted in the bucket that holds it, the
 * totals the sum of the series; orders and deliveries are counted inside the window only.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  addCounts,
  countsOf,
  DAY_MS,
  floorTo,
  HOUR_MS,
  MAX_DAYS,
  MAX_HOURS,
  type UsageHour,
  type UsageWindow,
  usageReport,
  usageWindow,
  ZERO_COUNTS
} from "../../engine/domain/billing/usage.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { accepted, codeOf } from "./decider-fixtures.ts"

const NOW = Date.parse("2026-11-23T10:17:00.000Z")
const state = (hours: ReadonlyArray<UsageHour>, orderTimes: ReadonlyArray<number> = [], deliveryTimes: ReadonlyArray<number> = []) => ({
  environment: "sandbox" as const,
  tier: "growth" as const,
  rateLimitPerMinute: 300,
  hours,
  orderTimes,
  deliveryTimes
})
const paramOf = (value: unknown) => (value instanceof ApiFailure ? value.extras?.param : undefined)

describe("what an answer counts", () => {
  it("is one request; an error from 400 up; rate-limited only at 429", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), (status) => {
        expect(countsOf(status)).toEqual({ requests: 1, errors: status >= 400 ? 1 : 0, rateLimited: status === 429 ? 1 : 0 })
      })
    )
  })

  it("adds up field by field, from zero", () => {
    const statuses = fc.array(fc.constantFrom(200, 201, 400, 404, 429, 500))
    fc.assert(
      fc.property(statuses, (all) => {
        const sum = all.map(countsOf).reduce(addCounts, ZERO_COUNTS)
        expect(sum).toEqual({ requests: all.length, errors: all.filter((s) => s >= 400).length, rateLimited: all.filter((s) => s === 429).length })
      })
    )
  })
})

describe("a report's window", () => {
  it("defaults to the last 7 UTC days through the end of today, by day", () => {
    expect(accepted(usageWindow({}, NOW))).toEqual({
      from: Date.parse("2026-11-17T00:00:00.000Z"),
      to: Date.parse("2026-11-23T23:59:59.999Z"),
      granularity: "day"
    })
  })

  it("refuses from after to, and more than 31 days of hours or 366 days", () => {
    const reversed = usageWindow({ from: NOW, to: NOW - 1 }, NOW)
    expect([codeOf(reversed), paramOf(reversed)]).toEqual(["VALIDATION_ERROR", "from"])
    const start = Date.parse("2026-01-01T00:00:00.000Z")
    expect(codeOf(usageWindow({ from: start, to: start + MAX_HOURS * HOUR_MS - 1, granularity: "hour" }, NOW))).toBe("accepted")
    const hours = usageWindow({ from: start, to: start + MAX_HOURS * HOUR_MS, granularity: "hour" }, NOW)
    expect([codeOf(hours), paramOf(hours)]).toEqual(["VALIDATION_ERROR", "to"])
    expect(codeOf(usageWindow({ from: start, to: start + MAX_DAYS * DAY_MS - 1 }, NOW))).toBe("accepted")
    expect(codeOf(usageWindow({ from: start, to: start + MAX_DAYS * DAY_MS }, NOW))).toBe("VALIDATION_ERROR")
  })
})

describe("a report", () => {
  const from = Date.parse("2026-11-20T05:30:00.000Z")
  const to = Date.parse("2026-11-22T17:59:59.999Z")
  const hourIn = fc.integer({ min: floorTo(from, "hour") - 2 * DAY_MS, max: to + 2 * DAY_MS }).map((t) => floorTo(t, "hour"))
  const hours = fc.array(
    fc.record({
      partition: fc.constant("ptn_1:sandbox"),
      hourStart: hourIn,
      requests: fc.integer({ min: 0, max: 1000 }),
      errors: fc.integer({ min: 0, max: 1000 }),
      rateLimited: fc.integer({ min: 0, max: 1000 })
    })
  )

  it("has one bucket per hour or day of the window, without a gap, and totals equal to its series' sum", () => {
    fc.assert(
      fc.property(fc.constantFrom("hour" as const, "day" as const), hours, (granularity, hs) => {
        const window: UsageWindow = { from, to, granularity }
        const report = usageReport(window, state(hs))
        const starts = report.series.map((s) => Date.parse(s.periodStart))
        const step = granularity === "hour" ? HOUR_MS : DAY_MS
        expect(starts[0]).toBe(floorTo(from, granularity))
        expect(starts.every((s, i) => i === 0 || s - (starts[i - 1] ?? 0) === step)).toBe(true)
        expect(starts.at(-1)).toBe(floorTo(to, granularity))
        const sum = report.series.reduce(addCounts, ZERO_COUNTS)
        expect({ requests: report.totals.requests, errors: report.totals.errors, rateLimited: report.totals.rateLimited }).toEqual(sum)
      })
    )
  })

  it("counts an hour in the bucket that holds it, and none after the window's end", () => {
    const h = (iso: string, requests: number): UsageHour => ({ partition: "p", hourStart: Date.parse(iso), requests, errors: 0, rateLimited: 0 })
    const window: UsageWindow = { from, to, granularity: "day" }
    const report = usageReport(window, state([h("2026-11-20T00:00:00Z", 1), h("2026-11-21T23:00:00Z", 2), h("2026-11-22T18:00:00Z", 4)]))
    expect(report.series.map((s) => [s.periodStart.slice(0, 10), s.requests])).toEqual([
      ["2026-11-20", 1],
      ["2026-11-21", 2],
      ["2026-11-22", 0]
    ])
    expect(report.totals.requests).toBe(3)
  })

  it("counts the orders and deliveries made inside the window, its ends included", () => {
    const window: UsageWindow = { from, to, granularity: "day" }
    const report = usageReport(window, state([], [from - 1, from, to, to + 1], [from + 5, to + 5]))
    expect([report.totals.orders, report.totals.webhookDeliveries]).toEqual([2, 1])
    expect(report).toMatchObject({
      from: "2026-11-20T05:30:00.000Z",
      to: "2026-11-22T17:59:59.999Z",
      environment: "sandbox",
      tier: "growth",
      rateLimitPerMinute: 300
    })
  })
})
