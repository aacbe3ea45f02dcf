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
    // each item carries its customer's externalId (spec: blotter order item), set when the order was placed
    expect(r.body.orders.map((o: { externalId: string }) => o.externalId)).toEqual(["blot-3", "blot-3", "blot-2", "blot-2", "blot-1", "blot-1"])
    expect(r.body).toMatchObject({
      count: 6,
      hasMore: false,
      nextCursor: null,
      ordering: "createdAt_desc",
      scope: "sub_accounts",
      scannedOrders: 6,
      snapshotModel: "per_customer",
      sandbox: true
    })
  })

  it("shows each order's currency and fill time: the instant a filled order filled, null while it is open", async () => {
    const first = placed[0] as { orderId: string }
    const { now } = (await engine.admin("POST", "/_sim/clock/advance", { seconds: 90 })).body
    await engine.admin("POST", `/_sim/desk/orders/${first.orderId}/fill`, {})
    const items = (await p.sb("GET", "/orders/blotter")).body.orders as Array<{ orderId: string; currency: string; filledAt: string | null }>
    expect(items.map((o) => o.currency)).toEqual(Array(6).fill("USD"))
    expect(items.map((o) => [o.orderId, o.filledAt])).toEqual([...placed].reverse().map((o) => [o.orderId, o.orderId === first.orderId ? now : null]))
  })

  it("filters by symbol, qualified or bare ticker in any case, and leaves other listings' orders out", async () => {
    const id = (placed[0] as { account: string }).account
    const q = await p.sb("GET", `/quote/EQTY?side=BUY&quantity=1&subAccountId=${id}`)
    const eqty = await p.sb("POST", `/users/${id}/trade`, { symbol: "EQTY", type: "BUY", quantity: 1, quoteId: q.body.quoteId })
    expect(eqty.status).toBe(202)
    const ids = async (symbol: string) =>
      ((await p.sb("GET", `/orders/blotter?symbol=${symbol}`)).body.orders as Array<{ orderId: string }>).map((o) => o.orderId)
    const scom = [...placed].reverse().map((o) => o.orderId)
    expect(await ids("SCOM.KE")).toEqual(scom)
    expect(await ids("SCOM")).toEqual(scom)
    expect(await ids("scom")).toEqual(scom)
    expect(await ids("EQTY.KE")).toEqual([eqty.body.orderId])
    expect(await ids("EQTY")).toEqual([eqty.body.orderId])
    expect(await ids("KCB")).toEqual([])
  })

  it("keeps the orders created within from..to, both bounds included", async () => {
    const all = (await p.sb("GET", "/orders/blotter")).body.orders as Array<{ orderId: string; createdAt: string }>
    const oldestFirst = [...all].reverse()
    const at = (i: number) => (oldestFirst[i] as { createdAt: string }).createdAt
    const ids = async (query: string) => {
      const r = await p.sb("GET", `/orders/blotter?${query}`)
      expect(r.status).toBe(200)
      return (r.body.orders as Array<{ orderId: string }>).map((o) => o.orderId)
    }
    const newestFirst = (from: number, to: number) =>
      oldestFirst
        .slice(from, to + 1)
        .reverse()
        .map((o) => o.orderId)
    expect(new Set(all.map((o) => o.createdAt)).size).toBe(6)
    expect(await ids(`from=${at(1)}&to=${at(3)}`)).toEqual(newestFirst(1, 3))
    expect(await ids(`from=${at(2)}&to=${at(2)}`)).toEqual(newestFirst(2, 2))
    expect(await ids(`from=${at(4)}`)).toEqual(newestFirst(4, 5))
    expect(await ids(`to=${at(1)}`)).toEqual(newestFirst(0, 1))
    // a date-only bound covers its whole UTC day
    expect(await ids(`from=${at(0).slice(0, 10)}&to=${at(0).slice(0, 10)}`)).toEqual(newestFirst(0, 5))
  })

  it("refuses a from after to with 400 naming both bounds", async () => {
    const r = await p.sb("GET", "/orders/blotter?from=2026-11-24&to=2026-11-23")
    expect(r.status).toBe(400)
    expect(r.body.error).toEqual({ code: "VALIDATION_ERROR", message: "from is after to", param: "from", params: ["from", "to"] })
    const instant = await p.sb("GET", "/orders/blotter?from=2026-11-23T08:00:03.001Z&to=2026-11-23T08:00:03Z")
    expect([instant.status, instant.body.error.message]).toEqual([400, "from is after to"])
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
      expect(r.body.hasMore).toBe(seen.length < placed.length)
      cursor = r.body.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual([...placed].reverse().map((o) => o.orderId))
    const page = await p.sb("GET", "/orders/blotter?limit=2")
    const elsewhere = await p.sb("GET", `/orders/blotter?limit=2&status=PENDING&cursor=${page.body.nextCursor}`)
    expect([elsewhere.status, elsewhere.body.error.code]).toEqual([400, "VALIDATION_ERROR"])
    const other = await partnerOf(engine)
    expect((await other.sb("GET", `/orders/blotter?limit=2&cursor=${page.body.nextCursor}`)).status).toBe(400)
  })

  it("refuses a cursor under a different status, symbol, from or to than the page that gave it", async () => {
    const pairs: Array<[string, string]> = [
      ["status=PENDING", "status=COMPLETED"],
      ["symbol=SCOM", "symbol=SCOM.KE"],
      ["from=2026-11-22", "from=2026-11-23"],
      ["to=2026-11-23", "to=2026-11-24"]
    ]
    for (const [given, other] of pairs) {
      const first = await p.sb("GET", `/orders/blotter?limit=1&${given}`)
      expect([given, first.body.hasMore]).toEqual([given, true])
      const same = await p.sb("GET", `/orders/blotter?limit=1&${given}&cursor=${first.body.nextCursor}`)
      expect([given, same.status, same.body.orders[0].orderId]).toEqual([given, 200, placed[4]?.orderId])
      const moved = await p.sb("GET", `/orders/blotter?limit=1&${other}&cursor=${first.body.nextCursor}`)
      expect([other, moved.status, moved.body.error.code, moved.body.error.param]).toEqual([other, 400, "VALIDATION_ERROR", "cursor"])
      expect(moved.body.error.message).toContain("unknown cursor")
    }
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
