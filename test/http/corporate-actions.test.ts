/**
 * Corporate actions raised through the control API (D-302..D-304), on the memory store and on PostgreSQL: a dividend
 * credits every holder's wallet (ledger row, dividend.paid per partition), a split and a reverse split rescale
 * holdings exactly (cash in lieu of fractions, average cost followed, open orders rejected), a suspension refuses
 * orders until the resumption, a delisting for good, a rights issue is announced. Every answer is checked against
 * the contracts by the harness; every event payload against its schema in spec/openapi.yaml.
 */
import { expect } from "vitest"
import { eventWatcher } from "./accounts-kit.ts"
import { cents, describeOnBothStores, type Engine, expectValid, kesToCents, setUp } from "./corporate-kit.ts"

const dividendCreditsHolders = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  await events()
  const before = { a: await s.wallet(s.a), b: await s.wallet(s.b) }
  const r = await s.raise({ actionType: "DIVIDEND", symbol: "SCOM", dividendPerShare: 1.5 })
  expect(r.status).toBe(201)
  const due = { a: kesToCents(100, 1.5), b: kesToCents(7, 1.5) }
  expect(due).toEqual({ a: 116, b: 8 })
  expect(r.body).toMatchObject({ actionType: "DIVIDEND", symbol: "SCOM.KE", accountsAffected: 2, totalUsdPaid: (due.a + due.b) / 100 })
  expect({ a: await s.wallet(s.a), b: await s.wallet(s.b) }).toEqual({ a: before.a + due.a, b: before.b + due.b })
  const history = (await s.p.sb("GET", `/users/${s.a}/transactions`)).body.transactions as Array<any>
  expect(history.filter((t) => t.type === "DIVIDEND").map((t) => cents(t.amount))).toEqual([due.a])
  const fresh = await events()
  expectValid(fresh)
  const paid = fresh.filter((e) => e.event === "dividend.paid")
  expect(paid).toHaveLength(1)
  expect(paid[0]?.data).toMatchObject({ symbol: "SCOM.KE", dividendPerShare: 1.5, currency: "KES", totalUsdPaid: (due.a + due.b) / 100, distributionCount: 2 })
  expect(paid[0]?.data.distributions).toEqual(
    [
      { subAccountId: s.a, externalId: "holder-a", units: 100, usdYield: due.a / 100 },
      { subAccountId: s.b, externalId: "holder-b", units: 7, usdYield: due.b / 100 }
    ].sort((x, y) => (x.subAccountId < y.subAccountId ? -1 : 1))
  )
  const listed = await s.p.sb("GET", `/dividends/${r.body.actionId}`)
  expect(listed.body).toMatchObject({ symbol: "SCOM.KE", status: "PAID", dividendPerShare: 1.5 })
  // No holder, no event and no credit: a dividend on a listing nobody holds.
  const none = await s.raise({ actionType: "DIVIDEND", symbol: "EQTY.KE", dividendPerShare: 2 })
  expect(none.body).toMatchObject({ accountsAffected: 0, totalUsdPaid: 0 })
  expect((await events()).filter((e) => e.event === "dividend.paid")).toEqual([])
}

const splitsRescaleHoldings = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  const avgBefore = (await s.position(s.a, "SCOM.KE")).averageCostUsd as number
  // An open SELL order on the listing reserves 5 units; the split rejects it and frees them.
  const open = await s.order(s.a, "SCOM.KE", "SELL", 5)
  expect(open.status).toBe(202)
  await events()
  const split = await s.raise({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: 2 })
  expect(split.status).toBe(201)
  expect(split.body).toMatchObject({ actionType: "SPLIT", accountsAffected: 2, ordersRejected: [open.body.orderId], details: { ratioFrom: 1, ratioTo: 2 } })
  expect(typeof split.body.priceVisibleFrom).toBe("string")
  const after = await s.position(s.a, "SCOM.KE")
  expect([after.quantity, after.availableQuantity]).toEqual([200, 200])
  expect((await s.position(s.b, "SCOM.KE")).quantity).toBe(14)
  // Same cost, twice the units: the average halves (to the 1/10000 USD it is shown with).
  expect(Math.abs(after.averageCostUsd * 2 - avgBefore)).toBeLessThanOrEqual(0.0001)
  const rejected = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).find((o) => o.orderId === open.body.orderId)
  expect(rejected).toMatchObject({ status: "REJECTED", rejectionCode: "CORPORATE_ACTION" })
  const fresh = await events()
  expectValid(fresh)
  expect(fresh.filter((e) => e.event.startsWith("corporateaction.")).map((e) => e.event)).toEqual(
    expect.arrayContaining(["corporateaction.split", "corporateaction.declared"])
  )
  expect(fresh.find((e) => e.event === "corporateaction.split")?.data).toMatchObject({ actionId: split.body.actionId, ratioFrom: 1, ratioTo: 2 })
  expect(fresh.some((e) => e.event === "order.rejected" && e.data.rejectionCode === "CORPORATE_ACTION")).toBe(true)

  // 1-for-3: 200 -> 66 and 2/3 of a unit paid in cash; 14 -> 4 and 2/3. The price is the one the API publishes.
  const price = (await s.p.sb("GET", "/stocks/SCOM.KE")).body.price as number
  const walletA = await s.wallet(s.a)
  const reverse = await s.raise({ actionType: "REVERSE_SPLIT", symbol: "SCOM.KE", ratioFrom: 3, ratioTo: 1 })
  expect(reverse.status).toBe(201)
  expect((await s.position(s.a, "SCOM.KE")).quantity).toBe(66)
  expect((await s.position(s.b, "SCOM.KE")).quantity).toBe(4)
  // 2/3 of a new unit worth 3 old ones: 2 x the old price.
  expect((await s.wallet(s.a)) - walletA).toBe(kesToCents(2, price))
  const avgReverse = (await s.position(s.a, "SCOM.KE")).averageCostUsd as number
  expect(Math.abs(avgReverse - avgBefore * 1.5)).toBeLessThanOrEqual(0.0001)
  const listed = (await s.p.sb("GET", "/corporate-actions?symbol=SCOM.KE")).body.corporateActions as Array<any>
  expect(listed.slice(0, 2).map((a) => [a.actionId, a.actionType, a.status])).toEqual([
    [reverse.body.actionId, "REVERSE_SPLIT", "COMPLETED"],
    [split.body.actionId, "SPLIT", "COMPLETED"]
  ])
  // The price path follows from the exchange's next instant, shown after the delay: half, then times three.
  await engine.admin("POST", "/_sim/clock/advance", { to: reverse.body.priceVisibleFrom })
  const repriced = (await s.p.sb("GET", "/stocks/SCOM.KE")).body.price as number
  expect(repriced / price).toBeGreaterThan(1.5 * 0.97)
  expect(repriced / price).toBeLessThan(1.5 * 1.03)
}

const suspensionRefusesOrders = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  const open = await s.order(s.a, "EQTY.KE", "BUY", 3)
  expect(open.status).toBe(202)
  const walletWithEscrow = await s.wallet(s.a)
  const statusInList = async () => ((await s.p.sb("GET", "/stocks?exchange=NSE")).body.stocks as Array<any>).find((i) => i.symbol === "EQTY.KE").listingStatus
  expect(await statusInList()).toBe("ACTIVE")
  await events()
  const suspended = await s.raise({ actionType: "SUSPENSION", symbol: "EQTY.KE", reason: "Pending a material announcement" })
  // The same virtual second: the list's page is not served from before the action.
  expect(await statusInList()).toBe("SUSPENDED")
  expect(suspended.status).toBe(201)
  expect(suspended.body).toMatchObject({ listingStatus: "SUSPENDED", ordersRejected: [open.body.orderId] })
  expect((await s.wallet(s.a)) - walletWithEscrow).toBe(cents(open.body.totalAmount))
  expect((await s.p.sb("GET", "/stocks/EQTY.KE")).body.listingStatus).toBe("SUSPENDED")
  const refused = await s.order(s.a, "EQTY.KE", "BUY", 1)
  expect(refused.status).toBe(422)
  expect(refused.body.error).toMatchObject({ code: "MARKET_CLOSED" })
  expect((await s.raise({ actionType: "SUSPENSION", symbol: "EQTY.KE" })).body.error.code).toBe("CONFLICT")
  const action = (await s.p.sb("GET", `/corporate-actions/${suspended.body.actionId}`)).body
  expect(action).toMatchObject({
    actionType: "SUSPENSION",
    status: "EFFECTIVE",
    details: { reason: "Pending a material announcement", expectedResumeAt: null }
  })
  const fresh = await events()
  expectValid(fresh)
  // To each partition of every active partner: this partner's sandbox and production.
  expect(fresh.filter((e) => e.event === "corporateaction.suspension").map((e) => e.partition)).toEqual([s.p.partition("sandbox"), s.p.partition("production")])

  const resumed = await s.raise({ actionType: "RESUMPTION", symbol: "EQTY.KE" })
  expect(resumed.body).toMatchObject({ actionId: suspended.body.actionId, listingStatus: "ACTIVE" })
  expect((await s.p.sb("GET", `/corporate-actions/${suspended.body.actionId}`)).body.status).toBe("COMPLETED")
  expect((await s.order(s.a, "EQTY.KE", "BUY", 1)).status).toBe(202)
  expectValid(await events())
  expect((await s.raise({ actionType: "RESUMPTION", symbol: "EQTY.KE" })).body.error.code).toBe("CONFLICT")
  // A listing the catalogue has SUSPENDED resumes too (its seeded suspension completes).
  expect((await s.raise({ actionType: "RESUMPTION", symbol: "ARM.KE" })).body.listingStatus).toBe("ACTIVE")
  expect((await s.order(s.a, "ARM.KE", "BUY", 1)).status).toBe(202)
}

const delistingAndRights = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  await s.buyFilled(s.a, "KCB.KE", 10)
  await events()
  const delisted = await s.raise({ actionType: "DELISTING", symbol: "KCB.KE", reason: "Scheme of arrangement" })
  expect(delisted.body).toMatchObject({ listingStatus: "DELISTED", accountsAffected: 1, details: { reason: "Scheme of arrangement" } })
  expect((await s.order(s.a, "KCB.KE", "SELL", 1)).status).toBe(422)
  expect((await s.position(s.a, "KCB.KE")).quantity).toBe(10)
  expect((await s.raise({ actionType: "DIVIDEND", symbol: "KCB.KE", dividendPerShare: 1 })).status).toBe(409)
  const rights = await s.raise({ actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 12.5 })
  expect(rights.status).toBe(201)
  expect(rights.body).toMatchObject({ accountsAffected: 2, details: { ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 12.5, currency: "KES" } })
  const fresh = (await events()).filter((e) => e.partition === s.p.partition("sandbox"))
  expectValid(fresh)
  expect(fresh.map((e) => e.event).filter((e) => e.startsWith("corporateaction."))).toEqual([
    "corporateaction.delisting",
    "corporateaction.declared",
    "corporateaction.rights_issue",
    "corporateaction.declared"
  ])
  expect((await s.p.sb("GET", "/corporate-actions?actionType=RIGHTS_ISSUE&symbol=SCOM.KE")).body.corporateActions[0].actionId).toBe(rights.body.actionId)
  expect((await s.p.sb("GET", "/stocks/KCB.KE")).body.listingStatus).toBe("DELISTED")
  // A delisted company has no market to value it at; an ETF shows its status like a stock.
  expect((await s.p.sb("GET", "/companies/KCB.KE")).body.marketCap).toBeNull()
  expect(typeof (await s.p.sb("GET", "/companies/SCOM.KE")).body.marketCap).toBe("number")
  await s.raise({ actionType: "SUSPENSION", symbol: "GLD.KE" })
  expect((await s.p.sb("GET", "/etfs/GLD.KE")).body.listingStatus).toBe("SUSPENDED")
}

const refusesBadRequests = async (engine: Engine) => {
  const s = await setUp(engine)
  const raise = async (body: Record<string, unknown>) => {
    const r = await s.raise(body)
    return [r.status, r.body.error?.code, r.body.error?.param]
  }
  expect(await raise({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 2, ratioTo: 1 })).toEqual([400, "VALIDATION_ERROR", "ratioTo"])
  expect(await raise({ actionType: "REVERSE_SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: 2 })).toEqual([400, "VALIDATION_ERROR", "ratioTo"])
  expect(await raise({ actionType: "BONUS", symbol: "SCOM.KE", ratioTo: 2 })).toEqual([400, "VALIDATION_ERROR", "ratioFrom"])
  expect(await raise({ actionType: "DIVIDEND", symbol: "SCOM.KE" })).toEqual([400, "VALIDATION_ERROR", "dividendPerShare"])
  expect(await raise({ actionType: "DIVIDEND", symbol: "SCOM.KE", dividendPerShare: 0.00001 })).toEqual([400, "VALIDATION_ERROR", "dividendPerShare"])
  expect(await raise({ actionType: "SUSPENSION", symbol: "SCOM.KE", expectedResumeAt: "2020-01-01T00:00:00Z" })).toEqual([
    400,
    "VALIDATION_ERROR",
    "expectedResumeAt"
  ])
  expect(await raise({ actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 4, ratioEntitled: 1 })).toEqual([400, "VALIDATION_ERROR", "subscriptionPrice"])
  expect((await raise({ actionType: "SPLIT", symbol: "NOPE.KE", ratioFrom: 1, ratioTo: 2 }))[0]).toBe(404)
  expect((await raise({ actionType: "SPLIT", symbol: "GLD", ratioFrom: 1, ratioTo: 2 })).slice(0, 2)).toEqual([400, "VALIDATION_ERROR"])
  expect((await raise({ actionType: "MERGER", symbol: "SCOM.KE" }))[0]).toBe(400)
  // Nothing of the refused requests was written: holdings as bought.
  expect((await s.position(s.a, "SCOM.KE")).quantity).toBe(100)
  expect((await engine.call("POST", "/_sim/corporate-actions", { body: { actionType: "SPLIT", symbol: "SCOM.KE" } })).status).toBe(401)
}

const FLOWS = [
  ["a dividend credits every holder's wallet, with a ledger row and one dividend.paid per partition", dividendCreditsHolders],
  ["a split and a reverse split rescale holdings, pay fractions in cash, follow the average cost and reject open orders", splitsRescaleHoldings],
  ["a suspension refuses orders and rejects open ones until the resumption", suspensionRefusesOrders],
  ["a delisting is for good; a rights issue is announced and listed", delistingAndRights],
  ["refuses malformed actions with the error envelope and writes nothing", refusesBadRequests]
] as const

describeOnBothStores("corporate actions through /_sim", FLOWS, 4)
