/**
 * Unit and property tests of the order state machine (engine/domain/order.ts). Expected money is computed here
 * from the exact rationals (quotient/remainder rounding of our own), never by calling the engine's money helpers.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { type CanonicalStatus, type OrderRecord, type PlaceMarketInput, placeMarket, type Side } from "../../engine/domain/order.ts"
import { applyFill, applyReject, type Movements, type Transition } from "../../engine/domain/order-transitions.ts"
import { EXECUTION_SLA_SECONDS, orderToWire } from "../../engine/domain/order-wire.ts"
import { marketInput, T0 } from "../support/order-input.ts"

const RUNS = 300

// ---------------------------------------------------------------------------------------------------------------
// Independent reference money
// ---------------------------------------------------------------------------------------------------------------

const refRound = (num: bigint, den: bigint): bigint => {
  let q = num / den
  if (2n * (num % den) >= den) q += 1n
  return q
}
/** Cents of q units at price4 with rate6 local per USD: q*p*10^4/r, rounded half up (all inputs positive). */
const refGross = (q: number, price4: number, rate6: number): number => Number(refRound(BigInt(q) * BigInt(price4) * 10_000n, BigInt(rate6)))
const refBps = (gross: number, bps: number): number => Number(refRound(BigInt(gross) * BigInt(bps), 10_000n))
const refFee = (gross: number, markupBps: number): number => refBps(gross, 75) + (markupBps === 0 ? 0 : refBps(gross, markupBps))
/** Cents of a notional (sum of quantity x Price4) at rate6: notional*10^4/r, rounded half up. */
const refGrossOfNotional = (notional: bigint, rate6: number): number => Number(refRound(notional * 10_000n, BigInt(rate6)))

// ---------------------------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------------------------

const input = marketInput

const ok = (result: Transition | ApiFailure): Transition => {
  if (result instanceof ApiFailure) throw new Error(`unexpected failure ${result.code}: ${result.message}`)
  return result
}

const failure = (result: Transition | ApiFailure): ApiFailure => {
  if (!(result instanceof ApiFailure)) throw new Error(`expected a failure, got status ${result.order.status}`)
  return result
}

const withStatus = (o: OrderRecord, status: CanonicalStatus): OrderRecord => ({ ...o, status })

// ---------------------------------------------------------------------------------------------------------------
// placeMarket
// ---------------------------------------------------------------------------------------------------------------

describe("placeMarket", () => {
  it("BUY escrows gross + fee", () => {
    // 100 SCOM at 18 KES / 129.25 = 1392.6499 cents -> 1393; base fee 10.4475 -> 10; markup 50 bps 6.965 -> 7
    const o = placeMarket(input({ markupBps: 50 }))
    expect(o.gross).toBe(1393)
    expect(o.baseFee).toBe(10)
    expect(o.partnerMarkupFee).toBe(7)
    expect(o.fee).toBe(17)
    expect(o.totalAmount).toBe(1410)
    expect(o.escrow).toBe(1410)
    expect(o.status).toBe("PENDING")
    expect(o.settlementStatus).toBe("PENDING")
    expect(o.fills).toEqual([])
    expect(o.queuedAt).toBe(T0)
    expect(o.createdAt).toBe(T0)
    expect(o.version).toBe(1)
    expect(o.orderType).toBe("MARKET")
    expect(o.quoteUsdPrice).toBe(1393) // 0.13926499 USD -> 1393 in 1e-4 USD
  })

  it("SELL receives gross - fee and escrows nothing", () => {
    const o = placeMarket(input({ side: "SELL", markupBps: 50 }))
    expect(o.gross).toBe(1393)
    expect(o.fee).toBe(17)
    expect(o.totalAmount).toBe(1376)
    expect(o.escrow).toBe(0)
    expect(o.status).toBe("PENDING")
  })

  it("property: BUY totalAmount = escrow = gross + fee; SELL totalAmount = gross - fee, escrow 0", () => {
    fc.assert(
      fc.property(
        fc.constantFrom<Side>("BUY", "SELL"),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 1, max: 100_000_000 }),
        fc.integer({ min: 100_000, max: 1_000_000_000 }),
        fc.integer({ min: 0, max: 500 }),
        (side, quantity, price, rate, markupBps) => {
          const o = placeMarket(input({ side, quantity, price, rate, markupBps }))
          const gross = refGross(quantity, price, rate)
          const fee = refFee(gross, markupBps)
          expect(o.gross).toBe(gross)
          expect(o.baseFee).toBe(refBps(gross, 75))
          expect(o.fee).toBe(fee)
          expect(o.totalAmount).toBe(side === "BUY" ? gross + fee : gross - fee)
          expect(o.escrow).toBe(side === "BUY" ? gross + fee : 0)
        }
      ),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// applyFill
// ---------------------------------------------------------------------------------------------------------------

describe("applyFill", () => {
  // 10 units at 1.0000 USD (rate 1): gross 1000, fee 7.5 -> 8, total 1008
  const usdOrder = (over: Partial<PlaceMarketInput> = {}) => placeMarket(input({ quantity: 10, price: 10_000, rate: 1_000_000, ...over }))

  it("a full BUY fill at the order price fills and settles with no refund", () => {
    const o = usdOrder()
    expect(o.totalAmount).toBe(1008)
    const t = ok(applyFill(o, { reportId: "exr_1", quantity: 10, price: 10_000, now: T0 + 5_000 }))
    expect(t.order.status).toBe("FILLED")
    expect(t.order.settlementStatus).toBe("SETTLED")
    expect(t.order.escrow).toBe(0)
    expect(t.order.settledAt).toBe(T0 + 5_000)
    expect(t.order.filledAt).toBe(T0 + 5_000)
    expect(t.order.queuedAt).toBeNull()
    expect(t.order.version).toBe(2)
    expect(t.order.fills).toEqual([{ reportId: "exr_1", quantity: 10, price: 10_000, gross: 1000, fee: 8, at: T0 + 5_000 }])
    expect(t.movements).toEqual({ wallet: 0, feesCollected: 8, marketNet: -1000, shares: 10, sharesReserved: 0 })
  })

  it("a full BUY fill cheaper than the order price refunds the unused escrow", () => {
    const o = usdOrder()
    // fill at 0.9000: gross 900, fee 6.75 -> 7, cost 907, refund 1008 - 907 = 101
    const t = ok(applyFill(o, { reportId: "exr_1", quantity: 10, price: 9_000, now: T0 + 1 }))
    expect(t.order.status).toBe("FILLED")
    expect(t.order.escrow).toBe(0)
    expect(t.movements).toEqual({ wallet: 101, feesCollected: 7, marketNet: -900, shares: 10, sharesReserved: 0 })
  })

  it("a partial fill leaves PARTIALLY_FILLED and a second fill completes", () => {
    const o = usdOrder()
    const t1 = ok(applyFill(o, { reportId: "exr_1", quantity: 4, price: 10_000, now: T0 + 1_000 }))
    // 4 units: gross 400, fee 3, cost 403; escrow 1008 - 403 = 605, no refund yet
    expect(t1.order.status).toBe("PARTIALLY_FILLED")
    expect(t1.order.settlementStatus).toBe("PENDING")
    expect(t1.order.escrow).toBe(605)
    expect(t1.order.queuedAt).toBe(T0)
    expect(t1.order.filledAt).toBeNull()
    expect(t1.order.settledAt).toBeNull()
    expect(t1.movements).toEqual({ wallet: 0, feesCollected: 3, marketNet: -400, shares: 4, sharesReserved: 0 })

    // 6 units at 0.9500: gross 570, fee 4.275 -> 4, cost 574; refund 605 - 574 = 31
    const t2 = ok(applyFill(t1.order, { reportId: "exr_2", quantity: 6, price: 9_500, now: T0 + 2_000 }))
    expect(t2.order.status).toBe("FILLED")
    expect(t2.order.settlementStatus).toBe("SETTLED")
    expect(t2.order.escrow).toBe(0)
    expect(t2.order.fills.map((f) => f.reportId)).toEqual(["exr_1", "exr_2"])
    expect(t2.order.version).toBe(3)
    expect(t2.movements).toEqual({ wallet: 31, feesCollected: 4, marketNet: -570, shares: 6, sharesReserved: 0 })
  })

  it("a fill costing more than the escrow fails CONFLICT and changes nothing", () => {
    const o = usdOrder()
    const f = failure(applyFill(o, { reportId: "exr_1", quantity: 10, price: 10_100, now: T0 + 1 }))
    // 10 at 1.01: gross 1010 + fee 7.575 -> 8 = 1018 > 1008
    expect(f.code).toBe("CONFLICT")
    expect(f.httpStatus).toBe(409)
    expect(o.escrow).toBe(1008)
    expect(o.fills).toEqual([])
  })

  it("a fill exactly consuming the escrow succeeds", () => {
    // total 1008; a fill at 1.0007: gross 1000.7 -> 1001, fee 7.5075 -> 8, cost 1009 > 1008 fails ...
    const o = usdOrder()
    expect(failure(applyFill(o, { reportId: "x", quantity: 10, price: 10_007, now: T0 })).code).toBe("CONFLICT")
    // ... and at 1.0004: gross 1000.4 -> 1000, fee 8, cost 1008 == escrow: allowed, no refund
    const t = ok(applyFill(o, { reportId: "x", quantity: 10, price: 10_004, now: T0 }))
    expect(t.movements.wallet).toBe(0)
    expect(t.order.escrow).toBe(0)
  })

  it("rejects invalid fill quantities and prices with VALIDATION_ERROR", () => {
    const o = usdOrder()
    for (const quantity of [0, -1, 11, 1.5, Number.NaN]) {
      expect(failure(applyFill(o, { reportId: "x", quantity, price: 10_000, now: T0 })).code, `quantity ${quantity}`).toBe("VALIDATION_ERROR")
    }
    for (const price of [0, -10_000, 1.5]) {
      expect(failure(applyFill(o, { reportId: "x", quantity: 1, price, now: T0 })).code, `price ${price}`).toBe("VALIDATION_ERROR")
    }
    const t1 = ok(applyFill(o, { reportId: "x", quantity: 7, price: 10_000, now: T0 }))
    expect(failure(applyFill(t1.order, { reportId: "y", quantity: 4, price: 10_000, now: T0 })).code).toBe("VALIDATION_ERROR")
  })

  it("SELL fills pay gross - fee to the wallet and remove reserved shares", () => {
    const o = usdOrder({ side: "SELL" })
    const t1 = ok(applyFill(o, { reportId: "exr_1", quantity: 3, price: 11_000, now: T0 + 1 }))
    // 3 at 1.10: gross 330, fee 2.475 -> 2, wallet 328
    expect(t1.order.status).toBe("PARTIALLY_FILLED")
    expect(t1.order.escrow).toBe(0)
    expect(t1.movements).toEqual({ wallet: 328, feesCollected: 2, marketNet: 330, shares: -3, sharesReserved: -3 })
    const t2 = ok(applyFill(t1.order, { reportId: "exr_2", quantity: 7, price: 9_000, now: T0 + 2 }))
    // 7 at 0.90: gross 630, fee 4.725 -> 5, wallet 625
    expect(t2.order.status).toBe("FILLED")
    expect(t2.order.settlementStatus).toBe("SETTLED")
    expect(t2.movements).toEqual({ wallet: 625, feesCollected: 5, marketNet: 630, shares: -7, sharesReserved: -7 })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// applyReject and terminal states
// ---------------------------------------------------------------------------------------------------------------

describe("applyReject", () => {
  const usdOrder = (over: Partial<PlaceMarketInput> = {}) => placeMarket(input({ quantity: 10, price: 10_000, rate: 1_000_000, ...over }))

  it("BUY: returns all the escrow to the wallet, settlement FAILED", () => {
    const o = usdOrder()
    const t = ok(applyReject(o, "DESK_DECLINED", "no liquidity", T0 + 9_000))
    expect(t.order.status).toBe("REJECTED")
    expect(t.order.settlementStatus).toBe("FAILED")
    expect(t.order.escrow).toBe(0)
    expect(t.order.rejectionCode).toBe("DESK_DECLINED")
    expect(t.order.rejectionReason).toBe("no liquidity")
    expect(t.order.settledAt).toBe(T0 + 9_000)
    expect(t.order.queuedAt).toBeNull()
    expect(t.order.version).toBe(2)
    expect(t.movements).toEqual({ wallet: 1008, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 })
  })

  it("BUY after a partial fill: returns the remaining escrow, settlement SETTLED", () => {
    const t1 = ok(applyFill(usdOrder(), { reportId: "exr_1", quantity: 4, price: 10_000, now: T0 }))
    const t2 = ok(applyReject(t1.order, "DESK_DECLINED", "rest unavailable", T0 + 1))
    expect(t2.movements).toEqual({ wallet: 605, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 0 })
    expect(t2.order.escrow).toBe(0)
    expect(t2.order.settlementStatus).toBe("SETTLED")
  })

  it("SELL: releases every reserved share, no money moves", () => {
    const t = ok(applyReject(usdOrder({ side: "SELL" }), "DESK_DECLINED", "no bid", T0))
    expect(t.movements).toEqual({ wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: -10 })
    expect(t.order.settlementStatus).toBe("FAILED")
  })

  it("SELL after a partial fill: releases only the unfilled shares", () => {
    const t1 = ok(applyFill(usdOrder({ side: "SELL" }), { reportId: "exr_1", quantity: 3, price: 10_000, now: T0 }))
    const t2 = ok(applyReject(t1.order, "DESK_DECLINED", "no bid", T0))
    expect(t2.movements).toEqual({ wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: -7 })
  })

  it("terminal orders refuse fills and rejects with CONFLICT", () => {
    const base = usdOrder()
    const filled = ok(applyFill(base, { reportId: "x", quantity: 10, price: 10_000, now: T0 })).order
    const rejected = ok(applyReject(base, "C", "r", T0)).order
    const terminals: ReadonlyArray<OrderRecord> = [filled, rejected, withStatus(base, "CANCELLED"), withStatus(base, "EXPIRED")]
    for (const o of terminals) {
      const f = failure(applyFill(o, { reportId: "y", quantity: 1, price: 10_000, now: T0 }))
      expect(f.code, `fill ${o.status}`).toBe("CONFLICT")
      const r = failure(applyReject(o, "C", "r", T0))
      expect(r.code, `reject ${o.status}`).toBe("CONFLICT")
    }
  })

  it("a WORKING order is not the desk's to fill or reject", () => {
    const working = withStatus(usdOrder(), "WORKING")
    expect(failure(applyFill(working, { reportId: "y", quantity: 1, price: 10_000, now: T0 })).code).toBe("CONFLICT")
    expect(failure(applyReject(working, "C", "r", T0)).code).toBe("CONFLICT")
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Money conservation (property)
// ---------------------------------------------------------------------------------------------------------------

interface Scenario {
  readonly side: Side
  readonly quantity: number
  readonly price: number
  readonly rate: number
  readonly markupBps: number
  /** Each fill: a share of the remaining quantity (0..1) and a price factor (0..1] of the order price. */
  readonly fills: ReadonlyArray<{ readonly share: number; readonly priceFactor: number }>
  readonly completeLast: boolean
  readonly endWithReject: boolean
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  side: fc.constantFrom<Side>("BUY", "SELL"),
  quantity: fc.integer({ min: 1, max: 5_000 }),
  price: fc.integer({ min: 1, max: 50_000_000 }),
  rate: fc.integer({ min: 100_000, max: 1_000_000_000 }),
  markupBps: fc.integer({ min: 0, max: 300 }),
  fills: fc.array(fc.record({ share: fc.double({ min: 0, max: 1, noNaN: true }), priceFactor: fc.double({ min: 0, max: 1, noNaN: true }) }), { maxLength: 8 }),
  completeLast: fc.boolean(),
  endWithReject: fc.boolean()
})

const sum = (ms: ReadonlyArray<Movements>, key: keyof Movements): number => ms.reduce((s, m) => s + m[key], 0)

interface Run {
  readonly order: OrderRecord
  readonly movements: ReadonlyArray<Movements>
  readonly refusals: number
}

/**
 * Plays a scenario. Each fill must be priced as the difference of cumulative totals (gross and fee of everything filled
 * so far, minus the same before this fill: engine E-002). A fill refused with CONFLICT must be justified (cost > escrow).
 */
const play = (s: Scenario): Run => {
  let order = placeMarket(input({ side: s.side, quantity: s.quantity, price: s.price, rate: s.rate, markupBps: s.markupBps }))
  const movements: Array<Movements> = []
  let refusals = 0
  let now = T0
  let notional = 0n
  s.fills.forEach((step, i) => {
    if (order.status !== "PENDING" && order.status !== "PARTIALLY_FILLED") return
    const remaining = order.quantity - order.fills.reduce((n, f) => n + f.quantity, 0)
    const last = i === s.fills.length - 1
    const quantity = last && s.completeLast ? remaining : Math.max(1, Math.floor(step.share * remaining))
    const price = Math.max(1, Math.floor(step.priceFactor * s.price)) // never above the order price
    now += 1_000
    const result = applyFill(order, { reportId: `exr_${i}`, quantity, price, now })
    const after = notional + BigInt(quantity) * BigInt(price)
    const grossBefore = refGrossOfNotional(notional, s.rate)
    const grossAfter = refGrossOfNotional(after, s.rate)
    const gross = grossAfter - grossBefore
    const fee = refFee(grossAfter, s.markupBps) - refFee(grossBefore, s.markupBps)
    if (result instanceof ApiFailure) {
      expect(result.code).toBe("CONFLICT")
      expect(s.side).toBe("BUY")
      expect(gross + fee).toBeGreaterThan(order.escrow)
      refusals += 1
      return
    }
    // + 0 folds the engine's -0 (a zero-cent fill on a BUY) into 0
    expect(result.movements.marketNet + 0).toBe(s.side === "BUY" ? 0 - gross : gross)
    expect(result.movements.feesCollected).toBe(fee)
    notional = after
    order = result.order
    movements.push(result.movements)
  })
  if (s.endWithReject && (order.status === "PENDING" || order.status === "PARTIALLY_FILLED")) {
    const t = ok(applyReject(order, "DESK_DECLINED", "property", now + 1))
    order = t.order
    movements.push(t.movements)
  }
  return { order, movements, refusals }
}

const isTerminal = (status: CanonicalStatus) => status === "FILLED" || status === "REJECTED" || status === "CANCELLED" || status === "EXPIRED"

describe("money conservation", () => {
  it("property: BUY totalAmount == wallet refunds + fees + paid to market + escrow, to the cent", () => {
    fc.assert(
      fc.property(scenario, (s0) => {
        const s = { ...s0, side: "BUY" as const }
        const { order, movements, refusals } = play(s)
        // every fill price is at or below the order price, so the escrow always suffices
        expect(refusals).toBe(0)
        const initialWalletDebit = order.totalAmount
        const refunds = sum(movements, "wallet")
        const feesCollected = sum(movements, "feesCollected")
        const paidToMarket = 0 - sum(movements, "marketNet")
        expect(initialWalletDebit).toBe(refunds + feesCollected + paidToMarket + order.escrow)
        expect(order.escrow).toBeGreaterThanOrEqual(0)
        expect(refunds).toBeGreaterThanOrEqual(0)
        if (isTerminal(order.status)) expect(order.escrow).toBe(0)
        // shares bought are exactly the filled quantity; nothing reserved on a BUY
        expect(sum(movements, "shares")).toBe(order.fills.reduce((n, f) => n + f.quantity, 0))
        expect(sum(movements, "sharesReserved")).toBe(0)
        // fees and market outflow equal the per-fill amounts recorded on the order
        expect(feesCollected).toBe(order.fills.reduce((n, f) => n + f.fee, 0))
        expect(paidToMarket).toBe(order.fills.reduce((n, f) => n + f.gross, 0))
        // in total, the fills cost exactly what one fill of their whole notional would
        const notional = order.fills.reduce((n, f) => n + BigInt(f.quantity) * BigInt(f.price), 0n)
        expect(paidToMarket).toBe(refGrossOfNotional(notional, s.rate))
        expect(feesCollected).toBe(refFee(refGrossOfNotional(notional, s.rate), s.markupBps))
      }),
      { numRuns: RUNS }
    )
  })

  it("property: SELL wallet credit + fees == received from market; all reserved shares released once terminal", () => {
    fc.assert(
      fc.property(scenario, (s0) => {
        const s = { ...s0, side: "SELL" as const }
        const { order, movements, refusals } = play(s)
        expect(refusals).toBe(0)
        expect(order.escrow).toBe(0)
        expect(sum(movements, "wallet") + sum(movements, "feesCollected")).toBe(sum(movements, "marketNet"))
        const filled = order.fills.reduce((n, f) => n + f.quantity, 0)
        expect(sum(movements, "shares")).toBe(0 - filled)
        expect(sum(movements, "sharesReserved")).toBe(0 - (isTerminal(order.status) ? order.quantity : filled))
      }),
      { numRuns: RUNS }
    )
  })

  it("property: status follows the fills (FILLED iff fully filled, REJECTED only after a reject)", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { order } = play(s)
        const filled = order.fills.reduce((n, f) => n + f.quantity, 0)
        expect(filled).toBeLessThanOrEqual(order.quantity)
        if (filled === order.quantity) expect(order.status).toBe("FILLED")
        else if (s.endWithReject) expect(order.status).toBe("REJECTED")
        else expect(order.status).toBe(filled === 0 ? "PENDING" : "PARTIALLY_FILLED")
        expect(order.version).toBe(1 + order.fills.length + (order.status === "REJECTED" ? 1 : 0))
      }),
      { numRuns: RUNS }
    )
  })

  // Regression (E-002): partial fills used to be rounded one by one, so fills AT the order price could cost more than
  // the escrow (rounded once on the whole order) and the last fill was refused with CONFLICT.
  it("40 units at 1.00 USD filled 10 + 30 at the order price complete exactly on the escrow", () => {
    // escrow: gross 4000 + fee 30 = 4030. Fill 10: gross 1000, fee 7.5 -> 8, cost 1008, escrow 3022.
    // Fill 30: cumulative gross 4000 (fee 30) minus 1000 (fee 8) = 3000 + 22 = 3022 == escrow, no refund.
    const o = placeMarket(input({ quantity: 40, price: 10_000, rate: 1_000_000 }))
    expect(o.escrow).toBe(4030)
    const t1 = ok(applyFill(o, { reportId: "exr_1", quantity: 10, price: 10_000, now: T0 }))
    expect(t1.order.escrow).toBe(3022)
    const t2 = ok(applyFill(t1.order, { reportId: "exr_2", quantity: 30, price: 10_000, now: T0 + 1 }))
    expect(t2.movements).toEqual({ wallet: 0, feesCollected: 22, marketNet: -3000, shares: 30, sharesReserved: 0 })
    expect(t2.order.status).toBe("FILLED")
    expect(t2.order.escrow).toBe(0)
  })

  it("1-unit fills at 0.105 USD are priced as differences of cumulative totals (11, 10, 11 cents)", () => {
    // cumulative gross: 10.5 -> 11, 21, 31.5 -> 32; fees stay 0 (0.75% of 32 = 0.24 -> 0); escrow 32
    const o = placeMarket(input({ quantity: 3, price: 1_050, rate: 1_000_000 }))
    expect(o.escrow).toBe(32)
    const t1 = ok(applyFill(o, { reportId: "a", quantity: 1, price: 1_050, now: T0 }))
    const t2 = ok(applyFill(t1.order, { reportId: "b", quantity: 1, price: 1_050, now: T0 }))
    const t3 = ok(applyFill(t2.order, { reportId: "c", quantity: 1, price: 1_050, now: T0 }))
    expect([t1, t2, t3].map((t) => t.movements.marketNet)).toEqual([-11, -10, -11])
    expect(t3.order.fills.map((f) => f.gross)).toEqual([11, 10, 11])
    expect(t3.order.escrow).toBe(0)
    expect(t3.movements.wallet).toBe(0)
  })

  it("property: partial BUY fills at exactly the order price are never refused and leave no refund", () => {
    fc.assert(
      fc.property(scenario, (s0) => {
        const atOrderPrice = s0.fills.map((f) => ({ ...f, priceFactor: 1 }))
        const { order, movements, refusals } = play({ ...s0, side: "BUY", fills: atOrderPrice, endWithReject: false })
        expect(refusals).toBe(0)
        if (order.status === "FILLED") expect(sum(movements, "wallet")).toBe(0)
      }),
      { numRuns: RUNS }
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// orderToWire
// ---------------------------------------------------------------------------------------------------------------

describe("orderToWire", () => {
  const usdOrder = (over: Partial<PlaceMarketInput> = {}) => placeMarket(input({ quantity: 40, price: 10_000, rate: 1_000_000, ...over }))
  const ALL: ReadonlyArray<CanonicalStatus> = ["PENDING", "WORKING", "PARTIALLY_FILLED", "FILLED", "REJECTED", "CANCELLED", "EXPIRED"]

  it("cancelable only while PENDING or WORKING; replaceable only while WORKING", () => {
    const o = usdOrder()
    for (const status of ALL) {
      const w = orderToWire(withStatus(o, status), T0)
      expect(w.cancelable, status).toBe(status === "PENDING" || status === "WORKING")
      expect(w.replaceable, status).toBe(status === "WORKING")
      // D-004: an expiry shows status CANCELLED, canonicalStatus EXPIRED
      expect(w.status).toBe(status === "EXPIRED" ? "CANCELLED" : status)
      expect(w.canonicalStatus).toBe(status)
    }
  })

  it("executionSla runs while queued and is breached strictly after 300 s", () => {
    expect(EXECUTION_SLA_SECONDS).toBe(300)
    const o = usdOrder()
    const at0 = orderToWire(o, T0)
    expect(at0.executionSla).toEqual({
      queuedAt: "2026-11-23T08:00:00.000Z",
      targetSeconds: 300,
      deadlineAt: "2026-11-23T08:05:00.000Z",
      elapsedSeconds: 0,
      breached: false
    })
    expect(orderToWire(o, T0 + 299_999).executionSla?.elapsedSeconds).toBe(299)
    expect(orderToWire(o, T0 + 300_000).executionSla?.breached).toBe(false)
    expect(orderToWire(o, T0 + 300_000).executionSla?.elapsedSeconds).toBe(300)
    expect(orderToWire(o, T0 + 300_001).executionSla?.breached).toBe(true)
    expect(orderToWire(o, T0 + 3_600_000).executionSla).toMatchObject({ elapsedSeconds: 3600, breached: true })
    // a clock before queuedAt never shows negative elapsed time
    expect(orderToWire(o, T0 - 5_000).executionSla?.elapsedSeconds).toBe(0)
  })

  it("executionSla keeps running after a partial fill and is null once the order leaves the queue", () => {
    const o = usdOrder()
    const partial = ok(applyFill(o, { reportId: "exr_1", quantity: 10, price: 10_000, now: T0 + 60_000 })).order
    expect(orderToWire(partial, T0 + 301_000).executionSla).toMatchObject({ queuedAt: "2026-11-23T08:00:00.000Z", breached: true })
    const filled = ok(applyFill(partial, { reportId: "exr_2", quantity: 30, price: 9_000, now: T0 + 120_000 })).order
    expect(orderToWire(filled, T0 + 1_000_000).executionSla).toBeNull()
    const rejected = ok(applyReject(o, "C", "r", T0 + 1)).order
    expect(orderToWire(rejected, T0 + 1_000_000).executionSla).toBeNull()
    for (const status of ["WORKING", "CANCELLED", "EXPIRED"] as const) {
      expect(orderToWire(withStatus(o, status), T0).executionSla, status).toBeNull()
    }
  })

  it("averageFillPrice is the quantity-weighted mean, rounded half away from zero to 4 decimals", () => {
    const o = usdOrder()
    expect(orderToWire(o, T0).averageFillPrice).toBeNull()
    const t1 = ok(applyFill(o, { reportId: "exr_1", quantity: 10, price: 10_000, now: T0 + 1 })).order
    expect(orderToWire(t1, T0).averageFillPrice).toBe(1)
    const t2 = ok(applyFill(t1, { reportId: "exr_2", quantity: 30, price: 9_000, now: T0 + 2 })).order
    // (10 x 1.0000 + 30 x 0.9000) / 40 = 0.925
    const w = orderToWire(t2, T0 + 3)
    expect(w.averageFillPrice).toBe(0.925)
    expect(w.filledQuantity).toBe(40)
    expect(w.remainingQuantity).toBe(0)
    expect(w.lastExecutionReportId).toBe("exr_2")
    expect(w.executionVenue).toBe("SOKONI-SIM-DESK")
  })

  it("averageFillPrice rounds a repeating mean", () => {
    const o = placeMarket(input({ quantity: 3, price: 20_000, rate: 1_000_000 }))
    const t1 = ok(applyFill(o, { reportId: "a", quantity: 1, price: 10_000, now: T0 })).order
    const t2 = ok(applyFill(t1, { reportId: "b", quantity: 2, price: 10_001, now: T0 })).order
    // (10000 + 20002) / 3 = 10000.666.. -> 10001 -> 1.0001
    expect(orderToWire(t2, T0).averageFillPrice).toBe(1.0001)
    // (1 x 1.0000 + 1 x 1.0001) / 2 = 1.00005 -> tie -> 1.0001 (away from zero)
    const p = placeMarket(input({ quantity: 2, price: 20_000, rate: 1_000_000 }))
    const p1 = ok(applyFill(p, { reportId: "a", quantity: 1, price: 10_000, now: T0 })).order
    expect(orderToWire(p1, T0).averageFillPrice).toBe(1)
    const p2 = ok(applyFill(p1, { reportId: "b", quantity: 1, price: 10_001, now: T0 })).order
    expect(orderToWire(p2, T0).averageFillPrice).toBe(1.0001)
  })

  it("projects money and FX fields exactly", () => {
    const w = orderToWire(placeMarket(input({ markupBps: 50 })), T0)
    expect(w).toMatchObject({
      orderId: "ord_1",
      symbol: "SCOM.KE", // the country-qualified symbol on the wire (D-080)
      type: "BUY",
      orderType: "MARKET",
      quantity: 100,
      priceAtOrder: 18,
      usdPriceAtOrder: 0.1393,
      quoteUsdPrice: 0.1393,
      fxRateAtOrder: 129.25,
      fee: 0.17,
      baseFee: 0.1,
      partnerMarkupFee: 0.07,
      totalAmount: 14.1,
      currency: "USD",
      localCurrency: "KES",
      limitPrice: null,
      stopPrice: null,
      filledQuantity: 0,
      remainingQuantity: 100,
      executionVenue: null,
      lastExecutionReportId: null,
      createdAt: "2026-11-23T08:00:00.000Z",
      quoteExpiresAt: "2026-11-23T08:00:30.000Z",
      fxRateAsOf: "2026-11-23T07:59:00.000Z",
      settledAt: null,
      cancelledAt: null
    })
    expect(w.fxConversion).toEqual({ fromCurrency: "USD", toCurrency: "KES", rate: 129.25, source: "sokoni-sim-reference", asOf: "2026-11-23T07:59:00.000Z" })
    // the same direction as fxRateAtOrder (local units per USD); no conversion for an instrument traded in USD
    expect(w.fxConversion?.rate).toBe(w.fxRateAtOrder)
    const usd = orderToWire(placeMarket(input({ localCurrency: "USD", rate: 1_000_000 })), T0)
    expect([usd.fxConversion, usd.localCurrency, usd.fxRateAtOrder]).toEqual([null, "USD", 1])
  })

  it("property: averageFillPrice equals the weighted mean of the fills rounded to 1e-4", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ quantity: fc.integer({ min: 1, max: 1_000 }), price: fc.integer({ min: 1, max: 10_000_000 }) }), { minLength: 1, maxLength: 6 }),
        (fills) => {
          const total = fills.reduce((n, f) => n + f.quantity, 0)
          // a USD order priced far above every fill so escrow always suffices
          let o = placeMarket(input({ quantity: total + 1, price: 20_000_000, rate: 1_000_000 }))
          fills.forEach((f, i) => {
            o = ok(applyFill(o, { reportId: `r${i}`, quantity: f.quantity, price: f.price, now: T0 + i })).order
          })
          const num = fills.reduce((n, f) => n + BigInt(f.quantity) * BigInt(f.price), 0n)
          const expected = refRound(num, BigInt(total))
          const w = orderToWire(o, T0)
          expect(w.averageFillPrice).toBe(Number(expected) / 10_000)
          expect(w.filledQuantity).toBe(total)
          expect(w.remainingQuantity).toBe(1)
          expect(w.cancelable).toBe(false)
        }
      ),
      { numRuns: RUNS }
    )
  })
})
