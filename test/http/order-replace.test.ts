/**
 * Replacing a WORKING sub-account order (`PATCH /users/{userId}/orders/{orderId}`, D-284; memory store, manual clock):
 * which fields fit the order's type and what the refusal says (an empty change, a price with 5 decimals, a limit
 * price on a STOP order, expiresAt without GTD), an unknown sub-account or another's order (404 naming which), a
 * frozen sub-account, a master order (not replaceable through /users/master), a top-up of exactly the wallet's
 * balance (a cent more refused; the extra escrow and the later surplus booked), a SELL beyond the free holding,
 * order.replaced of a STOP_LIMIT order; the deadline a new timeInForce or expiresAt gives and the expiry that follows;
 * and the field checks behind the contract's schema (replaceFields, restingFields) called directly. Every answer is
 * checked against the contract by the harness.
 */
import { describe, expect, it } from "vitest"
import { replaceFields, restingFields } from "../../engine/domain/trading/order-fields.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { freshTraders } from "./accounts-kit.ts"

/** USD cents of `quantity` SCOM.KE (KES, 129.25 per USD) at `price` plus the 0.75% base fee (sandbox markup 0). */
const buyTotal = (quantity: number, price: number) => {
  const gross = Math.round((quantity * price * 100) / 129.25)
  return gross + Math.round((gross * 75) / 10_000)
}

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 100); accounts-kit.ts. */
const setup = freshTraders(100)

const errorOf = (r: { status: number; body: any }) => [r.status, r.body.error?.code, r.body.error?.param ?? null]

describe("replace: which fields fit, and what it says when they do not", () => {
  it("refuses an empty change and a price with 5 decimals naming the field, with a message that says why", async () => {
    const s = await setup()
    await s.pin(25)
    const limit = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18 })
    const stop = await s.placed({ type: "BUY", orderType: "STOP", quantity: 10, stopPrice: 30 })
    const before = await s.balances()
    const empty = await s.patch(limit, {})
    expect(errorOf(empty)).toEqual([400, "VALIDATION_ERROR", null])
    expect(empty.body.error.message).toMatch(/at least one of quantity/)
    const fine = await s.patch(limit, { limitPrice: 18.00001 })
    expect(errorOf(fine)).toEqual([400, "VALIDATION_ERROR", "limitPrice"])
    expect(fine.body.error.message).toBe("limitPrice must be positive with at most 4 decimals")
    const stopFine = await s.patch(stop, { stopPrice: 30.00001 })
    expect(errorOf(stopFine)).toEqual([400, "VALIDATION_ERROR", "stopPrice"])
    // a STOP order has no limit price
    const noLimit = await s.patch(stop, { limitPrice: 31 })
    expect(errorOf(noLimit)).toEqual([400, "VALIDATION_ERROR", "limitPrice"])
    expect(noLimit.body.error.message).toMatch(/STOP order takes no limitPrice/)
    // expiresAt on a DAY order
    const dated = await s.patch(limit, { expiresAt: "2026-11-25T09:00:00Z" })
    expect(errorOf(dated)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(dated.body.error.message).toMatch(/only with timeInForce GTD/)
    expect(await s.balances()).toEqual(before)
    expect(await s.order(limit)).toMatchObject({ quantity: 10, limitPrice: 18, status: "WORKING" })
  })

  it("an unknown sub-account is 404 naming the sub-account; another's order is 404 naming the order; a frozen one cannot replace", async () => {
    const s = await setup()
    await s.pin(25)
    const orderId = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18 })
    const unknown = await s.patch(orderId, { limitPrice: 17 }, "usr_nobody")
    expect(errorOf(unknown)).toEqual([404, "NOT_FOUND", null])
    expect(unknown.body.error.message).not.toMatch(/order/)
    const other = (await s.p.createUser("sandbox")).subAccountId
    const foreign = await s.patch(orderId, { limitPrice: 17 }, other)
    expect(errorOf(foreign)).toEqual([404, "NOT_FOUND", null])
    expect(foreign.body.error.message).toMatch(new RegExp(`order ${orderId} was not found`))
    expect((await s.p.sb("POST", `/users/${s.id}/freeze`)).status).toBe(200)
    const frozen = await s.patch(orderId, { limitPrice: 17 })
    expect(frozen.status).toBeGreaterThanOrEqual(400)
    expect(await s.order(orderId)).toMatchObject({ limitPrice: 18, status: "WORKING" })
  })

  it("a master order is not replaceable through /users/master: replace exists only on the sub-account path (D-284)", async () => {
    const s = await setup()
    await s.pin(25)
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM.KE", type: "BUY", orderType: "LIMIT", quantity: 1, limitPrice: 1 })
    expect(master.status).toBe(202)
    const r = await s.patch(master.body.orderId, { limitPrice: 2 }, "master")
    expect(errorOf(r)).toEqual([404, "NOT_FOUND", null])
    expect((await s.p.sb("GET", "/orders")).body.orders.find((o: { orderId: string }) => o.orderId === master.body.orderId)).toMatchObject({
      limitPrice: 1,
      status: "WORKING"
    })
  })

  it("a top-up that takes exactly the wallet's balance is accepted; a cent more is not", async () => {
    // the wallet holds exactly what 200 at 18 costs: 100 are escrowed, the replace to 200 takes the rest
    const s = await setup(buyTotal(200, 18) / 100)
    await s.pin(25)
    const orderId = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 18 })
    const over = await s.patch(orderId, { quantity: 201 })
    expect(errorOf(over)).toEqual([400, "INSUFFICIENT_FUNDS", null])
    const exact = await s.patch(orderId, { quantity: 200 })
    expect(exact.status).toBe(200)
    expect(await s.balances()).toEqual({ wallet: 0, escrow: buyTotal(200, 18) })
    // the extra escrow is booked as escrow for the order, the later surplus as a replace refund
    expect((await s.patch(orderId, { quantity: 150 })).status).toBe(200)
    const history = (await s.p.sb("GET", `/users/${s.id}/transactions`)).body.transactions.map((t: { description: string }) => t.description)
    expect(history.filter((d: string) => d.includes(orderId))).toEqual(
      expect.arrayContaining([`Escrow for BUY SCOM.KE (order ${orderId})`, `Escrow surplus returned: replaced BUY SCOM.KE (order ${orderId})`])
    )
    expect(history.filter((d: string) => d === `Escrow for BUY SCOM.KE (order ${orderId})`)).toHaveLength(2)
  })

  it("a SELL replaced beyond the free holding says how many units are free", async () => {
    const s = await setup()
    const bought = await s.trade("BUY", 30)
    await s.fill(bought.orderId)
    await s.pin(20)
    const orderId = await s.placed({ type: "SELL", orderType: "LIMIT", quantity: 10, limitPrice: 30 })
    const beyond = await s.patch(orderId, { quantity: 31 })
    expect(errorOf(beyond)).toEqual([422, "INSUFFICIENT_HOLDINGS", null])
    // 30 held, 10 reserved by this order: 20 free, and 31 needs 21 more
    expect(beyond.body.error.message).toMatch(/holds 20 free units of SCOM\.KE, the replace needs 21 more/)
  })

  it("order.replaced of a STOP_LIMIT order carries its stop price, new and previous", async () => {
    const s = await setup()
    await s.pin(20)
    const orderId = await s.placed({ type: "BUY", orderType: "STOP_LIMIT", quantity: 10, stopPrice: 22, limitPrice: 23 })
    await s.watch()
    expect((await s.patch(orderId, { stopPrice: 21 })).status).toBe(200)
    const events = await s.watch()
    expect(events.map((e) => e.event)).toEqual(["order.replaced"])
    expect(events[0]?.data).toMatchObject({ stopPrice: 21, limitPrice: 23, previous: { stopPrice: 22, limitPrice: 23 } })
  })
})

describe("replace: the deadline follows timeInForce and expiresAt", () => {
  it("GTC -> DAY expires at today's close; DAY -> DAY keeps today's close; a quantity change keeps it too", async () => {
    const s = await setup()
    await s.pin(25)
    const gtc = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTC" })
    const day = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18 })
    const qty = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18 })
    expect((await s.patch(gtc, { timeInForce: "DAY" })).body).toMatchObject({ timeInForce: "DAY" })
    expect((await s.patch(day, { timeInForce: "DAY", quantity: 11 })).status).toBe(200)
    expect((await s.patch(qty, { quantity: 12 })).status).toBe(200)
    // NSE closes at 12:00 UTC
    await s.advance({ to: "2026-11-23T11:59:59Z" })
    for (const o of [gtc, day, qty]) expect((await s.order(o)).status).toBe("WORKING")
    await s.advance({ to: "2026-11-23T12:00:00Z" })
    for (const o of [gtc, day, qty]) expect(await s.order(o)).toMatchObject({ canonicalStatus: "EXPIRED", cancelReason: "DAY_EXPIRED" })
    expect(await s.deadJobs()).toEqual([])
  })

  it("GTD -> GTC never expires; a GTD order's new expiresAt replaces the old date; a GTD order keeps its date on a quantity change", async () => {
    const s = await setup()
    await s.pin(25)
    const toGtc = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00Z" })
    const later = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00Z" })
    const kept = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00Z" })
    const gtdAgain = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00Z" })
    const a = await s.patch(toGtc, { timeInForce: "GTC" })
    expect([a.body.timeInForce, a.body.expiresAt ?? null]).toEqual(["GTC", null])
    const b = await s.patch(later, { expiresAt: "2026-11-26T09:00:00Z" })
    expect(b.body).toMatchObject({ timeInForce: "GTD", expiresAt: "2026-11-26T09:00:00.000Z" })
    const c = await s.patch(kept, { quantity: 12 })
    expect(c.body).toMatchObject({ timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00.000Z" })
    // naming GTD again on a GTD order needs no new date: it keeps its own
    const d = await s.patch(gtdAgain, { timeInForce: "GTD", quantity: 12 })
    expect(d.status).toBe(200)
    expect(d.body).toMatchObject({ timeInForce: "GTD", expiresAt: "2026-11-24T09:00:00.000Z" })
    await s.advance({ seconds: 60 })
    expect((await s.order(toGtc)).status).toBe("WORKING")
    await s.advance({ to: "2026-11-24T09:00:00Z" })
    expect((await s.order(toGtc)).status).toBe("WORKING")
    expect((await s.order(later)).status).toBe("WORKING")
    expect(await s.order(kept)).toMatchObject({ canonicalStatus: "EXPIRED", cancelReason: "GTD_EXPIRED" })
    expect(await s.order(gtdAgain)).toMatchObject({ canonicalStatus: "EXPIRED", cancelReason: "GTD_EXPIRED" })
    await s.advance({ to: "2026-11-26T09:00:00Z" })
    expect(await s.order(later)).toMatchObject({ canonicalStatus: "EXPIRED", cancelReason: "GTD_EXPIRED" })
    await s.advance({ to: "2026-11-30T12:00:00Z" })
    expect((await s.order(toGtc)).status).toBe("WORKING")
    expect(await s.deadJobs()).toEqual([])
  })

  it("a GTC order replaced stays WORKING across days", async () => {
    const s = await setup()
    await s.pin(25)
    const gtc = await s.placed({ type: "BUY", orderType: "LIMIT", quantity: 10, limitPrice: 18, timeInForce: "GTC" })
    expect((await s.patch(gtc, { quantity: 11 })).status).toBe(200)
    await s.advance({ seconds: 60 })
    await s.advance({ to: "2026-11-25T12:00:00Z" })
    expect((await s.order(gtc)).status).toBe("WORKING")
    expect(await s.deadJobs()).toEqual([])
  })
})

describe("the validation behind the contract's schema (quantities the request schema already bounds)", () => {
  const now = Date.parse("2026-11-23T08:00:00Z")
  const limitOrder = { orderType: "LIMIT", timeInForce: "DAY" } as OrderRecord
  const refusal = (x: unknown) => (x instanceof ApiFailure ? [x.code, x.message, x.extras?.param] : x)

  it("replaceFields and restingFields refuse a quantity of 0 or a fraction, naming quantity; 1 is fine", () => {
    for (const quantity of [0, -3, 1.5]) {
      expect(refusal(replaceFields(limitOrder, { quantity }, now))).toEqual(["VALIDATION_ERROR", "quantity must be a whole number above 0", "quantity"])
      expect(refusal(restingFields("LIMIT", { symbol: "SCOM.KE", type: "BUY", quantity, limitPrice: 18 }, now))).toEqual([
        "VALIDATION_ERROR",
        "quantity must be a whole number above 0",
        "quantity"
      ])
    }
    expect(replaceFields(limitOrder, { quantity: 1 }, now)).toMatchObject({ quantity: 1 })
    // a change whose fields are all absent (as a caller of the service may pass them) is no change
    expect(refusal(replaceFields(limitOrder, { quantity: undefined, limitPrice: undefined }, now))).toEqual([
      "VALIDATION_ERROR",
      "give at least one of quantity, limitPrice, stopPrice, timeInForce, expiresAt",
      undefined
    ])
    // a price of 0 is not positive (the smallest, 0.0001, is)
    const positive = ["VALIDATION_ERROR", "limitPrice must be positive with at most 4 decimals", "limitPrice"]
    expect(refusal(replaceFields(limitOrder, { limitPrice: 0 }, now))).toEqual(positive)
    expect(refusal(restingFields("LIMIT", { symbol: "SCOM.KE", type: "BUY", quantity: 1, limitPrice: 0 }, now))).toEqual(positive)
    expect(replaceFields(limitOrder, { limitPrice: 0.0001 }, now)).toMatchObject({ limitPrice: 1 })
    expect(restingFields("LIMIT", { symbol: "SCOM.KE", type: "BUY", quantity: 1, limitPrice: 18 }, now)).toMatchObject({ quantity: 1 })
  })
})
