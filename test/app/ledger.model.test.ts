/**
 * The ledger's model test (fast-check, model-based): random sequences of sub-account creations, deposits,
 * withdrawals, freezes (partner and compliance), closes, KYC changes, top-ups, sandbox resets, BUY and SELL orders,
 * the desk's fills and rejects and the partner's cancels, asset subscriptions (master and sub-account) and their
 * allotment (full or partial), rejection and cancellation, on both environments of one partner. After every command,
 * per partner and environment:
 *   - every journal entry sums to zero, and each balance equals the sum of its account's postings;
 *   - no wallet, escrow or fee balance is negative;
 *   - master + sub-wallets + escrow + fees + market = seeded + credited, to the cent (market: what fills paid the
 *     market, net of SELL proceeds; 0 until something fills), and seeded/credited are what the model expects;
 *   - the master and sub-account wallets and escrows are what the model predicts, each account's escrow equals
 *     the escrow of its open orders, its subscription escrow that of its PENDING subscriptions, and every answer has
 *     the status the model predicts.
 * Memory always (1,000 runs); PostgreSQL when DATABASE_URL is set (fewer runs: each command is a few round trips
 * to the server). A failure prints the seed, the shrunk command sequence and the replay command.
 * A second model (at the end) adds resting orders on a moving clock: placement, ticks of the pinned price that
 * trigger them, replaces, cancels, the desk's decisions on triggered orders and DAY/GTD expiry, with the same
 * invariants after every command (150 runs on memory, 25 on PostgreSQL; SOKONI_RESTING_RUNS, SOKONI_RESTING_PG_RUNS).
 */
import fc from "fast-check"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { emptyTables } from "../support/pg-empty.ts"
import { type Env, partnerOf, storeDocs } from "../http/accounts-kit.ts"
import { fees, grossCents } from "../../engine/domain/money.ts"
import { MONDAY_OPEN, startEngine } from "../http/harness.ts"
import { onPostgres } from "../support/stores.ts"
import { expectReach } from "../support/reach.ts"

const SEED = process.env.SOKONI_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.SOKONI_SEED)
/**
 * A run's outcomes (what the generator reached): printed when the test fails (the reach checks after it, say) or on
 * request (SOKONI_MODEL_STATS=1), not into every green run. Called inside the test.
 */
const printStats = (line: string) => {
  if (process.env.SOKONI_MODEL_STATS === "1") console.log(line)
  else onTestFailed(() => console.log(line))
}
const PATH = process.env.SOKONI_PATH
const DATABASE_URL = process.env.DATABASE_URL
/** SOKONI_MODEL_RUNS lowers it for mutation runs, where the model test runs once per mutant it covers. */
const MEMORY_RUNS = Number(process.env.SOKONI_MODEL_RUNS ?? 1000)
/** Fewer on postgres: every command is several round trips to the server (300 runs take about 20 s here). */
const POSTGRES_RUNS = Number(process.env.SOKONI_PG_RUNS ?? 300)

type Engine = ReturnType<typeof startEngine>
type Partner = Awaited<ReturnType<typeof partnerOf>>
const ENVS: ReadonlyArray<Env> = ["sandbox", "production"]
const SEED_CENTS = 10_000_000

interface OrderModel {
  readonly orderId: string
  readonly account: string
  readonly side: "BUY" | "SELL"
  readonly price: number
  /** Placed quantity and the BUY's escrow at placement (a cancel returns it whole: only unfilled orders cancel). */
  readonly quantity: number
  readonly escrow: number
  remaining: number
  /** The order's escrow now (fills take from it); a triggered resting order's after its trigger. */
  held?: number
  /** A triggered resting order's limit (wire units): no fill may be worse (D-282). */
  readonly limit?: number | null
  /** A triggered DAY/GTD order's deadline (epoch ms). */
  readonly deadline?: number | null
}
interface SubscriptionModel {
  readonly subscriptionId: string
  readonly account: string
  readonly amount: number
  readonly total: number
}
interface UserModel {
  readonly id: string
  status: "active" | "frozen" | "closed"
  frozenBy: "partner" | "compliance" | null
  kyc: "NONE" | "PENDING" | "VERIFIED" | "REJECTED"
}
interface EnvModel {
  seeded: number
  credited: number
  users: Array<UserModel>
  orders: Array<OrderModel>
  /** PENDING subscriptions. */
  subs: Array<SubscriptionModel>
  /** wallet and escrow cents, and SCOM shares held and reserved, by account (`master` or a sub-account id) */
  wallet: Map<string, number>
  escrow: Map<string, number>
  shares: Map<string, number>
  reserved: Map<string, number>
  /** cash escrowed for PENDING subscriptions, by account */
  subEscrow: Map<string, number>
}
interface Model {
  readonly envs: Record<Env, EnvModel>
}
interface Real {
  readonly engine: Engine
  readonly p: Partner
}

const freshEnv = (seeded: number): EnvModel => ({
  seeded,
  credited: 0,
  users: [],
  orders: [],
  subs: [],
  wallet: new Map([["master", seeded]]),
  escrow: new Map(),
  shares: new Map(),
  reserved: new Map(),
  subEscrow: new Map()
})
const get = (m: Map<string, number>, k: string) => m.get(k) ?? 0
const add = (m: Map<string, number>, k: string, v: number) => m.set(k, get(m, k) + v)
const cents = (x: number) => Math.round(x * 100)

/** Picks the user at `i` (modulo), or the master account when `master` is set and the command allows it. */
const userAt = (env: EnvModel, i: number) => env.users[i % env.users.length] as UserModel

interface Balances {
  readonly byAccount: Map<string, number>
}

/** Reads the partition's journal and balances from the store and checks the ledger's invariants. */
const checkLedger = async (real: Real, env: Env, model: EnvModel): Promise<Balances> => {
  const partition = real.p.partition(env)
  const journal = (await storeDocs(real.engine, "journal", partition)).map(
    (d) => d.body as { kind: string; postings: Array<{ account: string; cents: number }> }
  )
  const balances = (await storeDocs(real.engine, "balances", partition)).map((d) => d.body as { account: string; cents: number })
  const fromJournal = new Map<string, number>()
  for (const entry of journal) {
    expect(
      entry.postings.reduce((s, p) => s + p.cents, 0),
      `entry ${entry.kind} sums to zero`
    ).toBe(0)
    for (const p of entry.postings) {
      expect(Number.isSafeInteger(p.cents)).toBe(true)
      add(fromJournal, p.account, p.cents)
    }
  }
  const byAccount = new Map(balances.map((b) => [b.account, b.cents]))
  for (const [account, sum] of fromJournal) expect(get(byAccount, account), `balance of ${account} = its postings`).toBe(sum)
  for (const [account, value] of byAccount) {
    expect(value, `${account} has postings`).toBe(get(fromJournal, account))
    if (account.startsWith("wallet:") || account.startsWith("escrow:") || account === "fees") expect(value, `${account} >= 0`).toBeGreaterThanOrEqual(0)
  }
  const seeded = 0 - get(byAccount, "equity:seed")
  const credited = 0 - get(byAccount, "equity:credit")
  let held = 0
  for (const [account, value] of byAccount) if (/^(wallet|escrow):/.test(account) || account === "fees" || account === "market") held += value
  expect(held, "master + sub-wallets + escrow + fees + market = seeded + credited").toBe(seeded + credited)
  expect(seeded).toBe(model.seeded)
  expect(credited).toBe(model.credited)
  const accounts = ["master", ...model.users.map((u) => u.id)]
  for (const a of accounts) {
    expect(get(byAccount, `wallet:${a}`), `wallet of ${a}`).toBe(get(model.wallet, a))
    expect(get(byAccount, `escrow:${a}`), `escrow of ${a}`).toBe(get(model.escrow, a))
  }
  // each account's escrow is the escrow of its open orders
  const orders = (await storeDocs(real.engine, "orders", partition)).map((d) => d.body as { account: string; escrow: number; status: string })
  const escrowOfOrders = new Map<string, number>()
  for (const o of orders) add(escrowOfOrders, o.account, o.escrow)
  for (const a of accounts) expect(get(escrowOfOrders, a), `escrow of ${a}'s orders`).toBe(get(byAccount, `escrow:${a}`))
  // and its subscription escrow is the escrow of its PENDING subscriptions (rows in the account's child partition)
  for (const a of accounts) {
    expect(get(byAccount, `escrow:${a}:subscriptions`), `subscription escrow of ${a}`).toBe(get(model.subEscrow, a))
    const subs = (await storeDocs(real.engine, "subscriptions", `${partition}/${a}`)).map((d) => d.body as { escrow: number; status: string })
    expect(
      subs.reduce((sum, x) => sum + x.escrow, 0),
      `escrow of ${a}'s subscriptions`
    ).toBe(get(model.subEscrow, a))
    expect(subs.filter((x) => x.status === "PENDING").length).toBe(model.subs.filter((x) => x.account === a).length)
  }
  return { byAccount }
}

type Cmd = fc.AsyncCommand<Model, Real>

/** How many commands of each kind answered which status, over a whole property run. */
const outcomes = new Map<string, number>()
const ok = (status: number, expected: number, what: string, body: unknown) => {
  expect(status, `${what}: ${JSON.stringify(body)}`).toBe(expected)
  const key = `${what.split(" ")[0]} ${status}`
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1)
}

let externalSeq = 0

const createUser = (env: Env): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    const res = await r.p.call(env, "POST", "/users", { externalId: `ext-${++externalSeq}` })
    ok(res.status, 201, "create", res.body)
    m.envs[env].users.push({ id: res.body.subAccountId, status: "active", frozenBy: null, kyc: "NONE" })
  },
  toString: () => `createUser(${env})`
})

const hasUsers = (env: Env) => (m: Readonly<Model>) => m.envs[env].users.length > 0

const transferOf = (env: Env, user: number, amountCents: number, kind: "deposit" | "withdraw"): Cmd => ({
  check: hasUsers(env),
  run: async (m, r) => {
    const e = m.envs[env]
    const u = userAt(e, user)
    const [from, to] = kind === "deposit" ? ["master", u.id] : [u.id, "master"]
    // 0 stands for "everything available" (one cent when nothing is)
    const amount = amountCents === 0 ? Math.max(1, get(e.wallet, from)) : amountCents
    const expected = u.status !== "active" ? 403 : get(e.wallet, from) < amount ? 400 : 200
    const res = await r.p.call(env, "POST", `/users/${u.id}/${kind}`, { amount: amount / 100 })
    ok(res.status, expected, `${kind} ${amountCents}`, res.body)
    if (expected === 400) expect(res.body.error.code).toBe("INSUFFICIENT_FUNDS")
    if (expected !== 200) return
    add(e.wallet, from, -amount)
    add(e.wallet, to, amount)
    expect(cents(res.body.newBalance)).toBe(get(e.wallet, u.id))
    expect(cents(res.body.masterWalletBalance)).toBe(get(e.wallet, "master"))
  },
  toString: () => `${kind}(${env}, user ${user}, ${amountCents} cents)`
})

const freezeOf = (env: Env, user: number, frozen: boolean, by: "partner" | "compliance"): Cmd => ({
  check: hasUsers(env),
  run: async (m, r) => {
    const u = userAt(m.envs[env], user)
    const refused = u.status === "closed" || (!frozen && u.status === "frozen" && u.frozenBy === "compliance" && by === "partner")
    const res =
      by === "partner"
        ? await r.p.call(env, "POST", `/users/${u.id}/${frozen ? "freeze" : "unfreeze"}`)
        : await r.engine.admin("POST", `/_sim/users/${u.id}/freeze`, { frozen })
    ok(res.status, refused ? 403 : 200, `freeze ${frozen} by ${by}`, res.body)
    if (refused) return
    if (frozen && u.status === "active") Object.assign(u, { status: "frozen", frozenBy: by })
    if (!frozen && u.status === "frozen") Object.assign(u, { status: "active", frozenBy: null })
    expect(res.body.status).toBe(u.status)
  },
  toString: () => `${frozen ? "freeze" : "unfreeze"}(${env}, user ${user}, by ${by})`
})

const closeOf = (env: Env, user: number): Cmd => ({
  check: hasUsers(env),
  run: async (m, r) => {
    const e = m.envs[env]
    const u = userAt(e, user)
    const blocked =
      u.status !== "closed" &&
      (get(e.wallet, u.id) !== 0 ||
        get(e.escrow, u.id) > 0 ||
        get(e.shares, u.id) > 0 ||
        e.orders.some((o) => o.account === u.id) ||
        e.subs.some((x) => x.account === u.id))
    const res = await r.p.call(env, "DELETE", `/users/${u.id}`)
    ok(res.status, blocked ? 409 : 200, "close", res.body)
    if (!blocked) Object.assign(u, { status: "closed", frozenBy: null })
  },
  toString: () => `close(${env}, user ${user})`
})

const kycOf = (env: Env, user: number, status: "PENDING" | "VERIFIED" | "REJECTED"): Cmd => ({
  check: hasUsers(env),
  run: async (m, r) => {
    const u = userAt(m.envs[env], user)
    const body =
      status === "VERIFIED"
        ? { kycStatus: "VERIFIED", kycLevel: "BASIC" }
        : status === "REJECTED"
          ? { kycStatus: "REJECTED", rejectionCode: "DOC", rejectionReason: "retry" }
          : { kycStatus: "PENDING" }
    const res = await r.p.call(env, "POST", `/users/${u.id}/kyc`, body)
    ok(res.status, u.status === "closed" ? 403 : 200, `kyc ${status}`, res.body)
    if (u.status !== "closed") u.kyc = status
  },
  toString: () => `kyc(${env}, user ${user}, ${status})`
})

const creditOf = (env: Env, amountCents: number): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    const res = await r.p.credit(env, amountCents / 100)
    const e = m.envs[env]
    add(e.wallet, "master", amountCents)
    e.credited += amountCents
    expect(cents(res.newBalance)).toBe(get(e.wallet, "master"))
  },
  toString: () => `credit(${env}, ${amountCents} cents)`
})

const reset: Cmd = {
  check: () => true,
  run: async (m, r) => {
    const res = await r.p.reset()
    ok(res.status, 200, "reset", res.body)
    m.envs.sandbox = freshEnv(SEED_CENTS)
  },
  toString: () => "reset()"
}

/** A BUY of `size` units, or a SELL of `size` percent of the free units (at least one). */
const orderOf = (env: Env, user: number, master: boolean, side: "BUY" | "SELL", size: number): Cmd => ({
  check: (m) => master || m.envs[env].users.length > 0,
  run: async (m, r) => {
    const e = m.envs[env]
    const u = master ? undefined : userAt(e, user)
    const account = u?.id ?? "master"
    const free = get(e.shares, account) - get(e.reserved, account)
    const quantity = side === "BUY" ? size : Math.max(1, Math.floor((free * size) / 100))
    const q = await r.p.call(env, "GET", `/quote/SCOM?side=${side}&quantity=${quantity}${u === undefined ? "" : `&subAccountId=${u.id}`}`)
    ok(q.status, 200, "quote", q.body)
    const total = cents(q.body.estimatedTotal)
    const refusedAccount = u !== undefined && (u.status !== "active" || u.kyc !== "VERIFIED")
    const expected = refusedAccount ? 403 : side === "BUY" ? (get(e.wallet, account) < total ? 400 : 202) : free < quantity ? 422 : 202
    const res = await r.p.call(env, "POST", u === undefined ? "/trade" : `/users/${u.id}/trade`, {
      symbol: "SCOM",
      type: side,
      quantity,
      quoteId: q.body.quoteId
    })
    ok(res.status, expected, `${side} ${quantity}`, res.body)
    if (expected !== 202) return
    expect(cents(res.body.totalAmount)).toBe(total)
    if (side === "BUY") {
      add(e.wallet, account, -total)
      add(e.escrow, account, total)
    } else add(e.reserved, account, quantity)
    e.orders.push({ orderId: res.body.orderId, account, side, price: res.body.priceAtOrder, quantity, escrow: side === "BUY" ? total : 0, remaining: quantity })
  },
  toString: () => `${side}(${env}, ${master ? "master" : `user ${user}`}, ${size}${side === "SELL" ? "%" : ""})`
})

const decideOf = (env: Env, order: number, action: "fill" | "partial" | "cheaper" | "reject"): Cmd => ({
  check: (m) => m.envs[env].orders.length > 0,
  run: async (m, r) => {
    const e = m.envs[env]
    const o = e.orders[order % e.orders.length] as OrderModel
    const before = await checkLedger(r, env, e)
    const partial = action === "partial" && o.remaining > 1
    const quantity = partial ? Math.floor(o.remaining / 2) : o.remaining
    const cheaper = Math.round(o.price * 98) / 100
    if (action === "cheaper" && o.side === "SELL" && o.limit !== undefined && o.limit !== null && cheaper < o.limit) {
      // below a SELL's limit: the desk is refused, nothing moves
      const refused = await r.engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fill`, { quantity, price: cheaper })
      ok(refused.status, 400, "cheaper-than-limit", refused.body)
      return
    }
    const res =
      action === "reject"
        ? await r.engine.admin("POST", `/_sim/desk/orders/${o.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "model" })
        : await r.engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fill`, {
            quantity,
            ...(action === "cheaper" ? { price: Math.round(o.price * 98) / 100 } : {})
          })
    ok(res.status, 200, action, res.body)
    const after = (await storeDocs(r.engine, "balances", r.p.partition(env))).map((d) => d.body as { account: string; cents: number })
    const now = new Map(after.map((b) => [b.account, b.cents]))
    const delta = (k: string) => get(now, k) - get(before.byAccount, k)
    const [wallet, escrow] = [delta(`wallet:${o.account}`), delta(`escrow:${o.account}`)]
    // the decision moves money only between this account, the fees and the market, and never takes from the wallet
    expect(wallet + escrow + delta("fees") + delta("market")).toBe(0)
    expect(wallet).toBeGreaterThanOrEqual(0)
    expect(escrow).toBeLessThanOrEqual(0)
    add(e.wallet, o.account, wallet)
    add(e.escrow, o.account, escrow)
    o.held = (o.held ?? o.escrow) + escrow
    if (action === "reject") {
      expect(delta("fees")).toBe(0)
      if (o.side === "SELL") add(e.reserved, o.account, -o.remaining)
      o.remaining = 0
    } else {
      add(e.shares, o.account, o.side === "BUY" ? quantity : -quantity)
      if (o.side === "SELL") add(e.reserved, o.account, -quantity)
      o.remaining -= quantity
    }
    if (o.remaining === 0) e.orders.splice(e.orders.indexOf(o), 1)
  },
  toString: () => `${action}(${env}, order ${order})`
})

/** The partner cancels an open order: only one nothing has filled yet (PENDING); a partly filled one is 409 (D-033). */
const cancelOf = (env: Env, order: number): Cmd => ({
  check: (m) => m.envs[env].orders.length > 0,
  run: async (m, r) => {
    const e = m.envs[env]
    const o = e.orders[order % e.orders.length] as OrderModel
    const cancelable = o.remaining === o.quantity
    const res = await r.p.call(env, "DELETE", `/orders/${o.orderId}`)
    ok(res.status, cancelable ? 200 : 409, "cancel", res.body)
    if (!cancelable) return
    const held = o.held ?? o.escrow
    if (o.side === "BUY") {
      add(e.wallet, o.account, held)
      add(e.escrow, o.account, -held)
    } else add(e.reserved, o.account, -o.remaining)
    e.orders.splice(e.orders.indexOf(o), 1)
  },
  toString: () => `cancel(${env}, order ${order})`
})

/** The open treasury bill the model subscribes to (the clock never moves in this test, so it stays open). */
let billId = ""
const BILL_MINIMUM = 10_000
/** 0.75% of `c` cents rounded half up: the partner has no markup. */
const feeOf = (c: number) => Math.round((c * 75) / 10_000)

const subscribeOf = (env: Env, user: number, master: boolean, amountCents: number): Cmd => ({
  check: (m) => master || m.envs[env].users.length > 0,
  run: async (m, r) => {
    const e = m.envs[env]
    const u = master ? undefined : userAt(e, user)
    const account = u?.id ?? "master"
    const total = amountCents + feeOf(amountCents)
    // the request is checked first (below the minimum: 400), then the account (403), then the funds (400)
    const refused = u !== undefined && (u.status !== "active" || u.kyc !== "VERIFIED")
    const expected = amountCents < BILL_MINIMUM ? 400 : refused ? 403 : get(e.wallet, account) < total ? 400 : 202
    const res = await r.p.call(env, "POST", u === undefined ? "/subscriptions" : `/users/${u.id}/subscriptions`, {
      assetClass: "TREASURY_BILL",
      instrumentId: billId,
      amount: amountCents / 100
    })
    ok(res.status, expected, `subscribe ${amountCents}`, res.body)
    if (expected !== 202) return
    expect(cents(res.body.totalAmount)).toBe(total)
    add(e.wallet, account, -total)
    add(e.subEscrow, account, total)
    e.subs.push({ subscriptionId: res.body.subscriptionId, account, amount: amountCents, total })
  },
  toString: () => `subscribe(${env}, ${master ? "master" : `user ${user}`}, ${amountCents} cents)`
})

/** The control API decides a PENDING subscription: allot all or half, reject, or cancel for the issuer. */
const decideSubscriptionOf = (env: Env, index: number, action: "allot" | "partial" | "reject" | "cancel"): Cmd => ({
  check: (m) => m.envs[env].subs.length > 0,
  run: async (m, r) => {
    const e = m.envs[env]
    const s = e.subs[index % e.subs.length] as SubscriptionModel
    const before = await checkLedger(r, env, e)
    const allotted = action === "partial" ? Math.max(1, Math.floor(s.amount / 2)) : s.amount
    const path = `/_sim/subscriptions/${s.subscriptionId}`
    const res =
      action === "reject"
        ? await r.engine.admin("POST", `${path}/reject`, { rejectionCode: "MODEL", rejectionReason: "model" })
        : action === "cancel"
          ? await r.engine.admin("POST", `${path}/cancel`, {})
          : await r.engine.admin("POST", `${path}/allot`, action === "partial" ? { amount: allotted / 100 } : {})
    ok(res.status, 200, `sub-${action}`, res.body)
    const after = (await storeDocs(r.engine, "balances", r.p.partition(env))).map((d) => d.body as { account: string; cents: number })
    const now = new Map(after.map((b) => [b.account, b.cents]))
    const delta = (k: string) => get(now, k) - get(before.byAccount, k)
    const wallet = delta(`wallet:${s.account}`)
    expect(delta(`escrow:${s.account}:subscriptions`)).toBe(-s.total)
    expect(wallet + delta("fees") + delta("market")).toBe(s.total)
    const allots = action === "allot" || action === "partial"
    expect(delta("market")).toBe(allots ? allotted : 0)
    expect(delta("fees")).toBe(allots ? (allotted === s.amount ? s.total - s.amount : feeOf(allotted)) : 0)
    add(e.wallet, s.account, wallet)
    add(e.subEscrow, s.account, -s.total)
    e.subs.splice(e.subs.indexOf(s), 1)
  },
  toString: () => `${action}Subscription(${env}, subscription ${index})`
})

const env = fc.constantFrom<Env>(...ENVS)
const idx = fc.nat({ max: 3 })
const amount = fc.oneof(fc.integer({ min: 1, max: 5_000_00 }), fc.integer({ min: 1, max: 200 }), fc.constant(10_000_000), fc.constant(0))
const transfer = fc
  .tuple(env, idx, amount, fc.constantFrom<"deposit" | "withdraw">("deposit", "deposit", "withdraw"))
  .map(([e, u, a, k]) => transferOf(e, u, a, k))
const order = fc
  .tuple(env, idx, fc.boolean(), fc.constantFrom<"BUY" | "SELL">("BUY", "SELL"), fc.integer({ min: 1, max: 100 }))
  .map(([e, u, master, side, q]) => orderOf(e, u, master, side, q))
const decide = fc
  .tuple(env, idx, fc.constantFrom<"fill" | "partial" | "cheaper" | "reject">("fill", "partial", "cheaper", "reject"))
  .map(([e, o, a]) => decideOf(e, o, a))
const kyc = fc
  .tuple(env, idx, fc.constantFrom<"PENDING" | "VERIFIED" | "REJECTED">("PENDING", "VERIFIED", "VERIFIED", "REJECTED"))
  .map(([e, u, s]) => kycOf(e, u, s))
const subscription = fc
  .tuple(env, idx, fc.boolean(), fc.oneof(fc.integer({ min: 5_000, max: 300_000 }), fc.integer({ min: 10_000, max: 20_000 })))
  .map(([e, u, master, a]) => subscribeOf(e, u, master, a))
const decideSubscription = fc
  .tuple(env, idx, fc.constantFrom<"allot" | "partial" | "reject" | "cancel">("allot", "partial", "reject", "cancel"))
  .map(([e, s, a]) => decideSubscriptionOf(e, s, a))
/** Picked uniformly, so the more frequent commands appear more than once. */
const commands: Array<fc.Arbitrary<Cmd>> = [
  env.map(createUser),
  transfer,
  transfer,
  transfer,
  transfer,
  fc.tuple(env, idx, fc.boolean(), fc.constantFrom<"partner" | "compliance">("partner", "compliance")).map(([e, u, f, by]) => freezeOf(e, u, f, by)),
  fc.tuple(env, idx).map(([e, u]) => closeOf(e, u)),
  kyc,
  kyc,
  fc.tuple(env, fc.integer({ min: 1, max: 2_000_000 })).map(([e, a]) => creditOf(e, a)),
  fc.constant(reset),
  fc.tuple(env, idx).map(([e, o]) => cancelOf(e, o)),
  order,
  order,
  order,
  decide,
  decide,
  decide,
  decide,
  subscription,
  subscription,
  decideSubscription
]

/** Runs `numRuns` sequences from `seed`; `addOutcomes` adds to the counts so far (the reach check's extra runs). */
const runModel = async (engine: Engine, numRuns: number, seed = SEED, addOutcomes = false) => {
  if (!addOutcomes) outcomes.clear()
  const bills = await engine.call("GET", "/api/sandbox/v1/partner/bonds?status=OPEN&instrumentType=TREASURY_BILL", {
    headers: { "x-api-key": (await engine.newPartner()).sandboxKey }
  })
  billId = bills.body.bonds[0].bondId
  expect(cents(bills.body.bonds[0].minimumSubscriptionUsd)).toBe(BILL_MINIMUM)
  let runs = 0
  const property = fc.asyncProperty(fc.commands(commands, { maxCommands: 60, size: "max" }), async (cmds) => {
    runs++
    const p = await partnerOf(engine)
    const model: Model = { envs: { sandbox: freshEnv(SEED_CENTS), production: freshEnv(0) } }
    const real: Real = { engine, p }
    await fc.asyncModelRun(
      () => ({ model, real }),
      [...cmds].flatMap((c) => [c, check])
    )
  })
  const details = await fc.check(property, { numRuns, seed, ...(PATH === undefined ? {} : { path: PATH, endOnFailure: true }) })
  if (details.failed) {
    const replay = `replay: SOKONI_SEED=${details.seed} SOKONI_PATH=${details.counterexamplePath} npx vitest run test/app/ledger.model.test.ts`
    console.error(replay)
    throw new Error(`${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}\n${replay}`)
  }
  printStats(`ledger model: ${runs} runs, seed ${details.seed}; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`)
  return runs
}

/**
 * The paths the memory run must reach, each more than once in a hundred runs: the interesting ones, not only refusals.
 * A count this rare (withdraw 200 is about 5%) says something only over many runs, so it is checked from 500 runs on
 * (the lowered run counts of mutation testing skip it).
 */
const LEDGER_REACH = [
  "deposit 200",
  "withdraw 200",
  "deposit 400",
  "BUY 202",
  "SELL 202",
  "fill 200",
  "reject 200",
  "cancel 200",
  "close 200",
  "close 409",
  "reset 200",
  "subscribe 202",
  "subscribe 400",
  "subscribe 403",
  "sub-allot 200",
  "sub-partial 200",
  "sub-reject 200",
  "sub-cancel 200"
]

/** After every command: the invariants on both environments. */
const check: Cmd = {
  check: () => true,
  run: async (m, r) => {
    for (const e of ENVS) await checkLedger(r, e, m.envs[e])
  },
  toString: () => "check"
}

describe("ledger model (fast-check)", () => {
  it(`memory: ${MEMORY_RUNS} random command sequences keep every invariant (seed ${SEED})`, async () => {
    const engine = startEngine()
    try {
      expect(await runModel(engine, MEMORY_RUNS)).toBeGreaterThanOrEqual(MEMORY_RUNS)
      // Short of a rare path by chance? More runs from seeds SEED + 1, + 2... (each checked like the first).
      if (MEMORY_RUNS >= 500)
        await expectReach(
          outcomes,
          LEDGER_REACH.map((path) => [path, MEMORY_RUNS / 100] as const),
          (batch) => runModel(engine, MEMORY_RUNS / 5, SEED + batch, true)
        )
    } finally {
      await engine.dispose()
    }
  }, 600_000)

  describe.skipIf(DATABASE_URL === undefined)("on postgres (skipped: set DATABASE_URL to run)", onPostgres, () => {
    const scope = Effect.runSync(Scope.make())
    let url = ""
    beforeAll(async () => {
      url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
    })
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    it(`postgres: ${POSTGRES_RUNS} random command sequences keep every invariant (seed ${SEED})`, async () => {
      const engine = startEngine({ store: "postgres", databaseUrl: url })
      try {
        expect(await runModel(engine, POSTGRES_RUNS)).toBeGreaterThanOrEqual(POSTGRES_RUNS)
      } finally {
        await engine.dispose()
      }
    }, 900_000)
  })
})

/*
 * Resting orders (D-280..D-284): the same ledger invariants through LIMIT/STOP/STOP_LIMIT placement, triggers on the
 * delayed price, replaces, cancels, the desk's decisions on triggered orders, and DAY/GTD expiry. The clock moves
 * here (a tick pins SCOM's price at a 900 s instant and advances to the next one, where the trigger jobs see it), so
 * every run gets a fresh engine starting Monday 08:00Z; at most 14 ticks keep it before NSE's 12:00Z close, and one
 * `closeDay` command then runs the clock to the close, where DAY orders expire. The model predicts every outcome:
 * which orders trigger (in placement order, as their jobs run), a STOP BUY's shortfall or rejection, each refund.
 */
const RATE = 129_250_000
const DAY_CLOSE = Date.parse("2026-11-23T12:00:00.000Z")
const TUESDAY_CLOSE = Date.parse("2026-11-24T12:00:00.000Z")
const TICK_MS = 900_000
const MAX_TICKS = 14
/** Prices (KES, 4 decimals) ticks pin and orders name: around SCOM's pinned 20. */
const PRICES = [178_000, 185_000, 190_000, 195_000, 200_000, 205_000, 210_000, 216_000]
const wire4 = (p: number) => p / 10_000
type RestingKind = "LIMIT" | "STOP" | "STOP_LIMIT"

interface RestingModel {
  readonly orderId: string
  readonly account: string
  readonly side: "BUY" | "SELL"
  readonly orderType: RestingKind
  quantity: number
  limit: number | null
  stop: number | null
  /** BUY escrow held (cents). */
  escrow: number
  deadline: number | null
  readonly timeInForce: "DAY" | "GTC" | "GTD"
}
interface RestingWorld {
  readonly env: EnvModel
  readonly user: string
  /** WORKING orders, in placement order. */
  readonly working: Array<RestingModel>
  now: number
  /** The price pinned last: what the next refresh publishes. */
  price: number
  ticks: number
  closed: boolean
}
interface RestingReal {
  readonly engine: Engine
  readonly p: Partner
}
type RCmd = fc.AsyncCommand<RestingWorld, RestingReal>

/** A BUY's total (gross + 0.75%: the sandbox partner has no markup) or a SELL's gross - fee, at `price`. */
const totalAt = (side: "BUY" | "SELL", quantity: number, price: number) => {
  const gross = grossCents(quantity, price, RATE)
  const fee = fees(gross, 0).fee
  return side === "BUY" ? gross + fee : gross - fee
}
const referenceOf = (o: { orderType: RestingKind; limit: number | null; stop: number | null }) => (o.orderType === "STOP" ? o.stop : o.limit) ?? 0
const marketable = (o: RestingModel, price: number) => {
  const buy = o.side === "BUY"
  const withinLimit = o.limit !== null && (buy ? price <= o.limit : price >= o.limit)
  const stopReached = o.stop !== null && (buy ? price >= o.stop : price <= o.stop)
  return o.orderType === "LIMIT" ? withinLimit : o.orderType === "STOP" ? stopReached : stopReached && withinLimit
}

/** An expiry in the model: what is unfilled comes back (BUY escrow, SELL reservation). */
const expireWorking = (w: RestingWorld, o: RestingModel) => {
  if (o.side === "BUY") {
    add(w.env.wallet, o.account, o.escrow)
    add(w.env.escrow, o.account, -o.escrow)
  } else add(w.env.reserved, o.account, -o.quantity)
  w.working.splice(w.working.indexOf(o), 1)
  outcomes.set("expire WORKING", (outcomes.get("expire WORKING") ?? 0) + 1)
}
const expireTriggered = (w: RestingWorld, o: OrderModel) => {
  const held = o.held ?? o.escrow
  if (o.side === "BUY") {
    add(w.env.wallet, o.account, held)
    add(w.env.escrow, o.account, -held)
  } else add(w.env.reserved, o.account, -o.remaining)
  w.env.orders.splice(w.env.orders.indexOf(o), 1)
  outcomes.set("expire triggered", (outcomes.get("expire triggered") ?? 0) + 1)
}

/** The model's account of one refresh at `at` publishing `price`: GTD deadlines before it, then the triggers. */
const refreshTo = (w: RestingWorld, at: number, price: number) => {
  const due = (d: number | null | undefined) => d !== null && d !== undefined && d > w.now && d < at
  for (const o of [...w.working].filter((x) => due(x.deadline))) expireWorking(w, o)
  for (const o of [...w.env.orders].filter((x) => due(x.deadline))) expireTriggered(w, o)
  for (const o of [...w.working]) {
    if (!marketable(o, price)) continue
    w.working.splice(w.working.indexOf(o), 1)
    const total = totalAt(o.side, o.quantity, price)
    const shortfall = o.side === "BUY" ? Math.max(0, total - o.escrow) : 0
    if (shortfall > get(w.env.wallet, o.account)) {
      // REJECTED INSUFFICIENT_FUNDS: the escrow comes back
      add(w.env.wallet, o.account, o.escrow)
      add(w.env.escrow, o.account, -o.escrow)
      outcomes.set("trigger rejected", (outcomes.get("trigger rejected") ?? 0) + 1)
      continue
    }
    add(w.env.wallet, o.account, -shortfall)
    add(w.env.escrow, o.account, shortfall)
    const held = o.escrow + shortfall
    w.env.orders.push({
      orderId: o.orderId,
      account: o.account,
      side: o.side,
      price: wire4(price),
      quantity: o.quantity,
      escrow: held,
      held,
      remaining: o.quantity,
      limit: o.limit === null ? null : wire4(o.limit),
      deadline: o.deadline
    })
    outcomes.set(shortfall > 0 ? "trigger shortfall" : "trigger", (outcomes.get(shortfall > 0 ? "trigger shortfall" : "trigger") ?? 0) + 1)
  }
  w.now = at
}

/** The model's state of the desk-facing orders is EnvModel's; reuse decideOf and cancelOf on the sandbox env. */
const onEnv = (cmd: Cmd): RCmd => ({
  check: (w) => cmd.check({ envs: { sandbox: w.env, production: freshEnv(0) } }),
  run: (w, r) => cmd.run({ envs: { sandbox: w.env, production: freshEnv(0) } }, r),
  toString: () => cmd.toString()
})

const placeRestingOf = (
  master: boolean,
  side: "BUY" | "SELL",
  orderType: RestingKind,
  size: number,
  limitAt: number,
  stopAt: number,
  timeInForce: "DAY" | "GTC" | "GTD",
  gtdSteps: number
): RCmd => ({
  check: () => true,
  run: async (w, r) => {
    const account = master ? "master" : w.user
    const free = get(w.env.shares, account) - get(w.env.reserved, account)
    // a SELL of 1% to 110% of the free units (at least one): mostly within them, sometimes beyond
    const quantity = side === "BUY" ? size : Math.max(1, Math.floor((free * ((size % 110) + 1)) / 100))
    const limit = orderType === "STOP" ? null : (PRICES[limitAt % PRICES.length] as number)
    const stop = orderType === "LIMIT" ? null : (PRICES[stopAt % PRICES.length] as number)
    const expiresAt = timeInForce === "GTD" ? w.now + gtdSteps * TICK_MS + TICK_MS / 2 : null
    const total = totalAt(side, quantity, referenceOf({ orderType, limit, stop }))
    const expected = side === "BUY" ? (get(w.env.wallet, account) < total ? 400 : 202) : free < quantity ? 422 : 202
    const res = await r.p.call("sandbox", "POST", master ? "/trade" : `/users/${w.user}/trade`, {
      symbol: "SCOM.KE",
      type: side,
      orderType,
      quantity,
      ...(limit === null ? {} : { limitPrice: wire4(limit) }),
      ...(stop === null ? {} : { stopPrice: wire4(stop) }),
      timeInForce,
      ...(expiresAt === null ? {} : { expiresAt: new Date(expiresAt).toISOString() })
    })
    ok(res.status, expected, `resting-${side} ${quantity}`, res.body)
    if (expected !== 202) return
    expect(res.body.status).toBe("WORKING")
    expect(cents(res.body.totalAmount)).toBe(total)
    if (side === "BUY") {
      add(w.env.wallet, account, -total)
      add(w.env.escrow, account, total)
    } else add(w.env.reserved, account, quantity)
    const deadline = timeInForce === "GTC" ? null : timeInForce === "GTD" ? expiresAt : w.closed ? TUESDAY_CLOSE : DAY_CLOSE
    w.working.push({ orderId: res.body.orderId, account, side, orderType, quantity, limit, stop, escrow: side === "BUY" ? total : 0, deadline, timeInForce })
  },
  toString: () => `resting(${master ? "master" : "user"}, ${side} ${orderType} ${size}, limit ${limitAt}, stop ${stopAt}, ${timeInForce} ${gtdSteps})`
})

const tickOf = (priceAt: number): RCmd => ({
  check: (w) => !w.closed && w.ticks < MAX_TICKS,
  run: async (w, r) => {
    const price = PRICES[priceAt % PRICES.length] as number
    const pinned = await r.engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: wire4(price) })
    ok(pinned.status, 200, "pin", pinned.body)
    expect(pinned.body.effectiveAt).toBe(new Date(w.now).toISOString())
    const advanced = await r.engine.admin("POST", "/_sim/clock/advance", { seconds: TICK_MS / 1000 })
    ok(advanced.status, 200, "tick", advanced.body)
    w.price = price
    w.ticks++
    refreshTo(w, w.now + TICK_MS, price)
  },
  toString: () => `tick(${priceAt})`
})

/** Runs the clock to NSE's close: refreshes on the last price, then DAY orders expire (D-281). */
const closeDay: RCmd = {
  // after a few ticks, so runs spend their commands trading before the close
  check: (w) => !w.closed && w.ticks >= 4,
  run: async (w, r) => {
    const advanced = await r.engine.admin("POST", "/_sim/clock/advance", { to: new Date(DAY_CLOSE).toISOString() })
    ok(advanced.status, 200, "close-day", advanced.body)
    while (w.now < DAY_CLOSE) refreshTo(w, w.now + TICK_MS, w.price)
    for (const o of [...w.working].filter((x) => x.deadline === DAY_CLOSE)) expireWorking(w, o)
    for (const o of [...w.env.orders].filter((x) => x.deadline === DAY_CLOSE)) expireTriggered(w, o)
    w.closed = true
  },
  toString: () => "closeDay()"
}

/** The partner replaces one of the sub-account's orders: 200 while WORKING (escrow re-computed), else 409. */
const replaceOf = (index: number, quantity: number | undefined, priceAt: number | undefined): RCmd => ({
  check: (w) => w.working.some((o) => o.account === w.user) || w.env.orders.some((o) => o.account === w.user),
  run: async (w, r) => {
    const working = w.working.filter((o) => o.account === w.user)
    const others = w.env.orders.filter((o) => o.account === w.user)
    const all: Array<RestingModel | OrderModel> = [...working, ...others]
    const target = all[index % all.length] as RestingModel | OrderModel
    const price = priceAt === undefined ? undefined : (PRICES[priceAt % PRICES.length] as number)
    const isWorking = "orderType" in target
    const field = isWorking && target.orderType === "STOP" ? "stopPrice" : "limitPrice"
    const body = { ...(quantity === undefined ? {} : { quantity }), ...(price === undefined ? {} : { [field]: wire4(price) }) }
    if (Object.keys(body).length === 0) return
    const res = await r.p.call("sandbox", "PATCH", `/users/${w.user}/orders/${target.orderId}`, body)
    if (!isWorking) {
      ok(res.status, 409, "replace", res.body)
      return
    }
    const o = target
    const next = {
      quantity: quantity ?? o.quantity,
      limit: field === "limitPrice" && price !== undefined ? price : o.limit,
      stop: field === "stopPrice" && price !== undefined ? price : o.stop
    }
    const total = totalAt(o.side, next.quantity, referenceOf({ orderType: o.orderType, ...next }))
    const free = get(w.env.shares, o.account) - get(w.env.reserved, o.account)
    const expected = o.side === "BUY" ? (total - o.escrow > get(w.env.wallet, o.account) ? 400 : 200) : next.quantity - o.quantity > free ? 422 : 200
    ok(res.status, expected, "replace", res.body)
    if (expected !== 200) return
    expect(res.body).toMatchObject({ status: "WORKING", quantity: next.quantity })
    if (o.side === "BUY") {
      add(w.env.wallet, o.account, o.escrow - total)
      add(w.env.escrow, o.account, total - o.escrow)
      o.escrow = total
    } else add(w.env.reserved, o.account, next.quantity - o.quantity)
    Object.assign(o, next)
  },
  toString: () => `replace(${index}, ${quantity}, ${priceAt})`
})

const cancelRestingOf = (index: number): RCmd => ({
  check: (w) => w.working.length > 0,
  run: async (w, r) => {
    const o = w.working[index % w.working.length] as RestingModel
    const res = await r.p.call("sandbox", "DELETE", `/orders/${o.orderId}`)
    ok(res.status, 200, "cancel-resting", res.body)
    if (o.side === "BUY") {
      expect(cents(res.body.totalAmount)).toBe(o.escrow)
      add(w.env.wallet, o.account, o.escrow)
      add(w.env.escrow, o.account, -o.escrow)
    } else add(w.env.reserved, o.account, -o.quantity)
    w.working.splice(w.working.indexOf(o), 1)
  },
  toString: () => `cancelResting(${index})`
})

const restingCheck: RCmd = {
  check: () => true,
  run: async (w, r) => {
    await checkLedger(r, "sandbox", w.env)
    // the model's WORKING orders are exactly the store's
    const stored = (await storeDocs(r.engine, "orders", r.p.partition("sandbox"))).map((d) => d.body as { orderId: string; status: string; escrow: number })
    expect(
      stored
        .filter((o) => o.status === "WORKING")
        .map((o) => o.orderId)
        .sort()
    ).toEqual(w.working.map((o) => o.orderId).sort())
    for (const o of w.working) expect(stored.find((x) => x.orderId === o.orderId)?.escrow, `escrow of ${o.orderId}`).toBe(o.escrow)
  },
  toString: () => "check"
}

const restingCommands: Array<fc.Arbitrary<RCmd>> = [
  fc
    .tuple(
      fc.boolean(),
      fc.constantFrom<"BUY" | "SELL">("BUY", "BUY", "SELL"),
      fc.constantFrom<RestingKind>("LIMIT", "STOP", "STOP_LIMIT"),
      fc.oneof(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 5_000, max: 7_000 })),
      fc.nat({ max: 7 }),
      fc.nat({ max: 7 }),
      fc.constantFrom<"DAY" | "GTC" | "GTD">("DAY", "GTC", "GTD"),
      fc.nat({ max: 12 })
    )
    .map(([master, side, type, size, l, st, tif, n]) => placeRestingOf(master, side, type, size, l, st, tif, n)),
  fc
    .tuple(fc.boolean(), fc.constantFrom<"BUY" | "SELL">("BUY", "SELL"), fc.integer({ min: 1, max: 100 }))
    .map(([master, side, q]) => onEnv(orderOf("sandbox", 0, master, side, q)))
    // MARKET orders are refused once NSE has closed
    .map((c): RCmd => ({ ...c, check: (w) => !w.closed && c.check(w) })),
  fc.nat({ max: 7 }).map(tickOf),
  fc.nat({ max: 7 }).map(tickOf),
  fc.nat({ max: 7 }).map(tickOf),
  fc.nat({ max: 7 }).map(tickOf),
  fc
    .tuple(idx, fc.constantFrom<"fill" | "partial" | "cheaper" | "reject">("fill", "partial", "cheaper", "reject"))
    .map(([o, a]) => onEnv(decideOf("sandbox", o, a))),
  idx.map((o) => onEnv(cancelOf("sandbox", o))),
  idx.map(cancelRestingOf),
  fc
    .tuple(idx, fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }), fc.option(fc.nat({ max: 7 }), { nil: undefined }))
    .map(([i, q, pr]) => replaceOf(i, q, pr)),
  fc.constant(closeDay)
]

/** `makeEngine(seed)`: a fresh engine per run; the seed differs so that runs sharing a database get new partner ids. */
const runRestingModel = async (makeEngine: (seed: number) => Engine | Promise<Engine>, numRuns: number, seed = SEED, addOutcomes = false) => {
  if (!addOutcomes) outcomes.clear()
  let runs = 0
  const property = fc.asyncProperty(fc.commands(restingCommands, { maxCommands: 40, size: "max" }), async (cmds) => {
    runs++
    const engine = await makeEngine(runs)
    try {
      const p = await partnerOf(engine)
      const user = (await p.createUser("sandbox")).subAccountId
      await p.verify(user)
      await p.deposit(user, 1_000)
      const pinned = await engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: wire4(200_000) })
      expect(pinned.status).toBe(200)
      const env = freshEnv(SEED_CENTS)
      env.users.push({ id: user, status: "active", frozenBy: null, kyc: "VERIFIED" })
      add(env.wallet, "master", -100_000)
      add(env.wallet, user, 100_000)
      const world: RestingWorld = { env, user, working: [], now: MONDAY_OPEN, price: 200_000, ticks: 0, closed: false }
      // both accounts start with filled SCOM shares, so resting SELLs have something to sell
      for (const master of [true, false]) {
        await onEnv(orderOf("sandbox", 0, master, "BUY", 600)).run(world, { engine, p })
        await onEnv(decideOf("sandbox", 0, "fill")).run(world, { engine, p })
      }
      await fc.asyncModelRun(
        () => ({ model: world, real: { engine, p } }),
        [...cmds].flatMap((c) => [c, restingCheck])
      )
    } finally {
      await engine.dispose()
    }
  })
  const details = await fc.check(property, { numRuns, seed, ...(PATH === undefined ? {} : { path: PATH, endOnFailure: true }) })
  if (details.failed) {
    const replay = `replay: SOKONI_SEED=${details.seed} SOKONI_PATH=${details.counterexamplePath} npx vitest run test/app/ledger.model.test.ts -t resting`
    console.error(replay)
    throw new Error(`${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}\n${replay}`)
  }
  printStats(`resting model: ${runs} runs, seed ${details.seed}; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`)
  return runs
}

/** What the resting memory run must reach, each more than once in fifty runs (memory only: postgres runs are few). */
const RESTING_REACH = [
  "resting-BUY 202",
  "resting-SELL 202",
  "resting-BUY 400",
  "trigger",
  "replace 200",
  "replace 409",
  "cancel-resting 200",
  "fill 200",
  "expire WORKING",
  "expire triggered"
]

const RESTING_RUNS = Number(process.env.SOKONI_RESTING_RUNS ?? 150)
const RESTING_PG_RUNS = Number(process.env.SOKONI_RESTING_PG_RUNS ?? 25)

describe("ledger model with resting orders (fast-check)", () => {
  it(`memory: ${RESTING_RUNS} runs of placements, triggers, replaces, cancels, fills and expiries keep every invariant (seed ${SEED})`, async () => {
    expect(await runRestingModel((seed) => startEngine({ seed }), RESTING_RUNS)).toBeGreaterThanOrEqual(RESTING_RUNS)
    // Short of a rare path by chance? More runs from seeds SEED + 1, + 2... (each checked like the first).
    await expectReach(
      outcomes,
      RESTING_REACH.map((path) => [path, RESTING_RUNS / 50] as const),
      (batch) => runRestingModel((seed) => startEngine({ seed }), Math.ceil(RESTING_RUNS / 5), SEED + batch, true)
    )
  }, 600_000)

  describe.skipIf(DATABASE_URL === undefined)("on postgres (skipped: set DATABASE_URL to run)", onPostgres, () => {
    const scope = Effect.runSync(Scope.make())
    let url = ""
    beforeAll(async () => {
      url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
    })
    afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

    // one database for every run, emptied before each: a run's engine starts a world of its own at Monday 08:00 (an
    // engine on a store that holds a world continues its clock, E-298); the generator's reach is checked on memory's
    // many runs, not on these few
    const freshEngine = async (seed: number) => {
      await emptyTables(url)
      return startEngine({ seed, store: "postgres", databaseUrl: url })
    }
    it(`postgres: ${RESTING_PG_RUNS} runs keep every invariant (seed ${SEED})`, async () => {
      expect(await runRestingModel(freshEngine, RESTING_PG_RUNS)).toBeGreaterThanOrEqual(RESTING_PG_RUNS)
    }, 900_000)
  })
})
