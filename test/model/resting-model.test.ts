/**
 * The resting-order model's rarely reached rules, pinned by examples (the property run of api.model.test.ts checks the
 * common ones against the engine): when a pin takes effect (D-240), a DAY deadline placed after the close or on a
 * Friday night (D-281), the order of a trigger and an expiry due at one instant (E-251), and when an advance must
 * not cross an instant (E-252).
 */
import { describe, expect, it } from "vitest"
import { freshModel, MAX_ATTEMPTS, type Model, type OrderModel, START, wouldDisableAt } from "./api-model.ts"
import { book, dayDeadline, nextRefresh, pinEffectiveAt, publishedPrice, REFRESH_MS, runJobsAt } from "./resting-model.ts"

const at = (iso: string) => Date.parse(iso)

/** A WORKING LIMIT BUY of 100 SCOM at 18.0000 KES on the master account (escrow 13.93 USD + 0.10 fee). */
const limitBuy = (m: Model, deadline: number | null): OrderModel => {
  const order: OrderModel = {
    orderId: `ord_${m.orders.length + 1}`,
    account: "master",
    side: "BUY",
    orderType: "LIMIT",
    quantity: 100,
    limit: 180_000,
    stop: null,
    timeInForce: deadline === null ? "GTC" : "GTD",
    deadline,
    price: 180_000,
    rate: 129_250_000,
    total: 1_403,
    status: "WORKING",
    filled: 0,
    notional: 0n,
    escrow: 1_403,
    cancelReason: null,
    rejectionCode: null
  }
  m.orders.push(order)
  const master = m.accounts.get("master")
  if (master !== undefined) {
    master.wallet -= order.escrow
    master.escrow += order.escrow
  }
  return order
}

describe("the resting-order model", () => {
  it("takes a pin at NSE's next open 900 s instant and shows it 15 minutes later", () => {
    expect(pinEffectiveAt(at("2026-11-23T08:00:00Z"))).toBe(at("2026-11-23T08:00:00Z"))
    expect(pinEffectiveAt(at("2026-11-23T08:00:01Z"))).toBe(at("2026-11-23T08:15:00Z"))
    expect(pinEffectiveAt(at("2026-11-23T11:50:00Z"))).toBe(at("2026-11-24T06:00:00Z"))
    expect(pinEffectiveAt(at("2026-11-27T13:00:00Z"))).toBe(at("2026-11-30T06:00:00Z"))
    const m = freshModel(180_000)
    m.pins.push({ effectiveAt: at("2026-11-23T09:00:00Z"), price: 175_000 })
    expect(publishedPrice(m, START + REFRESH_MS - 1)).toBeUndefined()
    expect(publishedPrice(m, at("2026-11-23T09:14:59Z"))).toBe(180_000)
    expect(publishedPrice(m, at("2026-11-23T09:15:00Z"))).toBe(175_000)
  })

  it("gives a DAY order the close of its session, or of the next one", () => {
    expect(dayDeadline(at("2026-11-23T08:00:00Z"))).toBe(at("2026-11-23T12:00:00Z"))
    expect(dayDeadline(at("2026-11-23T12:00:00Z"))).toBe(at("2026-11-24T12:00:00Z"))
    expect(dayDeadline(at("2026-11-24T05:59:00Z"))).toBe(at("2026-11-24T12:00:00Z"))
    expect(dayDeadline(at("2026-11-27T20:00:00Z"))).toBe(at("2026-11-30T12:00:00Z"))
  })

  it("runs a trigger and an expiry due at one instant in booking order", () => {
    const outcomes: Array<string> = []
    const count = (key: string) => void outcomes.push(key)
    const expiry = nextRefresh(at("2026-11-23T08:20:00Z"))
    // placed in the interval before its deadline: the first look is booked before the expiry, so it triggers first
    const m = freshModel(175_000)
    m.now = at("2026-11-23T08:20:00Z")
    const late = limitBuy(m, expiry)
    book(m, "trigger", nextRefresh(m.now), late.orderId)
    book(m, "expire", expiry, late.orderId)
    runJobsAt(m, expiry, count)
    expect([outcomes, late.status, late.price]).toEqual([["trigger", "expire triggered"], "EXPIRED", 175_000])
    // placed earlier: the look at the deadline was booked after the expiry, which runs first; no trigger
    outcomes.length = 0
    const n = freshModel(175_000)
    n.now = at("2026-11-23T08:05:00Z")
    const early = limitBuy(n, expiry)
    book(n, "expire", expiry, early.orderId)
    book(n, "trigger", expiry, early.orderId)
    runJobsAt(n, expiry, count)
    expect([outcomes, early.status, early.price, n.accounts.get("master")?.escrow]).toEqual([["expire WORKING"], "EXPIRED", 180_000, 0])
  })

  it("sees when the attempts of an instant would disable the webhook", () => {
    const m = freshModel(180_000)
    const t = at("2026-11-23T10:00:00Z")
    m.deliveries.push({ event: "order.pending", createdAt: t, attempts: MAX_ATTEMPTS - 1, success: false, statusCode: 500, lastAttemptAt: t, nextDue: t })
    m.receiverStatus = 500
    m.consecutiveFailures = 19
    expect(wouldDisableAt(m, t)).toBe(true)
    expect(wouldDisableAt(m, t - 1)).toBe(false)
    m.consecutiveFailures = 18
    expect(wouldDisableAt(m, t)).toBe(false)
    m.consecutiveFailures = 19
    m.receiverStatus = 200
    expect(wouldDisableAt(m, t)).toBe(false)
  })
})
