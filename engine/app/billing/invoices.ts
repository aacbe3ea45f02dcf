/**
 * InvoiceService: monthly invoices (`GET /invoices`, `GET /invoices/{invoiceId}`; D-063, D-263), as a dispatcher. An
 * invoice is derived on each read, deterministically, from the partner's tier, its creation time and its production
 * usage; nothing is stored. The rules (the price list, the lines in cents, the status, one invoice per month) are in
 * domain/billing/invoice.ts.
 * Owns the reads and the paging. Does not own the usage counts (UsageMeter) or the tier (partners).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { invoiceNamed, invoicesOf, isInvoiced } from "../../domain/billing/invoice.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Store, type StoreError } from "../../store/port.ts"
import { checkLimit } from "../cursor.ts"
import { Partners } from "../docs.ts"
import { pageMeta, pageOf, scopeOf } from "../pages.ts"
import type { Principal } from "../principal.ts"
import { UsageHours, UsageMeter } from "./usage-meter.ts"

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
      if (!isInvoiced(principal.environment)) return []
      const now = yield* clock.nowHere()
      // This process's counts first, so the month's requests are exact for a single engine.
      yield* usage.flushNow
      const { partner, hours } = yield* store.read((tx) =>
        Effect.all({
          partner: Partners.get(tx, principal.partnerId),
          hours: UsageHours.list(tx, principal.partition, { limit: 1_000_000, order: "asc" })
        })
      )
      const createdAt = Option.match(partner, { onNone: () => undefined, onSome: (p) => p.createdAt })
      return invoicesOf({ tier: principal.tier, createdAt, hours }, now)
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
      return yield* liftFailure(invoiceNamed(yield* all(principal), invoiceId))
    })

    return InvoiceService.of({ list, get })
  })

  static readonly layer = Layer.effect(InvoiceService, InvoiceService.make)
}
