/**
 * How a placed order is decided (memory store, manual clock): the desk's fill refusing a price with more than 4
 * decimals and naming its execution report exr_; the scripted desk's price (a fill at the quote price ignores the
 * market, one at the market price above a BUY's quote is declined); settlement failures custody cannot unwind (D-290:
 * a partly filled BUY whose shares are reserved by a SELL, a partly filled SELL once its proceeds left the wallet); and
 * a suspension rejecting only its own symbol's open orders. Every answer is checked against the contracts by the
 * harness.
 */
import { describe, expect, it } from "vitest"
import { failureOf, freshTraders } from "./accounts-kit.ts"

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 100); accounts-kit.ts. */
const setup = freshTraders(100)

describe("the desk's fill", () => {
  it("deskFill refuses a price with more than 4 decimals, and names its execution report exr_", async () => {
    const s = await setup(500)
    const placed = await s.trade("BUY", 2)
    expect(failureOf(await s.service((t) => t.deskFill(placed.orderId, { price: 0.12345 })))).toEqual({
      code: "VALIDATION_ERROR",
      message: "price must be positive with at most 4 decimals",
      param: "price"
    })
    const filled = await s.fill(placed.orderId)
    expect(filled.lastExecutionReportId).toMatch(/^exr_[0-9a-z]{16}$/)
  })
})

describe("the scripted desk's price", () => {
  it("a fill at the quote price ignores a market that moved up; a fill at the market price above a BUY's quote is declined", async () => {
    const s = await setup()
    const policy = await s.engine.admin("PUT", "/_sim/desk/policy", {
      mode: "scripted",
      scripts: [{ steps: [{ afterSeconds: 1800, action: "fill" }] }, { steps: [{ afterSeconds: 1800, action: "fill", price: "market" }] }]
    })
    expect(policy.status, JSON.stringify(policy.body)).toBe(200)
    const atQuote = await s.trade("BUY", 2)
    const atMarket = await s.trade("BUY", 2)
    await s.pin(atQuote.priceAtOrder * 2)
    await s.advance({ seconds: 1800 })
    expect(await s.order(atQuote.orderId)).toMatchObject({ status: "FILLED", averageFillPrice: atQuote.priceAtOrder })
    expect(await s.order(atMarket.orderId)).toMatchObject({
      status: "REJECTED",
      rejectionCode: "PRICE_OUT_OF_TOLERANCE",
      rejectionReason: "The market moved above the quoted price"
    })
  })
})

describe("settlement failures custody cannot unwind (D-290)", () => {
  it("a partly filled BUY whose filled shares are reserved by a SELL cannot unwind (409), though the desk may still reject its remainder", async () => {
    const s = await setup()
    const buy = await s.trade("BUY", 10)
    expect((await s.fill(buy.orderId, { quantity: 5 })).status).toBe("PARTIALLY_FILLED")
    // the 5 filled shares are all reserved by a pending SELL: none is free to give back
    const sell = await s.trade("SELL", 5)
    const stuck = await s.engine.admin("POST", `/_sim/desk/orders/${buy.orderId}/fail-settlement`, {})
    expect([stuck.status, stuck.body.error.code]).toEqual([409, "CONFLICT"])
    expect(stuck.body.error.message).toMatch(/no longer holds the 5 filled units of SCOM\.KE/)
    await s.watch()
    // a plain rejection keeps the filled part: nothing to unwind, so the reserved shares do not matter
    const rejected = await s.engine.admin("POST", `/_sim/desk/orders/${buy.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "rest" })
    expect(rejected.status).toBe(200)
    expect(rejected.body).toMatchObject({ status: "REJECTED", filledQuantity: 5 })
    const events = await s.watch()
    expect(events.map((e) => e.event)).toEqual(["order.rejected", "trade.rejected"])
    // the fee of the 5 filled units (0.75% of their gross, at least a cent) is the rejection's fee
    expect(events[0]?.data.feeAmount).toBeGreaterThan(0)
    expect((await s.order(sell.orderId)).status).toBe("PENDING")
  })

  it("a partly filled SELL unwinds while the wallet holds its proceeds, to the cent, and not once a cent is gone", async () => {
    const s = await setup()
    const buy = await s.trade("BUY", 10)
    await s.fill(buy.orderId)
    // empty the wallet: from here it holds only what the SELLs bring
    const { wallet } = await s.balances()
    expect((await s.p.sb("POST", `/users/${s.id}/withdraw`, { amount: wallet / 100 })).status).toBe(200)
    expect((await s.balances()).wallet).toBe(0)
    const sell = await s.trade("SELL", 4)
    await s.fill(sell.orderId, { quantity: 2 })
    const proceeds = (await s.balances()).wallet
    expect(proceeds).toBeGreaterThan(0)
    expect((await s.p.sb("POST", `/users/${s.id}/withdraw`, { amount: 0.01 })).status).toBe(200)
    const short = await s.engine.admin("POST", `/_sim/desk/orders/${sell.orderId}/fail-settlement`, {})
    expect([short.status, short.body.error.code]).toEqual([409, "CONFLICT"])
    expect(short.body.error.message).toBe(`the wallet no longer holds the ${proceeds / 100} USD of proceeds to reverse`)
    expect((await s.p.sb("POST", `/users/${s.id}/deposit`, { amount: 0.01 })).status).toBe(200)
    expect((await s.balances()).wallet).toBe(proceeds)
    const unwound = await s.engine.admin("POST", `/_sim/desk/orders/${sell.orderId}/fail-settlement`, {})
    expect(unwound.status).toBe(200)
    expect(unwound.body).toMatchObject({ status: "REJECTED", settlementStatus: "FAILED", filledQuantity: 0 })
    expect((await s.balances()).wallet).toBe(0)
    // a SELL of every share, partly filled: the holding left is all reserved, yet its proceeds unwind
    const all = await s.trade("SELL", 10)
    await s.fill(all.orderId, { quantity: 6 })
    const back = await s.engine.admin("POST", `/_sim/desk/orders/${all.orderId}/fail-settlement`, {})
    expect(back.status).toBe(200)
    expect((await s.balances()).wallet).toBe(0)
  })
})

describe("a suspension", () => {
  it("suspending one symbol rejects only that symbol's open orders", async () => {
    const s = await setup()
    const scom = await s.trade("BUY", 1)
    const qe = await s.p.sb("GET", `/quote/EQTY.KE?side=BUY&quantity=1&subAccountId=${s.id}`)
    const eqty = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "EQTY.KE", type: "BUY", quantity: 1, quoteId: qe.body.quoteId })
    expect(eqty.status).toBe(202)
    const raised = await s.engine.admin("POST", "/_sim/corporate-actions", { actionType: "SUSPENSION", symbol: "EQTY.KE", reason: "announcement" })
    expect(raised.status).toBe(201)
    expect(raised.body.ordersRejected).toEqual([eqty.body.orderId])
    expect((await s.order(scom.orderId)).status).toBe("PENDING")
  })
})
