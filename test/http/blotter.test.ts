/**
 * GET /orders/blotter (D-032) and GET /test-tools/orders (D-061): sub-account orders across customers, newest first, filtered and paged with a cursor
 * bound to the filters; master orders stay out; the scan stops at 20 customers or 1,000 orders per page (pure
 * tests of the scan). Every answer is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { BLOTTER_MAX_CUSTOMERS, BLOTTER_MAX_SCANNED, type Scanned, scanBlotter } from "../../engine/app/blotter.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { partnerOf } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

describe("GET /orders/blotter", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  const placed: Array<{ orderId: string; account: string }> = []
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    placed.length = 0
    for (const n of [1, 2, 3]) {
      const id = (await p.createUser("sandbox", { externalId: `blot-${n}` })).subAccountId
      await p.verify(id)
      await p.deposit(id, 100)
      for (const quantity of [n, n + 1]) {
        await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
        const q = await p.sb("GET", `/quote/SCOM?side=BUY&quantity=${quantity}&subAccountId=${id}`)
        const r = await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM", type: "BUY", quantity, quoteId: q.body.quoteId })
        expect(r.status).toBe(202)
        placed.push({ orderId: r.body.orderId, account: id })
      }
    }
    const mq = await p.sb("GET", "/quote/SCOM?side=BUY&quantity=1")
    expect((await p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mq.body.quoteId })).status).toBe(202)
  })
  afterEach(() => engine.dispose())

  it("lists sub-account orders only, newest first, with the page's description", async () => {
    const r = await p.sb("GET", "/orders/blotter")
    expect(r.status).toBe(200)
    expect(r.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([...placed].reverse().map((o) => o.orderId))
    expect(r.body.orders.map((o: { subAccountId: string }) => o.subAccountId)).toEqual([...placed].reverse().map((o) => o.account))
    expect(r.body).toMatchObject({
      count: 6,
      hasMore: false,
      nextCursor: null,
      ordering: "createdAt_desc",
      scope: "sub_accounts",
      scannedOrders: 6,
      sandbox: true
    })
  })

  it("filters by status, COMPLETED meaning FILLED", async () => {
    const first = placed[0] as { orderId: string }
    await engine.admin("POST", `/_sim/desk/orders/${first.orderId}/fill`, {})
    const filled = await p.sb("GET", "/orders/blotter?status=COMPLETED")
    expect(filled.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([first.orderId])
    expect((await p.sb("GET", "/orders/blotter?status=PENDING")).body.count).toBe(5)
    expect((await p.sb("GET", "/orders/blotter?status=ALL")).body.count).toBe(6)
    expect((await p.sb("GET", "/orders/blotter?status=pending")).status).toBe(400)
  })

  it("pages with a cursor bound to the filters: every order once, in order", async () => {
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const r = await p.sb("GET", `/orders/blotter?limit=4${cursor === null ? "" : `&cursor=${cursor}`}`)
      expect(r.status).toBe(200)
      seen.push(...r.body.orders.map((o: { orderId: string }) => o.orderId))
      cursor = r.body.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual([...placed].reverse().map((o) => o.orderId))
    const page = await p.sb("GET", "/orders/blotter?limit=2")
    const elsewhere = await p.sb("GET", `/orders/blotter?limit=2&status=PENDING&cursor=${page.body.nextCursor}`)
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([400, "VALIDATION_ERROR"])
    const other = await partnerOf(engine)
    expect((await other.sb("GET", `/orders/blotter?limit=2&cursor=${page.body.nextCursor}`)).status).toBe(400)
  })
})

describe("the blotter scan (pure)", () => {
  const order = (account: string, n: number): Scanned => ({ sortKey: `k${String(1_000_000 - n).padStart(7, "0")}`, order: { account } as OrderRecord })
  it("stops before the 21st customer and resumes after the last order it looked at", () => {
    const orders = Array.from({ length: 25 }, (_, i) => order(`usr_${i}`, i))
    const page = scanBlotter(orders, 200, () => true)
    expect(page.items).toHaveLength(BLOTTER_MAX_CUSTOMERS)
    expect(page.resumeAfter).toBe(orders[BLOTTER_MAX_CUSTOMERS - 1]?.sortKey)
  })
  it("stops after 1,000 scanned orders, matches or not, and skips master orders without counting them", () => {
    const orders = [order("master", 0), ...Array.from({ length: 1_100 }, (_, i) => order(`usr_${i % 3}`, i + 1))]
    const page = scanBlotter(orders, 200, () => false)
    expect(page.scanned).toBe(BLOTTER_MAX_SCANNED)
    expect(page.items).toEqual([])
    expect(page.resumeAfter).toBe(orders[BLOTTER_MAX_SCANNED]?.sortKey)
  })
  it("stops at the limit and has nothing to resume when the scan ran out", () => {
    const orders = Array.from({ length: 5 }, (_, i) => order("usr_1", i))
    expect(scanBlotter(orders, 3, () => true).resumeAfter).toBe(orders[2]?.sortKey)
    expect(scanBlotter(orders, 10, () => true).resumeAfter).toBeUndefined()
  })
})

describe("GET /test-tools/orders (sandbox)", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let id: string
  const orders: Array<string> = []
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    orders.length = 0
    id = (await p.createUser("sandbox", { externalId: "tools-1" })).subAccountId
    await p.verify(id)
    await p.deposit(id, 100)
    for (const quantity of [1, 2]) {
      const q = await p.sb("GET", `/quote/SCOM?side=BUY&quantity=${quantity}&subAccountId=${id}`)
      orders.push((await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM", type: "BUY", quantity, quoteId: q.body.quoteId })).body.orderId)
    }
  })
  afterEach(() => engine.dispose())

  it("lists a sub-account's orders, or only the one asked for, in the envelope of GET /orders", async () => {
    const all = await p.sb("GET", `/test-tools/orders?subAccountId=${id}`)
    expect(all.status).toBe(200)
    expect(all.body.orders.map((o: { orderId: string }) => o.orderId).sort()).toEqual([...orders].sort())
    const one = await p.sb("GET", `/test-tools/orders?subAccountId=${id}&orderId=${orders[0]}`)
    expect(one.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([orders[0]])
    expect(one.body.count).toBe(1)
  })

  it("needs subAccountId, refuses production keys and other partners' sub-accounts", async () => {
    const missing = await p.sb("GET", "/test-tools/orders")
    expect([missing.status, missing.body.error.code, missing.body.error.param]).toEqual([400, "MISSING_PARAM", "subAccountId"])
    const live = await p.call("production", "GET", `/test-tools/orders?subAccountId=${id}`)
    expect(live.status).toBe(403)
    const other = await partnerOf(engine)
    expect((await other.sb("GET", `/test-tools/orders?subAccountId=${id}`)).status).toBe(404)
  })
})
