/**
 * Corporate actions raised through the control API (D-302..D-304), on the memory store and on PostgreSQL: a dividend
 * credits every holder's wallet (ledger row, dividend.paid per partition), a split and a reverse split rescale
 * holdings exactly (cash in lieu of fractions, average cost followed, open orders rejected), a suspension refuses
 * orders until the resumption, a delisting for good, a rights issue is announced. Every answer is checked against
 * the contracts by the harness; every event payload against its schema in spec/openapi.yaml.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { CorporateActions, type RaiseInput } from "../../engine/app/corporate-actions/service.ts"
import { startEngine } from "./harness.ts"
import { eventWatcher, storeDocs } from "./accounts-kit.ts"
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

/** The answer's, history's and orders' words of a dividend and of each kind of split, and the ids' prefixes. */
const dividendAndSplitWords = async (engine: Engine) => {
  const s = await setUp(engine)
  const dividend = await s.raise({ actionType: "DIVIDEND", symbol: "SCOM.KE", dividendPerShare: 1.5 })
  expect(dividend.status).toBe(201)
  expect(dividend.body.actionId).toMatch(/^div_/)
  expect(dividend.body).toMatchObject({ description: "Dividend of KES 1.5 per share paid", details: { dividendPerShare: 1.5, currency: "KES" } })
  const dividendRow = ((await s.p.sb("GET", `/users/${s.a}/transactions`)).body.transactions as Array<any>).find((t) => t.type === "DIVIDEND")
  expect(dividendRow.description).toBe("Dividend on 100 SCOM.KE at KES 1.5 per share")
  // A holder whose dividend rounds to no cent is listed with 0 and gets no ledger row: 7 x 0.01 KES is under half a cent.
  const events = eventWatcher(engine)
  await events()
  const tiny = await s.raise({ actionType: "DIVIDEND", symbol: "SCOM.KE", dividendPerShare: 0.01 })
  expect(tiny.body.totalUsdPaid).toBe(kesToCents(100, 0.01) / 100)
  expect(kesToCents(7, 0.01)).toBe(0)
  const paid = (await events()).find((e) => e.event === "dividend.paid")
  expect(paid?.data.distributions.find((d: any) => d.subAccountId === s.b)).toMatchObject({ units: 7, usdYield: 0 })
  const rowsB = ((await s.p.sb("GET", `/users/${s.b}/transactions`)).body.transactions as Array<any>).filter((t) => t.type === "DIVIDEND")
  expect(rowsB.map((t) => cents(t.amount))).toEqual([kesToCents(7, 1.5)])

  const open = await s.order(s.a, "SCOM.KE", "SELL", 5)
  expect(open.status).toBe(202)
  const split = await s.raise({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: 2 })
  expect(split.body.actionId).toMatch(/^ca_/)
  expect(split.body.description).toBe("2-for-1 share split")
  const rejected = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).find((o) => o.orderId === open.body.orderId)
  expect(rejected.rejectionReason).toBe("2-for-1 share split of SCOM.KE: place the order again at the adjusted price")
  // 200 and 14 units, 1-for-3: 2/3 of a share paid in cash to each, an ADJUSTMENT row naming the consolidation.
  const reverse = await s.raise({ actionType: "REVERSE_SPLIT", symbol: "SCOM.KE", ratioFrom: 3, ratioTo: 1 })
  expect(reverse.body.description).toBe("1-for-3 share consolidation")
  const lieu = ((await s.p.sb("GET", `/users/${s.b}/transactions`)).body.transactions as Array<any>).filter((t) => t.type === "ADJUSTMENT")
  expect(lieu.map((t) => t.description)).toEqual(["Cash in lieu of 2/3 of a SCOM.KE share (1-for-3 share consolidation)"])
  // The journal keeps what each entry was: both holders' cash in lieu, referenced to the consolidation.
  const journal = (await storeDocs(engine, "journal", s.p.partition("sandbox"))).map((d) => d.body as { kind: string; reference: string | null })
  expect(journal.filter((e) => e.reference === reverse.body.actionId).map((e) => e.kind)).toEqual(["CASH_IN_LIEU", "CASH_IN_LIEU"])
  expect(journal.filter((e) => e.reference === dividend.body.actionId).map((e) => e.kind)).toEqual(["DIVIDEND", "DIVIDEND"])
  // A bonus issue of 3 for every 2 held: 66 -> 99 and 4 -> 6, no fraction, no cash.
  const bonus = await s.raise({ actionType: "BONUS", symbol: "SCOM.KE", ratioFrom: 2, ratioTo: 3 })
  expect(bonus.status).toBe(201)
  expect(bonus.body).toMatchObject({ description: "Bonus issue: 3 shares for every 2 held", details: { ratioFrom: 2, ratioTo: 3 }, accountsAffected: 2 })
  expect([(await s.position(s.a, "SCOM.KE")).quantity, (await s.position(s.b, "SCOM.KE")).quantity]).toEqual([99, 6])
  const listed = (await s.p.sb("GET", "/corporate-actions?symbol=SCOM.KE")).body.corporateActions as Array<any>
  expect(listed[0]).toMatchObject({ actionId: bonus.body.actionId, actionType: "BONUS", description: "Bonus issue: 3 shares for every 2 held" })
}

/** A suspension's, resumption's and delisting's defaults and words, and which suspension a resumption ends. */
const suspensionAndDelistingWords = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  const open = await s.order(s.a, "EQTY.KE", "BUY", 3)
  const now = Date.parse((await engine.admin("GET", "/_sim/clock")).body.now)
  const error = async (body: Record<string, unknown>) => {
    const r = await s.raise(body)
    return [r.status, r.body.error?.code, r.body.error?.param, r.body.error?.message]
  }
  // expectedResumeAt must lie after now: now itself and a text that is no date are refused.
  // (The text is refused by the contract's format, E-313; now by the engine's clock.)
  for (const [at, message] of [
    [new Date(now).toISOString(), "expectedResumeAt must be a date-time after now"],
    ["next week", 'expectedResumeAt must be a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z), got "next week"']
  ]) {
    expect(await error({ actionType: "SUSPENSION", symbol: "EQTY.KE", expectedResumeAt: at })).toEqual([400, "VALIDATION_ERROR", "expectedResumeAt", message])
  }
  expect(await error({ actionType: "RESUMPTION", symbol: "EQTY.KE" })).toEqual([409, "CONFLICT", undefined, "EQTY.KE is not suspended"])
  await events()
  const resumeAt = new Date(now + 86_400_000).toISOString()
  const suspended = await s.raise({ actionType: "SUSPENSION", symbol: "EQTY.KE", expectedResumeAt: resumeAt })
  expect(suspended.status).toBe(201)
  expect(suspended.body).toMatchObject({
    description: "Trading in EQTY.KE suspended: regulatory review",
    details: { reason: "Regulatory review", suspendedFrom: new Date(now).toISOString(), expectedResumeAt: resumeAt }
  })
  const rejected = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).find((o) => o.orderId === open.body.orderId)
  expect(rejected).toMatchObject({ rejectionCode: "INSTRUMENT_SUSPENDED", rejectionReason: "trading in EQTY.KE is suspended: Regulatory review" })
  expect(await error({ actionType: "SUSPENSION", symbol: "EQTY.KE" })).toEqual([409, "CONFLICT", undefined, "EQTY.KE is already suspended"])
  // Another listing suspended later, and a rights issue on EQTY.KE (not completed either): neither is what EQTY.KE's resumption ends.
  const other = await s.raise({ actionType: "SUSPENSION", symbol: "GLD.KE", reason: "Pending a material announcement" })
  expect(other.status).toBe(201)
  expect((await s.raise({ actionType: "RIGHTS_ISSUE", symbol: "EQTY.KE", ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 10 })).status).toBe(201)
  await events()
  const resumed = await s.raise({ actionType: "RESUMPTION", symbol: "EQTY.KE" })
  expect(resumed.body).toMatchObject({
    actionId: suspended.body.actionId,
    actionType: "RESUMPTION",
    description: "Trading in EQTY.KE resumed",
    listingStatus: "ACTIVE",
    details: { reason: "Regulatory review", expectedResumeAt: new Date(now).toISOString() }
  })
  const resumption = (await events()).find((e) => e.event === "corporateaction.suspension" && e.partition === s.p.partition("sandbox"))
  expect(resumption?.data).toMatchObject({ actionId: suspended.body.actionId, reason: "Regulatory review", suspendedFrom: new Date(now).toISOString() })
  expect((await s.p.sb("GET", "/stocks/GLD.KE")).body.listingStatus).toBe("SUSPENDED")
  // The catalogue's suspension of ARM.KE: its resumption ends that seeded action, its reason kept; then ARM.KE is active.
  const seeded = ((await s.p.sb("GET", "/corporate-actions?symbol=ARM.KE&actionType=SUSPENSION")).body.corporateActions as Array<any>)[0]
  expect(seeded).toBeDefined()
  const arm = await s.raise({ actionType: "RESUMPTION", symbol: "ARM.KE" })
  expect(arm.body).toMatchObject({ actionId: seeded.actionId, details: { reason: seeded.details.reason } })
  const armEvent = (await events()).find((e) => e.event === "corporateaction.suspension")
  expect(armEvent?.data).toMatchObject({ actionId: seeded.actionId, reason: seeded.details.reason, suspendedFrom: seeded.details.suspendedFrom })
  expect(await error({ actionType: "RESUMPTION", symbol: "ARM.KE" })).toEqual([409, "CONFLICT", undefined, "ARM.KE is not suspended"])
  // The catalogue's other suspended listing resumes from its own seeded suspension, not ARM.KE's.
  const ton = ((await s.p.sb("GET", "/corporate-actions?symbol=TON.ZA&actionType=SUSPENSION")).body.corporateActions as Array<any>)[0]
  expect((await s.raise({ actionType: "RESUMPTION", symbol: "TON.ZA" })).body).toMatchObject({ actionId: ton.actionId, listingStatus: "ACTIVE" })

  // A delisting without a reason: the default one, in the words and on the open orders it rejects; completed at once.
  const kcbOrder = await s.order(s.a, "KCB.KE", "BUY", 2)
  expect(kcbOrder.status).toBe(202)
  const delisted = await s.raise({ actionType: "DELISTING", symbol: "KCB.KE" })
  expect(delisted.body).toMatchObject({ description: "KCB.KE delisted: voluntary delisting", details: { reason: "Voluntary delisting" } })
  const kcbRejected = ((await s.p.sb("GET", `/users/${s.a}/orders`)).body.orders as Array<any>).find((o) => o.orderId === kcbOrder.body.orderId)
  expect(kcbRejected).toMatchObject({ rejectionCode: "INSTRUMENT_DELISTED", rejectionReason: "KCB.KE is delisted: Voluntary delisting" })
  expect((await s.p.sb("GET", `/corporate-actions/${delisted.body.actionId}`)).body.status).toBe("COMPLETED")
  expect(await error({ actionType: "DIVIDEND", symbol: "KCB.KE", dividendPerShare: 1 })).toEqual([
    409,
    "CONFLICT",
    undefined,
    "KCB.KE is delisted: no further corporate actions"
  ])
}

/** What each refusal says and names, at the boundaries of the ratios and of a rights issue's deadline. */
const refusalsSayWhy = async (engine: Engine) => {
  const s = await setUp(engine)
  const error = async (body: Record<string, unknown>) => {
    const r = await s.raise(body)
    return [r.status, r.body.error?.code, r.body.error?.param, r.body.error?.message]
  }
  const refused = (param: string, message: string) => [400, "VALIDATION_ERROR", param, message]
  expect(await error({ actionType: "BONUS", symbol: "SCOM.KE", ratioTo: 2 })).toEqual(refused("ratioFrom", "ratioFrom must be a whole number from 1 to 1000"))
  expect(await error({ actionType: "BONUS", symbol: "SCOM.KE", ratioFrom: 2 })).toEqual(refused("ratioTo", "ratioTo must be a whole number from 1 to 1000"))
  // Equal ratios change nothing: refused for a split and for a reverse split alike.
  expect(await error({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 2, ratioTo: 2 })).toEqual(refused("ratioTo", "a SPLIT needs ratioTo above ratioFrom"))
  expect(await error({ actionType: "BONUS", symbol: "SCOM.KE", ratioFrom: 3, ratioTo: 1 })).toEqual(refused("ratioTo", "a BONUS needs ratioTo above ratioFrom"))
  expect(await error({ actionType: "REVERSE_SPLIT", symbol: "SCOM.KE", ratioFrom: 2, ratioTo: 2 })).toEqual(
    refused("ratioTo", "a REVERSE_SPLIT needs ratioTo below ratioFrom")
  )
  expect(await error({ actionType: "DIVIDEND", symbol: "SCOM.KE" })).toEqual(
    refused("dividendPerShare", "a DIVIDEND needs dividendPerShare above 0, local currency, at most 4 decimals")
  )
  const rights = { actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 12.5 }
  expect(await error({ ...rights, ratioHeld: undefined })).toEqual(refused("ratioHeld", "ratioHeld must be a whole number from 1 to 1000"))
  expect(await error({ ...rights, ratioEntitled: undefined })).toEqual(refused("ratioEntitled", "ratioEntitled must be a whole number from 1 to 1000"))
  expect(await error({ ...rights, subscriptionPrice: 1.00001 })).toEqual(
    refused("subscriptionPrice", "a RIGHTS_ISSUE needs subscriptionPrice above 0, local currency, at most 4 decimals")
  )
  // 1000 is the largest ratio taken; the deadline is a date, today at the earliest (the exchange's local date).
  const first = await s.raise({ ...rights, ratioHeld: 1000 })
  expect(first.status).toBe(201)
  const today = first.body.details.recordDate as string
  const yesterday = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10)
  const deadline = refused("subscriptionDeadline", "subscriptionDeadline must be a date (YYYY-MM-DD), today or later")
  expect(await error({ ...rights, subscriptionDeadline: yesterday }), yesterday).toEqual(deadline)
  // Not a date at all: the contract's `format: date` refuses it first (E-313).
  for (const bad of ["2027-02-30", `x${today}`, `${today}x`, "soon"]) {
    const notADate = refused("subscriptionDeadline", `subscriptionDeadline must be a date on the calendar (YYYY-MM-DD), got ${JSON.stringify(bad)}`)
    expect(await error({ ...rights, subscriptionDeadline: bad }), bad).toEqual(notADate)
  }
  const lastDay = await s.raise({ ...rights, subscriptionDeadline: today })
  expect(lastDay.status).toBe(201)
  expect(lastDay.body).toMatchObject({
    description: "Rights issue of 1 new share for every 4 held at KES 12.5",
    details: { recordDate: today, subscriptionDeadline: today, ratioHeld: 4, ratioEntitled: 1 }
  })
}

/** Who an action reaches: holders of every partner, a suspended one's too, but not one who sold out; events only to active partners. */
const holdersAndAudience = async (engine: Engine) => {
  const s = await setUp(engine)
  const other = await setUp(engine)
  // s.b sells its 7 units: its holding of SCOM.KE is now 0, no longer a holder.
  const sold = await s.order(s.b, "SCOM.KE", "SELL", 7)
  expect(sold.status).toBe(202)
  expect((await engine.admin("POST", `/_sim/desk/orders/${sold.body.orderId}/fill`, {})).status).toBe(200)
  expect((await engine.admin("POST", `/_sim/partners/${other.p.keys.partnerId}/status`, { status: "suspended" })).status).toBe(200)
  const events = eventWatcher(engine)
  await events()
  const dividend = await s.raise({ actionType: "DIVIDEND", symbol: "SCOM.KE", dividendPerShare: 1.5 })
  expect(dividend.body).toMatchObject({ accountsAffected: 3, totalUsdPaid: (kesToCents(100, 1.5) * 2 + kesToCents(7, 1.5)) / 100 })
  const paid = (await events()).filter((e) => e.event === "dividend.paid")
  // The suspended partner's holders are paid (their property), the one who sold out is not listed.
  expect(Object.fromEntries(paid.map((e) => [e.partition, e.data.distributions.map((d: any) => d.subAccountId).sort()]))).toEqual({
    [s.p.partition("sandbox")]: [s.a],
    [other.p.partition("sandbox")]: [other.a, other.b].sort()
  })
  expect(paid).toHaveLength(2)
  const split = await s.raise({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: 2 })
  expect(split.body.accountsAffected).toBe(3)
  const announced = (await events()).filter((e) => e.event.startsWith("corporateaction."))
  expect(announced.map((e) => e.partition)).toEqual([
    s.p.partition("sandbox"),
    s.p.partition("sandbox"),
    s.p.partition("production"),
    s.p.partition("production")
  ])
  expect(await other.p.sb("GET", `/users/${other.a}`).then((r) => r.status)).toBe(403)
  expect((await engine.admin("POST", `/_sim/partners/${other.p.keys.partnerId}/status`, { status: "active" })).status).toBe(200)
  expect((await other.position(other.a, "SCOM.KE")).quantity).toBe(200)
}

/**
 * The average cost (D-303): a bonus issue rescales the units bought before it, not those bought after; actions that
 * are not unit adjustments (a suspension) and a split of a listing the account never bought leave it alone. Costs are
 * read from the wallet (what each purchase took, fee included), not from the engine's arithmetic.
 */
const averageCostAcrossActions = async (engine: Engine) => {
  const s = await setUp(engine)
  const average = async () => (await s.position(s.b, "SCOM.KE")).averageCostUsd as number
  const advance = () => engine.admin("POST", "/_sim/clock/advance", { seconds: 900 })
  const firstCost = 50_000 - (await s.wallet(s.b))
  expect((await s.raise({ actionType: "SUSPENSION", symbol: "KCB.KE" })).status).toBe(201)
  await advance()
  // 3 for every 2 held: the 7 units bought become 10.5 (10, and half a unit in cash), the cost stays.
  expect((await s.raise({ actionType: "BONUS", symbol: "SCOM.KE", ratioFrom: 2, ratioTo: 3 })).status).toBe(201)
  expect(await average()).toBe(Math.round((firstCost * 200) / 21) / 10_000)
  await advance()
  const before = await s.wallet(s.b)
  await s.buyFilled(s.b, "SCOM.KE", 2)
  const secondCost = before - (await s.wallet(s.b))
  expect((await s.position(s.b, "SCOM.KE")).quantity).toBe(12)
  // 10.5 + 2 units for both costs
  const both = Math.round((firstCost + secondCost) * 8) / 10_000
  expect(await average()).toBe(both)
  await advance()
  expect((await s.raise({ actionType: "SPLIT", symbol: "EQTY.KE", ratioFrom: 1, ratioTo: 2 })).status).toBe(201)
  expect(await average()).toBe(both)
}

/**
 * A fill of the same instant as a split, committed after it, is not rescaled by it: the engine clock gives every
 * request one instant until it advances, so time alone cannot order them (commit order does, UNIT_CHANGES).
 */
const fillAfterSplitOfTheSameInstant = async (engine: Engine) => {
  const s = await setUp(engine)
  const firstCost = 50_000 - (await s.wallet(s.b))
  expect((await s.raise({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: 2 })).status).toBe(201)
  const before = await s.wallet(s.b)
  await s.buyFilled(s.b, "SCOM.KE", 2)
  const secondCost = before - (await s.wallet(s.b))
  const position = await s.position(s.b, "SCOM.KE")
  expect(position.quantity).toBe(16)
  // 7 units became 14, then 2 more: both costs over 16 units (over 18 if the split had scaled the later fill too).
  expect(position.averageCostUsd).toBe(Math.round(((firstCost + secondCost) * 100) / 16) / 10_000)
}

const FLOWS = [
  ["a dividend credits every holder's wallet, with a ledger row and one dividend.paid per partition", dividendCreditsHolders],
  ["a split and a reverse split rescale holdings, pay fractions in cash, follow the average cost and reject open orders", splitsRescaleHoldings],
  ["a suspension refuses orders and rejects open ones until the resumption", suspensionRefusesOrders],
  ["a delisting is for good; a rights issue is announced and listed", delistingAndRights],
  ["an action reaches every partner's holders, a suspended partner's too, and announces itself to active partners only", holdersAndAudience],
  ["a fill of the split's own instant, committed after it, keeps its units unscaled in the average cost", fillAfterSplitOfTheSameInstant],
  ["a dividend and each kind of split say what they did: answer, history rows, rejected orders, id prefixes", dividendAndSplitWords],
  ["a suspension, resumption and delisting say what they did; a resumption ends its own listing's suspension", suspensionAndDelistingWords],
  ["each refusal names its parameter and says why, at the ratios' and the deadline's boundaries", refusalsSayWhy],
  ["refuses malformed actions with the error envelope and writes nothing", refusesBadRequests],
  ["the average cost follows a bonus issue of the units bought before it, and no other action", averageCostAcrossActions]
] as const

describeOnBothStores("corporate actions through /_sim", FLOWS, 6)

// The service refuses on its own what the route's decoder already keeps out (a caller other than the route, D-302).
describe("corporate actions: the service's own checks of values the route cannot send", () => {
  let engine: Engine
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())
  const refusal = (input: RaiseInput) =>
    engine.runtime.runPromise(
      CorporateActions.use((c) => c.raise(input)).pipe(
        Effect.flip,
        Effect.map((e) => ("code" in e ? [e.code, e.extras?.param, e.message] : [String(e)]))
      )
    )
  const raise = (input: RaiseInput) => engine.runtime.runPromise(CorporateActions.use((c) => c.raise(input)))
  const ratio = (param: string) => ["VALIDATION_ERROR", param, `${param} must be a whole number from 1 to 1000`]
  it("refuses a ratio of 0, above 1000 or not whole", async () => {
    for (const bad of [0, 1001, 1.5, -2]) {
      expect(await refusal({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: bad, ratioTo: 2000 }), String(bad)).toEqual(ratio("ratioFrom"))
      expect(await refusal({ actionType: "SPLIT", symbol: "SCOM.KE", ratioFrom: 1, ratioTo: bad }), String(bad)).toEqual(ratio("ratioTo"))
    }
    expect(await refusal({ actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 0, ratioEntitled: 1, subscriptionPrice: 1 })).toEqual(ratio("ratioHeld"))
    expect((await raise({ actionType: "SPLIT", symbol: "EQTY.KE", ratioFrom: 1, ratioTo: 1000 })).details).toEqual({ ratioFrom: 1, ratioTo: 1000 })
  })
  it("refuses a dividend or a subscription price of 0", async () => {
    expect(await refusal({ actionType: "DIVIDEND", symbol: "SCOM.KE", dividendPerShare: 0 })).toEqual([
      "VALIDATION_ERROR",
      "dividendPerShare",
      "a DIVIDEND needs dividendPerShare above 0, local currency, at most 4 decimals"
    ])
    expect(await refusal({ actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 1, ratioEntitled: 1, subscriptionPrice: 0 })).toEqual([
      "VALIDATION_ERROR",
      "subscriptionPrice",
      "a RIGHTS_ISSUE needs subscriptionPrice above 0, local currency, at most 4 decimals"
    ])
  })
})
