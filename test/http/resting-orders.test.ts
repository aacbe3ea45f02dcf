/**
 * Resting orders over HTTP (D-031, D-035, D-280..D-285): LIMIT, STOP and STOP_LIMIT orders rest WORKING with their
 * BUY escrow at the reference price plus fees (SELL shares reserved), trigger on the delayed price at a refresh while
 * the exchange is open (then PENDING at the desk, `order.pending`), fill at a price that honours the limit; cancel
 * refunds; DAY orders expire at the exchange's close and GTD at their date (CANCELLED, canonicalStatus EXPIRED,
 * `orderLifecycle` EXPIRED, a cancelReason, never a rejectionCode, escrow back); a WORKING sub-account order can be
 * replaced (escrow re-computed, `order.replaced`). Both stores (postgres with DATABASE_URL); every answer is checked
 * against the contract by the harness.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { eventsOf, eventWatcher, partnerOf, storeDocs, type TraceEvent, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const cents = (x: number) => Math.round(x * 100)
/** USD cents of `quantity` SCOM.KE (KES, 129.25 per USD) at `price` plus the 0.75% base fee (sandbox markup 0). */
const buyTotal = (quantity: number, price: number) => {
  const gross = Math.round((quantity * price * 100) / 129.25)
  return gross + Math.round((gross * 75) / 10_000)
}

type Engine = ReturnType<typeof startEngine>
const engines: Array<Engine> = []
const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
  for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void))
})

const setup = async (store: "memory" | "postgres", usd = 100) => {
  let databaseUrl: string | undefined
  if (store === "postgres") {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    databaseUrl = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
  }
  const engine = startEngine(databaseUrl === undefined ? {} : { store: "postgres", databaseUrl })
  engines.push(engine)
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, `rester-${store}`, usd)
  const balances = async () => {
    const docs = await storeDocs(engine, "balances", p.partition("sandbox"))
    const all = Object.fromEntries(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
    return { wallet: all[`wallet:${id}`] ?? 0, escrow: all[`escrow:${id}`] ?? 0 }
  }
  const holding = async () => {
    const h = (await p.sb("GET", `/users/${id}/portfolio`)).body.holdings.find((x: { symbol: string }) => x.symbol === "SCOM.KE")
    return h === undefined ? 0 : (h.quantity as number)
  }
  const place = (body: Record<string, unknown>) => p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM.KE", ...body })
  const pin = async (price: number) => expect((await engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price })).status).toBe(200)
  const advance = async (body: { seconds?: number; to?: string }) => expect((await engine.admin("POST", "/_sim/clock/advance", body)).status).toBe(200)
  const order = async (orderId: string) => (await p.sb("GET", `/users/${id}/orders`)).body.orders.find((o: { orderId: string }) => o.orderId === orderId)
  const queue = async () => ((await engine.admin("GET", "/_sim/desk/queue")).body.orders as Array<{ orderId: string }>).map((o) => o.orderId)
  return { engine, p, id, trade, balances, holding, place, pin, advance, order, queue, watch: eventWatcher(engine) }
}

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`resting orders (${store})`, tagsFor(store), () => {
    it("LIMIT BUY: WORKING with escrow at the limit, triggered by the delayed price, filled within the limit", async () => {
      const s = await setup(store)
      await s.pin(20) // at 08:00 (an NSE refresh instant), shown from 08:15
      const start = await s.balances()
      await s.watch()
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18 })
      expect(r.status).toBe(202)
      expect(r.body).toMatchObject({ orderType: "LIMIT", status: "WORKING", canonicalStatus: "WORKING", limitPrice: 18, stopPrice: null })
      expect(r.body).toMatchObject({
        timeInForce: "DAY",
        cancelable: true,
        replaceable: true,
        quoteId: null,
        executionSla: null,
        totalAmount: buyTotal(100, 18) / 100
      })
      const orderId = r.body.orderId as string
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 18), escrow: buyTotal(100, 18) })
      // resting: no event, not at the desk
      expect(await s.watch()).toEqual([])
      expect(await s.queue()).not.toContain(orderId)
      // 20 > 18: the refreshes leave it WORKING
      await s.advance({ to: "2026-11-23T09:00:00Z" })
      expect((await s.order(orderId)).status).toBe("WORKING")
      // the exchange prints 17.5 at 09:05; captured at 09:15, published at 09:30: the order triggers then
      await s.advance({ to: "2026-11-23T09:05:00Z" })
      await s.pin(17.5)
      await s.advance({ to: "2026-11-23T09:29:59Z" })
      expect((await s.order(orderId)).status).toBe("WORKING")
      await s.advance({ to: "2026-11-23T09:30:00Z" })
      const triggered = await s.order(orderId)
      expect(triggered).toMatchObject({ status: "PENDING", priceAtOrder: 17.5, totalAmount: buyTotal(100, 17.5) / 100, replaceable: false })
      expect(triggered.executionSla).toMatchObject({ queuedAt: "2026-11-23T09:30:00.000Z" })
      const events = await s.watch()
      expect(events.map((e) => e.event)).toEqual(["order.pending"])
      expect(events[0]?.data).toMatchObject({ orderId, priceAtOrder: 17.5, status: "PENDING" })
      expect(await s.queue()).toContain(orderId)
      // the escrow stays at the limit until the fill returns what is unused
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 18), escrow: buyTotal(100, 18) })
      const above = await s.engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, { price: 18.5 })
      expect([above.status, above.body.error.code]).toEqual([400, "VALIDATION_ERROR"])
      const fill = await s.engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {})
      expect(fill.status).toBe(200)
      expect(fill.body).toMatchObject({ status: "FILLED", averageFillPrice: 17.5 })
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 17.5), escrow: 0 })
      expect(await s.holding()).toBe(100)
    })

    it("STOP SELL reserves the shares, triggers when the price falls to the stop, and sells", async () => {
      const s = await setup(store)
      const bought = await s.trade("BUY", 40)
      await s.engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})
      await s.pin(20)
      const r = await s.place({ type: "SELL", orderType: "STOP", quantity: 40, stopPrice: 19, timeInForce: "GTC" })
      expect(r.status).toBe(202)
      expect(r.body).toMatchObject({ status: "WORKING", stopPrice: 19, limitPrice: null, timeInForce: "GTC" })
      const cash = await s.balances()
      // all 40 are reserved: a second SELL of 1 is beyond the free holding
      const beyond = await s.place({ type: "SELL", orderType: "LIMIT", quantity: 1, limitPrice: 30 })
      expect([beyond.status, beyond.body.error.code]).toEqual([422, "INSUFFICIENT_HOLDINGS"])
      await s.advance({ to: "2026-11-23T09:00:00Z" })
      expect((await s.order(r.body.orderId)).status).toBe("WORKING")
      await s.pin(18.9)
      await s.advance({ to: "2026-11-23T09:15:00Z" })
      expect((await s.order(r.body.orderId)).status).toBe("PENDING")
      expect(await s.balances()).toEqual(cash)
      const fill = await s.engine.admin("POST", `/_sim/desk/orders/${r.body.orderId}/fill`, {})
      expect(fill.body).toMatchObject({ status: "FILLED", averageFillPrice: 18.9 })
      expect(await s.holding()).toBe(0)
      expect((await s.balances()).wallet).toBeGreaterThan(cash.wallet)
    })

    it("cancels a WORKING BUY: the whole escrow back, order.cancelled with refunded, and no trigger afterwards", async () => {
      const s = await setup(store)
      const start = await s.balances()
      const r = await s.place({ type: "BUY", orderType: "STOP_LIMIT", quantity: 50, stopPrice: 19, limitPrice: 21 })
      expect(r.status).toBe(202)
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(50, 21), escrow: buyTotal(50, 21) })
      await s.watch()
      const c = await s.p.sb("DELETE", `/orders/${r.body.orderId}`)
      expect(c.status).toBe(200)
      expect(c.body).toMatchObject({ status: "CANCELLED", cancelReason: "PARTNER_REQUEST", orderLifecycle: null, replaceable: false })
      expect(await s.balances()).toEqual(start)
      const events = await s.watch()
      expect(events.map((e) => [e.event, e.data.refunded])).toEqual([["order.cancelled", buyTotal(50, 21) / 100]])
      await s.pin(20)
      await s.advance({ seconds: 3600 })
      expect((await s.order(r.body.orderId)).status).toBe("CANCELLED")
      expect(await s.watch()).toEqual([])
    })

    it("refuses a resting order's bad fields with 400 naming the parameter, and holds nothing", async () => {
      const s = await setup(store)
      const start = await s.balances()
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ type: "BUY", orderType: "LIMIT", quantity: 5 }, "VALIDATION_ERROR", "limitPrice"],
        [{ type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, stopPrice: 17 }, "VALIDATION_ERROR", "stopPrice"],
        [{ type: "BUY", orderType: "STOP", quantity: 5, limitPrice: 18 }, "VALIDATION_ERROR", "limitPrice"],
        [{ type: "BUY", orderType: "STOP_LIMIT", quantity: 5, limitPrice: 18 }, "VALIDATION_ERROR", "stopPrice"],
        [{ type: "BUY", orderType: "LIMIT", cashValue: 5, limitPrice: 18 }, "VALIDATION_ERROR", "cashValue"],
        [{ type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, quoteId: "qt_x" }, "VALIDATION_ERROR", "quoteId"],
        [{ type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18.00001 }, "VALIDATION_ERROR", "limitPrice"],
        [{ type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, timeInForce: "GTD" }, "VALIDATION_ERROR", "expiresAt"],
        [
          { type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-23T07:00:00Z" },
          "VALIDATION_ERROR",
          "expiresAt"
        ],
        [{ type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, timeInForce: "GTD", expiresAt: "tomorrow" }, "VALIDATION_ERROR", "expiresAt"],
        [
          { type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, timeInForce: "GTD", expiresAt: "2028-01-01T00:00:00Z" },
          "VALIDATION_ERROR",
          "expiresAt"
        ],
        [
          { type: "BUY", orderType: "LIMIT", quantity: 5, limitPrice: 18, timeInForce: "DAY", expiresAt: "2026-11-24T00:00:00Z" },
          "VALIDATION_ERROR",
          "expiresAt"
        ],
        [{ type: "BUY", orderType: "LIMIT", quantity: 100_000, limitPrice: 18 }, "INSUFFICIENT_FUNDS", ""]
      ]
      for (const [body, code, param] of cases) {
        const r = await s.place(body)
        expect([r.status, r.body.error.code, r.body.error.param ?? ""], JSON.stringify(body)).toEqual([400, code, param])
      }
      expect(await s.balances()).toEqual(start)
      expect((await s.p.sb("GET", `/users/${s.id}/orders`)).body.orders).toEqual([])
    })

    it("expires a DAY order at the exchange's close: CANCELLED, canonicalStatus EXPIRED, escrow back, order.cancelled", async () => {
      const s = await setup(store)
      await s.pin(25)
      const start = await s.balances()
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18 })
      await s.watch()
      // NSE closes at 15:00 Nairobi, 12:00 UTC
      await s.advance({ to: "2026-11-23T11:59:59Z" })
      expect((await s.order(r.body.orderId)).status).toBe("WORKING")
      await s.advance({ to: "2026-11-23T12:00:00Z" })
      const expired = await s.order(r.body.orderId)
      expect(expired).toMatchObject({
        status: "CANCELLED",
        canonicalStatus: "EXPIRED",
        orderLifecycle: "EXPIRED",
        cancelReason: "DAY_EXPIRED",
        rejectionCode: null,
        cancelledAt: "2026-11-23T12:00:00.000Z",
        settlementStatus: "FAILED",
        cancelable: false
      })
      expect(await s.balances()).toEqual(start)
      const events = await s.watch()
      expect(events.map((e) => e.event)).toEqual(["order.cancelled"])
      expect(events[0]?.data).toMatchObject({ orderLifecycle: "EXPIRED", cancelReason: "DAY_EXPIRED", refunded: buyTotal(100, 18) / 100 })
      // status filters: CANCELLED includes the expiry, EXPIRED names it, WORKING no longer
      const list = async (status: string) =>
        (await s.p.sb("GET", `/users/${s.id}/orders?status=${status}`)).body.orders.map((o: { orderId: string }) => o.orderId)
      expect(await list("CANCELLED")).toEqual([r.body.orderId])
      expect(await list("EXPIRED")).toEqual([r.body.orderId])
      expect(await list("WORKING")).toEqual([])
      const refunds = (await s.p.sb("GET", `/users/${s.id}/transactions?type=ORDER_REFUND`)).body.transactions
      expect(refunds.map((t: { amount: number; description: string }) => [cents(t.amount), t.description])).toEqual([
        [buyTotal(100, 18), `Escrow returned: expired BUY SCOM.KE (order ${r.body.orderId})`]
      ])
    })

    it("expires a GTD order at its date, not at the close; a GTC order stays", async () => {
      const s = await setup(store)
      await s.pin(25)
      const gtd = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-25T10:30:00+03:00" })
      expect(gtd.status).toBe(202)
      expect(gtd.body).toMatchObject({ timeInForce: "GTD", expiresAt: "2026-11-25T07:30:00.000Z" })
      const gtc = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTC" })
      await s.advance({ to: "2026-11-25T07:29:59Z" })
      expect((await s.order(gtd.body.orderId)).status).toBe("WORKING")
      await s.advance({ to: "2026-11-25T07:30:00Z" })
      expect(await s.order(gtd.body.orderId)).toMatchObject({ status: "CANCELLED", canonicalStatus: "EXPIRED", cancelReason: "GTD_EXPIRED" })
      await s.advance({ to: "2026-11-30T12:00:00Z" })
      expect((await s.order(gtc.body.orderId)).status).toBe("WORKING")
      expect((await s.balances()).escrow).toBe(buyTotal(10, 18))
    })

    it("a DAY order placed after the close on the eve of a holiday expires at the next session's close (NSE, Christmas)", async () => {
      const s = await setup(store)
      await s.advance({ to: "2026-12-24T13:00:00Z" })
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 1 })
      expect(r.status).toBe(202)
      // Friday 25 is Christmas Day, then the weekend: the next session is Monday 28, closing 12:00 UTC
      await s.advance({ to: "2026-12-28T11:59:59Z" })
      expect((await s.order(r.body.orderId)).status).toBe("WORKING")
      await s.advance({ to: "2026-12-28T12:00:00Z" })
      expect(await s.order(r.body.orderId)).toMatchObject({ canonicalStatus: "EXPIRED", cancelledAt: "2026-12-28T12:00:00.000Z" })
      expect((await s.balances()).escrow).toBe(0)
    })

    it("a triggered DAY order the desk filled in part expires for its remainder: the unfilled escrow back, settled", async () => {
      const s = await setup(store)
      const start = await s.balances()
      await s.pin(17)
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18 })
      await s.advance({ to: "2026-11-23T08:15:00Z" })
      expect((await s.order(r.body.orderId)).status).toBe("PENDING")
      expect((await s.engine.admin("POST", `/_sim/desk/orders/${r.body.orderId}/fill`, { quantity: 40 })).body.status).toBe("PARTIALLY_FILLED")
      await s.watch()
      await s.advance({ to: "2026-11-23T12:00:00Z" })
      expect(await s.order(r.body.orderId)).toMatchObject({
        status: "CANCELLED",
        canonicalStatus: "EXPIRED",
        filledQuantity: 40,
        remainingQuantity: 60,
        settlementStatus: "SETTLED"
      })
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(40, 17), escrow: 0 })
      expect(await s.holding()).toBe(40)
      const events = await s.watch()
      expect(events.map((e) => [e.event, e.data.refunded])).toEqual([["order.cancelled", (buyTotal(100, 18) - buyTotal(40, 17)) / 100]])
      expect(await s.queue()).not.toContain(r.body.orderId)
    })

    it("replace: a higher limit escrows the extra, a smaller quantity refunds the surplus, order.replaced each time", async () => {
      const s = await setup(store)
      await s.pin(25)
      const start = await s.balances()
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18, clientOrderId: "mine-7" })
      const orderId = r.body.orderId as string
      const patch = (body: unknown, user = s.id) => s.p.sb("PATCH", `/users/${user}/orders/${orderId}`, body)
      await s.watch()
      const up = await patch({ limitPrice: 19 })
      expect(up.status).toBe(200)
      expect(up.body).toMatchObject({
        orderId,
        status: "WORKING",
        limitPrice: 19,
        quantity: 100,
        clientOrderId: "mine-7",
        totalAmount: buyTotal(100, 19) / 100
      })
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 19), escrow: buyTotal(100, 19) })
      const down = await patch({ quantity: 60 })
      expect(down.status).toBe(200)
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(60, 19), escrow: buyTotal(60, 19) })
      const events = await s.watch()
      expect(events.map((e) => e.event)).toEqual(["order.replaced", "order.replaced"])
      // The order's events carry the sub-account's externalId (spec: order.* payloads).
      const externalId = (await s.p.sb("GET", `/users/${s.id}`)).body.externalId
      expect(externalId).toEqual(expect.any(String))
      expect(events[0]?.data).toMatchObject({
        orderId,
        subAccountId: s.id,
        externalId,
        orderType: "LIMIT",
        status: "WORKING",
        quantity: 100,
        limitPrice: 19,
        stopPrice: null,
        timeInForce: "DAY",
        previous: { quantity: 100, limitPrice: 18, stopPrice: null, timeInForce: "DAY" },
        replacedAt: "2026-11-23T08:00:00.000Z"
      })
      expect(events[1]?.data).toMatchObject({ quantity: 60, limitPrice: 19, previous: { quantity: 100, limitPrice: 19 } })
      const refunds = (await s.p.sb("GET", `/users/${s.id}/transactions?type=ORDER_REFUND`)).body.transactions
      expect(refunds.map((t: { amount: number }) => cents(t.amount))).toEqual([buyTotal(100, 19) - buyTotal(60, 19)])
      // the new limit is the one the trigger uses: 18.5 is within 19
      await s.pin(18.5)
      await s.advance({ to: "2026-11-23T08:15:00Z" })
      expect(await s.order(orderId)).toMatchObject({ status: "PENDING", quantity: 60, priceAtOrder: 18.5 })
    })

    it("replace refuses what does not fit, a short wallet, another account, and anything not WORKING; nothing changes", async () => {
      const s = await setup(store)
      await s.pin(25)
      const r = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18 })
      const orderId = r.body.orderId as string
      const other = (await s.p.createUser("sandbox")).subAccountId
      const before = await s.balances()
      const cases: Array<[unknown, number, string, string?]> = [
        [{}, 400, "VALIDATION_ERROR"],
        [{ stopPrice: 17 }, 400, "VALIDATION_ERROR", "stopPrice"],
        [{ limitPrice: 0 }, 400, "VALIDATION_ERROR"],
        [{ expiresAt: "2026-11-25T00:00:00Z" }, 400, "VALIDATION_ERROR", "expiresAt"],
        [{ timeInForce: "GTD" }, 400, "VALIDATION_ERROR", "expiresAt"],
        [{ quantity: 100_000 }, 400, "INSUFFICIENT_FUNDS"]
      ]
      for (const [body, status, code, param] of cases) {
        const x = await s.p.sb("PATCH", `/users/${s.id}/orders/${orderId}`, body)
        expect([x.status, x.body.error.code], JSON.stringify(body)).toEqual([status, code])
        if (param !== undefined) expect(x.body.error.param).toBe(param)
      }
      const foreign = await s.p.sb("PATCH", `/users/${other}/orders/${orderId}`, { limitPrice: 17 })
      expect([foreign.status, foreign.body.error.code]).toEqual([404, "NOT_FOUND"])
      expect(await s.balances()).toEqual(before)
      expect(await s.order(orderId)).toMatchObject({ limitPrice: 18, quantity: 100, status: "WORKING" })
      // triggered: no longer replaceable
      await s.pin(17)
      await s.advance({ to: "2026-11-23T08:15:00Z" })
      const late = await s.p.sb("PATCH", `/users/${s.id}/orders/${orderId}`, { limitPrice: 17 })
      expect([late.status, late.body.error.code]).toEqual([409, "CONFLICT"])
      // a MARKET order never is
      const market = await s.trade("BUY", 1)
      const m = await s.p.sb("PATCH", `/users/${s.id}/orders/${market.orderId}`, { quantity: 2 })
      expect([m.status, m.body.error.code]).toEqual([409, "CONFLICT"])
    })

    it("replace: a SELL's reservation follows its quantity; the deadline follows timeInForce", async () => {
      const s = await setup(store)
      const bought = await s.trade("BUY", 30)
      await s.engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})
      await s.pin(20)
      const r = await s.place({ type: "SELL", orderType: "LIMIT", quantity: 10, limitPrice: 30 })
      const orderId = r.body.orderId as string
      const patch = (body: unknown) => s.p.sb("PATCH", `/users/${s.id}/orders/${orderId}`, body)
      const beyond = await patch({ quantity: 31 })
      expect([beyond.status, beyond.body.error.code]).toEqual([422, "INSUFFICIENT_HOLDINGS"])
      expect((await patch({ quantity: 30 })).status).toBe(200)
      const free = await s.place({ type: "SELL", orderType: "LIMIT", quantity: 1, limitPrice: 30 })
      expect([free.status, free.body.error.code]).toEqual([422, "INSUFFICIENT_HOLDINGS"])
      expect((await patch({ quantity: 20 })).status).toBe(200)
      expect((await s.place({ type: "SELL", orderType: "LIMIT", quantity: 10, limitPrice: 30, timeInForce: "GTC" })).status).toBe(202)
      // DAY -> GTD on Wednesday: today's close passes, the new date expires it
      const gtd = await patch({ timeInForce: "GTD", expiresAt: "2026-11-25T09:00:00Z" })
      expect(gtd.body).toMatchObject({ timeInForce: "GTD", expiresAt: "2026-11-25T09:00:00.000Z" })
      await s.advance({ to: "2026-11-24T12:00:00Z" })
      expect((await s.order(orderId)).status).toBe("WORKING")
      await s.advance({ to: "2026-11-25T09:00:00Z" })
      expect(await s.order(orderId)).toMatchObject({ canonicalStatus: "EXPIRED", cancelReason: "GTD_EXPIRED" })
      // its 20 shares are free again: the GTC SELL of 10 still holds its own
      expect((await s.place({ type: "SELL", orderType: "LIMIT", quantity: 20, limitPrice: 30, timeInForce: "GTC" })).status).toBe(202)
    })

    it("rejects a STOP BUY at its trigger when the wallet cannot cover the price that triggered it", async () => {
      const s = await setup(store, 10)
      const start = await s.balances()
      // 10 USD buys 64 at 20 (9.96 USD with the fee); triggered at 20.5 the order needs more than the wallet has left
      const r = await s.place({ type: "BUY", orderType: "STOP", quantity: 64, stopPrice: 20 })
      expect(r.status).toBe(202)
      expect((await s.balances()).escrow).toBe(buyTotal(64, 20))
      await s.pin(20.5)
      await s.watch()
      await s.advance({ to: "2026-11-23T08:15:00Z" })
      expect(await s.order(r.body.orderId)).toMatchObject({ status: "REJECTED", rejectionCode: "INSUFFICIENT_FUNDS", orderLifecycle: null })
      expect((await s.watch()).map((e) => e.event)).toEqual(["order.rejected", "trade.rejected"])
      expect(await s.balances()).toEqual(start)
    })

    it("a STOP BUY triggered above its stop takes the difference from the wallet", async () => {
      const s = await setup(store)
      const start = await s.balances()
      const r = await s.place({ type: "BUY", orderType: "STOP", quantity: 100, stopPrice: 20 })
      await s.pin(20.5)
      await s.advance({ to: "2026-11-23T08:15:00Z" })
      expect(await s.order(r.body.orderId)).toMatchObject({ status: "PENDING", priceAtOrder: 20.5 })
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 20.5), escrow: buyTotal(100, 20.5) })
      await s.engine.admin("POST", `/_sim/desk/orders/${r.body.orderId}/fill`, {})
      expect(await s.balances()).toEqual({ wallet: start.wallet - buyTotal(100, 20.5), escrow: 0 })
    })
  })
}

// The events resting orders emit (order.pending at a trigger, order.rejected at a short trigger, order.cancelled for an
// expiry, order.replaced) validate against the contract's envelope schema of their name, as a delivery carries them.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void
const doc = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8")) as {
  components: { schemas: Record<string, { allOf?: Array<{ properties?: { event?: { const?: string } } }> }> }
}
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: "urn:sokoni:openapi", components: doc.components })
const schemaOf = (name: string) => {
  const entry = Object.entries(doc.components.schemas).find(([, x]) => x.allOf?.[1]?.properties?.event?.const === name)
  if (entry === undefined) throw new Error(`no event schema for ${name}`)
  return ajv.getSchema(`urn:sokoni:openapi#/components/schemas/${entry[0]}`) ?? ajv.compile({ $ref: `urn:sokoni:openapi#/components/schemas/${entry[0]}` })
}

describe("resting order events against the contract", () => {
  it("order.pending, order.rejected, order.cancelled (expiry) and order.replaced validate", async () => {
    const s = await setup("memory", 10)
    await s.pin(20)
    // triggers at 08:15 (BUY LIMIT within 21), a STOP BUY the 10 USD wallet cannot cover at 20.9, a replaced one, an expiry
    const pending = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 21 })
    const replaced = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 15 })
    expect((await s.p.sb("PATCH", `/users/${s.id}/orders/${replaced.body.orderId}`, { limitPrice: 16, quantity: 12 })).status).toBe(200)
    const wallet = (await s.balances()).wallet
    const short = await s.place({ type: "BUY", orderType: "STOP", quantity: Math.floor((wallet * 129.25) / 100 / 20.02), stopPrice: 20 })
    expect(short.status).toBe(202)
    await s.pin(20.9)
    await s.advance({ to: "2026-11-23T12:00:00Z" })
    const events = (await eventsOf(s.engine)).filter((e) => e.event.startsWith("order.") || e.event.startsWith("trade."))
    const names = new Set(events.map((e) => e.event))
    for (const name of ["order.pending", "order.rejected", "order.cancelled", "order.replaced"]) expect(names.has(name), name).toBe(true)
    expect(events.find((e) => e.event === "order.pending")?.data.orderId).toBe(pending.body.orderId)
    for (const e of events) {
      const validate = schemaOf(e.event)
      const t = e as TraceEvent & { eventId: string; timestamp: string }
      const body = { eventId: t.eventId, event: t.event, timestamp: t.timestamp, data: t.data, isSandbox: true }
      expect(validate(body), `${e.event}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(body)}`).toBe(true)
    }
    // and the schema can fail
    const bad = { eventId: "evt_1", event: "order.replaced", timestamp: "2026-11-23T08:00:00.000Z", data: { orderId: "ord_1" }, isSandbox: true }
    expect(schemaOf("order.replaced")(bad)).toBe(false)
  })
})
