/**
 * An open order apart from the desk (domain/trading/decide-lifecycle.ts): the partner's cancel gives everything back
 * and only for its own order; a replace re-escrows within what the account has and books a new expiry; a trigger
 * sends the order to the desk, tops up a STOP BUY's escrow or rejects it, or looks again; an expiry job acts only on
 * the deadline it was booked for.
 */
import { describe, expect, it } from "vitest"
import { orderPostings } from "../../engine/domain/ledger.ts"
import { type OrderRecord, placeResting, type RestingType } from "../../engine/domain/order.ts"
import { decideCancel, decideExpire, decideReplace, decideTrigger, type ReplaceState } from "../../engine/domain/trading/decide-lifecycle.ts"
import { EXPIRE_JOB, NOTHING, TRIGGER_JOB } from "../../engine/domain/trading/plan.ts"
import { accepted, codeOf, NSE, OPEN_AT, PARTITION, SCOM, subAccount } from "./decider-fixtures.ts"

const resting = (orderType: RestingType, side: "BUY" | "SELL", prices: { limit?: number; stop?: number }, deadline: number | null = null): OrderRecord =>
  placeResting({
    orderId: "ord_1",
    partition: PARTITION,
    account: "usr_1",
    externalId: "ext-1",
    instrument: SCOM,
    orderType,
    side,
    quantity: 10,
    limitPrice: prices.limit ?? null,
    stopPrice: prices.stop ?? null,
    timeInForce: deadline === null ? "GTC" : "GTD",
    expiresAt: deadline,
    deadline,
    rate: 129_250_000,
    rateAsOf: OPEN_AT,
    fxSource: "sokoni-sim-reference",
    localCurrency: "KES",
    markupBps: 25,
    clientOrderId: null,
    now: OPEN_AT
  })

describe("cancel", () => {
  it("gives a BUY's escrow back and announces order.cancelled with what was refunded", () => {
    const order = resting("LIMIT", "BUY", { limit: 170_000 })
    const plan = accepted(decideCancel(order, PARTITION, OPEN_AT))
    expect(plan.order?.status).toBe("CANCELLED")
    expect(plan.ledger?.movements.wallet).toBe(order.escrow)
    expect(plan.events).toHaveLength(1)
    expect(plan.events[0]?.data).toMatchObject({ refunded: order.escrow / 100, cancelReason: "PARTNER_REQUEST" })
  })

  it("is NOT_FOUND for another partner's order, CONFLICT for a decided one", () => {
    const order = resting("LIMIT", "SELL", { limit: 170_000 })
    expect(codeOf(decideCancel(order, "ptn_other|sandbox", OPEN_AT))).toBe("NOT_FOUND")
    const cancelled = accepted(decideCancel(order, PARTITION, OPEN_AT)).order ?? order
    expect(codeOf(decideCancel(cancelled, PARTITION, OPEN_AT))).toBe("CONFLICT")
  })
})

describe("expiry job", () => {
  const deadline = OPEN_AT + 3_600_000
  it("expires an open order at the deadline it was booked for", () => {
    const plan = accepted(decideExpire(resting("LIMIT", "BUY", { limit: 170_000 }, deadline), { orderId: "ord_1", deadline }, deadline))
    expect(plan.order?.status).toBe("EXPIRED")
    expect(plan.events[0]?.data).toMatchObject({ orderLifecycle: "EXPIRED", cancelReason: "GTD_EXPIRED" })
  })

  it("does nothing for a deadline the order no longer has, a decided order, or an order gone", () => {
    const order = resting("LIMIT", "BUY", { limit: 170_000 }, deadline)
    expect(decideExpire(order, { orderId: "ord_1", deadline: deadline - 1 }, deadline)).toBe(NOTHING)
    expect(decideExpire(undefined, { orderId: "ord_1", deadline }, deadline)).toBe(NOTHING)
    const cancelled = accepted(decideCancel(order, PARTITION, OPEN_AT)).order
    expect(decideExpire(cancelled, { orderId: "ord_1", deadline }, deadline)).toBe(NOTHING)
  })
})

describe("trigger job", () => {
  const look = (price: number | undefined, available = 0) => ({ price, available, nextLook: OPEN_AT + 900_000 })

  it("looks again at the next refresh when the price does not reach the order, or there is none", () => {
    const order = resting("LIMIT", "BUY", { limit: 170_000 })
    const again = { jobs: [{ kind: TRIGGER_JOB, dueAt: OPEN_AT + 900_000, payload: { orderId: "ord_1" } }], events: [], answer: undefined }
    expect(decideTrigger(order, look(170_001), OPEN_AT)).toEqual(again)
    expect(decideTrigger(order, look(undefined), OPEN_AT)).toEqual(again)
  })

  it("sends a reached LIMIT to the desk re-priced, its surplus escrow kept for the last fill", () => {
    const order = resting("LIMIT", "BUY", { limit: 170_000 })
    const plan = accepted(decideTrigger(order, look(160_000), OPEN_AT))
    expect(plan.order?.status).toBe("PENDING")
    expect(plan.toDesk).toBe(plan.order)
    expect(plan.ledger).toBeUndefined()
    expect(plan.events.map((e) => e.name)).toEqual(["order.pending"])
  })

  it("tops up a STOP BUY triggered above its stop from the wallet, or rejects it INSUFFICIENT_FUNDS", () => {
    const order = resting("STOP", "BUY", { stop: 170_000 })
    const rich = accepted(decideTrigger(order, look(175_000, 10_000_000), OPEN_AT))
    const topUp = rich.ledger
    expect(topUp?.kind).toBe("ORDER_PLACED")
    expect(topUp?.movements.wallet).toBeLessThan(0)
    expect(topUp && orderPostings(topUp.account, topUp.movements, topUp.escrowDelta)).toBeDefined()
    const poor = accepted(decideTrigger(order, look(175_000, 0), OPEN_AT))
    expect(poor.order?.status).toBe("REJECTED")
    expect(poor.order?.rejectionCode).toBe("INSUFFICIENT_FUNDS")
    expect(poor.ledger?.movements.wallet).toBe(order.escrow)
  })
})

describe("replace", () => {
  const state = (order: OrderRecord, over: Partial<ReplaceState> = {}): ReplaceState => ({
    subAccount: subAccount(),
    order,
    partition: PARTITION,
    exchange: NSE,
    available: 0,
    freeUnits: 0,
    ...over
  })

  it("a bigger BUY takes the extra escrow from the wallet, and is INSUFFICIENT_FUNDS without it", () => {
    const order = resting("LIMIT", "BUY", { limit: 170_000 })
    expect(codeOf(decideReplace(state(order), { quantity: 20 }, OPEN_AT))).toBe("INSUFFICIENT_FUNDS")
    const plan = accepted(decideReplace(state(order, { available: 10_000_000 }), { quantity: 20 }, OPEN_AT))
    expect(plan.ledger?.kind).toBe("ORDER_PLACED")
    expect(-(plan.ledger?.movements.wallet ?? 0)).toBe((plan.order?.escrow ?? 0) - order.escrow)
    expect(plan.events.map((e) => e.name)).toEqual(["order.replaced"])
  })

  it("a smaller SELL releases units; a bigger one needs them free", () => {
    const order = resting("LIMIT", "SELL", { limit: 170_000 })
    expect(accepted(decideReplace(state(order), { quantity: 4 }, OPEN_AT)).ledger?.movements.sharesReserved).toBe(-6)
    expect(codeOf(decideReplace(state(order, { freeUnits: 4 }), { quantity: 15 }, OPEN_AT))).toBe("INSUFFICIENT_HOLDINGS")
    expect(codeOf(decideReplace(state(order, { freeUnits: 5 }), { quantity: 15 }, OPEN_AT))).toBe("accepted")
  })

  it("a new GTD deadline books its own expiry job", () => {
    const order = resting("LIMIT", "SELL", { limit: 170_000 })
    const expiresAt = new Date(OPEN_AT + 86_400_000).toISOString()
    const plan = accepted(decideReplace(state(order), { timeInForce: "GTD", expiresAt }, OPEN_AT))
    expect(plan.jobs).toEqual([{ kind: EXPIRE_JOB, dueAt: OPEN_AT + 86_400_000, payload: { orderId: "ord_1", deadline: OPEN_AT + 86_400_000 } }])
  })

  it("refuses another sub-account's order (NOT_FOUND), a frozen account, and an order no longer WORKING", () => {
    const order = resting("LIMIT", "SELL", { limit: 170_000 })
    expect(codeOf(decideReplace(state(order, { subAccount: subAccount({ subAccountId: "usr_2" }) }), { quantity: 4 }, OPEN_AT))).toBe("NOT_FOUND")
    expect(codeOf(decideReplace(state(order, { subAccount: subAccount({ status: "frozen" }) }), { quantity: 4 }, OPEN_AT))).toBe("FORBIDDEN")
    const cancelled = accepted(decideCancel(order, PARTITION, OPEN_AT)).order ?? order
    expect(codeOf(decideReplace(state(cancelled), { quantity: 4 }, OPEN_AT))).toBe("CONFLICT")
  })
})
