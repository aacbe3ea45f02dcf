/**
 * The order events' payloads as a partner's webhook or stream carries them (memory store, manual clock):
 * order.pending names the account (accountType MASTER on the master, subAccountId on a sub-account) and carries
 * totalCost on a BUY only; order.filled carries a BUY's totalCost (gross plus fee) or a SELL's proceeds (gross minus
 * fee) and feeAmount, accountType MASTER and subAccountId null on a master order only; order.cancelled names the
 * sub-account or null and carries refunded on a BUY only. Every answer is checked against the contract by the harness.
 */
import { describe, expect, it } from "vitest"
import { freshTraders, type TraceEvent } from "./accounts-kit.ts"

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 500); accounts-kit.ts. */
const setup = freshTraders(500)

const only = (events: ReadonlyArray<TraceEvent>, name: string) => events.filter((e) => e.event === name).map((e) => e.data)

describe("order events name the account and the side's money", () => {
  it("order.pending: accountType MASTER on the master, subAccountId on a sub-account, totalCost only on a BUY", async () => {
    const s = await setup()
    const masterQuote = await s.quote("SCOM?side=BUY&quantity=3")
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: masterQuote.quoteId })
    expect(master.status).toBe(202)
    const bought = await s.trade("BUY", 4)
    await s.fill(bought.orderId)
    const sold = await s.trade("SELL", 2)
    const pending = only(await s.watch(), "order.pending")
    const byId = (id: string) => pending.find((d) => d.orderId === id)
    expect(byId(master.body.orderId)).toMatchObject({ accountType: "MASTER", totalCost: master.body.totalAmount })
    expect(byId(master.body.orderId)).not.toHaveProperty("subAccountId")
    expect(byId(bought.orderId)).toMatchObject({ subAccountId: s.id, totalCost: bought.totalAmount })
    expect(byId(bought.orderId)).not.toHaveProperty("accountType")
    expect(byId(sold.orderId)).toMatchObject({ subAccountId: s.id, type: "SELL" })
    expect(byId(sold.orderId)).not.toHaveProperty("totalCost")
  })

  it("order.filled: a BUY's totalCost is gross plus fee, a SELL's proceeds gross minus fee, feeAmount the fee; accountType only on the master", async () => {
    const s = await setup()
    const bought = await s.trade("BUY", 2000)
    await s.fill(bought.orderId)
    const sold = await s.trade("SELL", 1500)
    await s.fill(sold.orderId)
    const masterQuote = await s.quote("SCOM?side=BUY&quantity=200")
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 200, quoteId: masterQuote.quoteId })
    await s.fill(master.body.orderId)
    const filled = only(await s.watch(), "order.filled")
    const byId = (id: string) => filled.find((d) => d.orderId === id)
    // filled whole at the price of the order: the totals are the placement's
    expect(bought.fee).toBeGreaterThan(0)
    expect(byId(bought.orderId)).toMatchObject({ subAccountId: s.id, totalCost: bought.totalAmount, feeAmount: bought.fee })
    expect(byId(bought.orderId)).not.toHaveProperty("proceeds")
    expect(byId(bought.orderId)).not.toHaveProperty("accountType")
    expect(sold.fee).toBeGreaterThan(0)
    expect(byId(sold.orderId)).toMatchObject({ subAccountId: s.id, proceeds: sold.totalAmount, feeAmount: sold.fee })
    expect(byId(sold.orderId)).not.toHaveProperty("totalCost")
    expect(byId(master.body.orderId)).toMatchObject({ accountType: "MASTER", subAccountId: null, totalCost: master.body.totalAmount })
  })

  it("order.cancelled: subAccountId null on the master and the sub-account's id otherwise; refunded only on a BUY", async () => {
    const s = await setup()
    const bought = await s.trade("BUY", 4)
    await s.fill(bought.orderId)
    const sell = await s.p.sb("POST", `/users/${s.id}/trade`, {
      symbol: "SCOM",
      type: "SELL",
      orderType: "LIMIT",
      quantity: 2,
      limitPrice: 99,
      timeInForce: "GTC"
    })
    expect(sell.status, JSON.stringify(sell.body)).toBe(202)
    const buy = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 2, limitPrice: 0.01, timeInForce: "GTC" })
    expect(buy.status, JSON.stringify(buy.body)).toBe(202)
    expect((await s.p.sb("DELETE", `/orders/${sell.body.orderId}`)).status).toBe(200)
    expect((await s.p.sb("DELETE", `/orders/${buy.body.orderId}`)).status).toBe(200)
    const cancelled = only(await s.watch(), "order.cancelled")
    const sold = cancelled.find((d) => d.orderId === sell.body.orderId)
    expect(sold).toMatchObject({ subAccountId: s.id, type: "SELL" })
    expect(sold).not.toHaveProperty("refunded")
    expect(cancelled.find((d) => d.orderId === buy.body.orderId)).toMatchObject({ subAccountId: null, type: "BUY", refunded: buy.body.totalAmount })
  })

  it("order.filled names the sub-account of a sub-account order and no sub-account (MASTER) for a master order", async () => {
    const s = await setup(100)
    const sub = await s.trade("BUY", 2)
    const q = await s.p.sb("GET", "/quote/SCOM?side=BUY&quantity=2")
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: q.body.quoteId })
    expect(master.status).toBe(202)
    await s.watch()
    await s.fill(sub.orderId)
    await s.fill(master.body.orderId)
    const filled = (await s.watch()).filter((e) => e.event === "order.filled")
    expect(filled.map((e) => [e.data.orderId, e.data.subAccountId, e.data.accountType ?? null])).toEqual([
      [sub.orderId, s.id, null],
      [master.body.orderId, null, "MASTER"]
    ])
  })
})
