/**
 * Invoice arithmetic (domain/billing/invoice.ts): every amount is integer cents until the wire; what is due is the sum
 * of the lines; each started 1,000 requests above a tier's allowance costs 0.50 USD; a month is a DRAFT until it
 * ends, then PAID (nothing due), ISSUED for 14 days, OVERDUE after; a partner has one invoice per month from its
 * creation through now, newest first, each counting only its own month's requests; the sandbox has none.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  DUE_AFTER_MS,
  dueOf,
  INCLUDED_REQUESTS,
  invoiceFor,
  invoiceLines,
  invoiceNamed,
  invoicesOf,
  isInvoiced,
  monthStart,
  OVERAGE_CENTS_PER_1000,
  PLAN_CENTS
} from "../../engine/domain/billing/invoice.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { centsToWire } from "../../engine/domain/money.ts"
import { codeOf } from "./decider-fixtures.ts"

const TIERS = ["starter", "growth", "enterprise"] as const
const tier = fc.constantFrom(...TIERS)
const requests = fc.integer({ min: 0, max: 50_000_000 })
/** A month start between 2020 and 2035. */
const month = fc.integer({ min: 0, max: 15 * 12 }).map((k) => Date.UTC(2020, k, 1))
/** Wire amounts back to cents, exactly (two decimals at most). */
const cents = (wire: number) => Math.round(wire * 100)

describe("an invoice's amounts", () => {
  it("are due as the sum of the lines, in cents, on the wire too", () => {
    fc.assert(
      fc.property(tier, month, requests, fc.integer({ min: 0, max: 400 * 86_400_000 }), (t, start, n, later) => {
        const lines = invoiceLines(t, n)
        expect(lines.every((l) => Number.isInteger(l.amountCents) && Number.isInteger(l.unitCents))).toBe(true)
        expect(lines.every((l) => l.amountCents === l.quantity * l.unitCents)).toBe(true)
        const invoice = invoiceFor(t, start, n, start + later)
        expect(cents(invoice.amountDue)).toBe(dueOf(lines))
        expect(invoice.lines.reduce((sum, l) => sum + cents(l.amount), 0)).toBe(dueOf(lines))
        expect(invoice.amountPaid).toBe(0)
      })
    )
  })

  it("charge the plan, plus 0.50 USD for each started 1,000 requests above the allowance", () => {
    fc.assert(
      fc.property(tier, requests, (t, n) => {
        const over = Math.max(0, n - INCLUDED_REQUESTS[t])
        const expected = PLAN_CENTS[t] + Math.ceil(over / 1000) * OVERAGE_CENTS_PER_1000
        expect(dueOf(invoiceLines(t, n))).toBe(expected)
        expect(invoiceLines(t, n)).toHaveLength(over > 0 ? 3 : 2)
      })
    )
    expect(dueOf(invoiceLines("growth", INCLUDED_REQUESTS.growth + 1))).toBe(499_00 + 50)
    expect(dueOf(invoiceLines("growth", INCLUDED_REQUESTS.growth + 1000))).toBe(499_00 + 50)
    expect(dueOf(invoiceLines("growth", INCLUDED_REQUESTS.growth + 1001))).toBe(499_00 + 100)
  })

  it("name the plan and the requests counted, with what the plan includes", () => {
    const [plan, used] = invoiceFor("growth", Date.UTC(2026, 10, 1), 1234, Date.UTC(2026, 10, 2)).lines
    expect(plan).toEqual({ description: "Growth plan", quantity: 1, unitPrice: centsToWire(PLAN_CENTS.growth), amount: 499 })
    expect(used).toEqual({ description: "API requests (1,000,000 included)", quantity: 1234, unitPrice: 0, amount: 0 })
  })
})

describe("an invoice's status", () => {
  const nov = Date.UTC(2026, 10, 1)
  const dec = Date.UTC(2026, 11, 1)
  it("is a DRAFT until its month ends, then ISSUED for 14 days, then OVERDUE", () => {
    fc.assert(
      fc.property(fc.integer({ min: nov, max: dec + 60 * 86_400_000 }), (now) => {
        const invoice = invoiceFor("growth", nov, 0, now)
        const expected = now < dec ? "DRAFT" : now > dec + DUE_AFTER_MS ? "OVERDUE" : "ISSUED"
        expect(invoice.status).toBe(expected)
        expect(invoice.issuedAt).toBe(now < dec ? null : "2026-12-01T00:00:00.000Z")
        expect(invoice.dueAt).toBe(now < dec ? null : "2026-12-15T00:00:00.000Z")
        expect(invoice.paidAt).toBeNull()
      })
    )
  })

  it("is PAID at issue when nothing is due", () => {
    const free = invoiceFor("starter", nov, INCLUDED_REQUESTS.starter, dec + 90 * 86_400_000)
    expect([free.status, free.paidAt, free.amountDue]).toEqual(["PAID", "2026-12-01T00:00:00.000Z", 0])
    expect(invoiceFor("starter", nov, 0, dec - 1).status).toBe("DRAFT")
  })
})

describe("a partner's invoices", () => {
  const created = Date.UTC(2026, 7, 20, 13)
  const now = Date.UTC(2026, 10, 10, 9)
  const hour = (iso: string, n: number) => ({ hourStart: Date.parse(iso), requests: n })

  it("are one a month from the partner's creation through now, newest first, named by period", () => {
    const invoices = invoicesOf({ tier: "growth", createdAt: created, hours: [] }, now)
    expect(invoices.map((i) => [i.invoiceId, i.period, i.status])).toEqual([
      ["inv_202611", "2026-11", "DRAFT"],
      ["inv_202610", "2026-10", "ISSUED"],
      ["inv_202609", "2026-09", "OVERDUE"],
      ["inv_202608", "2026-08", "OVERDUE"]
    ])
    expect(invoicesOf({ tier: "growth", createdAt: undefined, hours: [] }, now).map((i) => i.period)).toEqual(["2026-11"])
  })

  it("count each month's requests in that month only, the month's first hour in and the next month's out", () => {
    const hours = [hour("2026-10-01T00:00:00Z", 7), hour("2026-10-31T23:00:00Z", 5), hour("2026-11-01T00:00:00Z", 3)]
    const invoices = invoicesOf({ tier: "starter", createdAt: created, hours }, now)
    const requestsOf = (period: string) => invoices.find((i) => i.period === period)?.lines[1]?.quantity
    expect([requestsOf("2026-11"), requestsOf("2026-10"), requestsOf("2026-09")]).toEqual([3, 12, 0])
  })

  it("total every request made since creation across the months", () => {
    const hourAt = fc.integer({ min: monthStart(created), max: now }).map((t) => t - (t % 3_600_000))
    fc.assert(
      fc.property(fc.array(fc.record({ hourStart: hourAt, requests: fc.integer({ min: 0, max: 10_000 }) })), (hours) => {
        const invoices = invoicesOf({ tier: "enterprise", createdAt: created, hours }, now)
        const billed = invoices.reduce((n, i) => n + (i.lines[1]?.quantity ?? 0), 0)
        expect(billed).toBe(hours.reduce((n, h) => n + h.requests, 0))
      })
    )
  })

  it("are found by id, or 404 NOT_FOUND; only production is invoiced", () => {
    const invoices = invoicesOf({ tier: "growth", createdAt: created, hours: [] }, now)
    expect(invoiceNamed(invoices, "inv_202610")).toBe(invoices[1])
    const missing = invoiceNamed(invoices, "inv_202607")
    expect(missing).toBeInstanceOf(ApiFailure)
    expect(codeOf(missing)).toBe("NOT_FOUND")
    expect([isInvoiced("production"), isInvoiced("sandbox")]).toEqual([true, false])
  })
})
