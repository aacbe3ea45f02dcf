/**
 * Money through the partner API: the master wallet, deposits and withdrawals (funds, the partner's reported FX,
 * events), operator top-ups, a sub-account's transactions (bounds, types, pages) and the sandbox reset.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { accountPartition } from "../../engine/app/docs.ts"
import { startEngine } from "./harness.ts"
import { eventWatcher, partnerOf, storeDocs } from "./accounts-kit.ts"

describe("wallets", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let events: ReturnType<typeof eventWatcher>
  let id: string
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    id = (await p.createUser("sandbox", { externalId: "cust-9" })).subAccountId
    events = eventWatcher(engine)
    await events()
  })
  afterEach(() => engine.dispose())
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })

  describe("GET /wallet", () => {
    it("shows the sandbox seed of 100000, and a new production wallet at 0 dated at the partner's creation", async () => {
      await advance(3600)
      expect((await p.sb("GET", "/wallet")).body).toEqual({
        balance: 100000,
        available: 100000,
        reserved: 0,
        currency: "USD",
        environment: "sandbox",
        updatedAt: "2026-11-23T08:00:00.000Z"
      })
      expect((await p.call("production", "GET", "/wallet")).body).toEqual({
        balance: 0,
        available: 0,
        reserved: 0,
        currency: "USD",
        environment: "production",
        updatedAt: "2026-11-23T08:00:00.000Z"
      })
    })

    it("a top-up moves the wallet and emits wallet.credited in that environment only", async () => {
      await advance(60)
      const credited = await p.credit("production", 5000.25)
      expect(credited).toEqual({ newBalance: 5000.25 })
      const evs = await events()
      expect(evs.map((e) => [e.event, e.partition, e.data])).toEqual([
        ["wallet.credited", p.partition("production"), { amount: 5000.25, newBalance: 5000.25, currency: "USD" }]
      ])
      expect((await p.call("production", "GET", "/wallet")).body).toMatchObject({ balance: 5000.25, updatedAt: "2026-11-23T08:01:00.000Z" })
      expect((await p.sb("GET", "/wallet")).body.balance).toBe(100000)
      expect((await p.credit("sandbox", 0.01)).newBalance).toBe(100000.01)
    })
  })

  describe("deposit and withdraw", () => {
    it("a deposit moves master -> sub-account and emits deposit.confirmed; a withdrawal moves it back", async () => {
      const d = await p.sb("POST", `/users/${id}/deposit`, { amount: 250.75, note: "Mpesa ref QX1", reference: "dep-1" })
      expect(d.status).toBe(200)
      expect(d.body).toEqual({
        message: "Deposit successful.",
        transactionId: d.body.transactionId,
        type: "DEPOSIT",
        subAccountId: id,
        externalId: "cust-9",
        amount: 250.75,
        currency: "USD",
        newBalance: 250.75,
        masterWalletBalance: 99749.25,
        localAmount: null,
        localCurrency: null,
        fxRate: null,
        note: "Mpesa ref QX1",
        reference: "dep-1",
        createdAt: "2026-11-23T08:00:00.000Z"
      })
      expect(d.body.transactionId).toMatch(/^txn_[0-9a-z]{16}$/)
      expect((await events()).map((e) => [e.event, e.data])).toEqual([
        ["deposit.confirmed", { subAccountId: id, externalId: "cust-9", amount: 250.75, currency: "USD", newBalance: 250.75 }]
      ])
      const w = await p.sb("POST", `/users/${id}/withdraw`, { amount: 50.75 })
      expect(w.body).toMatchObject({
        message: "Withdrawal successful.",
        type: "WITHDRAWAL",
        newBalance: 200,
        masterWalletBalance: 99800,
        note: null,
        reference: null
      })
      expect((await events()).map((e) => [e.event, e.data])).toEqual([
        ["withdraw.confirmed", { subAccountId: id, externalId: "cust-9", amount: 50.75, currency: "USD", newBalance: 200 }]
      ])
      expect((await p.sb("GET", `/users/${id}`)).body).toMatchObject({ walletBalance: 200, wallet: { currency: "USD", balance: 200 } })
      expect((await p.sb("GET", "/wallet")).body.available).toBe(99800)
    })

    it("records the partner's FX as given and derives only what is missing", async () => {
      const both = await p.sb("POST", `/users/${id}/deposit`, { amount: 500, localAmount: 655000, localCurrency: "KES", fxRate: 1310 })
      expect(both.body).toMatchObject({ localAmount: 655000, localCurrency: "KES", fxRate: 1310 })
      expect((await events())[0]?.data).toEqual({
        subAccountId: id,
        externalId: "cust-9",
        amount: 500,
        currency: "USD",
        newBalance: 500,
        localAmount: 655000,
        localCurrency: "KES",
        fxRate: 1310
      })
      const rateOnly = await p.sb("POST", `/users/${id}/deposit`, { amount: 10.01, localCurrency: "KES", fxRate: 129.255 })
      expect(rateOnly.body).toMatchObject({ localAmount: 1293.84, fxRate: 129.255 })
      const amountOnly = await p.sb("POST", `/users/${id}/withdraw`, { amount: 3, localCurrency: "NGN", localAmount: 4650.5 })
      expect(amountOnly.body).toMatchObject({ localAmount: 4650.5, fxRate: 1550.166667, localCurrency: "NGN" })
      const reference = await p.sb("POST", `/users/${id}/deposit`, { amount: 2, localCurrency: "ZAR" })
      expect(reference.body).toMatchObject({ localAmount: 35.7, fxRate: 17.85, localCurrency: "ZAR" })
    })

    it.each([
      [{ amount: 1, fxRate: 100 }, "localCurrency"],
      [{ amount: 1, localAmount: 100 }, "localCurrency"],
      [{ amount: 1, localCurrency: "XYZ" }, "localCurrency"],
      [{ amount: 1, localCurrency: "kes" }, "localCurrency"],
      [{ amount: 1, localCurrency: "KES", localAmount: 1.00001 }, "localAmount"],
      [{ amount: 1, localCurrency: "KES", fxRate: 1.0000001 }, "fxRate"],
      [{ amount: 1_000_000, localCurrency: "KES", localAmount: 0.0001 }, "localAmount"],
      [{ amount: 1.001 }, "amount"],
      [{ amount: 0 }, "amount"],
      [{ amount: -5 }, "amount"],
      [{ amount: 10_000_000_001 }, "amount"],
      [{ amount: 1, note: "n".repeat(501) }, "note"],
      [{ amount: 1, reference: "r".repeat(201) }, "reference"]
    ])("refuses %j with VALIDATION_ERROR on %s, moving nothing", async (body, param) => {
      const r = await p.sb("POST", `/users/${id}/deposit`, body)
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param })
      expect((await p.sb("GET", "/wallet")).body.balance).toBe(100000)
      expect(await events()).toEqual([])
    })

    it("INSUFFICIENT_FUNDS when the master wallet (deposit) or the sub-account (withdrawal) is short; exact amounts pass", async () => {
      const short = await p.sb("POST", `/users/${id}/deposit`, { amount: 100000.01 })
      expect(short.status).toBe(400)
      expect(short.body.error).toEqual({
        code: "INSUFFICIENT_FUNDS",
        message: "the master wallet holds 100000 USD available; the transfer needs 100000.01 USD"
      })
      expect((await p.sb("POST", `/users/${id}/deposit`, { amount: 100000 })).body.masterWalletBalance).toBe(0)
      const over = await p.sb("POST", `/users/${id}/withdraw`, { amount: 100000.01 })
      expect(over.body.error).toEqual({
        code: "INSUFFICIENT_FUNDS",
        message: `sub-account ${id} holds 100000 USD available; the transfer needs 100000.01 USD`
      })
      expect((await p.sb("POST", `/users/${id}/withdraw`, { amount: 100000 })).body.newBalance).toBe(0)
      expect((await events()).map((e) => e.event)).toEqual(["deposit.confirmed", "withdraw.confirmed"])
    })

    it("404 for an unknown sub-account; missing amount is MISSING_PARAM", async () => {
      expect((await p.sb("POST", "/users/usr_nope/deposit", { amount: 1 })).status).toBe(404)
      expect((await p.sb("POST", `/users/${id}/withdraw`, {})).body.error).toMatchObject({ code: "MISSING_PARAM", param: "amount" })
    })
  })

  describe("GET /users/{userId}/transactions", () => {
    /** Three moves, one per UTC day: 2026-11-23, 24 and 25, each at 08:00Z. */
    const history = async () => {
      const ids: Array<string> = []
      ids.push((await p.deposit(id, 100)).transactionId)
      await advance(86_400)
      ids.push((await p.sb("POST", `/users/${id}/withdraw`, { amount: 30, reference: "w-1" })).body.transactionId)
      await advance(86_400)
      ids.push((await p.deposit(id, 5)).transactionId)
      return ids
    }
    const txIds = async (query: string) => {
      const r = await p.sb("GET", `/users/${id}/transactions${query}`)
      expect(r.status).toBe(200)
      return r.body.transactions.map((t: { transactionId: string }) => t.transactionId)
    }

    it("lists newest first with signed amounts and the balance after each", async () => {
      const [d1, w1, d2] = await history()
      const r = await p.sb("GET", `/users/${id}/transactions`)
      expect(r.body).toMatchObject({ count: 3, hasMore: false, nextCursor: null })
      expect(r.body.transactions[1]).toEqual({
        transactionId: w1,
        subAccountId: id,
        type: "WITHDRAWAL",
        amount: -30,
        currency: "USD",
        balanceAfter: 70,
        orderId: null,
        subscriptionId: null,
        reference: "w-1",
        description: "Withdrawal to the master wallet",
        createdAt: "2026-11-24T08:00:00.000Z"
      })
      expect(r.body.transactions.map((t: { transactionId: string; balanceAfter: number }) => [t.transactionId, t.balanceAfter])).toEqual([
        [d2, 75],
        [w1, 70],
        [d1, 100]
      ])
    })

    it("from/to are inclusive: dates cover whole UTC days, date-times are timezone-aware", async () => {
      const [d1, w1, d2] = await history()
      expect(await txIds("?from=2026-11-24")).toEqual([d2, w1])
      expect(await txIds("?to=2026-11-24")).toEqual([w1, d1])
      expect(await txIds("?from=2026-11-24&to=2026-11-24")).toEqual([w1])
      expect(await txIds("?from=2026-11-24T08:00:00Z&to=2026-11-24T08:00:00Z")).toEqual([w1])
      expect(await txIds("?from=2026-11-24T08:00:00.001Z")).toEqual([d2])
      expect(await txIds("?to=2026-11-24T07:59:59.999Z")).toEqual([d1])
      // 11:00 at +03:00 is 08:00Z
      expect(await txIds(`?from=${encodeURIComponent("2026-11-24T11:00:00+03:00")}&to=${encodeURIComponent("2026-11-24T11:00:00+03:00")}`)).toEqual([w1])
      expect(await txIds("?type=DEPOSIT")).toEqual([d2, d1])
      expect(await txIds("?type=WITHDRAWAL&to=2026-11-23")).toEqual([])
    })

    it("pages with limit and a cursor bound to the filters", async () => {
      const [d1, w1, d2] = await history()
      const first = await p.sb("GET", `/users/${id}/transactions?limit=2`)
      expect(first.body).toMatchObject({ count: 2, hasMore: true })
      expect(first.body.transactions.map((t: { transactionId: string }) => t.transactionId)).toEqual([d2, w1])
      const second = await p.sb("GET", `/users/${id}/transactions?limit=2&cursor=${first.body.nextCursor}`)
      expect(second.body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
      expect(second.body.transactions[0].transactionId).toBe(d1)
      // a cursor and a `to` bound together: the stricter wins
      const withTo = await p.sb("GET", `/users/${id}/transactions?limit=1&to=2026-11-25`)
      expect(withTo.body.transactions[0].transactionId).toBe(d2)
      expect(await txIds(`?limit=1&to=2026-11-25&cursor=${withTo.body.nextCursor}`)).toEqual([w1])
      expect(await txIds("?limit=3")).toEqual([d2, w1, d1])
      const moved = await p.sb("GET", `/users/${id}/transactions?limit=2&type=DEPOSIT&cursor=${first.body.nextCursor}`)
      expect(moved.status).toBe(400)
      expect(moved.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "cursor" })
    })

    it("pages through more rows than one store read", async () => {
      await p.deposit(id, 1000)
      for (let i = 0; i < 520; i++) {
        if (i % 250 === 0) await advance(61) // stay under the sandbox's 300 requests a minute
        await p.sb("POST", `/users/${id}/withdraw`, { amount: 0.01 })
      }
      const all: Array<string> = []
      let cursor: string | null = null
      do {
        const r: { body: { transactions: Array<{ transactionId: string }>; nextCursor: string | null } } = await p.sb(
          "GET",
          `/users/${id}/transactions?limit=200${cursor === null ? "" : `&cursor=${cursor}`}`
        )
        all.push(...r.body.transactions.map((t) => t.transactionId))
        cursor = r.body.nextCursor
      } while (cursor !== null)
      expect(all.length).toBe(521)
      expect(new Set(all).size).toBe(521)
      expect(await txIds("?type=DEPOSIT")).toHaveLength(1)
    }, 60_000)

    it.each([
      ["?limit=0", "limit"],
      ["?limit=201", "limit"],
      ["?limit=abc", "limit"],
      ["?from=2026-02-30", "from"],
      ["?to=2026-11-24T08:00:00", "to"],
      ["?type=FEE", "type"],
      ["?cursor=nope", "cursor"]
    ])("%s is 400 VALIDATION_ERROR on %s", async (query, param) => {
      const r = await p.sb("GET", `/users/${id}/transactions${query}`)
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param })
    })

    it("reversed dates are 400, an unknown sub-account 404", async () => {
      const r = await p.sb("GET", `/users/${id}/transactions?from=2026-11-25&to=2026-11-24`)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", params: ["from", "to"] })
      expect((await p.sb("GET", "/users/usr_nope/transactions")).status).toBe(404)
      expect((await p.sb("GET", `/users/${id}/transactions?limit=200`)).status).toBe(200)
    })
  })

  describe("POST /reset (sandbox root)", () => {
    it("wipes the partner's sandbox data, re-seeds 100000, keeps the key, production and other partners untouched", async () => {
      await p.deposit(id, 40)
      // A sub-account's own rows (its wallet history) live in a child partition of the sandbox's: wiped with it.
      const history = () => storeDocs(engine, "walletTxns", accountPartition(p.partition("sandbox"), id))
      expect(await history()).toHaveLength(1)
      const live = await p.createUser("production")
      const other = await partnerOf(engine)
      const theirs = await other.createUser()
      await advance(10)
      const r = await p.reset()
      expect(r.status).toBe(200)
      expect(r.body).toEqual({
        message: "Sandbox reset: sub-accounts, orders, quotes and events were wiped; the master wallet holds 100000 USD.",
        walletBalance: 100000,
        currency: "USD",
        resetAt: "2026-11-23T08:00:10.000Z"
      })
      expect((await p.sb("GET", `/users/${id}`)).status).toBe(404)
      expect((await p.sb("GET", "/users?status=ALL")).body.count).toBe(0)
      expect((await p.sb("GET", "/wallet")).body).toMatchObject({ balance: 100000, updatedAt: "2026-11-23T08:00:10.000Z" })
      expect((await p.call("production", "GET", `/users/${live.subAccountId}`)).status).toBe(200)
      expect((await other.sb("GET", `/users/${theirs.subAccountId}`)).status).toBe(200)
      // the journal restarts from the seed; the externalId is free again
      const journal = await storeDocs(engine, "journal", p.partition("sandbox"))
      expect(journal.map((d) => (d.body as { kind: string }).kind)).toEqual(["SEED"])
      expect(await history()).toEqual([])
      expect((await p.sb("POST", "/users", { externalId: "cust-9" })).status).toBe(201)
    })

    it("event positions keep growing after a reset", async () => {
      await p.deposit(id, 1)
      const before = (await events()).at(-1)?.position ?? 0
      await p.reset()
      const again = await p.createUser()
      await p.deposit(again.subAccountId, 1)
      const after = (await events()).at(-1)?.position ?? 0
      expect(after).toBe(before + 1)
    })

    it("is sandbox-only: a live key is refused", async () => {
      const r = await engine.call("POST", "/api/sandbox/v1/reset", { headers: { "x-api-key": p.keys.liveKey } })
      expect(r.status).toBe(401)
      expect((await p.call("production", "GET", "/wallet")).body.balance).toBe(0)
    })
  })
})
