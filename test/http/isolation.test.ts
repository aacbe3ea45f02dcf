/**
 * The isolation matrix: every route of the accounts family that takes an id, called with another partner's id or
 * with the other environment's id, answers exactly what it answers for an id that never existed (404; 400 for
 * cursors; a per-item NOT_FOUND in summaries), with nothing of the owner in the body, and changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"
import { type Env, partnerOf } from "./accounts-kit.ts"

const OWNER_SECRETS = ["owner-ext-7", "owner@secret.test", "Owner Secret", "owner-uid-7", "4321.5"]

describe("isolation matrix", () => {
  let engine: ReturnType<typeof startEngine>
  let owner: Awaited<ReturnType<typeof partnerOf>>
  let other: Awaited<ReturnType<typeof partnerOf>>
  let ids: { user: string; device: string; order: string; usersCursor: string; txCursor: string; ordersCursor: string }
  /** The caller's own sub-account, for routes that need one of the caller's ids next to the foreign one. */
  const own: Record<string, string> = {}

  beforeAll(async () => {
    engine = startEngine()
    owner = await partnerOf(engine)
    other = await partnerOf(engine)
    const made = await owner.sb("POST", "/auto-register", {
      uid: "owner-uid-7",
      externalId: "owner-ext-7",
      email: "owner@secret.test",
      displayName: "Owner Secret"
    })
    const user = made.body.subAccountId as string
    await owner.createUser("sandbox", { externalId: "owner-ext-8" })
    await owner.verify(user)
    await owner.deposit(user, 4321.5)
    await owner.sb("POST", `/users/${user}/withdraw`, { amount: 1 })
    const device = (await owner.sb("POST", `/users/${user}/devices`, { platform: "ios", pushToken: "owner-push-token-1" })).body.deviceId
    const q1 = (await owner.sb("GET", `/quote/SCOM?side=BUY&quantity=1&subAccountId=${user}`)).body.quoteId
    const order = (await owner.sb("POST", `/users/${user}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q1 })).body.orderId
    const q2 = (await owner.sb("GET", `/quote/SCOM?side=BUY&quantity=2&subAccountId=${user}`)).body.quoteId
    await owner.sb("POST", `/users/${user}/trade`, { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: q2 })
    const usersCursor = (await owner.sb("GET", "/users?limit=1")).body.nextCursor
    const txCursor = (await owner.sb("GET", `/users/${user}/transactions?limit=1`)).body.nextCursor
    const ordersCursor = (await owner.sb("GET", `/users/${user}/orders?limit=1`)).body.nextCursor
    expect([usersCursor, txCursor, ordersCursor].every((c) => typeof c === "string")).toBe(true)
    ids = { user, device, order, usersCursor, txCursor, ordersCursor }
    own.otherSandbox = (await other.createUser("sandbox")).subAccountId
    own.otherProduction = (await other.createUser("production")).subAccountId
    own.ownerProduction = (await owner.createUser("production")).subAccountId
  })
  afterAll(() => engine.dispose())

  const callers = () =>
    [
      ["another partner, sandbox", other, "sandbox", own.otherSandbox],
      ["another partner, production", other, "production", own.otherProduction],
      ["the owner, other environment", owner, "production", own.ownerProduction]
    ] as const

  /** Routes taking the sub-account id (`{u}`), with the body they send. */
  const userRoutes: Array<[string, string, unknown?]> = [
    ["GET", "/users/{u}"],
    ["DELETE", "/users/{u}"],
    ["POST", "/users/{u}/freeze"],
    ["POST", "/users/{u}/unfreeze"],
    ["POST", "/users/{u}/kyc", { kycStatus: "PENDING" }],
    ["POST", "/users/{u}/deposit", { amount: 1 }],
    ["POST", "/users/{u}/withdraw", { amount: 1 }],
    ["GET", "/users/{u}/transactions"],
    ["GET", "/users/{u}/devices"],
    ["POST", "/users/{u}/devices", { platform: "web", pushToken: "intruder-token" }],
    ["DELETE", "/users/{u}/devices/{d}"],
    ["POST", "/users/{u}/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_anything" }],
    ["GET", "/users/{u}/orders"],
    ["GET", "/quote/SCOM?subAccountId={u}"]
  ]

  /** The answer with the requested id blanked, to compare a foreign id's answer with an unknown id's. */
  const shape = (body: unknown, requested: string) => JSON.parse(JSON.stringify(body).replaceAll(requested, "<id>"))
  const noSecrets = (body: unknown) => {
    const text = JSON.stringify(body)
    for (const secret of OWNER_SECRETS) expect(text).not.toContain(secret)
  }

  it.each(userRoutes)(
    "%s %s with a foreign id answers like an unknown id (404) and leaks nothing",
    async (method: string, template: string, body?: unknown) => {
      for (const [who, caller, env] of callers()) {
        const path = (u: string) => template.replace("{u}", u).replace("{d}", ids.device)
        const foreign = await caller.call(env as Env, method, path(ids.user), body)
        const unknown = await caller.call(env as Env, method, path("usr_0000000000000000"), body)
        expect(foreign.status, `${who}: ${method} ${template}`).toBe(404)
        expect(shape(foreign.body, ids.user), who).toEqual(shape(unknown.body, "usr_0000000000000000"))
        noSecrets(foreign.body)
      }
    }
  )

  it("another account's device is not found under the caller's own sub-account", async () => {
    for (const [who, caller, env, mine] of callers()) {
      const r = await caller.call(env as Env, "DELETE", `/users/${mine}/devices/${ids.device}`)
      expect(r.status, who).toBe(404)
      noSecrets(r.body)
    }
  })

  it("cursors of the owner are refused with 400 on the same lists of the caller", async () => {
    for (const [who, caller, env, mine] of callers()) {
      for (const path of [
        `/users?limit=1&cursor=${ids.usersCursor}`,
        `/users/${mine}/transactions?limit=1&cursor=${ids.txCursor}`,
        `/users/${mine}/orders?limit=1&cursor=${ids.ordersCursor}`
      ]) {
        const r = await caller.call(env as Env, "GET", path)
        expect(r.status, `${who}: ${path}`).toBe(400)
        expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "cursor" })
        noSecrets(r.body)
      }
    }
  })

  it("summaries give foreign ids and externalIds the same per-item NOT_FOUND as unknown ones", async () => {
    for (const [who, caller, env] of callers()) {
      const r = await caller.call(env as Env, "GET", `/users/summary?userIds=${ids.user},owner-ext-7,usr_0000000000000000`)
      expect(r.status).toBe(200)
      const [byId, byExt, unknown] = r.body.accounts
      expect(shape(byId, ids.user), who).toEqual(shape(unknown, "usr_0000000000000000"))
      expect(shape(byExt, "owner-ext-7"), who).toEqual(shape(unknown, "usr_0000000000000000"))
      expect(byId.error).toEqual({ code: "NOT_FOUND", message: `no sub-account ${ids.user}` })
      expect(JSON.stringify(byId)).not.toContain("4321")
    }
  })

  it("externalIds and uids are per partner and environment: lookups find nothing, creations make new accounts", async () => {
    for (const [who, caller, env] of callers()) {
      const list = await caller.call(env as Env, "GET", "/users?externalId=owner-ext-8")
      expect(list.body, who).toEqual({ users: [], count: 0, hasMore: false, nextCursor: null })
      const auto = await caller.call(env as Env, "POST", "/auto-register", { uid: "owner-uid-7" })
      expect(auto.status, who).toBe(201)
      expect(auto.body.subAccountId).not.toBe(ids.user)
      expect(auto.body.email).toBeNull()
    }
  })

  it("the owner's account is untouched by all of the above", async () => {
    const r = await owner.sb("GET", `/users/${ids.user}`)
    expect(r.body).toMatchObject({ status: "active", kycStatus: "VERIFIED", externalId: "owner-ext-7" })
    const devices = await owner.sb("GET", `/users/${ids.user}/devices`)
    expect(devices.body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([ids.device])
    const txs = await owner.sb("GET", `/users/${ids.user}/transactions`)
    // all at one instant: ordered by transaction id, so compare as a set
    expect(txs.body.transactions.map((t: { type: string }) => t.type).sort()).toEqual(["DEPOSIT", "ORDER_ESCROW", "ORDER_ESCROW", "WITHDRAWAL"])
    const orders = await owner.sb("GET", `/users/${ids.user}/orders`)
    expect(orders.body.orders.map((o: { orderId: string; status: string }) => o.status)).toEqual(["PENDING", "PENDING"])
    expect(orders.body.orders.map((o: { orderId: string }) => o.orderId)).toContain(ids.order)
  })
})
