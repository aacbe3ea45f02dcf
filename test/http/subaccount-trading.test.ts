/**
 * Trading on sub-accounts against their documents: who may trade (active, KYC VERIFIED), and the money an order
 * moves in the ledger: escrow at placement, fees and the market at the fill, refunds; what blocks a closure; the
 * master wallet's reserved cash. Every answer is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"
import { partnerOf, storeDocs } from "./accounts-kit.ts"

const cents = (x: number) => Math.round(x * 100)

describe("sub-account trading", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let id: string
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    id = (await p.createUser("sandbox", { externalId: "trader-1" })).subAccountId
  })
  afterEach(() => engine.dispose())

  const quote = async (account: string | undefined, q: string) => {
    const r = await p.sb("GET", `/quote/SCOM?${q}${account === undefined ? "" : `&subAccountId=${account}`}`)
    expect(r.status).toBe(200)
    return r.body.quoteId as string
  }
  const buy = async (account: string, quantity: number) =>
    p.sb("POST", `/users/${account}/trade`, { symbol: "SCOM", type: "BUY", quantity, quoteId: await quote(account, `side=BUY&quantity=${quantity}`) })
  const balances = async () => {
    const docs = await storeDocs(engine, "balances", p.partition("sandbox"))
    return Object.fromEntries(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
  }
  const summary = async () => (await p.sb("GET", `/users/summary?userIds=${id}`)).body.accounts[0]

  it("quotes need an existing sub-account of the caller; quotes for frozen and closed ones are still issued", async () => {
    const unknown = await p.sb("GET", "/quote/SCOM?subAccountId=usr_nope")
    expect(unknown.status).toBe(404)
    expect(unknown.body.error).toMatchObject({ code: "NOT_FOUND", param: "subAccountId" })
    const other = await partnerOf(engine)
    expect((await other.sb("GET", `/quote/SCOM?subAccountId=${id}`)).status).toBe(404)
    await p.sb("POST", `/users/${id}/freeze`)
    expect((await p.sb("GET", `/quote/SCOM?subAccountId=${id}`)).status).toBe(200)
  })

  it("trading needs an active, KYC-verified sub-account", async () => {
    await p.deposit(id, 100)
    const noKyc = await buy(id, 1)
    expect(noKyc.status).toBe(403)
    expect(noKyc.body.error).toEqual({ code: "KYC_REQUIRED", message: `sub-account ${id} has kycStatus NONE: trading needs VERIFIED` })
    await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "X", rejectionReason: "y" })
    expect((await buy(id, 1)).body.error.code).toBe("KYC_REQUIRED")
    await p.verify(id)
    await p.sb("POST", `/users/${id}/freeze`)
    const frozen = await buy(id, 1)
    expect(frozen.status).toBe(403)
    expect(frozen.body.error).toEqual({ code: "FORBIDDEN", message: `sub-account ${id} is frozen: trading is not allowed` })
    await p.sb("POST", `/users/${id}/unfreeze`)
    expect((await buy(id, 1)).status).toBe(202)
    const missing = await p.sb("POST", "/users/usr_nope/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_x" })
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe("NOT_FOUND")
  })

  it("a BUY escrows, the fill pays the market and the fee and refunds unused escrow; the history shows both", async () => {
    await p.verify(id)
    await p.deposit(id, 500)
    const placed = await buy(id, 1000)
    expect(placed.status).toBe(202)
    const total = cents(placed.body.totalAmount)
    expect((await p.sb("GET", `/users/${id}`)).body.walletBalance * 100).toBeCloseTo(50_000 - total, 6)
    let b = await balances()
    expect(b[`wallet:${id}`]).toBe(50_000 - total)
    expect(b[`escrow:${id}`]).toBe(total)
    const s = await summary()
    expect(s.currencyWallets).toEqual([{ currency: "USD", balance: 500, available: (50_000 - total) / 100, reserved: total / 100 }])
    expect(s.currencyClosureBlockers.map((x: { reason: string; count: number | null }) => [x.reason, x.count])).toEqual([
      ["NON_ZERO_BALANCE", null],
      ["OPEN_ORDERS", 1]
    ])
    const orders = await p.sb("GET", `/users/${id}/orders`)
    expect(orders.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([placed.body.orderId])
    expect((await p.sb("GET", "/orders")).body.count).toBe(0)

    // fill below the quote: less gross, less fee, the difference comes back
    const price = placed.body.priceAtOrder - 0.5
    const filled = await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/fill`, { price })
    expect(filled.status).toBe(200)
    b = await balances()
    expect(b[`escrow:${id}`] ?? 0).toBe(0)
    const fee = b.fees ?? 0
    const market = b.market ?? 0
    expect(fee).toBeGreaterThan(0)
    expect(market + fee).toBeLessThan(total)
    expect(b[`wallet:${id}`]).toBe(50_000 - market - fee)
    const txs = (await p.sb("GET", `/users/${id}/transactions`)).body.transactions
    expect(txs.map((t: { type: string; orderId: string | null }) => [t.type, t.orderId])).toEqual([
      ["ORDER_REFUND", placed.body.orderId],
      ["ORDER_ESCROW", placed.body.orderId],
      ["DEPOSIT", null]
    ])
    expect(cents(txs[1].amount)).toBe(-total)
    expect(cents(txs[0].amount)).toBe(total - market - fee)
    expect(txs[0].description).toBe(`Unused escrow returned: filled BUY SCOM.KE (order ${placed.body.orderId})`)
    expect(txs[1].description).toBe(`Escrow for BUY SCOM.KE (order ${placed.body.orderId})`)
    // now it holds shares: closing is blocked by the position as well as the cash
    expect((await summary()).currencyClosureBlockers.map((x: { reason: string; count: number | null }) => [x.reason, x.count])).toEqual([
      ["NON_ZERO_BALANCE", null],
      ["OPEN_POSITIONS", 1]
    ])
    expect((await p.sb("DELETE", `/users/${id}`)).status).toBe(409)
  })

  it("a SELL reserves shares (an open order with no cash escrow) and its fill credits the proceeds", async () => {
    await p.verify(id)
    await p.deposit(id, 100)
    const placed = await buy(id, 10)
    await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/fill`, {})
    const sell = await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM", type: "SELL", quantity: 10, quoteId: await quote(id, "side=SELL&quantity=10") })
    expect(sell.status).toBe(202)
    const blockers = (await summary()).currencyClosureBlockers
    expect(blockers.find((x: { reason: string }) => x.reason === "OPEN_ORDERS")).toMatchObject({ amount: 0, count: 1 })
    const before = (await balances())[`wallet:${id}`] ?? 0
    await engine.admin("POST", `/_sim/desk/orders/${sell.body.orderId}/fill`, {})
    const after = (await balances())[`wallet:${id}`] ?? 0
    expect(after - before).toBe(cents(sell.body.totalAmount))
    const txs = (await p.sb("GET", `/users/${id}/transactions?type=ORDER_PROCEEDS`)).body.transactions
    expect(txs).toHaveLength(1)
    expect(cents(txs[0].amount)).toBe(cents(sell.body.totalAmount))
    expect(txs[0].description).toBe(`Proceeds of SELL SCOM.KE (order ${sell.body.orderId})`)
    // no cash in escrow, no shares: withdraw everything and the account closes
    expect((await summary()).currencyClosureBlockers.map((x: { reason: string }) => x.reason)).toEqual(["NON_ZERO_BALANCE"])
    await p.sb("POST", `/users/${id}/withdraw`, { amount: after / 100 })
    expect((await p.sb("DELETE", `/users/${id}`)).status).toBe(200)
  })

  it("a rejected BUY returns its escrow as ORDER_REFUND", async () => {
    await p.verify(id)
    await p.deposit(id, 50)
    const placed = await buy(id, 5)
    await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "no" })
    const txs = (await p.sb("GET", `/users/${id}/transactions`)).body.transactions
    expect(txs[0]).toMatchObject({ type: "ORDER_REFUND", amount: placed.body.totalAmount, balanceAfter: 50, orderId: placed.body.orderId })
    expect(txs[0].description).toBe(`Escrow returned: rejected BUY SCOM.KE (order ${placed.body.orderId})`)
    expect((await balances())[`escrow:${id}`]).toBe(0)
  })

  it("the master wallet shows cash escrowed for master orders as reserved, and dates its last movement", async () => {
    const q = await quote(undefined, "side=BUY&quantity=100")
    const placed = await p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 100, quoteId: q })
    const w = (await p.sb("GET", "/wallet")).body
    expect(cents(w.reserved)).toBe(cents(placed.body.totalAmount))
    expect(cents(w.available)).toBe(10_000_000 - cents(placed.body.totalAmount))
    expect(w.balance).toBe(100000)
    expect(w.updatedAt).toBe("2026-11-23T08:00:00.000Z")
    // a fill at the quote price moves only the escrow (nothing to refund): that is the wallet's last movement
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 45 })
    await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/fill`, {})
    const after = (await p.sb("GET", "/wallet")).body
    expect(after).toMatchObject({ reserved: 0, updatedAt: "2026-11-23T08:00:45.000Z" })
    expect(cents(after.available)).toBe(10_000_000 - cents(placed.body.totalAmount))
  })

  it("a sub-account's orders list needs an existing sub-account of the caller", async () => {
    expect((await p.sb("GET", "/users/usr_nope/orders")).status).toBe(404)
    await p.sb("DELETE", `/users/${id}`)
    expect((await p.sb("GET", `/users/${id}/orders`)).status).toBe(200)
  })

  it("a sandbox reset wipes open orders; their auto-desk fills find nothing", async () => {
    const auto = startEngine({ desk: "auto" })
    try {
      const q = await partnerOf(auto)
      const u = (await q.createUser()).subAccountId
      await q.verify(u)
      await q.deposit(u, 100)
      const quoteId = (await q.sb("GET", `/quote/SCOM?side=BUY&quantity=1&subAccountId=${u}`)).body.quoteId
      expect((await q.sb("POST", `/users/${u}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId })).status).toBe(202)
      await q.reset()
      const advanced = await auto.admin("POST", "/_sim/clock/advance", { seconds: 120 })
      expect(advanced.status).toBe(200)
      expect((await auto.admin("GET", "/_sim/desk/queue")).body.orders).toEqual([])
      expect((await q.sb("GET", "/wallet")).body.balance).toBe(100000)
    } finally {
      await auto.dispose()
    }
  })
})
