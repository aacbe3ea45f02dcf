/**
 * The desk's decisions (domain/trading/decide-desk.ts): fills never exceed what the order has left and never cost a
 * BUY more than its escrow, the last one settles and announces; a rejection gives the unfilled part back; a
 * settlement failure unwinds only what custody can still take back; a desk step becomes a fill or a rejection now.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { orderPostings } from "../../engine/domain/ledger.ts"
import { type OrderRecord, placeMarket } from "../../engine/domain/order.ts"
import { remainingQuantity } from "../../engine/domain/order-transitions.ts"
import { decideFill, decideReject, deskStepAction, fillPrice } from "../../engine/domain/trading/decide-desk.ts"
import { accepted, codeOf, OPEN_AT, PARTITION, SCOM } from "./decider-fixtures.ts"

const pending = (side: "BUY" | "SELL", quantity: number, price = 180_000): OrderRecord =>
  placeMarket({
    orderId: "ord_1",
    partition: PARTITION,
    account: "master",
    externalId: null,
    instrument: SCOM,
    side,
    quantity,
    price,
    rate: 129_250_000,
    rateAsOf: OPEN_AT,
    fxSource: "sokoni-sim-reference",
    localCurrency: "KES",
    markupBps: 25,
    quote: { quoteId: "qt_1", expiresAt: OPEN_AT + 60_000 },
    clientOrderId: null,
    timeInForce: null,
    now: OPEN_AT
  })

let seq = 0
const ids = () => ({ reportId: `exr_${++seq}`, seq })

describe("fills", () => {
  it("a fill of everything settles the order and announces order.filled and trade.settled", () => {
    const order = pending("BUY", 10)
    const plan = accepted(decideFill(order, { price: order.priceAtOrder }, OPEN_AT, ids()))
    expect(plan.order?.status).toBe("FILLED")
    expect(plan.events.map((e) => e.name)).toEqual(["order.filled", "trade.settled"])
    expect(plan.ledger?.kind).toBe("ORDER_FILLED")
  })

  it("a partial fill announces nothing and leaves the rest awaiting the desk", () => {
    const plan = accepted(decideFill(pending("SELL", 10), { quantity: 4, price: 180_000 }, OPEN_AT, ids()))
    expect(plan.order?.status).toBe("PARTIALLY_FILLED")
    expect(plan.events).toEqual([])
  })

  it("refuses more than remains, and a price with more than 4 decimals", () => {
    expect(codeOf(decideFill(pending("BUY", 10), { quantity: 11, price: 180_000 }, OPEN_AT, ids()))).toBe("VALIDATION_ERROR")
    expect(codeOf(fillPrice(pending("BUY", 10), { price: 18.00001 }))).toBe("VALIDATION_ERROR")
    expect(fillPrice(pending("BUY", 10), {})).toBe(180_000)
  })

  it("never fill more than the order's quantity, never cost a BUY more than its escrow, and conserve money (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("BUY" as const, "SELL" as const),
        fc.integer({ min: 1, max: 2_000 }),
        fc.array(fc.record({ quantity: fc.integer({ min: -2, max: 2_500 }), below: fc.integer({ min: 0, max: 50_000 }) }), { maxLength: 8 }),
        (side, quantity, attempts) => {
          let order = pending(side, quantity)
          let paid = 0
          for (const a of attempts) {
            // a BUY may fill at or below its quote (its escrow was sized there), a SELL at any positive price
            const price = side === "BUY" ? order.priceAtOrder - Math.min(a.below, order.priceAtOrder - 1) : order.priceAtOrder + a.below
            const plan = decideFill(order, { quantity: a.quantity, price }, OPEN_AT, ids())
            if (plan instanceof ApiFailure) {
              expect(a.quantity < 1 || a.quantity > remainingQuantity(order) || order.status === "FILLED").toBe(true)
              continue
            }
            const ledger = plan.ledger
            expect(ledger && orderPostings(ledger.account, ledger.movements, ledger.escrowDelta)).toBeDefined()
            if (side === "BUY") paid += (ledger?.movements.feesCollected ?? 0) - (ledger?.movements.marketNet ?? 0)
            order = plan.order ?? order
          }
          expect(remainingQuantity(order)).toBeGreaterThanOrEqual(0)
          expect(order.fills.reduce((n, f) => n + f.quantity, 0)).toBeLessThanOrEqual(quantity)
          if (side === "BUY") expect(paid).toBeLessThanOrEqual(pending("BUY", quantity).escrow)
        }
      )
    )
  })
})

describe("rejections and settlement failures", () => {
  it("a rejection gives a BUY's escrow back and announces order.rejected and trade.rejected", () => {
    const order = pending("BUY", 10)
    const plan = accepted(decideReject(order, "LIQUIDITY_UNAVAILABLE", "no liquidity", OPEN_AT))
    expect(plan.ledger?.movements.wallet).toBe(order.escrow)
    expect(plan.ledger?.escrowDelta).toBe(-order.escrow)
    expect(plan.events.map((e) => e.name)).toEqual(["order.rejected", "trade.rejected"])
    expect(plan.events[0]?.data).toMatchObject({ rejectionCode: "LIQUIDITY_UNAVAILABLE", rejectionReason: "no liquidity", status: "REJECTED" })
  })

  it("a decided order cannot be rejected (CONFLICT)", () => {
    const filled = accepted(decideFill(pending("BUY", 10), { price: 180_000 }, OPEN_AT, ids())).order
    expect(codeOf(decideReject(filled ?? pending("BUY", 1), "X", "y", OPEN_AT))).toBe("CONFLICT")
  })

  it("a settlement failure unwinds a partial BUY only while the account still holds its units", () => {
    const partial = accepted(decideFill(pending("BUY", 10), { quantity: 4, price: 180_000 }, OPEN_AT, ids())).order ?? pending("BUY", 1)
    expect(codeOf(decideReject(partial, "SETTLEMENT_FAILED", "custody", OPEN_AT, { kind: "units", free: 3 }))).toBe("CONFLICT")
    const plan = accepted(decideReject(partial, "SETTLEMENT_FAILED", "custody", OPEN_AT, { kind: "units", free: 4 }))
    expect(plan.order?.fills).toEqual([])
    expect(plan.ledger?.movements.shares).toBe(-4)
  })

  it("a settlement failure reverses a SELL's proceeds only while the wallet still holds them", () => {
    const partial = accepted(decideFill(pending("SELL", 10), { quantity: 4, price: 180_000 }, OPEN_AT, ids())).order ?? pending("SELL", 1)
    const proceeds = partial.fills.reduce((c, f) => c + f.gross - f.fee, 0)
    expect(codeOf(decideReject(partial, "SETTLEMENT_FAILED", "custody", OPEN_AT, { kind: "cash", available: proceeds - 1 }))).toBe("CONFLICT")
    expect(codeOf(decideReject(partial, "SETTLEMENT_FAILED", "custody", OPEN_AT, { kind: "cash", available: proceeds }))).toBe("accepted")
  })
})

describe("a planned desk step now", () => {
  const order = pending("BUY", 10)
  it("fills what remains at the quote, or at the market when that is not above the quote", () => {
    expect(deskStepAction(order, { action: "fill", quantity: null, price: "quote" }, "SETTLEMENT_FAILED", undefined)).toEqual({
      _tag: "Fill",
      request: { quantity: 10, price: 18 }
    })
    expect(deskStepAction(order, { action: "fill", quantity: 25, price: "market" }, "SETTLEMENT_FAILED", 170_000)).toEqual({
      _tag: "Fill",
      request: { quantity: 10, price: 17 }
    })
  })

  it("declines a BUY when the market is above its quote, or has no price (D-292)", () => {
    const declined = { _tag: "Reject", code: "PRICE_OUT_OF_TOLERANCE", reason: "The market moved above the quoted price", unwind: false }
    expect(deskStepAction(order, { action: "fill", quantity: null, price: "market" }, "SETTLEMENT_FAILED", 180_001)).toEqual(declined)
    expect(deskStepAction(order, { action: "fill", quantity: null, price: "market" }, "SETTLEMENT_FAILED", undefined)).toEqual(declined)
  })

  it("turns a failSettlement step into an unwinding rejection", () => {
    expect(deskStepAction(order, { action: "failSettlement", reason: "custody" }, "SETTLEMENT_FAILED", undefined)).toEqual({
      _tag: "Reject",
      code: "SETTLEMENT_FAILED",
      reason: "custody",
      unwind: true
    })
  })
})
