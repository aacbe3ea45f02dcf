/**
 * Sub-accounts through the partner API: create, auto-register, read, list (filters, pagination, scan cap),
 * summaries. Every answer is checked against the contract by the harness.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { saveSubAccount } from "../../engine/app/accounts.ts"
import type { SubAccountRecord } from "../../engine/domain/subaccount.ts"
import { Store } from "../../engine/store/port.ts"
import { startEngine } from "./harness.ts"
import { eventWatcher, partnerOf } from "./accounts-kit.ts"

const closedTemplate: SubAccountRecord = {
  subAccountId: "",
  partition: "",
  externalId: "",
  uid: null,
  displayName: null,
  email: null,
  phone: null,
  country: null,
  kycStatus: "NONE",
  kycLevel: "NONE",
  kycRejectionCode: null,
  kycRejectionReason: null,
  kycReviewedAt: null,
  kycReference: null,
  status: "closed",
  frozenBy: null,
  statusReason: null,
  createdAt: Date.parse("2026-11-23T07:00:00.000Z"),
  closedAt: Date.parse("2026-11-23T07:30:00.000Z")
}

describe("sub-accounts", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
  })
  afterEach(() => engine.dispose())

  describe("POST /users", () => {
    it("creates an active sub-account with KYC NONE and an empty wallet, emitting nothing", async () => {
      const events = eventWatcher(engine)
      await events()
      const r = await p.sb("POST", "/users", { externalId: "cust-1", displayName: "Amina", email: "amina@x.test", phone: "+254700000001", country: "KE" })
      expect(r.status).toBe(201)
      expect(r.body).toEqual({
        subAccountId: r.body.subAccountId,
        userId: r.body.subAccountId,
        externalId: "cust-1",
        displayName: "Amina",
        email: "amina@x.test",
        kycStatus: "NONE",
        kycLevel: "NONE",
        kycRejectionCode: null,
        kycRejectionReason: null,
        kycReviewedAt: null,
        status: "active",
        walletBalance: 0,
        wallet: { currency: "USD", balance: 0 }
      })
      expect(r.body.subAccountId).toMatch(/^usr_[0-9a-z]{16}$/)
      expect(JSON.stringify(r.body)).not.toContain("+254700000001")
      expect(await events()).toEqual([])
      const read = await p.sb("GET", `/users/${r.body.subAccountId}`)
      expect(read.status).toBe(200)
      expect(read.body).toEqual(r.body)
    })

    it("optional fields default to null", async () => {
      const r = await p.sb("POST", "/users", { externalId: "bare" })
      expect(r.body).toMatchObject({ displayName: null, email: null })
    })

    it("refuses a taken externalId with 409, per partner and environment", async () => {
      const first = await p.sb("POST", "/users", { externalId: "dup" })
      const again = await p.sb("POST", "/users", { externalId: "dup", displayName: "other" })
      expect(again.status).toBe(409)
      expect(again.body.error).toEqual({ code: "CONFLICT", message: "externalId dup already belongs to a sub-account", param: "externalId" })
      // the other environment and another partner are separate namespaces
      expect((await p.call("production", "POST", "/users", { externalId: "dup" })).status).toBe(201)
      const other = await partnerOf(engine)
      expect((await other.sb("POST", "/users", { externalId: "dup" })).status).toBe(201)
      // a closed account keeps its externalId
      await p.sb("DELETE", `/users/${first.body.subAccountId}`)
      expect((await p.sb("POST", "/users", { externalId: "dup" })).status).toBe(409)
    })

    it.each([
      [{}, 400, "MISSING_PARAM", "externalId"],
      [{ externalId: "" }, 400, "VALIDATION_ERROR", "externalId"],
      [{ externalId: "x".repeat(129) }, 400, "VALIDATION_ERROR", "externalId"],
      [{ externalId: 7 }, 400, "INVALID_TYPE", "externalId"],
      [{ externalId: "a", email: "not-an-email" }, 400, "VALIDATION_ERROR", "email"],
      [{ externalId: "a", phone: "0700" }, 400, "VALIDATION_ERROR", "phone"],
      [{ externalId: "a", country: "ke" }, 400, "VALIDATION_ERROR", "country"]
    ])("refuses %j with %i %s on %s and writes nothing", async (body, status, code, param) => {
      const r = await p.sb("POST", "/users", body)
      expect(r.status).toBe(status)
      expect(r.body.error).toMatchObject({ code, param })
      expect((await p.sb("GET", "/users?status=ALL")).body.count).toBe(0)
    })

    it("accepts a 128-character externalId", async () => {
      expect((await p.sb("POST", "/users", { externalId: "x".repeat(128) })).status).toBe(201)
    })
  })

  describe("POST /auto-register", () => {
    it("creates once (201, created) and then returns the same sub-account unchanged (200), whatever the other fields", async () => {
      const first = await p.sb("POST", "/auto-register", { uid: "firebase-uid-1", email: "u@x.test", displayName: "U" })
      expect(first.status).toBe(201)
      expect(first.body).toMatchObject({ uid: "firebase-uid-1", created: true, externalId: "firebase-uid-1", email: "u@x.test", displayName: "U" })
      const again = await p.sb("POST", "/auto-register", { uid: "firebase-uid-1", email: "changed@x.test", externalId: "other" })
      expect(again.status).toBe(200)
      expect(again.body).toEqual({ ...first.body, created: false })
      // its wallet is read live on a repeat
      await p.deposit(first.body.subAccountId, 5)
      const third = await p.sb("POST", "/auto-register", { uid: "firebase-uid-1" })
      expect(third.body.walletBalance).toBe(5)
      expect((await p.sb("GET", "/users")).body.count).toBe(1)
    })

    it("uses the given externalId, refuses a taken one on creation, and keys uids per environment", async () => {
      const made = await p.sb("POST", "/auto-register", { uid: "u2", externalId: "crm-2" })
      expect(made.body.externalId).toBe("crm-2")
      const byExternal = await p.sb("GET", "/users?externalId=crm-2")
      expect(byExternal.body.users[0].subAccountId).toBe(made.body.subAccountId)
      const taken = await p.sb("POST", "/auto-register", { uid: "u3", externalId: "crm-2" })
      expect(taken.status).toBe(409)
      expect(taken.body.error).toMatchObject({ code: "CONFLICT", param: "externalId" })
      // nothing was bound to u3
      expect((await p.sb("POST", "/auto-register", { uid: "u3" })).status).toBe(201)
      const live = await p.call("production", "POST", "/auto-register", { uid: "u2" })
      expect(live.status).toBe(201)
      expect(live.body.subAccountId).not.toBe(made.body.subAccountId)
    })

    it("needs a uid", async () => {
      const r = await p.sb("POST", "/auto-register", { email: "a@b.test" })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "MISSING_PARAM", param: "uid" })
    })
  })

  describe("GET /users/{userId}", () => {
    it("answers 404 for an unknown id", async () => {
      const r = await p.sb("GET", "/users/usr_unknown")
      expect(r.status).toBe(404)
      expect(r.body.error).toEqual({ code: "NOT_FOUND", message: "sub-account usr_unknown was not found" })
    })
  })

  describe("GET /users", () => {
    const make = async (n: number) => {
      const ids: Array<string> = []
      for (let i = 0; i < n; i++) {
        ids.push((await p.createUser("sandbox", { externalId: `list-${i}` })).subAccountId)
        await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
      }
      return ids
    }

    it("lists oldest first; the default hides closed accounts, status filters, ALL includes them", async () => {
      const [a, b, c] = await make(3)
      await p.sb("POST", `/users/${b}/freeze`)
      await p.sb("DELETE", `/users/${c}`)
      const ids = async (q: string) => (await p.sb("GET", `/users${q}`)).body.users.map((u: { subAccountId: string }) => u.subAccountId)
      expect(await ids("")).toEqual([a, b])
      expect(await ids("?status=ALL")).toEqual([a, b, c])
      expect(await ids("?status=active")).toEqual([a])
      expect(await ids("?status=frozen")).toEqual([b])
      expect(await ids("?status=closed")).toEqual([c])
      const page = (await p.sb("GET", "/users")).body
      expect(page).toMatchObject({ count: 2, hasMore: false, nextCursor: null })
    })

    it("looks up an externalId directly, with the status filter applied", async () => {
      const [a] = await make(2)
      expect((await p.sb("GET", "/users?externalId=list-0")).body).toMatchObject({ count: 1, hasMore: false, nextCursor: null, users: [{ subAccountId: a }] })
      expect((await p.sb("GET", "/users?externalId=nope")).body).toEqual({ users: [], count: 0, hasMore: false, nextCursor: null })
      await p.sb("DELETE", `/users/${a}`)
      expect((await p.sb("GET", "/users?externalId=list-0")).body.count).toBe(0)
      expect((await p.sb("GET", "/users?externalId=list-0&status=closed")).body.count).toBe(1)
      expect((await p.sb("GET", "/users?externalId=list-0&status=active")).body.count).toBe(0)
    })

    it("pages with a cursor bound to the filters", async () => {
      const ids = await make(5)
      const first = await p.sb("GET", "/users?limit=2")
      expect(first.body).toMatchObject({ count: 2, hasMore: true })
      const second = await p.sb("GET", `/users?limit=2&cursor=${first.body.nextCursor}`)
      const third = await p.sb("GET", `/users?limit=2&cursor=${second.body.nextCursor}`)
      expect(third.body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
      expect([...first.body.users, ...second.body.users, ...third.body.users].map((u: { subAccountId: string }) => u.subAccountId)).toEqual(ids)
      // a page that ends exactly at the last account says so
      expect((await p.sb("GET", `/users?limit=3&cursor=${first.body.nextCursor}`)).body).toMatchObject({ count: 3, hasMore: false })
      const otherFilter = await p.sb("GET", `/users?limit=2&status=ALL&cursor=${first.body.nextCursor}`)
      expect(otherFilter.status).toBe(400)
      expect(otherFilter.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "cursor" })
      expect((await p.sb("GET", "/users?cursor=garbage")).status).toBe(400)
      // the externalId is part of the scope too
      const withExternal = await p.sb("GET", `/users?limit=2&externalId=list-0&cursor=${first.body.nextCursor}`)
      expect(withExternal.status).toBe(400)
      expect(withExternal.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "cursor" })
    })

    it("defaults to 100 per page, takes at most 200", async () => {
      await make(101)
      const page = await p.sb("GET", "/users")
      expect(page.body).toMatchObject({ count: 100, hasMore: true })
      expect((await p.sb("GET", "/users?limit=200")).body).toMatchObject({ count: 101, hasMore: false })
      for (const bad of ["0", "201"]) {
        const r = await p.sb("GET", `/users?limit=${bad}`)
        expect(r.status).toBe(400)
        expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "limit" })
      }
      expect((await p.sb("GET", "/users?status=all")).body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "status" })
    }, 30_000)
  })

  it("GET /users scans at most 1,000 records: a page can be empty with hasMore, and the cursor continues", async () => {
    // 1,001 closed accounts stored directly (creating them through the API would take minutes), then one active one
    await engine.runtime.runPromise(
      Store.use((store) =>
        store.transact((tx) =>
          Effect.forEach(
            Array.from({ length: 1001 }, (_, i) => i),
            (i) =>
              saveSubAccount(tx, {
                ...closedTemplate,
                subAccountId: `usr_closed_${String(i).padStart(5, "0")}`,
                partition: p.partition("sandbox"),
                externalId: `closed-${i}`
              }),
            { discard: true }
          )
        )
      )
    )
    const active = await p.createUser("sandbox", { externalId: "the-active-one" })
    const first = await p.sb("GET", "/users")
    expect(first.body).toMatchObject({ users: [], count: 0, hasMore: true })
    const second = await p.sb("GET", `/users?cursor=${first.body.nextCursor}`)
    expect(second.body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
    expect(second.body.users[0].subAccountId).toBe(active.subAccountId)
    expect((await p.sb("GET", "/users?status=ALL&limit=200")).body).toMatchObject({ count: 200, hasMore: true })
  })

  describe("GET /users/summary", () => {
    it("answers one item per distinct id in request order, by id or externalId, with the same NOT_FOUND for unknown and foreign ids", async () => {
      const a = await p.createUser("sandbox", { externalId: "sum-a" })
      await p.deposit(a.subAccountId, 12.5)
      const other = await partnerOf(engine)
      const foreign = await other.createUser()
      const live = await p.createUser("production")
      const r = await p.sb("GET", `/users/summary?userIds=${a.subAccountId},sum-a, ${a.subAccountId} ,usr_nope,${foreign.subAccountId},${live.subAccountId}`)
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ count: 5, snapshotModel: "per_item", sandbox: true, asOf: "2026-11-23T08:00:00.000Z" })
      const [byId, byExt, unknown, foreignItem, liveItem] = r.body.accounts
      expect(byId).toEqual({
        requestedId: a.subAccountId,
        subAccountId: a.subAccountId,
        userId: a.subAccountId,
        externalId: "sum-a",
        status: "active",
        asOf: "2026-11-23T08:00:00.000Z",
        currencyWallets: [{ currency: "USD", balance: 12.5, available: 12.5, reserved: 0 }],
        buyingPower: { currency: "USD", amount: 12.5, cashAvailable: 12.5, reserved: 0 },
        currencyClosureBlockers: [
          { currency: "USD", reason: "NON_ZERO_BALANCE", amount: 12.5, count: null, message: "the wallet holds cash: withdraw it to the master wallet first" }
        ],
        error: null
      })
      expect(byExt).toEqual({ ...byId, requestedId: "sum-a" })
      const blank = (requestedId: string) => ({
        requestedId,
        subAccountId: null,
        userId: null,
        externalId: null,
        status: null,
        asOf: null,
        currencyWallets: [],
        buyingPower: null,
        currencyClosureBlockers: [],
        error: { code: "NOT_FOUND", message: `no sub-account ${requestedId}` }
      })
      expect(unknown).toEqual(blank("usr_nope"))
      expect(foreignItem).toEqual(blank(foreign.subAccountId))
      expect(liveItem).toEqual(blank(live.subAccountId))
      expect((await p.call("production", "GET", `/users/summary?userIds=${live.subAccountId}`)).body.sandbox).toBe(false)
    })

    it("takes 1 to 20 distinct ids", async () => {
      const twenty = Array.from({ length: 20 }, (_, i) => `id-${i}`)
      expect((await p.sb("GET", `/users/summary?userIds=${[...twenty, "id-0"].join(",")}`)).body.count).toBe(20)
      const tooMany = await p.sb("GET", `/users/summary?userIds=${[...twenty, "id-20"].join(",")}`)
      expect(tooMany.status).toBe(400)
      expect(tooMany.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "userIds", max: 20, received: 21 })
      expect((await p.sb("GET", "/users/summary?userIds=a,,b")).body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "userIds" })
      expect((await p.sb("GET", "/users/summary")).body.error).toMatchObject({ code: "MISSING_PARAM", param: "userIds" })
    })
  })
})
