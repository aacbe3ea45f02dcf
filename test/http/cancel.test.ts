/**
 * DELETE /orders/{orderId} (D-033): a PENDING order of the master account or of a sub-account is cancelled by its
 * partner; BUY escrow comes back to the wallet to the cent (an ORDER_REFUND in the history, `refunded` in
 * order.cancelled), a SELL's reserved shares are released; a decided or partly filled order is 409; another
 * partner's or environment's order is 404 (naming the order); the desk cannot fill a cancelled order afterwards.
 * Every answer is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { eventWatcher, partnerOf, SANDBOX, storeDocs, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

const cents = (x: number) => Math.round(x * 100)

describe("DELETE /orders/{orderId}", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let id: string
  let trade: Awaited<ReturnType<typeof tradingAccount>>["trade"]
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    ;({ id, trade } = await tradingAccount(p, "canceller-1"))
  })
  afterEach(() => engine.dispose())

  const quote = async (account: string | undefined, q: string) => {
    const r = await p.sb("GET", `/quote/SCOM?${q}${account === undefined ? "" : `&subAccountId=${account}`}`)
    expect(r.status).toBe(200)
    return r.body.quoteId as string
  }
  const balances = async () => {
    const docs = await storeDocs(engine, "balances", p.partition("sandbox"))
    return Object.fromEntries(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
  }
  const cancel = (orderId: string) => p.sb("DELETE", `/orders/${orderId}`)

  it("cancels a PENDING BUY: the escrow returns to the wallet to the cent, with its history entry and event", async () => {
    const before = await balances()
    const order = await trade("BUY", 10)
    expect((await balances())[`wallet:${id}`]).toBe((before[`wallet:${id}`] ?? 0) - cents(order.totalAmount))
    const watch = eventWatcher(engine)
    await watch()
    const r = await cancel(order.orderId)
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({
      orderId: order.orderId,
      status: "CANCELLED",
      cancelable: false,
      cancelReason: "PARTNER_REQUEST",
      settlementStatus: "FAILED",
      filledQuantity: 0
    })
    expect(r.body.cancelledAt).toEqual(expect.any(String))
    const after = await balances()
    expect(after[`wallet:${id}`]).toBe(before[`wallet:${id}`])
    expect(after[`escrow:${id}`] ?? 0).toBe(0)
    const events = await watch()
    expect(events.map((e) => e.event)).toEqual(["order.cancelled"])
    expect(events[0]?.data).toMatchObject({ orderId: order.orderId, subAccountId: id, status: "CANCELLED", refunded: order.totalAmount, currency: "USD" })
    const refunds = (await p.sb("GET", `/users/${id}/transactions?type=ORDER_REFUND`)).body.transactions
    expect(refunds).toHaveLength(1)
    expect(cents(refunds[0].amount)).toBe(cents(order.totalAmount))
    expect(refunds[0].description).toBe(`Escrow returned: cancelled BUY SCOM.KE (order ${order.orderId})`)
  })

  it("cancels a master order too", async () => {
    const placed = await p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 5, quoteId: await quote(undefined, "side=BUY&quantity=5") })
    expect(placed.status).toBe(202)
    const before = (await balances())["wallet:master"]
    expect((await cancel(placed.body.orderId)).status).toBe(200)
    expect((await balances())["wallet:master"]).toBe((before ?? 0) + cents(placed.body.totalAmount))
  })

  it("releases a cancelled SELL's shares, which can then be sold again, and moves no cash", async () => {
    const bought = await trade("BUY", 10)
    expect((await engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})).status).toBe(200)
    const sell = await trade("SELL", 10)
    const cash = (await balances())[`wallet:${id}`]
    // all 10 shares are reserved by the open SELL: another SELL of 1 is beyond the free holding
    const beyond = await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM", type: "SELL", quantity: 1, quoteId: await quote(id, "side=SELL&quantity=1") })
    expect(beyond.status).toBe(422)
    const r = await cancel(sell.orderId)
    expect(r.status).toBe(200)
    expect((await balances())[`wallet:${id}`]).toBe(cash)
    expect(await trade("SELL", 10)).toMatchObject({ status: "PENDING" })
  })

  it("answers 409 for a filled, a partly filled or an already cancelled order, and leaves it as it was", async () => {
    const filled = await trade("BUY", 4)
    await engine.admin("POST", `/_sim/desk/orders/${filled.orderId}/fill`, {})
    const partly = await trade("BUY", 4)
    await engine.admin("POST", `/_sim/desk/orders/${partly.orderId}/fill`, { quantity: 1 })
    const cancelled = await trade("BUY", 2)
    expect((await cancel(cancelled.orderId)).status).toBe(200)
    for (const [orderId, status] of [
      [filled.orderId, "FILLED"],
      [partly.orderId, "PARTIALLY_FILLED"],
      [cancelled.orderId, "CANCELLED"]
    ] as const) {
      const before = await balances()
      const r = await cancel(orderId)
      expect([r.status, r.body.error.code], orderId).toEqual([409, "CONFLICT"])
      expect(await balances()).toEqual(before)
      const listed = (await p.sb("GET", `/users/${id}/orders`)).body.orders.find((o: { orderId: string }) => o.orderId === orderId)
      expect(listed.status).toBe(status)
    }
  })

  it("keeps the desk from filling a cancelled order", async () => {
    const order = await trade("BUY", 3)
    expect(((await engine.admin("GET", "/_sim/desk/queue")).body.orders as Array<{ orderId: string }>).map((o) => o.orderId)).toContain(order.orderId)
    await cancel(order.orderId)
    const fill = await engine.admin("POST", `/_sim/desk/orders/${order.orderId}/fill`, {})
    expect(fill.status).toBe(409)
    const queue = (await engine.admin("GET", "/_sim/desk/queue")).body.orders as Array<{ orderId: string }>
    expect(queue.map((o) => o.orderId)).not.toContain(order.orderId)
  })

  it("answers 404 for an unknown order, another partner's and the other environment's", async () => {
    const order = await trade("BUY", 2)
    expect((await cancel("ord_nope")).status).toBe(404)
    const other = await partnerOf(engine)
    const foreign = await other.sb("DELETE", `/orders/${order.orderId}`)
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "NOT_FOUND"])
    expect(JSON.stringify(foreign.body)).not.toContain(id)
    const live = await p.call("production", "DELETE", `/orders/${order.orderId}`)
    expect(live.status).toBe(404)
    // still cancellable by its owner
    expect((await cancel(order.orderId)).status).toBe(200)
  })

  it("cancelling another partner's order is 404 naming the order", async () => {
    const mine = await trade("BUY", 1)
    const stranger = await partnerOf(engine)
    const r = await stranger.sb("DELETE", `/orders/${mine.orderId}`)
    expect([r.status, r.body.error.code]).toEqual([404, "NOT_FOUND"])
    expect(r.body.error.message).toBe(`order ${mine.orderId} was not found`)
  })

  it("replays a retried cancel with the same Idempotency-Key byte for byte", async () => {
    const order = await trade("BUY", 2)
    const headers = { "x-api-key": p.keys.sandboxKey, "idempotency-key": "cancel-retry-0001" }
    const first = await engine.call("DELETE", `${SANDBOX}/orders/${order.orderId}`, { headers })
    const again = await engine.call("DELETE", `${SANDBOX}/orders/${order.orderId}`, { headers })
    expect(first.status).toBe(200)
    expect(again.status).toBe(200)
    expect(JSON.stringify(again.body)).toBe(JSON.stringify(first.body))
  })
})
