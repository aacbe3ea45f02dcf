/**
 * Taking up a rights issue raised through the control API (D-344..D-346), on the memory store and on PostgreSQL: the
 * record-date entitlements, take-ups debiting subscriptionPrice x units in USD (rounded once) from the wallet to the
 * issuer, the deadline on the exchange's local date, the units credited at the effective date with the average cost
 * following, the rest lapsing, and refusals that write nothing. Answers are checked against the contracts by the harness.
 */
import { expect } from "vitest"
import { eventWatcher, storeDocs } from "./accounts-kit.ts"
import { cents, describeOnBothStores, type Engine, expectValid, kesToCents, setUp } from "./corporate-kit.ts"

const takesUpAndAllots = async (engine: Engine) => {
  const s = await setUp(engine)
  const events = eventWatcher(engine)
  await events()
  const costBefore = (await s.position(s.a, "SCOM.KE")).averageCostUsd * 100
  // 1 new for every 4 held at KES 12.50 until Friday: holder a (100 units) is entitled to 25, b (7 units) to 1.
  const issue = await s.raise({
    actionType: "RIGHTS_ISSUE",
    symbol: "SCOM.KE",
    ratioHeld: 4,
    ratioEntitled: 1,
    subscriptionPrice: 12.5,
    subscriptionDeadline: "2026-11-27"
  })
  expect(issue.status).toBe(201)
  expect(issue.body).toMatchObject({ effectiveDate: "2026-11-28", accountsAffected: 2 })
  const actionId = issue.body.actionId as string
  expect((await s.p.sb("GET", `/corporate-actions/${actionId}`)).body).toMatchObject({ status: "ANNOUNCED", effectiveDate: "2026-11-28" })
  const announced = await events()
  expectValid(announced)
  expect(announced.find((e) => e.event === "corporateaction.rights_issue")?.data).toMatchObject({
    effectiveDate: "2026-11-28",
    subscriptionDeadline: "2026-11-27"
  })

  const takeUp = (body: Record<string, unknown>) => engine.admin("POST", `/_sim/corporate-actions/${actionId}/take-up`, body)
  const walletA = await s.wallet(s.a)
  const first = await takeUp({ subAccountId: s.a, units: 20 })
  expect(first.status).toBe(200)
  const due20 = kesToCents(20, 12.5)
  expect(due20).toBe(193)
  expect(first.body).toMatchObject({
    symbol: "SCOM.KE",
    environment: "sandbox",
    subAccountId: s.a,
    entitledUnits: 25,
    takenUpUnits: 20,
    remainingUnits: 5,
    subscriptionPrice: 12.5,
    currency: "KES",
    debitedUsd: due20 / 100,
    paidUsd: due20 / 100,
    status: "OPEN"
  })
  expect(walletA - (await s.wallet(s.a))).toBe(due20)
  const history = (await s.p.sb("GET", `/users/${s.a}/transactions`)).body.transactions as Array<any>
  expect(history[0]).toMatchObject({ type: "ADJUSTMENT", amount: -due20 / 100 })
  // The rest (5 units) by default; more than is left is refused.
  expect((await takeUp({ subAccountId: s.a, units: 6 })).status).toBe(409)
  const rest = await takeUp({ subAccountId: s.a })
  const due5 = kesToCents(5, 12.5)
  expect(rest.body).toMatchObject({ takenUpUnits: 25, remainingUnits: 0, debitedUsd: due5 / 100, paidUsd: (due20 + due5) / 100 })
  expect(walletA - (await s.wallet(s.a))).toBe(due20 + due5)
  expect((await takeUp({ subAccountId: s.a })).status).toBe(409)
  // The issuer got exactly what the wallets paid: the ledger's issuer account moved by the same cents.
  const journal = (await storeDocs(engine, "journal", s.p.partition("sandbox"))).map((d) => d.body as any).filter((e) => e.kind === "RIGHTS_SUBSCRIBED")
  expect(journal.map((e) => e.postings)).toEqual([
    [
      { account: `wallet:${s.a}`, cents: -due20 },
      { account: "equity:issuer", cents: due20 }
    ],
    [
      { account: `wallet:${s.a}`, cents: -due5 },
      { account: "equity:issuer", cents: due5 }
    ]
  ])
  // No event for an election (the contract has none); the holding is unchanged until the effective date.
  expect(await events()).toEqual([])
  expect((await s.position(s.a, "SCOM.KE")).quantity).toBe(100)

  // The deadline is the exchange's date: at 21:00 UTC it is Saturday in Nairobi, and b's entitlement can no longer be taken up.
  await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-27T20:59:59.000Z" })
  expect((await takeUp({ subAccountId: s.b, units: 2 })).status).toBe(409)
  await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-27T21:00:00.000Z" })
  const late = await takeUp({ subAccountId: s.b, units: 1 })
  expect([late.status, late.body.error.code]).toEqual([409, "CONFLICT"])
  expect(late.body.error.message).toContain("lapsed")

  // The effective date: a's 25 new units credited, b's entitlement lapsed, the issue completed.
  await engine.admin("POST", "/_sim/clock/advance", { to: "2026-11-28T00:00:00.000Z" })
  const after = await s.position(s.a, "SCOM.KE")
  expect([after.quantity, after.availableQuantity]).toEqual([125, 125])
  expect((await s.position(s.b, "SCOM.KE")).quantity).toBe(7)
  // Average cost: (cost of the 100 bought + what the 25 new units cost) / 125, to 1/10000 USD.
  expect(Math.abs(after.averageCostUsd * 100 - (costBefore * 100 + due20 + due5) / 125)).toBeLessThanOrEqual(0.01)
  expect((await s.p.sb("GET", `/corporate-actions/${actionId}`)).body).toMatchObject({ status: "COMPLETED", updatedAt: "2026-11-28T00:00:00.000Z" })
  expect((await takeUp({ subAccountId: s.a })).status).toBe(409)
  expect(await events()).toEqual([])
}

const refusesBadTakeUps = async (engine: Engine) => {
  const s = await setUp(engine)
  const issue = await s.raise({ actionType: "RIGHTS_ISSUE", symbol: "SCOM.KE", ratioHeld: 4, ratioEntitled: 1, subscriptionPrice: 12.5 })
  const actionId = issue.body.actionId as string
  const takeUp = async (id: string, body: Record<string, unknown>) => {
    const r = await engine.admin("POST", `/_sim/corporate-actions/${id}/take-up`, body)
    return [r.status, r.body.error?.code]
  }
  expect(await takeUp("ca_nope", { subAccountId: s.a })).toEqual([404, "NOT_FOUND"])
  const dividend = await s.raise({ actionType: "DIVIDEND", symbol: "EQTY.KE", dividendPerShare: 1 })
  expect(await takeUp(dividend.body.actionId, { subAccountId: s.a })).toEqual([404, "NOT_FOUND"])
  expect(await takeUp(actionId, {})).toEqual([400, "VALIDATION_ERROR"])
  expect(await takeUp(actionId, { subAccountId: s.a, units: 0 })).toEqual([400, "VALIDATION_ERROR"])
  expect(await takeUp(actionId, { subAccountId: "usr_nope" })).toEqual([404, "NOT_FOUND"])
  // The master account held nothing on the record date; a sub-account opened since neither.
  expect(await takeUp(actionId, { partnerId: s.p.keys.partnerId, environment: "sandbox" })).toEqual([404, "NOT_FOUND"])
  const late = (await s.p.createUser("sandbox", { externalId: "late" })).subAccountId
  expect(await takeUp(actionId, { subAccountId: late })).toEqual([404, "NOT_FOUND"])
  // A wallet that cannot pay: nothing moves.
  const balance = await s.wallet(s.b)
  expect((await s.p.sb("POST", `/users/${s.b}/withdraw`, { amount: balance / 100 })).status).toBe(200)
  expect(await takeUp(actionId, { subAccountId: s.b })).toEqual([400, "INSUFFICIENT_FUNDS"])
  await s.p.deposit(s.b, 1)
  // A frozen account may not buy.
  expect((await s.p.sb("POST", `/users/${s.b}/freeze`, {})).status).toBe(200)
  expect(await takeUp(actionId, { subAccountId: s.b })).toEqual([403, "FORBIDDEN"])
  expect((await s.p.sb("POST", `/users/${s.b}/unfreeze`, {})).status).toBe(200)
  expect(await s.wallet(s.b)).toBe(100)
  const ok = await engine.admin("POST", `/_sim/corporate-actions/${actionId}/take-up`, { subAccountId: s.b })
  expect(ok.body).toMatchObject({ entitledUnits: 1, takenUpUnits: 1, debitedUsd: kesToCents(1, 12.5) / 100 })
  expect(cents(ok.body.paidUsd)).toBe(100 - (await s.wallet(s.b)))
}

const FLOWS = [
  ["a holder takes rights up before the deadline; the units are credited on the effective date, the rest lapse", takesUpAndAllots],
  ["refuses unknown issues, holders without an entitlement, unpaid and frozen take-ups, writing nothing", refusesBadTakeUps]
] as const

describeOnBothStores("rights take-up through /_sim", FLOWS)
