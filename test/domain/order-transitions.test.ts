/**
 * Property: arbitrary desk command sequences (fill, reject, with valid and invalid quantities) on the order state
 * machine (engine/domain/order.ts) never make an illegal transition, terminal states are final, and every accepted
 * transition bumps the version by exactly one while a refused command leaves the order untouched.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { applyFill, applyReject, type CanonicalStatus, type OrderRecord, placeMarket, type Side } from "../../engine/domain/order.ts"

const T0 = Date.UTC(2026, 10, 23, 8, 0, 0)

/** The desk-driven edges of the lifecycle (spec Order lifecycle); anything else is illegal. */
const LEGAL: ReadonlySet<string> = new Set([
  "PENDING->PARTIALLY_FILLED",
  "PENDING->FILLED",
  "PENDING->REJECTED",
  "PARTIALLY_FILLED->PARTIALLY_FILLED",
  "PARTIALLY_FILLED->FILLED",
  "PARTIALLY_FILLED->REJECTED"
])
const TERMINAL: ReadonlySet<CanonicalStatus> = new Set(["FILLED", "REJECTED", "CANCELLED", "EXPIRED"])

type Command = { readonly kind: "fill"; readonly share: number; readonly raw: number } | { readonly kind: "reject" }

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant("fill" as const), share: fc.double({ min: 0, max: 1, noNaN: true }), raw: fc.integer({ min: -5, max: 10_000 }) }),
  fc.constant({ kind: "reject" as const })
)

const place = (side: Side, quantity: number): OrderRecord =>
  placeMarket({
    orderId: "ord_1",
    partition: "p1",
    account: "master",
    externalId: null,
    instrument: { symbol: "SCOM.KE", name: "Safaricom PLC", exchange: "NSE" },
    side,
    quantity,
    price: 180_000,
    rate: 129_250_000,
    rateAsOf: T0 - 60_000,
    fxSource: "sokoni-sim-reference",
    localCurrency: "KES",
    markupBps: 50,
    quote: { quoteId: "q_1", expiresAt: T0 + 30_000 },
    clientOrderId: null,
    timeInForce: null,
    now: T0
  })

describe("order state machine transitions", () => {
  it("property: only legal edges, terminal states final, version +1 per accepted command, refusals change nothing", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Side>("BUY", "SELL"),
        fc.integer({ min: 1, max: 1_000 }),
        fc.boolean(),
        fc.array(command, { maxLength: 12 }),
        (side, quantity, useRaw, commands) => {
          let order = place(side, quantity)
          expect(order.status).toBe("PENDING")
          let now = T0
          commands.forEach((c, i) => {
            now += 1_000
            const before = order
            const remaining = before.quantity - before.fills.reduce((n, f) => n + f.quantity, 0)
            const result =
              c.kind === "reject"
                ? applyReject(before, "LIQUIDITY_UNAVAILABLE", "property", now)
                : applyFill(before, { reportId: `exr_${i}`, quantity: useRaw ? c.raw : Math.max(1, Math.ceil(c.share * remaining)), price: 170_000, now })
            if (result instanceof ApiFailure) {
              // a terminal order refuses everything with CONFLICT; a live one only refuses bad quantities
              if (TERMINAL.has(before.status)) expect(result.code).toBe("CONFLICT")
              else expect(result.code).toBe("VALIDATION_ERROR")
              expect(order).toBe(before)
              return
            }
            expect(TERMINAL.has(before.status)).toBe(false)
            expect(LEGAL.has(`${before.status}->${result.order.status}`)).toBe(true)
            expect(result.order.version).toBe(before.version + 1)
            order = result.order
            const filled = order.fills.reduce((n, f) => n + f.quantity, 0)
            expect(filled).toBeLessThanOrEqual(order.quantity)
            if (order.status === "FILLED") expect(filled).toBe(order.quantity)
            if (TERMINAL.has(order.status)) {
              expect(order.escrow).toBe(0)
              expect(order.settledAt).toBe(now)
              expect(order.settlementStatus).not.toBe("PENDING")
            } else expect(order.settlementStatus).toBe("PENDING")
          })
        }
      ),
      { numRuns: 400 }
    )
  })
})
