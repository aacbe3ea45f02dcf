/**
 * Asset subscriptions (D-040, D-270..D-276) over HTTP, on both stores: who may subscribe (KYC VERIFIED, active), the
 * offer checks (asset class, minimum, window), escrow of amount + fee through the ledger, the scheduled allotment at
 * the offer's close or the fund's next dealing day (full, pro rata, cancelled raise), the control API's decisions and
 * their refunds, closure blockers, isolation between partners and environments, idempotency and the sandbox reset.
 * Every answer is checked against the contract (harness); offers are picked from the run's reference book by what
 * they are, not by id, so the tests survive a larger catalogue.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ReferenceData } from "../../engine/app/reference-data.ts"
import { SUBSCRIPTIONS, saveSubscription, subscriptionPartition } from "../../engine/app/subscription-docs.ts"
import { rateFor } from "../../engine/domain/fx.ts"
import type { BondRecord, FundRecord, OpportunityRecord } from "../../engine/domain/reference/offers.ts"
import type { SubscriptionRecord } from "../../engine/domain/subscription.ts"
import { Store } from "../../engine/store/port.ts"
import { partnerOf, storeDocs } from "./accounts-kit.ts"
import { engineOn, MONDAY_OPEN, type startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const cents = (x: number) => Math.round(x * 100)
/** 0.75% of `c` cents, rounded half up (positive amounts): the base fee, the partners here have no markup. */
const feeOf = (c: number) => Math.round((c * 75) / 10_000)

const isOpen = (opensAt: number | null, closesAt: number | null, now: number) => (opensAt === null || now >= opensAt) && (closesAt === null || now < closesAt)

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`asset subscriptions (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    let book: { bonds: () => ReadonlyArray<BondRecord>; funds: () => ReadonlyArray<FundRecord>; opportunities: () => ReadonlyArray<OpportunityRecord> }
    let bill: BondRecord
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
      book = await engine.runtime.runPromise(ReferenceData.use((r) => Effect.succeed(r.book)))
      bill = book.bonds().find((b) => b.instrumentType === "TREASURY_BILL" && isOpen(b.opensAt, b.closesAt, MONDAY_OPEN)) as BondRecord
      expect(bill).toBeDefined()
    })
    afterEach(() => dispose())

    const balances = async (env: "sandbox" | "production" = "sandbox") => {
      const docs = await storeDocs(engine, "balances", p.partition(env))
      return new Map(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
    }
    const at = (m: Map<string, number>, k: string) => m.get(k) ?? 0
    const verifiedUser = async (usd: number) => {
      const id = (await p.createUser("sandbox")).subAccountId
      await p.verify(id)
      if (usd > 0) await p.deposit(id, usd)
      return id
    }
    const subscribe = (account: string | undefined, body: unknown, env: "sandbox" | "production" = "sandbox") =>
      p.call(env, "POST", account === undefined ? "/subscriptions" : `/users/${account}/subscriptions`, body)
    const tbill = (amount: number | string, extra: Record<string, unknown> = {}) => ({
      assetClass: "TREASURY_BILL",
      instrumentId: bill.bondId,
      amount,
      ...extra
    })
    const advanceTo = async (ms: number) => {
      const r = await engine.admin("POST", "/_sim/clock/advance", { to: new Date(ms).toISOString() })
      expect(r.status).toBe(200)
    }

    it("a verified sub-account subscribes: 202 PENDING, amount + fee escrowed, history, summary blockers and reads", async () => {
      const id = await verifiedUser(500)
      const r = await subscribe(id, tbill(200, { clientReference: "ref-77" }))
      expect(r.status).toBe(202)
      const fee = feeOf(20_000)
      expect(r.body).toEqual({
        subscriptionId: expect.stringMatching(/^sub_/),
        assetClass: "TREASURY_BILL",
        instrumentId: bill.bondId,
        instrumentName: bill.name,
        subAccountId: id,
        externalId: expect.any(String),
        amount: 200,
        fee: fee / 100,
        totalAmount: (20_000 + fee) / 100,
        currency: "USD",
        status: "PENDING",
        allottedAmount: null,
        units: null,
        rejectionCode: null,
        rejectionReason: null,
        clientReference: "ref-77",
        createdAt: new Date(MONDAY_OPEN).toISOString(),
        allottedAt: null
      })
      const sub = r.body.subscriptionId as string
      const b = await balances()
      expect(at(b, `wallet:${id}`)).toBe(50_000 - 20_000 - fee)
      expect(at(b, `escrow:${id}:subscriptions`)).toBe(20_000 + fee)
      expect(at(b, `escrow:${id}`)).toBe(0)
      const txs = (await p.sb("GET", `/users/${id}/transactions`)).body.transactions
      expect(txs[0]).toMatchObject({ type: "SUBSCRIPTION_ESCROW", subscriptionId: sub, orderId: null, amount: -(20_000 + fee) / 100, reference: "ref-77" })
      expect(txs[0].description).toBe(`Escrow for subscription ${sub} (${bill.name})`)
      const summary = (await p.sb("GET", `/users/summary?userIds=${id}`)).body.accounts[0]
      expect(summary.currencyWallets[0]).toEqual({ currency: "USD", balance: 500, available: (30_000 - fee) / 100, reserved: (20_000 + fee) / 100 })
      expect(summary.currencyClosureBlockers.find((x: { reason: string }) => x.reason === "PENDING_SUBSCRIPTIONS")).toEqual({
        currency: "USD",
        reason: "PENDING_SUBSCRIPTIONS",
        amount: (20_000 + fee) / 100,
        count: 1,
        message: expect.any(String)
      })
      // a pending subscription blocks the closure even with the cash withdrawn
      await p.sb("POST", `/users/${id}/withdraw`, { amount: (30_000 - fee) / 100 })
      const close = await p.sb("DELETE", `/users/${id}`)
      expect(close.status).toBe(409)
      expect(close.body.error.message).toContain("PENDING_SUBSCRIPTIONS")
      expect((await p.sb("GET", `/subscriptions/${sub}`)).body).toEqual(r.body)
      expect((await p.sb("GET", `/users/${id}/subscriptions`)).body).toEqual({ subscriptions: [r.body], count: 1, hasMore: false, nextCursor: null })
      expect((await p.sb("GET", "/subscriptions")).body.count).toBe(0)
      expect((await p.sb("GET", `/users/${id}/portfolio`)).body.reservedCash).toBe((20_000 + fee) / 100)
    })

    it("the bill is allotted in full at its close: the issuer is paid, the fee collected, units at the discount price", async () => {
      const id = await verifiedUser(500)
      const sub = (await subscribe(id, tbill(200))).body.subscriptionId as string
      const fee = feeOf(20_000)
      await advanceTo(bill.closesAt - 1)
      expect((await p.sb("GET", `/subscriptions/${sub}`)).body.status).toBe("PENDING")
      await advanceTo(bill.closesAt)
      const got = (await p.sb("GET", `/subscriptions/${sub}`)).body
      expect(got).toMatchObject({ status: "ALLOTTED", allottedAmount: 200, allottedAt: new Date(bill.closesAt).toISOString() })
      // face value / (1 + yield × days / 365) per unit; USD converted at the reference rate
      const wire = (await p.sb("GET", `/bonds/${bill.bondId}`)).body
      const price = wire.faceValue / (1 + ((wire.yieldPct / 100) * wire.tenorDays) / 365)
      const rate = (rateFor(bill.currency) ?? 0) / 1e6
      expect(got.units).toBeCloseTo((200 * rate) / price, 3)
      const b = await balances()
      expect(at(b, `escrow:${id}:subscriptions`)).toBe(0)
      expect(at(b, "market")).toBe(20_000)
      expect(at(b, "fees")).toBe(fee)
      expect(at(b, `wallet:${id}`)).toBe(30_000 - fee)
      // nothing came back to the wallet, so no history row; the blocker is gone
      expect((await p.sb("GET", `/users/${id}/transactions?type=SUBSCRIPTION_REFUND`)).body.count).toBe(0)
      const blockers = (await p.sb("GET", `/users/summary?userIds=${id}`)).body.accounts[0].currencyClosureBlockers
      expect(blockers.map((x: { reason: string }) => x.reason)).toEqual(["NON_ZERO_BALANCE"])
      // a decided subscription cannot be decided again
      const again = await engine.admin("POST", `/_sim/subscriptions/${sub}/reject`, { rejectionCode: "X", rejectionReason: "y" })
      expect(again.status).toBe(409)
      expect(again.body.error.code).toBe("CONFLICT")
    })

    it("the control API rejects (whole refund), allots part (surplus and its fee refunded) or cancels for the issuer", async () => {
      const id = await verifiedUser(1000)
      const fee = feeOf(20_000)
      const [a, b, c] = [await subscribe(id, tbill(200)), await subscribe(id, tbill(200)), await subscribe(id, tbill(200))].map((r) => r.body.subscriptionId)
      const rejected = await engine.admin("POST", `/_sim/subscriptions/${a}/reject`, { rejectionCode: "COMPLIANCE_REVIEW", rejectionReason: "declined" })
      expect(rejected.status).toBe(200)
      expect(rejected.body).toMatchObject({ status: "REJECTED", rejectionCode: "COMPLIANCE_REVIEW", rejectionReason: "declined", allottedAmount: null })
      const partial = await engine.admin("POST", `/_sim/subscriptions/${b}/allot`, { amount: 150 })
      expect(partial.status).toBe(200)
      expect(partial.body).toMatchObject({ status: "PARTIALLY_ALLOTTED", allottedAmount: 150, amount: 200, fee: fee / 100 })
      const cancelled = await engine.admin("POST", `/_sim/subscriptions/${c}/cancel`)
      expect(cancelled.status).toBe(200)
      // With no code or reason given, the issuer's withdrawal says so.
      expect(cancelled.body).toMatchObject({ status: "CANCELLED", rejectionCode: "OFFER_WITHDRAWN", rejectionReason: "The issuer withdrew the offer" })
      const bal = await balances()
      expect(at(bal, `escrow:${id}:subscriptions`)).toBe(0)
      expect(at(bal, "market")).toBe(15_000)
      expect(at(bal, "fees")).toBe(feeOf(15_000))
      expect(at(bal, `wallet:${id}`)).toBe(100_000 - 15_000 - feeOf(15_000))
      const refunds = (await p.sb("GET", `/users/${id}/transactions?type=SUBSCRIPTION_REFUND`)).body.transactions
      // one instant, so the rows order by id; compare them as a set
      const byId = (x: ReadonlyArray<unknown>, y: ReadonlyArray<unknown>) => (String(x[0]) < String(y[0]) ? -1 : 1)
      expect(refunds.map((t: { subscriptionId: string; amount: number }) => [t.subscriptionId, cents(t.amount)]).sort(byId)).toEqual(
        [
          [c, 20_000 + fee],
          [b, 20_000 + fee - 15_000 - feeOf(15_000)],
          [a, 20_000 + fee]
        ].sort(byId)
      )
      expect((await engine.admin("POST", `/_sim/subscriptions/${a}/allot`, {})).status).toBe(409)
      const d = (await subscribe(id, tbill(100))).body.subscriptionId
      // the closure blocker counts the pending subscription only, not the three decided ones
      const blockers = (await p.sb("GET", `/users/summary?userIds=${id}`)).body.accounts[0].currencyClosureBlockers
      expect(blockers.find((x: { reason: string }) => x.reason === "PENDING_SUBSCRIPTIONS")).toMatchObject({ count: 1, amount: (10_000 + feeOf(10_000)) / 100 })
      expect((await engine.admin("POST", `/_sim/subscriptions/${d}/allot`, { amount: 100.01 })).status).toBe(400)
      expect((await engine.admin("POST", `/_sim/subscriptions/${d}/allot`, { amount: 0.001 })).status).toBe(400)
      expect((await engine.admin("POST", `/_sim/subscriptions/${d}/reject`, { rejectionCode: "X" })).status).toBe(400)
      expect((await engine.admin("POST", `/_sim/subscriptions/${d}/reject`, { rejectionCode: "X", rejectionReason: "y" })).status).toBe(200)
      const walletNow = (await balances()).get(`wallet:${id}`)
      // the scheduled allotment at the close finds them decided and changes nothing
      await advanceTo(bill.closesAt)
      expect((await balances()).get(`wallet:${id}`)).toBe(walletNow)
      expect(await storeDocs(engine, "deadJobs", "global")).toEqual([])
      const unknown = await engine.admin("POST", "/_sim/subscriptions/sub_nope/allot", {})
      expect(unknown.status).toBe(404)
    })

    it("the closure blocker counts every pending subscription of an account with more than 1,000 (the scan pages)", async () => {
      const id = await verifiedUser(1000)
      const pending: Array<string> = []
      for (const minute of [0, 1, 2]) {
        await advanceTo(MONDAY_OPEN + minute * 60_000)
        pending.push((await subscribe(id, tbill(100))).body.subscriptionId)
      }
      const rejected = (await subscribe(id, tbill(100))).body.subscriptionId
      expect((await engine.admin("POST", `/_sim/subscriptions/${rejected}/reject`, { rejectionCode: "X", rejectionReason: "y" })).status).toBe(200)
      // A long history of rejected subscriptions, stored around the pending ones (2 before the first, 500 between the
      // first and the second, 700 between the second and the third): the three fall on both sides of the 1,000th row.
      const template = (await storeDocs(engine, SUBSCRIPTIONS, subscriptionPartition(p.partition("sandbox"), id))).find((d) => d.id === rejected)
        ?.body as SubscriptionRecord
      const createdAt = (i: number) => (i < 2 ? MONDAY_OPEN - 10 + i : i < 502 ? MONDAY_OPEN + 1 + i : MONDAY_OPEN + 60_001 + i)
      const history = Array.from({ length: 1202 }, (_, i) => ({ ...template, subscriptionId: `sub_history${i}`, createdAt: createdAt(i) }))
      await engine.runtime.runPromise(Store.use((store) => store.transact((tx) => Effect.forEach(history, (r) => saveSubscription(tx, r)))))
      const blockers = (await p.sb("GET", `/users/summary?userIds=${id}`)).body.accounts[0].currencyClosureBlockers
      expect(blockers.find((x: { reason: string }) => x.reason === "PENDING_SUBSCRIPTIONS")).toMatchObject({
        count: 3,
        amount: (3 * (10_000 + feeOf(10_000))) / 100
      })
    })

    it("subscribing needs a VERIFIED, active sub-account of the caller", async () => {
      const id = (await p.createUser("sandbox")).subAccountId
      await p.verify(id)
      await p.deposit(id, 500)
      await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "PENDING" })
      const pending = await subscribe(id, tbill(200))
      expect(pending.status).toBe(403)
      expect(pending.body.error).toEqual({ code: "KYC_REQUIRED", message: `sub-account ${id} has kycStatus PENDING: asset subscriptions need VERIFIED` })
      await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "DOC", rejectionReason: "retry" })
      expect((await subscribe(id, tbill(200))).body.error.code).toBe("KYC_REQUIRED")
      await p.verify(id)
      await p.sb("POST", `/users/${id}/freeze`)
      const frozen = await subscribe(id, tbill(200))
      expect(frozen.status).toBe(403)
      expect(frozen.body.error).toEqual({ code: "FORBIDDEN", message: `sub-account ${id} is frozen: subscribing is not allowed` })
      await p.sb("POST", `/users/${id}/unfreeze`)
      await p.sb("POST", `/users/${id}/withdraw`, { amount: 500 })
      expect((await p.sb("DELETE", `/users/${id}`)).status).toBe(200)
      const closed = await subscribe(id, tbill(200))
      expect(closed.status).toBe(403)
      expect(closed.body.error.code).toBe("FORBIDDEN")
      expect((await subscribe("usr_nope", tbill(200))).status).toBe(404)
      expect((await balances()).get(`escrow:${id}:subscriptions`) ?? 0).toBe(0)
    })

    it("bad input answers 400, 404 or 422 in the envelope and writes nothing", async () => {
      const id = await verifiedUser(100)
      const before = await balances()
      const upcoming = book.bonds().find((b) => b.opensAt > MONDAY_OPEN) as BondRecord
      const closedBond = book.bonds().find((b) => b.closesAt <= MONDAY_OPEN) as BondRecord
      const closedFund = book.funds().find((f) => f.closed) as FundRecord
      const fund = book.funds().find((f) => !f.closed && f.opensAt === null) as FundRecord
      const cases: Array<[unknown, number, string, string?]> = [
        [{ instrumentId: bill.bondId, amount: 200 }, 400, "MISSING_PARAM"],
        [{ assetClass: "TREASURY_BILL", instrumentId: bill.bondId }, 400, "MISSING_PARAM"],
        [{ assetClass: "STOCK", instrumentId: bill.bondId, amount: 200 }, 400, "VALIDATION_ERROR"],
        [tbill(-5), 400, "VALIDATION_ERROR"],
        [tbill(0), 400, "VALIDATION_ERROR"],
        [tbill(200.001), 400, "VALIDATION_ERROR", "amount"],
        [tbill("200"), 400, "INVALID_TYPE"],
        [tbill(200, { clientReference: "x".repeat(65) }), 400, "VALIDATION_ERROR"],
        [tbill(99.99), 400, "VALIDATION_ERROR", "amount"],
        [tbill(200_000_000), 400, "VALIDATION_ERROR", "amount"],
        [{ assetClass: "FUND", instrumentId: bill.bondId, amount: 200 }, 400, "VALIDATION_ERROR", "assetClass"],
        [{ assetClass: "BOND", instrumentId: bill.bondId, amount: 200 }, 400, "VALIDATION_ERROR", "assetClass"],
        [{ assetClass: "TREASURY_BILL", instrumentId: "bnd_nope", amount: 200 }, 404, "NOT_FOUND", "instrumentId"],
        [
          { assetClass: upcoming.instrumentType === "TREASURY_BILL" ? "TREASURY_BILL" : "BOND", instrumentId: upcoming.bondId, amount: 1000 },
          422,
          "OFFER_NOT_OPEN"
        ],
        [
          { assetClass: closedBond.instrumentType === "TREASURY_BILL" ? "TREASURY_BILL" : "BOND", instrumentId: closedBond.bondId, amount: 1000 },
          422,
          "OFFER_NOT_OPEN"
        ],
        [{ assetClass: "FUND", instrumentId: closedFund.fundId, amount: 100 }, 422, "OFFER_NOT_OPEN"],
        [tbill(200), 400, "INSUFFICIENT_FUNDS"],
        [{ assetClass: "FUND", instrumentId: fund.fundId, amount: 99.5 }, 400, "INSUFFICIENT_FUNDS"]
      ]
      for (const [body, status, code, param] of cases) {
        const r = await subscribe(id, body)
        expect(r.status, JSON.stringify(body)).toBe(status)
        expect(r.body.error.code, JSON.stringify(body)).toBe(code)
        if (param !== undefined) expect(r.body.error.param).toBe(param)
      }
      const raw = await engine.call("POST", `/api/sandbox/v1/partner/users/${id}/subscriptions`, {
        headers: { "x-api-key": p.keys.sandboxKey, "idempotency-key": "raw-key-1" },
        rawBody: "{not json"
      })
      expect(raw.status).toBe(400)
      const noKey = await engine.call("POST", `/api/sandbox/v1/partner/users/${id}/subscriptions`, {
        headers: { "x-api-key": p.keys.sandboxKey },
        body: tbill(100)
      })
      expect(noKey.status).toBe(400)
      expect(noKey.body.error.code).toBe("MISSING_IDEMPOTENCY_KEY")
      expect(await balances()).toEqual(before)
      expect((await p.sb("GET", `/users/${id}/subscriptions`)).body.count).toBe(0)
      for (const q of ["status=DONE", "assetClass=STOCK", "limit=0", "limit=201", "cursor=abc"]) {
        const r = await p.sb("GET", `/subscriptions?${q}`)
        expect(r.status, q).toBe(400)
      }
    })

    it("ids of another partner or the other environment are 404; lists keep accounts apart", async () => {
      const id = await verifiedUser(500)
      const sub = (await subscribe(id, tbill(200))).body.subscriptionId
      const other = await partnerOf(engine)
      expect((await other.sb("GET", `/subscriptions/${sub}`)).status).toBe(404)
      expect((await other.sb("GET", `/users/${id}/subscriptions`)).status).toBe(404)
      expect((await other.sb("POST", `/users/${id}/subscriptions`, tbill(200))).status).toBe(404)
      expect((await p.call("production", "GET", `/subscriptions/${sub}`)).status).toBe(404)
      expect((await p.call("production", "GET", `/users/${id}/subscriptions`)).status).toBe(404)
      expect((await other.sb("GET", "/subscriptions")).body.count).toBe(0)
      expect((await p.sb("GET", "/subscriptions/sub_nope")).status).toBe(404)
    })

    it("a data key may not subscribe nor read subscriptions; the sandbox force headers answer without writing", async () => {
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey as string
      for (const [method, path] of [
        ["GET", "/subscriptions"],
        ["POST", "/subscriptions"]
      ] as const) {
        const r = await engine.call(method, `/api/v1/partner${path}`, {
          headers: { "x-api-key": dataKey, "idempotency-key": "data-key-1" },
          ...(method === "POST" ? { body: tbill(200) } : {})
        })
        expect(r.status).toBe(403)
        expect(r.body.error.code).toBe("FORBIDDEN")
      }
      const id = await verifiedUser(500)
      const forced = await p.call("sandbox", "POST", `/users/${id}/subscriptions`, tbill(200), { "x-sandbox-force-error": "KYC_REQUIRED" })
      expect(forced.status).toBe(403)
      expect(forced.body.error.code).toBe("KYC_REQUIRED")
      const notOpen = await p.call("sandbox", "POST", "/subscriptions", tbill(200), { "x-sandbox-force-status": "422" })
      expect(notOpen.status).toBe(422)
      expect((await p.sb("GET", `/users/${id}/subscriptions`)).body.count).toBe(0)
      expect((await p.sb("GET", "/subscriptions")).body.count).toBe(0)
    })

    it("the master account subscribes from its wallet on both environments; production starts empty", async () => {
      const broke = await subscribe(undefined, tbill(200), "production")
      expect(broke.status).toBe(400)
      expect(broke.body.error.code).toBe("INSUFFICIENT_FUNDS")
      await p.credit("production", 1000)
      const live = await subscribe(undefined, tbill(200), "production")
      expect(live.status).toBe(202)
      expect(live.body).toMatchObject({ subAccountId: null, externalId: null, status: "PENDING" })
      const fee = feeOf(20_000)
      const wallet = (await p.call("production", "GET", "/wallet")).body
      expect(wallet).toMatchObject({ available: (100_000 - 20_000 - fee) / 100, reserved: (20_000 + fee) / 100, balance: 1000 })
      expect((await p.call("production", "GET", "/subscriptions")).body.subscriptions.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([
        live.body.subscriptionId
      ])
      expect((await p.sb("GET", "/subscriptions")).body.count).toBe(0)
      expect((await subscribe(undefined, tbill(200))).status).toBe(202)
      expect((await balances("production")).get("escrow:master:subscriptions")).toBe(20_000 + fee)
    })

    it("lists are newest first, filtered by status and asset class, paged with cursors bound to the list", async () => {
      const id = await verifiedUser(2000)
      const fund = book.funds().find((f) => !f.closed && f.opensAt === null && f.minimumSubscription <= 10_000) as FundRecord
      const ids: Array<string> = []
      for (let i = 0; i < 3; i++) {
        ids.push((await subscribe(id, tbill(100 + i))).body.subscriptionId)
        await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
      }
      ids.push((await subscribe(id, { assetClass: "FUND", instrumentId: fund.fundId, amount: 100 })).body.subscriptionId)
      await engine.admin("POST", `/_sim/subscriptions/${ids[1]}/reject`, { rejectionCode: "X", rejectionReason: "y" })
      const all = (await p.sb("GET", `/users/${id}/subscriptions`)).body
      expect(all.subscriptions.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([...ids].reverse())
      const pending = (await p.sb("GET", `/users/${id}/subscriptions?status=PENDING&assetClass=TREASURY_BILL`)).body
      expect(pending.subscriptions.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([ids[2], ids[0]])
      const first = (await p.sb("GET", `/users/${id}/subscriptions?limit=2`)).body
      expect(first).toMatchObject({ count: 2, hasMore: true })
      const second = (await p.sb("GET", `/users/${id}/subscriptions?limit=2&cursor=${first.nextCursor}`)).body
      expect(second.subscriptions.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([ids[1], ids[0]])
      // a cursor of this list is refused by another list or with other filters
      expect((await p.sb("GET", `/subscriptions?limit=2&cursor=${first.nextCursor}`)).status).toBe(400)
      expect((await p.sb("GET", `/users/${id}/subscriptions?status=PENDING&cursor=${first.nextCursor}`)).status).toBe(400)
    })

    it("a fund deals one day later at its NAV; an oversubscribed raise allots pro rata, an undersubscribed one is cancelled", async () => {
      await p.credit("sandbox", 100_000)
      const fund = book.funds().find((f) => !f.closed && f.opensAt === null && f.currency !== "USD") as FundRecord
      const f = await subscribe(undefined, { assetClass: "FUND", instrumentId: fund.fundId, amount: 1000 })
      expect(f.status).toBe(202)
      const open = (o: OpportunityRecord) => isOpen(o.opensAt, o.closesAt, MONDAY_OPEN)
      const over = book.opportunities().find((o) => open(o) && o.fillPermille > 1000) as OpportunityRecord
      expect(over).toBeDefined()
      const overSub = (await subscribe(undefined, { assetClass: over.opportunityType, instrumentId: over.opportunityId, amount: 10_000 })).body
      await advanceTo(MONDAY_OPEN + 86_400_000 - 1)
      expect((await p.sb("GET", `/subscriptions/${f.body.subscriptionId}`)).body.status).toBe("PENDING")
      await advanceTo(MONDAY_OPEN + 86_400_000)
      const dealt = (await p.sb("GET", `/subscriptions/${f.body.subscriptionId}`)).body
      const nav = (await p.sb("GET", `/funds/${fund.fundId}`)).body.nav
      expect(dealt).toMatchObject({ status: "ALLOTTED", allottedAmount: 1000 })
      expect(dealt.units).toBeCloseTo((1000 * (rateFor(fund.currency) ?? 0)) / 1e6 / nav, 3)
      await advanceTo(over.closesAt)
      const got = (await p.sb("GET", `/subscriptions/${overSub.subscriptionId}`)).body
      expect(got).toMatchObject({ status: "PARTIALLY_ALLOTTED", allottedAmount: Math.round((1_000_000 * 1000) / over.fillPermille) / 100 })
      // the first raise still to close that falls short of 60% of its target: subscribed once open, cancelled at the close
      const now = Math.max(MONDAY_OPEN + 86_400_000, over.closesAt)
      const under = book
        .opportunities()
        .filter((o) => o.fillPermille < 600 && o.closesAt > now)
        .sort((x, y) => x.opensAt - y.opensAt)[0] as OpportunityRecord
      expect(under).toBeDefined()
      if (under.opensAt > now) await advanceTo(under.opensAt)
      const underSub = (await subscribe(undefined, { assetClass: under.opportunityType, instrumentId: under.opportunityId, amount: 10_000 })).body
      expect(underSub.status).toBe("PENDING")
      await advanceTo(under.closesAt)
      expect((await p.sb("GET", `/subscriptions/${underSub.subscriptionId}`)).body).toMatchObject({
        status: "CANCELLED",
        rejectionCode: "MINIMUM_RAISE_NOT_MET",
        allottedAmount: null,
        units: null
      })
      // whatever was decided, the master wallet got every refund back and nothing is left in escrow
      const b = await balances()
      expect(at(b, "escrow:master:subscriptions")).toBe(0)
      expect(at(b, "wallet:master") + at(b, "market") + at(b, "fees")).toBe(-at(b, "equity:seed") - at(b, "equity:credit"))
    }, 60_000)

    it("an Idempotency-Key replays the answer once; reused with another body it is 422", async () => {
      const id = await verifiedUser(500)
      const headers = { "x-api-key": p.keys.sandboxKey, "idempotency-key": "sub-key-1" }
      const path = `/api/sandbox/v1/partner/users/${id}/subscriptions`
      const first = await engine.call("POST", path, { headers, body: tbill(200) })
      const again = await engine.call("POST", path, { headers, body: tbill(200) })
      expect(first.status).toBe(202)
      expect(again.status).toBe(202)
      expect(again.body).toEqual(first.body)
      expect((await p.sb("GET", `/users/${id}/subscriptions`)).body.count).toBe(1)
      const reused = await engine.call("POST", path, { headers, body: tbill(300) })
      expect(reused.status).toBe(422)
      expect(reused.body.error.code).toBe("IDEMPOTENCY_KEY_REUSED")
    })

    it("the sandbox reset wipes subscriptions; their allotment job then finds nothing", async () => {
      const id = await verifiedUser(500)
      const sub = (await subscribe(id, tbill(200))).body.subscriptionId
      const master = (await subscribe(undefined, tbill(200))).body.subscriptionId
      const reset = await p.reset()
      expect(reset.status).toBe(200)
      expect((await p.sb("GET", `/subscriptions/${sub}`)).status).toBe(404)
      expect((await p.sb("GET", `/subscriptions/${master}`)).status).toBe(404)
      expect((await p.sb("GET", "/subscriptions")).body.count).toBe(0)
      await advanceTo(bill.closesAt)
      const b = await balances()
      expect([...b.keys()].sort()).toEqual(["equity:seed", "wallet:master"])
      expect(await storeDocs(engine, "deadJobs", "global")).toEqual([])
    })
  })
}
