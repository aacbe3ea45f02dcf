/**
 * Property: arbitrary desk command sequences (fill, reject, with valid and invalid quantities) on the order state
 * machine (engine/domain/order.ts) never make an illegal transition, terminal states are final, and every accepted
 * transition bumps the version by exactly one while a refused command leaves the order untouched. And for resting
 * orders (LIMIT, STOP, STOP_LIMIT; DAY, GTC, GTD): triggers, fills within the limit, rejects, cancels, replaces and
 * expiries keep the money conserved (wallet + escrow + fees + market), shares reserved for exactly the remainder,
 * and a terminal order holds nothing.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { type CanonicalStatus, type OrderRecord, placeMarket, placeResting, type RestingType, type Side } from "../../engine/domain/order.ts"
import { applyCancel, applyExpire, applyFill, applyReject, applyRejectAtTrigger, applyReplace, applyTrigger } from "../../engine/domain/order-transitions.ts"

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

/** Every edge of the resting lifecycle (spec "Order lifecycle", D-004, D-035, D-282): anything else is illegal. */
const LEGAL_RESTING: ReadonlySet<string> = new Set([
  ...LEGAL,
  "WORKING->WORKING",
  "WORKING->PENDING",
  "WORKING->CANCELLED",
  "WORKING->EXPIRED",
  "WORKING->REJECTED",
  "PENDING->CANCELLED",
  "PENDING->EXPIRED",
  "PARTIALLY_FILLED->EXPIRED"
])

type RestingCommand =
  | { readonly kind: "trigger"; readonly price: number }
  | { readonly kind: "fill"; readonly share: number; readonly price: number }
  | { readonly kind: "reject" }
  | { readonly kind: "rejectAtTrigger" }
  | { readonly kind: "cancel" }
  | { readonly kind: "expire"; readonly early: boolean }
  | { readonly kind: "replace"; readonly quantity: number | undefined; readonly price: number | undefined }

const price = fc.integer({ min: 150_000, max: 210_000 })
const restingCommand: fc.Arbitrary<RestingCommand> = fc.oneof(
  fc.record({ kind: fc.constant("trigger" as const), price }),
  fc.record({ kind: fc.constant("fill" as const), share: fc.double({ min: 0, max: 1, noNaN: true }), price }),
  fc.constant({ kind: "reject" as const }),
  fc.constant({ kind: "rejectAtTrigger" as const }),
  fc.constant({ kind: "cancel" as const }),
  fc.record({ kind: fc.constant("expire" as const), early: fc.boolean() }),
  fc.record({
    kind: fc.constant("replace" as const),
    quantity: fc.option(fc.integer({ min: 1, max: 1_000 }), { nil: undefined }),
    price: fc.option(price, { nil: undefined })
  })
)

describe("resting order state machine", () => {
  it("property: legal edges only, terminal states final, money conserved through escrow, triggers, fills, replaces, refunds and expiry", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Side>("BUY", "SELL"),
        fc.constantFrom<RestingType>("LIMIT", "STOP", "STOP_LIMIT"),
        fc.integer({ min: 1, max: 1_000 }),
        price,
        price,
        fc.constantFrom<"DAY" | "GTC" | "GTD">("DAY", "GTC", "GTD"),
        fc.array(restingCommand, { maxLength: 14 }),
        (side, orderType, quantity, limit, stop, timeInForce, commands) => {
          const deadline = timeInForce === "GTC" ? null : T0 + 4 * 3_600_000
          let order = placeResting({
            orderId: "ord_r",
            partition: "p1",
            account: "master",
            externalId: null,
            instrument: { symbol: "SCOM.KE", name: "Safaricom PLC", exchange: "NSE" },
            orderType,
            side,
            quantity,
            limitPrice: orderType === "STOP" ? null : limit,
            stopPrice: orderType === "LIMIT" ? null : stop,
            timeInForce,
            expiresAt: timeInForce === "GTD" ? deadline : null,
            deadline,
            rate: 129_250_000,
            rateAsOf: T0,
            fxSource: "sokoni-sim-reference",
            localCurrency: "KES",
            markupBps: 50,
            clientOrderId: null,
            now: T0
          })
          expect(order.status).toBe("WORKING")
          // the books of this one order: what its wallet gave (placement took the escrow), fees, market, reserved shares
          let wallet = 0 - order.escrow
          let fees = 0
          let market = 0
          let shares = 0
          let reserved = side === "SELL" ? quantity : 0
          let now = T0
          commands.forEach((c, i) => {
            now += 60_000
            const before = order
            let result: ReturnType<typeof applyFill>
            switch (c.kind) {
              case "trigger":
                result = applyTrigger(before, c.price, now)
                break
              case "fill": {
                const remaining = before.quantity - before.fills.reduce((n, f) => n + f.quantity, 0)
                result = applyFill(before, { reportId: `exr_${i}`, quantity: Math.max(1, Math.ceil(c.share * remaining)), price: c.price, now })
                break
              }
              case "reject":
                result = applyReject(before, "DESK_DECLINED", "property", now)
                break
              case "rejectAtTrigger":
                result = applyRejectAtTrigger(before, "INSUFFICIENT_FUNDS", "property", now)
                break
              case "cancel":
                result = applyCancel(before, "PARTNER_REQUEST", now)
                break
              case "expire":
                result = applyExpire(before, c.early ? now : Math.max(now, deadline ?? now))
                break
              case "replace":
                result = applyReplace(before, { quantity: c.quantity, ...(orderType === "STOP" ? { stopPrice: c.price } : { limitPrice: c.price }) })
                break
            }
            if (result instanceof ApiFailure) {
              // refused: the order is untouched; a terminal order refuses everything
              expect(order).toBe(before)
              if (TERMINAL.has(before.status)) expect(result.code).toBe("CONFLICT")
              return
            }
            const next = result.order
            expect(TERMINAL.has(before.status), `${c.kind} on ${before.status}`).toBe(false)
            expect(LEGAL_RESTING.has(`${before.status}->${next.status}`), `${before.status}->${next.status} by ${c.kind}`).toBe(true)
            expect(next.version).toBe(before.version + 1)
            if (c.kind === "expire") {
              expect(next.status).toBe("EXPIRED")
              expect(next.orderLifecycle).toBe("EXPIRED")
              expect(next.rejectionCode).toBeNull()
              expect(next.cancelReason).toBe(timeInForce === "GTD" ? "GTD_EXPIRED" : "DAY_EXPIRED")
            }
            if (c.kind === "fill" && next.limitPrice !== null) {
              // no fill worse than the limit
              expect(side === "BUY" ? c.price <= next.limitPrice : c.price >= next.limitPrice).toBe(true)
            }
            // money is conserved: what leaves the wallet is in escrow, fees or the market
            const m = result.movements
            wallet += m.wallet
            fees += m.feesCollected
            market -= m.marketNet
            shares += m.shares
            reserved += m.sharesReserved
            expect(wallet + next.escrow + fees + market).toBe(0)
            expect(next.escrow).toBeGreaterThanOrEqual(0)
            expect(fees).toBeGreaterThanOrEqual(0)
            const filled = next.fills.reduce((n, f) => n + f.quantity, 0)
            expect(shares).toBe(side === "BUY" ? filled : 0 - filled)
            order = next
            if (TERMINAL.has(order.status)) {
              expect(order.escrow).toBe(0)
              expect(order.settlementStatus).not.toBe("PENDING")
              expect(reserved).toBe(0)
              // a BUY paid exactly its fills (gross + fee); a SELL received gross - fee
              const paid = order.fills.reduce((n, f) => n + f.gross + f.fee, 0)
              const received = order.fills.reduce((n, f) => n + f.gross - f.fee, 0)
              expect(wallet).toBe(side === "BUY" ? 0 - paid : received)
            } else {
              expect(reserved).toBe(side === "SELL" ? order.quantity - filled : 0)
              if (side === "SELL") expect(order.escrow).toBe(0)
            }
          })
        }
      ),
      { numRuns: 600 }
    )
  })
})
