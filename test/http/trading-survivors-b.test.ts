/**
 * Trading edges the broader tests leave open (engine/app/trading.ts from the desk's fill onwards), over HTTP on the
 * memory store: the replace of a resting order (which fields fit, its messages, the deadline a new timeInForce or
 * expiresAt gives and the expiry that follows, an exact-balance top-up, a frozen or unknown sub-account), the
 * trigger and expiry jobs on an order cancelled meanwhile, the order.filled / trade.settled payloads of master and
 * sub-account orders, settlement failures that custody cannot unwind, the scripted desk's market price, and a
 * resting order's validation at its bounds (quantity 0, a GTD date exactly now or exactly 366 days ahead).
 * Every answer is checked against the contract by the harness.
 */
import { afterEach, describe, expect, it } from "vitest"
import { replaceFields, restingFields } from "../../engine/app/trading.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { eventWatcher, partnerOf, storeDocs, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

/** USD cents of `quantity` SCOM.KE (KES, 129.25 per USD) at `price` plus the 0.75% base fee (sandbox markup 0). */
const buyTotal = (quantity: number, price: number) => {
  const gross = Math.round((quantity * price * 100) / 129.25)
  return gross + Math.round((gross * 75) / 10_000)
}

const engines: Array<ReturnType<typeof startEngine>> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

const setup = async (usd = 100) => {
  const engine = startEngine()
  engines.push(engine)
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, `survivor-b-${engines.length}`, usd)
  const balances = async () => {
    const docs = await storeDocs(engine, "balances", p.partition("sandbox"))
    const all = Object.fromEntries(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
    return { wallet: all[`wallet:${id}`] ?? 0, escrow: all[`escrow:${id}`] ?? 0 }
  }
  const place = async (body: Record<string, unknown>) => {
    const r = await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM.KE", ...body })
    return r
  }
  const placed = async (body: Record<string, unknown>) => {
    const r = await place(body)
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    return r.body.orderId as string
  }
  const patch = (orderId: string, body: unknown, user = id) => p.sb("PATCH", `/users/${user}/orders/${orderId}`, body)
  const pin = async (price: number) => expect((await engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price })).status).toBe(200)
  const advance = async (body: { seconds?: number; to?: string }) => expect((await engine.admin("POST", "/_sim/clock/advance", body)).status).toBe(200)
  const order = async (orderId: string) => (await p.sb("GET", `/users/${id}/orders`)).body.orders.find((o: { orderId: string }) => o.orderId === orderId)
  const deadJobs = () => storeDocs(engine, "deadJobs", "global")
  const fill = async (orderId: string, body: unknown = {}) => {
    const r = await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, body)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }
  return { engine, p, id, trade, balances, place, placed, patch, pin, advance, order, deadJobs, fill, watch: eventWatcher(engine) }
}

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

describe("placing a resting order: the bounds of its fields", () => {
  it("needs a quantity; a GTD date must be after now and at most 366 days ahead (both ends exact)", async () => {
    const s = await setup()
    await s.pin(25)
    const base = { type: "BUY", orderType: "LIMIT", limitPrice: 1 }
    const noQuantity = await s.place(base)
    expect(errorOf(noQuantity)).toEqual([400, "VALIDATION_ERROR", "quantity"])
    expect(noQuantity.body.error.message).toBe("a LIMIT order needs a quantity")
    const cash = await s.place({ ...base, cashValue: 5 })
    expect(errorOf(cash)).toEqual([400, "VALIDATION_ERROR", "cashValue"])
    expect(cash.body.error.message).toMatch(/takes a quantity, not a cashValue/)
    const noLimit = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 1 })
    expect(noLimit.body.error.message).toMatch(/LIMIT order needs a limitPrice/)
    const stopOnLimit = await s.place({ ...base, quantity: 1, stopPrice: 2 })
    expect(stopOnLimit.body.error.message).toMatch(/LIMIT order takes no stopPrice/)
    const gtd = (expiresAt?: string) => s.place({ ...base, quantity: 1, timeInForce: "GTD", ...(expiresAt === undefined ? {} : { expiresAt }) })
    const missing = await gtd()
    expect(errorOf(missing)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(missing.body.error.message).toMatch(/GTD order needs expiresAt/)
    expect((await gtd("next week")).body.error.message).toMatch(/ISO 8601 date-time/)
    const atNow = await gtd("2026-11-23T08:00:00Z")
    expect(errorOf(atNow)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(atNow.body.error.message).toMatch(/in the future/)
    const tooFar = await gtd(new Date(Date.parse("2026-11-23T08:00:00Z") + 366 * 86_400_000 + 1000).toISOString())
    expect(errorOf(tooFar)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(tooFar.body.error.message).toMatch(/at most 366 days/)
    // the ends themselves: one second after now, and exactly 366 days ahead
    expect((await gtd("2026-11-23T08:00:01Z")).status).toBe(202)
    expect((await gtd(new Date(Date.parse("2026-11-23T08:00:00Z") + 366 * 86_400_000).toISOString())).status).toBe(202)
    const dated = await s.place({ ...base, quantity: 1, expiresAt: "2026-11-25T00:00:00Z" })
    expect(dated.body.error.message).toMatch(/only with timeInForce GTD/)
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

describe("decisions of master and sub-account orders", () => {
  it("order.filled names the sub-account of a sub-account order and no sub-account (MASTER) for a master order", async () => {
    const s = await setup()
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

  it("a quote that names no side binds no side: a BUY on it is accepted", async () => {
    const s = await setup()
    const q = await s.p.sb("GET", `/quote/SCOM?quantity=3&subAccountId=${s.id}`)
    expect(q.status).toBe(200)
    const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: q.body.quoteId })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
  })

  it("cancelling another partner's order is 404 naming the order", async () => {
    const s = await setup()
    const mine = await s.trade("BUY", 1)
    const stranger = await partnerOf(s.engine)
    const r = await stranger.sb("DELETE", `/orders/${mine.orderId}`)
    expect([r.status, r.body.error.code]).toEqual([404, "NOT_FOUND"])
    expect(r.body.error.message).toBe(`order ${mine.orderId} was not found`)
  })

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

describe("a cashValue order on a quote that names no amount", () => {
  it("buys what the same cash quote would derive: a BUY pays the partner's markup within its cash, a SELL does not", async () => {
    const s = await setup()
    expect((await s.p.sb("PATCH", "/settings", { markupBps: 200 })).status).toBe(200)
    const bought = await s.trade("BUY", 200)
    await s.fill(bought.orderId)
    for (const side of ["BUY", "SELL"] as const) {
      // the cash quote derives the quantity; a quote naming no amount leaves it to the order's cashValue
      const cash = await s.p.sb("GET", `/quote/SCOM?side=${side}&cashValue=20&subAccountId=${s.id}`)
      const open = await s.p.sb("GET", `/quote/SCOM?side=${side}&subAccountId=${s.id}`)
      expect([cash.status, open.status]).toEqual([200, 200])
      expect(open.body.price).toBe(cash.body.price)
      const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: side, cashValue: 20, quoteId: open.body.quoteId })
      expect(r.status, JSON.stringify(r.body)).toBe(202)
      expect(cash.body.quantity).toBeGreaterThan(0)
      expect(r.body.quantity).toBe(cash.body.quantity)
    }
  })
})
