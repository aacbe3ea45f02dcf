/**
 * Placing an order (domain/trading/decide-order.ts): who may trade, and the escrow at placement. A BUY's total leaves
 * the wallet for its escrow and a SELL's units are reserved, never more than the account has; the quote is used and
 * its expiry job dropped; the order goes to the desk with order.pending; the booked entry balances.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { orderPostings } from "../../engine/domain/ledger.ts"
import { placeResting } from "../../engine/domain/order.ts"
import {
  acceptMarketOrder,
  acceptRestingOrder,
  decideMarketOrder,
  decideRestingOrder,
  type Funds,
  placementHold
} from "../../engine/domain/trading/decide-order.ts"
import { restingFields } from "../../engine/domain/trading/order-fields.ts"
import { EXPIRE_JOB, TRIGGER_JOB } from "../../engine/domain/trading/plan.ts"
import { accepted, codeOf, marketCommand, marketState, NSE, OPEN_AT, PARTITION, quote, SCOM, subAccount } from "./decider-fixtures.ts"

const cash = (available: number): Funds => ({ kind: "cash", available })
const units = (free: number): Funds => ({ kind: "units", free })

const restingOrder = (side: "BUY" | "SELL", quantity: number, limitPrice: number) =>
  placeResting({
    orderId: "ord_1",
    partition: PARTITION,
    account: "master",
    externalId: null,
    instrument: SCOM,
    orderType: "LIMIT",
    side,
    quantity,
    limitPrice,
    stopPrice: null,
    timeInForce: "GTC",
    expiresAt: null,
    deadline: null,
    rate: 129_250_000,
    rateAsOf: OPEN_AT,
    fxSource: "sokoni-sim-reference",
    localCurrency: "KES",
    markupBps: 25,
    clientOrderId: null,
    now: OPEN_AT
  })

describe("who may place a MARKET order", () => {
  it("accepts a verified account on an open quote while the exchange is open", () => {
    const state = marketState({ subAccount: subAccount(), quote: quote({ account: "usr_1" }) })
    const a = accepted(acceptMarketOrder(state, marketCommand("BUY", 10, undefined, "usr_1"), OPEN_AT))
    expect(a).toMatchObject({ quantity: 10, externalId: "ext-1" })
  })

  it("refuses a frozen or unverified sub-account before looking at the quote", () => {
    const noQuote = { quote: undefined }
    expect(codeOf(acceptMarketOrder(marketState({ ...noQuote, subAccount: subAccount({ status: "frozen" }) }), marketCommand("BUY", 10), OPEN_AT))).toBe(
      "FORBIDDEN"
    )
    expect(codeOf(acceptMarketOrder(marketState({ ...noQuote, subAccount: subAccount({ kycStatus: "PENDING" }) }), marketCommand("BUY", 10), OPEN_AT))).toBe(
      "KYC_REQUIRED"
    )
  })

  it("refuses while the exchange is closed, after a symbol change committed meanwhile, and on a suspended listing", () => {
    const night = OPEN_AT + 12 * 3_600_000
    const q = quote({ issuedAt: night - 1_000, expiresAt: night + 59_000 })
    expect(codeOf(acceptMarketOrder(marketState({ quote: q }), marketCommand("BUY", 10), night))).toBe("MARKET_CLOSED")
    expect(codeOf(acceptMarketOrder(marketState({ committedSymbol: "NEW.KE" }), marketCommand("BUY", 10), OPEN_AT))).toBe("NOT_FOUND")
    expect(codeOf(acceptMarketOrder(marketState({ listingStatus: "SUSPENDED" }), marketCommand("BUY", 10), OPEN_AT))).toBe("MARKET_CLOSED")
  })

  it("trades a cashValue quote's derived units, and refuses a cashValue that buys none", () => {
    const derived = marketState({ quote: quote({ cashValue: 50_000, derivedQuantity: 3 }) })
    expect(accepted(acceptMarketOrder(derived, marketCommand("BUY", undefined, 50_000), OPEN_AT)).quantity).toBe(3)
    expect(codeOf(acceptMarketOrder(marketState(), marketCommand("BUY", undefined, 1), OPEN_AT))).toBe("VALIDATION_ERROR")
  })
})

describe("escrow at placement", () => {
  const placed = (side: "BUY" | "SELL", quantity: number, funds: Funds) => {
    const command = marketCommand(side, quantity)
    const a = accepted(acceptMarketOrder(marketState(), command, OPEN_AT))
    return decideMarketOrder(a, command, NSE, funds, OPEN_AT, { orderId: "ord_1" })
  }

  it("a BUY takes its total from the wallet into escrow, uses the quote and goes to the desk", () => {
    const plan = accepted(placed("BUY", 10, cash(10_000_000)))
    const order = plan.order
    expect(order?.status).toBe("PENDING")
    expect(plan.ledger).toMatchObject({ kind: "ORDER_PLACED", escrowDelta: order?.totalAmount, movements: { wallet: -(order?.totalAmount ?? 0) } })
    expect(plan.usedQuote).toEqual({ quote: { ...quote(), status: "USED" }, expiryJob: 41 })
    expect(plan.events.map((e) => e.name)).toEqual(["order.pending"])
    expect(plan.toDesk).toBe(order)
    expect(plan.answer.orderId).toBe("ord_1")
  })

  it("a BUY the wallet cannot cover is INSUFFICIENT_FUNDS; exactly enough is accepted", () => {
    const total = accepted(placed("BUY", 10, cash(10_000_000))).order?.totalAmount ?? 0
    expect(codeOf(placed("BUY", 10, cash(total - 1)))).toBe("INSUFFICIENT_FUNDS")
    expect(codeOf(placed("BUY", 10, cash(total)))).toBe("accepted")
  })

  it("a SELL reserves its units and takes no cash; more units than are free is INSUFFICIENT_HOLDINGS", () => {
    const plan = accepted(placed("SELL", 10, units(10)))
    expect(plan.ledger?.movements).toEqual({ wallet: 0, feesCollected: 0, marketNet: 0, shares: 0, sharesReserved: 10 })
    expect(plan.ledger?.escrowDelta).toBe(0)
    expect(codeOf(placed("SELL", 10, units(9)))).toBe("INSUFFICIENT_HOLDINGS")
  })

  it("never escrows more than is available, and what it books balances (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("BUY" as const, "SELL" as const),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 100_000_000 }),
        fc.integer({ min: 0, max: 2_000_000_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        (side, quantity, limitPrice, available, free) => {
          const order = restingOrder(side, quantity, limitPrice)
          const hold = placementHold(order, side === "BUY" ? cash(available) : units(free), OPEN_AT)
          if (hold instanceof ApiFailure) {
            expect(side === "BUY" ? available < order.escrow : free < quantity).toBe(true)
            return
          }
          expect(-hold.movements.wallet).toBeLessThanOrEqual(side === "BUY" ? available : 0)
          expect(hold.movements.sharesReserved).toBeLessThanOrEqual(side === "SELL" ? free : 0)
          expect(orderPostings(hold.account, hold.movements, hold.escrowDelta)).toBeDefined()
        }
      )
    )
  })
})

describe("placing a resting order", () => {
  const fields = accepted(restingFields("LIMIT", { symbol: SCOM.symbol, type: "BUY", quantity: 10, limitPrice: 17, timeInForce: "DAY" }, OPEN_AT))
  const command = {
    placer: { partition: PARTITION, account: "master", markupBps: 0 },
    input: { symbol: SCOM.symbol, type: "BUY" as const, quantity: 10 },
    orderType: "LIMIT" as const,
    fields,
    instrument: SCOM,
    localCurrency: "KES",
    rate: 129_250_000,
    deadline: OPEN_AT + 3_600_000,
    firstLook: OPEN_AT + 900_000
  }

  it("rests WORKING with its escrow, a trigger job at the next refresh and an expiry job at its deadline", () => {
    const plan = accepted(decideRestingOrder(command, null, cash(10_000_000), OPEN_AT, { orderId: "ord_9" }))
    expect(plan.order?.status).toBe("WORKING")
    expect(plan.jobs).toEqual([
      { kind: TRIGGER_JOB, dueAt: OPEN_AT + 900_000, payload: { orderId: "ord_9" } },
      { kind: EXPIRE_JOB, dueAt: OPEN_AT + 3_600_000, payload: { orderId: "ord_9", deadline: OPEN_AT + 3_600_000 } }
    ])
    expect(plan.events).toEqual([])
    expect(plan.toDesk).toBeUndefined()
  })

  it("a GTC order has no expiry job; an empty wallet refuses it", () => {
    expect(accepted(decideRestingOrder({ ...command, deadline: null }, null, cash(10_000_000), OPEN_AT, { orderId: "ord_9" })).jobs).toHaveLength(1)
    expect(codeOf(decideRestingOrder(command, null, cash(0), OPEN_AT, { orderId: "ord_9" }))).toBe("INSUFFICIENT_FUNDS")
  })

  it("carries the sub-account's externalId, and refuses after a symbol change committed meanwhile", () => {
    expect(acceptRestingOrder({ subAccount: subAccount(), committedSymbol: SCOM.symbol }, SCOM.symbol, SCOM)).toBe("ext-1")
    expect(codeOf(acceptRestingOrder({ subAccount: null, committedSymbol: "NEW.KE" }, "SCOM", SCOM))).toBe("NOT_FOUND")
  })
})
