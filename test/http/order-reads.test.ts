/**
 * Reading orders (memory store, manual clock): `GET /orders` and `GET /users/{userId}/orders` look at 1,000 records
 * at most per request (exactly 1,000 are one page with no more to come, the 1,001st is left for the next); through the
 * service API, listOrders' from / to (from after to refused, both bounds inclusive at the millisecond) and getOrder,
 * FORBIDDEN in the sandbox and answered in production. Every answer is checked against the contract by the harness.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { Orders, timeSortKey } from "../../engine/app/docs.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { Store } from "../../engine/store/port.ts"
import { type Engine, failureOf, freshTraders, storeDocs } from "./accounts-kit.ts"

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 500); accounts-kit.ts. */
const setup = freshTraders(500)

describe("GET /orders scans at most 1,000 records", () => {
  const bulk = async (engine: Engine, template: OrderRecord, count: number, from: number, prefix: string) =>
    engine.runtime.runPromise(
      Store.use((st) =>
        st.transact((tx) =>
          Effect.forEach(
            Array.from({ length: count }, (_, i) => ({
              ...template,
              orderId: `ord_${prefix}_${String(i).padStart(5, "0")}`,
              account: "master",
              createdAt: from + i
            })),
            (o) => Orders.put(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o),
            { discard: true }
          )
        )
      )
    )

  it("exactly 1,000 records are all looked at with no more to come; the 1,001st is left for the next page", async () => {
    const s = await setup()
    const mine = await s.trade("BUY", 1)
    const template = (await storeDocs(s.engine, "orders", s.p.partition("sandbox")))[0]?.body as OrderRecord
    // 999 master orders newer than the sub-account's: 1,000 in the partition
    await bulk(s.engine, template, 999, template.createdAt + 1_000, "a")
    expect((await s.p.sb("GET", `/users/${s.id}/orders`)).body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
    // the master's orders filtered on a symbol none has: nothing, and nothing more
    expect((await s.p.sb("GET", "/orders?symbol=EQTY")).body).toMatchObject({ count: 0, hasMore: false, nextCursor: null })
    // one more: the sub-account's order is the 1,001st, beyond this scan
    await bulk(s.engine, template, 1, template.createdAt + 5_000, "b")
    const first = await s.p.sb("GET", `/users/${s.id}/orders`)
    expect(first.body).toMatchObject({ orders: [], count: 0, hasMore: true })
    const second = await s.p.sb("GET", `/users/${s.id}/orders?cursor=${first.body.nextCursor}`)
    expect(second.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([mine.orderId])
  }, 30_000)
})

describe("reading orders through the service, past the gateway", () => {
  it("listOrders: from after to is refused, from alone or equal to to is not; both bounds include their millisecond", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 1)
    const at = Date.parse(placed.createdAt)
    const list = (query: { from?: number; to?: number }) => s.service((t) => t.listOrders(s.principal(), s.id, query))
    expect(failureOf(await list({ from: at + 1, to: at }))).toEqual({ code: "VALIDATION_ERROR", message: "from is after to", params: ["from", "to"] })
    const count = async (query: { from?: number; to?: number }) => {
      const exit = await list(query)
      if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
      return exit.value.count
    }
    expect(await count({ from: at })).toBe(1)
    expect(await count({ from: at, to: at })).toBe(1)
    expect(await count({ to: at })).toBe(1)
    expect(await count({ from: at + 1 })).toBe(0)
    expect(await count({ to: at - 1 })).toBe(0)
  })

  it("getOrder is FORBIDDEN in the sandbox and answers the order in production", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 1)
    expect(failureOf(await s.service((t) => t.getOrder(s.principal("sandbox"), placed.orderId)))).toEqual({
      code: "FORBIDDEN",
      message: "GET /orders/{orderId} is not available in the sandbox (spec: sandbox unsupported); use GET /orders or GET /test-tools/orders"
    })
    const live = await s.service((t) => t.getOrder(s.principal("production"), placed.orderId))
    expect(Exit.isSuccess(live) && live.value.orderId).toBe(placed.orderId)
  })
})
