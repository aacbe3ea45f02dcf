/**
 * Invoices' rules (D-063, D-263) as pure functions: the price list, a month's lines and amount due in integer cents
 * (the plan, the requests, each started 1,000 above the plan's allowance), its status (the current month a DRAFT; a
 * past month ISSUED at 00:00 UTC on the 1st of the next, due 14 days later, OVERDUE after that since payments are not
 * simulated, PAID at issue when nothing is due), and the invoices of a partner: one per UTC calendar month from the
 * month it was created through the current one, newest first; the sandbox has none (contract). The dispatcher
 * (app/billing/invoices.ts) reads the partner's creation time and production usage; nothing is stored.
 * Owns these rules and the Invoice answer. Does not own the usage counts nor the tier.
 */
import type { Schemas } from "../../contract/wire.ts"
import type { Environment, Tier } from "../../app/principal.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire } from "../money.ts"

/** Monthly plan price per tier, in cents (D-263; the contract's example bills growth at 499). */
export const PLAN_CENTS: Record<Tier, Cents> = { starter: 0, growth: 499_00, enterprise: 1_999_00 }
/** Production requests a month includes per tier; each started 1,000 above costs OVERAGE_CENTS_PER_1000. */
export const INCLUDED_REQUESTS: Record<Tier, number> = { starter: 100_000, growth: 1_000_000, enterprise: 10_000_000 }
export const OVERAGE_CENTS_PER_1000: Cents = 50
export const DUE_AFTER_MS = 14 * 86_400_000

const TIER_NAME: Record<Tier, string> = { starter: "Starter", growth: "Growth", enterprise: "Enterprise" }
const isoAt = (ms: number) => new Date(ms).toISOString()

/** UTC month start of `ms`, and the start of the month `k` months later. */
export const monthStart = (ms: number, k = 0) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 1)
}
const periodOf = (start: number) => isoAt(start).slice(0, 7)

/** One line of an invoice, priced in cents. */
export interface InvoiceLineCents {
  readonly description: string
  readonly quantity: number
  readonly unitCents: Cents
  readonly amountCents: Cents
}

/** A month's lines: the plan, the requests (included, at no charge), and the started thousands above the allowance. */
export const invoiceLines = (tier: Tier, requests: number): ReadonlyArray<InvoiceLineCents> => {
  const included = INCLUDED_REQUESTS[tier]
  const overThousands = Math.ceil(Math.max(0, requests - included) / 1000)
  const lines: Array<InvoiceLineCents> = [
    { description: `${TIER_NAME[tier]} plan`, quantity: 1, unitCents: PLAN_CENTS[tier], amountCents: PLAN_CENTS[tier] },
    { description: `API requests (${included.toLocaleString("en-US")} included)`, quantity: requests, unitCents: 0, amountCents: 0 }
  ]
  if (overThousands > 0) {
    lines.push({
      description: "API requests above the plan, per 1,000",
      quantity: overThousands,
      unitCents: OVERAGE_CENTS_PER_1000,
      amountCents: overThousands * OVERAGE_CENTS_PER_1000
    })
  }
  return lines
}

/** What is due is the sum of the lines, in cents. */
export const dueOf = (lines: ReadonlyArray<InvoiceLineCents>): Cents => lines.reduce((sum, line) => sum + line.amountCents, 0)

/** Where a month's invoice stands at `now`. */
export const invoiceStatus = (start: number, dueCents: Cents, now: number): Schemas["Invoice"]["status"] => {
  const end = monthStart(start, 1)
  if (now < end) return "DRAFT"
  if (dueCents === 0) return "PAID"
  return now > end + DUE_AFTER_MS ? "OVERDUE" : "ISSUED"
}

/** One month's invoice from its requests. */
export const invoiceFor = (tier: Tier, start: number, requests: number, now: number): Schemas["Invoice"] => {
  const end = monthStart(start, 1)
  const period = periodOf(start)
  const lines = invoiceLines(tier, requests)
  const dueCents = dueOf(lines)
  const status = invoiceStatus(start, dueCents, now)
  const issued = status !== "DRAFT"
  return {
    invoiceId: `inv_${period.replace("-", "")}`,
    period,
    status,
    currency: "USD",
    amountDue: centsToWire(dueCents),
    amountPaid: 0,
    lines: lines.map((l) => ({ description: l.description, quantity: l.quantity, unitPrice: centsToWire(l.unitCents), amount: centsToWire(l.amountCents) })),
    issuedAt: issued ? isoAt(end) : null,
    dueAt: issued ? isoAt(end + DUE_AFTER_MS) : null,
    paidAt: status === "PAID" ? isoAt(end) : null,
    pdfUrl: null
  }
}

/** Only production is billed: the sandbox has no invoices. */
export const isInvoiced = (environment: Environment) => environment !== "sandbox"

/** What the invoices are derived from: the partner's tier and creation time, and its production hours' requests. */
export interface InvoiceState {
  readonly tier: Tier
  /** When the partner was created; undefined when it is not found (its invoices start with the current month). */
  readonly createdAt: number | undefined
  readonly hours: ReadonlyArray<{ readonly hourStart: number; readonly requests: number }>
}

/** Every invoice of the partner, newest period first. */
export const invoicesOf = (state: InvoiceState, now: number): ReadonlyArray<Schemas["Invoice"]> => {
  const invoices: Array<Schemas["Invoice"]> = []
  for (let start = monthStart(state.createdAt ?? now); start <= now; start = monthStart(start, 1)) {
    const end = monthStart(start, 1)
    const requests = state.hours.filter((h) => h.hourStart >= start && h.hourStart < end).reduce((n, h) => n + h.requests, 0)
    invoices.push(invoiceFor(state.tier, start, requests, now))
  }
  return invoices.reverse()
}

/** The invoice `invoiceId` among the partner's, or 404 NOT_FOUND. */
export const invoiceNamed = (invoices: ReadonlyArray<Schemas["Invoice"]>, invoiceId: string): Schemas["Invoice"] | ApiFailure =>
  invoices.find((i) => i.invoiceId === invoiceId) ?? fail("NOT_FOUND", `invoice ${invoiceId} was not found`)
