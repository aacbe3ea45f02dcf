/**
 * InvoiceService: monthly invoices (`GET /invoices`, `GET /invoices/{invoiceId}`; D-063, D-263), derived on each read,
 * deterministically, from the partner's tier and its production usage; nothing is stored. One invoice per UTC
 * calendar month from the month the partner was created through the current one: the current month is a DRAFT; a
 * past month is ISSUED at 00:00 UTC on the 1st of the next month, due 14 days later, OVERDUE after that (payments
 * are not simulated), PAID at issue when nothing is due. The sandbox has none (contract).
 * Owns the price list and the derivation. Does not own the usage counts (UsageMeter) or the tier (partners).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { centsToWire } from "../domain/money.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError } from "../store/port.ts"
import { checkLimit } from "./cursor.ts"
import { Partners } from "./docs.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import type { Principal, Tier } from "./principal.ts"
import { UsageHours, UsageMeter } from "./usage.ts"

/** Monthly plan price per tier, in cents (D-263; the contract's example bills growth at 499). */
export const PLAN_CENTS: Record<Tier, number> = { starter: 0, growth: 499_00, enterprise: 1_999_00 }
/** Production requests a month includes per tier; each started 1,000 above costs OVERAGE_CENTS_PER_1000. */
export const INCLUDED_REQUESTS: Record<Tier, number> = { starter: 100_000, growth: 1_000_000, enterprise: 10_000_000 }
export const OVERAGE_CENTS_PER_1000 = 50
export const DUE_AFTER_MS = 14 * 86_400_000

const TIER_NAME: Record<Tier, string> = { starter: "Starter", growth: "Growth", enterprise: "Enterprise" }

/** UTC month start of `ms`, and the start of the month `k` months later. */
const monthStart = (ms: number, k = 0) => {
  const d = new Date(ms)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + k, 1)
}
const periodOf = (start: number) => isoAt(start).slice(0, 7)

/** One month's invoice from its requests (pure). */
export const invoiceFor = (tier: Tier, start: number, requests: number, now: number): Schemas["Invoice"] => {
  const end = monthStart(start, 1)
  const period = periodOf(start)
  const included = INCLUDED_REQUESTS[tier]
  const overThousands = Math.ceil(Math.max(0, requests - included) / 1000)
  const lines: Array<Schemas["InvoiceLine"]> = [
    { description: `${TIER_NAME[tier]} plan`, quantity: 1, unitPrice: centsToWire(PLAN_CENTS[tier]), amount: centsToWire(PLAN_CENTS[tier]) },
    { description: `API requests (${included.toLocaleString("en-US")} included)`, quantity: requests, unitPrice: 0, amount: 0 }
  ]
  if (overThousands > 0) {
    lines.push({
      description: "API requests above the plan, per 1,000",
      quantity: overThousands,
      unitPrice: centsToWire(OVERAGE_CENTS_PER_1000),
      amount: centsToWire(overThousands * OVERAGE_CENTS_PER_1000)
    })
  }
  const dueCents = PLAN_CENTS[tier] + overThousands * OVERAGE_CENTS_PER_1000
  const issued = now >= end
  const dueAt = end + DUE_AFTER_MS
  const status: Schemas["Invoice"]["status"] = !issued ? "DRAFT" : dueCents === 0 ? "PAID" : now > dueAt ? "OVERDUE" : "ISSUED"
  return {
    invoiceId: `inv_${period.replace("-", "")}`,
    period,
    status,
    currency: "USD",
    amountDue: centsToWire(dueCents),
    amountPaid: 0,
    lines,
    issuedAt: issued ? isoAt(end) : null,
    dueAt: issued ? isoAt(dueAt) : null,
    paidAt: status === "PAID" ? isoAt(end) : null,
    pdfUrl: null
  }
}

export class InvoiceService extends Context.Service<
  InvoiceService,
  {
    readonly list: (
      principal: Principal,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) => Effect.Effect<Schemas["InvoiceList"], ApiFailure | StoreError>
    readonly get: (principal: Principal, invoiceId: string) => Effect.Effect<Schemas["Invoice"], ApiFailure | StoreError>
  }
>()("sokoni/InvoiceService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const usage = yield* UsageMeter

    /** Every invoice of the partner, newest period first. */
    const all = Effect.fnUntraced(function* (principal: Principal) {
      if (principal.environment === "sandbox") return []
      const now = yield* clock.now
      // This process's counts first, so the month's requests are exact for a single engine.
      yield* usage.flushNow
      const { partner, hours } = yield* store.read((tx) =>
        Effect.all({
          partner: Partners.get(tx, principal.partnerId),
          hours: UsageHours.list(tx, principal.partition, { limit: 1_000_000, order: "asc" })
        })
      )
      const createdAt = Option.match(partner, { onNone: () => now, onSome: (p) => p.createdAt })
      const invoices: Array<Schemas["Invoice"]> = []
      for (let start = monthStart(createdAt); start <= now; start = monthStart(start, 1)) {
        const end = monthStart(start, 1)
        const requests = hours.filter((h) => h.hourStart >= start && h.hourStart < end).reduce((n, h) => n + h.requests, 0)
        invoices.push(invoiceFor(principal.tier, start, requests, now))
      }
      return invoices.reverse()
    })

    const list = Effect.fn("InvoiceService.list")(function* (
      principal: Principal,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const invoices = yield* all(principal)
      const scope = scopeOf("invoices", principal.partition, [])
      const page = yield* liftFailure(pageOf(invoices, (i) => i.period, "desc", { scope, cursor: query.cursor, limit }))
      const answer: Schemas["InvoiceList"] = { invoices: [...page.items], ...pageMeta(page) }
      return answer
    })

    const get = Effect.fn("InvoiceService.get")(function* (principal: Principal, invoiceId: string) {
      const found = (yield* all(principal)).find((i) => i.invoiceId === invoiceId)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `invoice ${invoiceId} was not found`))
      return found
    })

    return InvoiceService.of({ list, get })
  })

  static readonly layer = Layer.effect(InvoiceService, InvoiceService.make)
}
