/**
 * The jobs behind a resting order, trigger and expiry, on the manual clock (memory store): a GTC order gets no expiry
 * job and stays WORKING; an order cancelled meanwhile neither triggers nor expires; a sandbox reset that wipes a
 * WORKING order ends its trigger chain quietly; a trigger looks only at prices captured while the exchange was open,
 * not at the open itself; a STOP BUY rejected at its trigger says why and books its escrow back as a rejection, one
 * triggered above its stop books the extra escrow. No job fails (none is left in deadJobs). Every answer is checked
 * against the contract by the harness.
 */
import { describe, expect, it } from "vitest"
import { freshTraders, storeDocs } from "./accounts-kit.ts"

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 100); accounts-kit.ts. */
const setup = freshTraders(100)

describe("the expiry job", () => {
  it("a GTC order has no deadline: no expiry job, still WORKING days later", async () => {
    const s = await setup(500)
    const r = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 1, limitPrice: 0.01, timeInForce: "GTC" })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body.orderId).toMatch(/^ord_/)
    await s.advance({ seconds: 1 })
    await s.advance({ seconds: 3 * 86_400 })
    const listed = (await s.p.sb("GET", "/orders")).body.orders.find((o: { orderId: string }) => o.orderId === r.body.orderId)
    expect(listed.status).toBe("WORKING")
    // and no expiry job was ever scheduled for it: none ran and failed (a failing job is kept in deadJobs)
    expect(await storeDocs(s.engine, "deadJobs", "global")).toEqual([])
  })
})

describe("the trigger and expiry jobs of an order decided meanwhile", () => {
  it("a cancelled order neither triggers at a price that would have triggered it nor expires at its close", async () => {
    const s = await setup()
    await s.pin(25)
    const orderId = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18 })
    expect((await s.p.sb("DELETE", `/orders/${orderId}`)).status).toBe(200)
    await s.watch()
    await s.pin(17)
    await s.advance({ to: "2026-11-23T12:30:00Z" })
    expect(await s.order(orderId)).toMatchObject({ status: "CANCELLED", cancelReason: "PARTNER_REQUEST" })
    expect(await s.watch()).toEqual([])
    expect(await s.deadJobs()).toEqual([])
  })

  it("a sandbox reset that wipes a WORKING order ends its trigger chain quietly", async () => {
    const s = await setup()
    await s.pin(25)
    await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTC" })
    expect((await s.p.reset()).status).toBe(200)
    await s.advance({ to: "2026-11-23T09:00:00Z" })
    expect(await s.deadJobs()).toEqual([])
  })

  it("a trigger looks only at prices captured while the exchange was open: not at the open itself", async () => {
    const s = await setup()
    // after Monday's close, a GTC LIMIT above the last price: it would trigger at once if it looked
    await s.advance({ to: "2026-11-23T18:00:00Z" })
    await s.pin(17)
    const orderId = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTC" })
    // NSE opens at 09:00 Nairobi (06:00 UTC): the 06:00 refresh publishes a capture from before the open
    await s.advance({ to: "2026-11-24T06:00:00Z" })
    expect((await s.order(orderId)).status).toBe("WORKING")
    await s.advance({ to: "2026-11-24T06:30:00Z" })
    expect((await s.order(orderId)).status).toBe("PENDING")
  })

  it("a STOP BUY rejected at its trigger says why, books the escrow back as a rejection; one triggered above its stop books the extra escrow", async () => {
    const s = await setup(10)
    const short = await s.placed({ type: "BUY", orderType: "STOP", quantity: 64, stopPrice: 20 })
    await s.pin(20.5)
    await s.watch()
    await s.advance({ to: "2026-11-23T08:15:00Z" })
    const rejected = await s.order(short)
    expect(rejected).toMatchObject({ status: "REJECTED", rejectionCode: "INSUFFICIENT_FUNDS" })
    expect(rejected.rejectionReason).toMatch(/^the STOP BUY triggered at 20\.5 and needs .* USD more than its escrow; the wallet holds .* USD$/)
    const events = await s.watch()
    expect(events.map((e) => [e.event, e.data.rejectionCode, e.data.subAccountId])).toEqual([
      ["order.rejected", "INSUFFICIENT_FUNDS", s.id],
      ["trade.rejected", "INSUFFICIENT_FUNDS", s.id]
    ])
    const history = (await s.p.sb("GET", `/users/${s.id}/transactions`)).body.transactions.map((t: { description: string }) => t.description)
    expect(history).toContain(`Escrow returned: rejected BUY SCOM.KE (order ${short})`)
    const wide = await setup()
    const up = await wide.placed({ type: "BUY", orderType: "STOP", quantity: 10, stopPrice: 20 })
    await wide.pin(20.5)
    await wide.advance({ to: "2026-11-23T08:15:00Z" })
    expect((await wide.order(up)).status).toBe("PENDING")
    const upHistory = (await wide.p.sb("GET", `/users/${wide.id}/transactions`)).body.transactions.map((t: { description: string }) => t.description)
    expect(upHistory.filter((d: string) => d === `Escrow for BUY SCOM.KE (order ${up})`)).toHaveLength(2)
  })
})
