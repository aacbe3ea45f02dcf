/**
 * A symbol change raised through the control API (D-340..D-343), on the memory store and on PostgreSQL: the listing
 * answers to its new symbol with the same price path (stock item, candles, batch quotes), the old symbol is 404 naming
 * its successor, holdings, open orders and price alerts move to the new symbol while filled orders keep the symbol
 * they traded, a quote issued before the change is honoured under the new symbol, the event matches the contract, a
 * later effective date applies at its instant, and refused requests write nothing. Every answer is checked against the
 * contracts by the harness; every event payload against its schema.
 */
import { expect } from "vitest"
import { eventWatcher } from "./accounts-kit.ts"
import { describeOnBothStores, type Engine, expectValid, setUp } from "./corporate-kit.ts"

const renamesTheListing = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  const live = (method: string, path: string, body?: unknown) => s.p.call("production", method, path, body)
  // Before: a filled BUY (setUp), an open SELL at the desk, a WORKING LIMIT BUY, a live alert, a quote not yet used;
  // and an open order and an alert on another listing, which keep their symbol.
  const pendingSell = await s.order(s.a, "SCOM.KE", "SELL", 5)
  expect(pendingSell.status).toBe(202)
  const otherOrder = await s.order(s.a, "EQTY.KE", "BUY", 2)
  expect(otherOrder.status).toBe(202)
  const working = await s.p.sb("POST", `/users/${s.a}/trade`, { symbol: "SCOM.KE", type: "BUY", orderType: "LIMIT", quantity: 3, limitPrice: 1 })
  expect(working.body.status).toBe("WORKING")
  const alert = await live("POST", "/price-alerts", { symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 999 })
  expect(alert.status).toBe(201)
  const otherAlert = await live("POST", "/price-alerts", { symbol: "EQTY.KE", exchange: "NSE", condition: "above", threshold: 999 })
  expect(otherAlert.status).toBe(201)
  const quote = await s.p.sb("GET", `/quote/SCOM.KE?side=BUY&quantity=2&subAccountId=${s.b}`)
  const stockBefore = (await s.p.sb("GET", "/stocks/SCOM.KE")).body
  const candlesBefore = (await s.p.sb("GET", "/stocks/SCOM.KE/candles?interval=1h")).body.candles
  const avgBefore = (await s.position(s.a, "SCOM.KE")).averageCostUsd
  await events()

  const raised = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "SCOM", newSymbol: "safcom.ke" })
  expect(raised.status).toBe(201)
  expect(raised.body).toMatchObject({
    actionType: "SYMBOL_CHANGE",
    symbol: "SCOM.KE",
    details: { oldSymbol: "SCOM.KE", newSymbol: "SAFCOM.KE" },
    description: "Ticker SCOM.KE becomes SAFCOM.KE",
    accountsAffected: 2,
    ordersRejected: [],
    listingStatus: "ACTIVE"
  })

  // The new symbol, the same listing: the same price and path, under the new symbol and ticker.
  const stock = await s.p.sb("GET", "/stocks/SAFCOM.KE")
  expect(stock.status).toBe(200)
  expect(stock.body).toEqual({ ...stockBefore, id: "SAFCOM.KE", symbol: "SAFCOM.KE", slug: "safcom.ke" })
  expect((await s.p.sb("GET", "/stocks/SAFCOM")).body.symbol).toBe("SAFCOM.KE")
  expect((await s.p.sb("GET", "/stocks/SAFCOM.KE/candles?interval=1h")).body.candles).toEqual(candlesBefore)
  expect((await s.p.sb("GET", "/companies/SAFCOM.KE")).body).toMatchObject({ symbol: "SAFCOM.KE", name: "Safaricom PLC" })
  const listed = ((await s.p.sb("GET", "/stocks?exchange=NSE&limit=200")).body.stocks as Array<any>).map((i) => i.symbol)
  expect(listed).toContain("SAFCOM.KE")
  expect(listed).not.toContain("SCOM.KE")

  // The old symbol names no listing: 404 pointing at the new one, in every form; a batch lists it as not found.
  for (const path of ["/stocks/SCOM.KE", "/stocks/SCOM", "/quote/SCOM.KE", "/stocks/SCOM.KE/candles", "/market/quotes?symbol=SCOM.KE"]) {
    const r = await s.p.sb("GET", path)
    expect([path, r.status, r.body.error?.code]).toEqual([path, 404, "NOT_FOUND"])
    expect(r.body.error.message).toContain("SAFCOM.KE")
  }
  const batch = await s.p.sb("GET", "/market/quotes?symbols=SCOM.KE,SAFCOM.KE")
  expect(batch.body.data.map((q: any) => q.symbol)).toEqual(["SAFCOM.KE"])
  expect(batch.body.not_found).toEqual(["SCOM.KE"])
  const fresh = (await s.p.sb("GET", `/quote/SAFCOM.KE?side=BUY&quantity=1&subAccountId=${s.a}`)).body.quoteId
  expect((await s.p.sb("POST", `/users/${s.a}/trade`, { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId: fresh })).status).toBe(404)

  // Positions, open orders and alerts carry the new symbol; the filled BUY keeps what it traded.
  const position = await s.position(s.a, "SAFCOM.KE")
  expect(position).toMatchObject({ quantity: 100, availableQuantity: 95, averageCostUsd: avgBefore })
  expect(await s.position(s.a, "SCOM.KE")).toBeUndefined()
  expect((await s.position(s.b, "SAFCOM.KE")).quantity).toBe(7)
  const orders = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).map((o) => [o.orderId, o.symbol, o.status])
  expect(orders).toContainEqual([pendingSell.body.orderId, "SAFCOM.KE", "PENDING"])
  expect(orders).toContainEqual([working.body.orderId, "SAFCOM.KE", "WORKING"])
  expect(orders).toContainEqual([otherOrder.body.orderId, "EQTY.KE", "PENDING"])
  expect(orders.filter(([, , status]) => status === "FILLED").map(([, symbol]) => symbol)).toEqual(["SCOM.KE"])
  expect(((await s.p.sb("GET", `/users/${s.a}/orders?symbol=SAFCOM.KE`)).body.orders as Array<any>).length).toBe(3)
  // The blotter: by the new symbol, every order of the listing; by the old one, the orders traded under it.
  expect((await s.p.sb("GET", "/orders/blotter?symbol=SAFCOM.KE")).body.count).toBe(4)
  expect((await s.p.sb("GET", "/orders/blotter?symbol=SCOM.KE")).body.count).toBe(2)
  expect((await live("GET", `/price-alerts/${alert.body.alertId}`)).body.symbol).toBe("SAFCOM.KE")
  expect((await live("GET", `/price-alerts/${otherAlert.body.alertId}`)).body.symbol).toBe("EQTY.KE")

  // The open SELL fills under the new symbol; the quote issued before the change buys under the new symbol.
  expect((await engine.admin("POST", `/_sim/desk/orders/${pendingSell.body.orderId}/fill`, {})).body.symbol).toBe("SAFCOM.KE")
  expect((await s.position(s.a, "SAFCOM.KE")).quantity).toBe(95)
  const onOldQuote = await s.p.sb("POST", `/users/${s.b}/trade`, { symbol: "SAFCOM.KE", type: "BUY", quantity: 2, quoteId: quote.body.quoteId })
  expect([onOldQuote.status, onOldQuote.body.symbol]).toEqual([202, "SAFCOM.KE"])

  // The event, to every partition, valid against the contract; the action listed under either symbol's listing.
  const logged = await events()
  expectValid(logged)
  const changed = logged.filter((e) => e.event === "corporateaction.symbol_changed")
  expect(changed.map((e) => e.partition)).toEqual([s.p.partition("sandbox"), s.p.partition("production")])
  expect(changed[0]?.data).toMatchObject({ actionId: raised.body.actionId, symbol: "SCOM.KE", oldSymbol: "SCOM.KE", newSymbol: "SAFCOM.KE" })
  const actions = (await s.p.sb("GET", "/corporate-actions?symbol=SAFCOM.KE&actionType=SYMBOL_CHANGE")).body.corporateActions as Array<any>
  expect(actions.map((a) => [a.actionId, a.status, a.symbol])).toEqual([[raised.body.actionId, "COMPLETED", "SCOM.KE"]])
  expect((await s.p.sb("GET", `/corporate-actions/${raised.body.actionId}`)).body.details).toEqual({ oldSymbol: "SCOM.KE", newSymbol: "SAFCOM.KE" })

  // A second change: the first symbol now points at the latest; neither former symbol can be taken again.
  const again = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "SAFCOM.KE", newSymbol: "SAF.KE" })
  expect(again.status).toBe(201)
  expect((await s.p.sb("GET", "/stocks/SCOM.KE")).body.error.message).toContain("SAF.KE")
  expect((await s.position(s.a, "SAF.KE")).quantity).toBe(95)
  expect((await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "EQTY.KE", newSymbol: "SCOM.KE" })).status).toBe(409)
}

const laterEffectiveDate = async (engine: Engine) => {
  const s = await setUp(engine)
  await s.buyFilled(s.a, "EQTY.KE", 4)
  const raised = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "EQTY.KE", newSymbol: "EQG.KE", effectiveDate: "2026-11-25" })
  expect(raised.status).toBe(201)
  expect(raised.body).toMatchObject({ effectiveDate: "2026-11-25", details: { oldSymbol: "EQTY.KE", newSymbol: "EQG.KE" } })
  const action = () => s.p.sb("GET", `/corporate-actions/${raised.body.actionId}`)
  expect((await action()).body.status).toBe("ANNOUNCED")
  // Until its day: the old symbol trades, the new one is unknown, and reserved (a second listing may not take it).
  expect((await s.p.sb("GET", "/stocks/EQTY.KE")).status).toBe(200)
  expect((await s.p.sb("GET", "/stocks/EQG.KE")).status).toBe(404)
  const taken = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "KCB.KE", newSymbol: "EQG.KE" })
  expect([taken.status, taken.body.error.message, taken.body.error.param]).toEqual([409, "EQG.KE is or was the symbol of a listing", "newSymbol"])
  const twice = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "EQTY.KE", newSymbol: "EQX.KE" })
  expect([twice.status, twice.body.error.message]).toEqual([409, "EQTY.KE already has a symbol change pending"])
  // The pending change holds only its own listing and its new symbol: another listing changes to another symbol.
  expect((await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "KCB.KE", newSymbol: "KCBG.KE" })).status).toBe(201)
  const suspended = await s.raise({ actionType: "SUSPENSION", symbol: "EQTY.KE" })
  await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-24T23:59:59.000Z" })
  expect((await s.p.sb("GET", "/stocks/EQTY.KE")).status).toBe(200)
  await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-25T00:00:00.000Z" })
  expect((await s.p.sb("GET", "/stocks/EQG.KE")).body.symbol).toBe("EQG.KE")
  expect((await s.p.sb("GET", "/stocks/EQTY.KE")).status).toBe(404)
  expect((await s.position(s.a, "EQG.KE")).quantity).toBe(4)
  expect((await action()).body).toMatchObject({ status: "COMPLETED", updatedAt: "2026-11-25T00:00:00.000Z" })
  // The suspension raised under the old symbol is the listing's: the resumption under the new one ends it.
  expect((await s.p.sb("GET", "/stocks/EQG.KE")).body.listingStatus).toBe("SUSPENDED")
  const resumed = await s.raise({ actionType: "RESUMPTION", symbol: "EQG.KE" })
  expect(resumed.body).toMatchObject({ actionId: suspended.body.actionId, listingStatus: "ACTIVE" })
  // At 00:00 UTC, a change effective today is effective now: applied at once, not left to a job.
  const atMidnight = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "EABL.KE", newSymbol: "EABLG.KE", effectiveDate: "2026-11-25" })
  expect(atMidnight.status).toBe(201)
  expect((await s.p.sb("GET", "/stocks/EABLG.KE")).body.symbol).toBe("EABLG.KE")
  expect((await s.p.sb("GET", `/corporate-actions/${atMidnight.body.actionId}`)).body).toMatchObject({
    status: "COMPLETED",
    updatedAt: "2026-11-25T00:00:00.000Z"
  })
}

const refusesBadChanges = async (engine: Engine) => {
  const s = await setUp(engine)
  const raise = async (body: Record<string, unknown>) => {
    const r = await s.raise({ actionType: "SYMBOL_CHANGE", ...body })
    return [r.status, r.body.error?.code, r.body.error?.param]
  }
  expect(await raise({ symbol: "SCOM.KE" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.NG" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SA F.KE" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  // the spec's symbol format allows several dots; a listing's symbol is one ticker and its suffix
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.X.KE" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SCOM.KE" })).toEqual([400, "VALIDATION_ERROR", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "EQTY.KE" })).toEqual([409, "CONFLICT", "newSymbol"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.KE", effectiveDate: "2026-11-22" })).toEqual([400, "VALIDATION_ERROR", "effectiveDate"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.KE", effectiveDate: "tomorrow" })).toEqual([400, "VALIDATION_ERROR", "effectiveDate"])
  // a date the calendar does not have (Date.parse reads 2026-11-31 as 1 December)
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.KE", effectiveDate: "2026-11-31" })).toEqual([400, "VALIDATION_ERROR", "effectiveDate"])
  expect(await raise({ symbol: "SCOM.KE", newSymbol: "SAF.KE", effectiveDate: "2026-12-1" })).toEqual([400, "VALIDATION_ERROR", "effectiveDate"])
  const said = async (body: Record<string, unknown>) => (await s.raise({ actionType: "SYMBOL_CHANGE", ...body })).body.error.message
  expect(await said({ symbol: "SCOM.KE", newSymbol: "SAF.NG" })).toBe(
    "a SYMBOL_CHANGE needs newSymbol: a ticker of 1-17 letters or digits and the exchange suffix .KE"
  )
  expect(await said({ symbol: "SCOM.KE", newSymbol: "scom.ke" })).toBe("SCOM.KE already has that symbol")
  const past = await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "SCOM.KE", newSymbol: "SAF.KE", effectiveDate: "2026-11-22" })
  expect(past.body.error.message).toBe("effectiveDate must be a date (YYYY-MM-DD), today (UTC) or later")
  expect((await raise({ symbol: "NOPE.KE", newSymbol: "SAF.KE" }))[0]).toBe(404)
  expect((await raise({ symbol: "BAMB.KE", newSymbol: "SAF.KE" }))[0]).toBe(409)
  // Nothing of the refused requests was written: the listing, its holders and the list of actions as before.
  expect((await s.p.sb("GET", "/stocks/SCOM.KE")).body.symbol).toBe("SCOM.KE")
  expect((await s.position(s.a, "SCOM.KE")).quantity).toBe(100)
  expect((await s.p.sb("GET", "/corporate-actions?actionType=SYMBOL_CHANGE")).body.corporateActions).toEqual([])
  expect((await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "SCOM.KE", newSymbol: "SAF.KE" })).status).toBe(201)
}

/** A suspended partner keeps its property: its positions, open orders and alerts move with the listing too. */
const suspendedPartnerFollows = async (engine: Engine) => {
  const s = await setUp(engine)
  const open = await s.order(s.a, "SCOM.KE", "SELL", 5)
  expect(open.status).toBe(202)
  const alert = await s.p.call("production", "POST", "/price-alerts", { symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 999 })
  expect(alert.status).toBe(201)
  const status = (to: string) => engine.admin("POST", `/_sim/partners/${s.p.keys.partnerId}/status`, { status: to })
  expect((await status("suspended")).status).toBe(200)
  expect((await s.raise({ actionType: "SYMBOL_CHANGE", symbol: "SCOM.KE", newSymbol: "SAFCOM.KE" })).body.accountsAffected).toBe(2)
  expect((await status("active")).status).toBe(200)
  expect(await s.position(s.a, "SAFCOM.KE")).toMatchObject({ quantity: 100, availableQuantity: 95 })
  const orders = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).map((o) => [o.orderId, o.symbol, o.status])
  expect(orders).toContainEqual([open.body.orderId, "SAFCOM.KE", "PENDING"])
  expect((await s.p.call("production", "GET", `/price-alerts/${alert.body.alertId}`)).body.symbol).toBe("SAFCOM.KE")
}

const FLOWS = [
  ["renames the listing: same path under the new symbol, the old one 404, positions, open orders and alerts follow", renamesTheListing],
  ["a later effective date applies at 00:00 UTC of that day, by a durable job", laterEffectiveDate],
  ["refuses malformed, used and past symbol changes with the error envelope and writes nothing", refusesBadChanges],
  ["a suspended partner's positions, open orders and alerts move with the listing too", suspendedPartnerFollows]
] as const

describeOnBothStores("symbol change through /_sim/corporate-actions", FLOWS)
