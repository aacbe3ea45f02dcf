/**
 * The API's model test over the wire (issue 10, part 4). fast-check generates command sequences (sub-accounts opened
 * and closed, deposits, withdrawals, KYC and freezes by the partner or compliance, quotes, MARKET trades, LIMIT, STOP
 * and STOP_LIMIT orders resting WORKING (BUY and SELL, DAY, GTD or GTC), replaces, cancels, SCOM price pins, the
 * desk's fills and rejects, clock advances that trigger and expire resting orders, a webhook receiver that starts or
 * stops failing, an earlier mutation resent with its Idempotency-Key, a crash of the engine just before or after the
 * next mutation's commit, then a restart and the request resent) and runs each one against a fresh engine
 * started in this process on a free port (E-200), with real HTTP requests (`fetch`), and against the model of
 * api-model.ts. After every command the answer's status, error code and body are what the model predicts, the
 * touched accounts' wallets, escrow, holdings, statuses and orders read back over the API are the model's, and every
 * answer is validated against the contract (spec/openapi.yaml, spec/control.yaml). After every clock advance the
 * webhook's delivery records (attempts, outcomes, retry times) are the model's, and the receiver got each attempt's
 * event, signed.
 *
 * Resting orders (E-250): every run pins SCOM at its start, so each price a trigger or a quote sees from 08:15 on is
 * the model's (pins take effect at NSE's next open 900 s instant and show 15 minutes later, D-240); the model runs the
 * engine's trigger and expiry jobs in their booking order (resting-model.ts, E-251), and an advance stops at each
 * instant one of them fires an event (resting-commands.ts).
 *
 * Runs: SOKONI_MODEL_RUNS on memory (default 500), SOKONI_MODEL_PG_RUNS on PostgreSQL when DATABASE_URL is set
 * (default 50: E-202). The seed is printed first; a failure prints the shrunk commands and a one-line replay command.
 */
import fc from "fast-check"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it, onTestFailed } from "vitest"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import {
  accountOf,
  cents,
  collectQuotes,
  count,
  emit,
  type EngineOptions,
  feeOf,
  freshModel,
  grossOf,
  marketOpen,
  outcomes,
  price4,
  QUOTE_TTL_MS,
  rate6,
  START,
  startReceiver,
  startWire,
  WEBHOOK_EVENTS,
  WEBHOOK_SECRET
} from "./api-model.ts"
import {
  accountPath,
  checkDeliveries,
  checkMasterWallet,
  checkTrading,
  checkUser,
  type Cmd,
  expectStatus,
  hasUsers,
  pick,
  type Real,
  recent,
  userAt
} from "./api-checks.ts"
import { advanceOf, pinOf, replaceOf, restingOf, type RestingType, type TimeInForce } from "./resting-commands.ts"
import { atDesk, KES_RATE, live, publishedPrice, releaseUnfilled } from "./resting-model.ts"
import { emptyTables } from "../support/pg-empty.ts"
import { onPostgres } from "../support/stores.ts"
import type { CrashPoint } from "../../engine/sim/crashes.ts"
import { CRASH_POINTS } from "./crash-wire.ts"
import { expectReach } from "../support/reach.ts"

const SEED = process.env.SOKONI_MODEL_SEED === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(process.env.SOKONI_MODEL_SEED)
const PATH = process.env.SOKONI_MODEL_PATH
const MEMORY_RUNS = Number(process.env.SOKONI_MODEL_RUNS ?? 500)
/** E-202: a postgres request costs about twice a memory one and each run empties the database first: fewer runs. */
const POSTGRES_RUNS = Number(process.env.SOKONI_MODEL_PG_RUNS ?? 50)
const DATABASE_URL = process.env.DATABASE_URL
/** SOKONI_MODEL_PLANT=1 plants the disagreement of the last test into the main runs (to see a failure's report). */
const PLANT = process.env.SOKONI_MODEL_PLANT === "1"
const MAX_COMMANDS = 30
const REPLAY = "npx vitest run test/model/api.model.test.ts"
type Details = fc.RunDetails<[number, Iterable<Cmd>]>

// Printed before anything runs, so even a crash leaves the seed in the log.
console.log(`api model: seed ${SEED}${PATH === undefined ? "" : `, path ${PATH}`} (replay: SOKONI_MODEL_SEED=${SEED} ${REPLAY})`)

// ---------------------------------------------------------------------------------------------------------------
// Commands

const createUser: Cmd = {
  check: (m) => m.users.length < 6,
  run: async (m, r) => {
    const res = await r.wire.partner("POST", "/users", { externalId: `ext-${m.users.length + 1}` })
    expectStatus("create", res, 201)
    const id = res.body.subAccountId as string
    m.users.push(id)
    m.accounts.set(id, { id, status: "active", frozenBy: null, kyc: "NONE", wallet: 0, escrow: 0, shares: 0, reserved: 0 })
    await checkUser(m, r, id)
  },
  toString: () => "createUser"
}

/** Moves `amount` cents (0: everything the source holds, or one cent when it holds nothing) between master and a user. */
const transferOf = (user: number, amount: number, kind: "deposit" | "withdraw"): Cmd => ({
  check: hasUsers,
  run: async (m, r) => {
    const u = accountOf(m, userAt(m, user))
    const master = accountOf(m, "master")
    const [from, to] = kind === "deposit" ? [master, u] : [u, master]
    const value = amount === 0 ? Math.max(1, from.wallet) : amount
    const res = await r.wire.partner("POST", `/users/${u.id}/${kind}`, { amount: value / 100 })
    if (u.status !== "active") return expectStatus(kind, res, 403, "FORBIDDEN")
    if (from.wallet < value) return expectStatus(kind, res, 400, "INSUFFICIENT_FUNDS")
    expectStatus(kind, res, 200)
    from.wallet -= value
    to.wallet += value
    emit(m, kind === "deposit" ? "deposit.confirmed" : "withdraw.confirmed")
    expect(cents(res.body.newBalance), "newBalance").toBe(u.wallet + (r.plant && kind === "withdraw" ? 1 : 0))
    expect(cents(res.body.masterWalletBalance), "masterWalletBalance").toBe(master.wallet)
    await checkUser(m, r, u.id)
    await checkMasterWallet(m, r)
  },
  toString: () => `${kind}(user ${user}, ${amount} cents)`
})

/** A KYC assertion by the partner, or compliance's override (`/_sim/users/{id}/kyc`, which may also reset to NONE). */
const kycOf = (user: number, status: "NONE" | "PENDING" | "VERIFIED" | "REJECTED", by: "partner" | "compliance"): Cmd => ({
  check: hasUsers,
  run: async (m, r) => {
    const u = accountOf(m, userAt(m, user))
    const body =
      status === "VERIFIED"
        ? { kycStatus: "VERIFIED", kycLevel: "BASIC" }
        : status === "REJECTED"
          ? { kycStatus: "REJECTED", rejectionCode: "DOC", rejectionReason: "retry" }
          : { kycStatus: status }
    const res = by === "partner" ? await r.wire.partner("POST", `/users/${u.id}/kyc`, body) : await r.wire.admin("POST", `/_sim/users/${u.id}/kyc`, body)
    // the partner cannot assert NONE (D-024: the body is refused before the account is looked at); a closed
    // sub-account refuses the partner's assertions (D-022), not compliance's (D-100)
    if (status === "NONE" && by === "partner") return expectStatus("kyc", res, 400, "VALIDATION_ERROR")
    if (u.status === "closed" && by === "partner") return expectStatus("kyc", res, 403, "FORBIDDEN")
    expectStatus(`kyc-${by}`, res, 200)
    // the same assertion twice changes nothing and fires no event
    if (u.kyc !== status) emit(m, "kyc.updated")
    u.kyc = status
    expect(res.body.kycStatus).toBe(status)
    await checkUser(m, r, u.id)
  },
  toString: () => `kyc(user ${user}, ${status}, by ${by})`
})

/** The partner's freeze and unfreeze, or compliance's (`/_sim/users/{id}/freeze`); only compliance lifts its own (D-023). */
const freezeOf = (user: number, frozen: boolean, by: "partner" | "compliance"): Cmd => ({
  check: hasUsers,
  run: async (m, r) => {
    const u = accountOf(m, userAt(m, user))
    const res =
      by === "partner"
        ? await r.wire.partner("POST", `/users/${u.id}/${frozen ? "freeze" : "unfreeze"}`)
        : await r.wire.admin("POST", `/_sim/users/${u.id}/freeze`, { frozen })
    if (u.status === "closed") return expectStatus(frozen ? "freeze" : "unfreeze", res, 403, "FORBIDDEN")
    if (!frozen && u.status === "frozen" && u.frozenBy === "compliance" && by === "partner") return expectStatus("unfreeze", res, 403, "FORBIDDEN")
    expectStatus(frozen ? "freeze" : "unfreeze", res, 200)
    if (frozen && u.status === "active") {
      Object.assign(u, { status: "frozen", frozenBy: by })
      emit(m, "account.frozen")
    } else if (!frozen && u.status === "frozen") {
      Object.assign(u, { status: "active", frozenBy: null })
      emit(m, "account.frozen")
    }
    expect(res.body.status).toBe(u.status)
    await checkUser(m, r, u.id)
  },
  toString: () => `${frozen ? "freeze" : "unfreeze"}(user ${user}, by ${by})`
})

/** The partner closes a sub-account: refused while it holds cash, escrow, units or open orders (D-022, D-029); once
 * closed it stays readable and refuses every change; closing it again answers it as it is. */
const closeOf = (user: number): Cmd => ({
  check: hasUsers,
  run: async (m, r) => {
    const u = accountOf(m, userAt(m, user))
    const res = await r.wire.partner("DELETE", `/users/${u.id}`)
    const blocked = u.wallet !== 0 || u.escrow > 0 || u.shares > 0 || m.orders.some((o) => o.account === u.id && live(o))
    if (u.status !== "closed" && blocked) return expectStatus("close", res, 409, "CONFLICT")
    expectStatus("close", res, 200)
    if (u.status !== "closed") emit(m, "account.closed")
    Object.assign(u, { status: "closed", frozenBy: null })
    expect(res.body.status).toBe("closed")
    await checkUser(m, r, u.id)
  },
  toString: () => `close(user ${user})`
})

/** A quote for a BUY of `size` units, or a SELL of `size` percent of the account's free units (at least one). */
const quoteOf = (user: number, master: boolean, side: "BUY" | "SELL", size: number): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    const chosen = master || !hasUsers(m) ? "master" : userAt(m, user)
    // a SELL is quoted for an account with free units when there is one (else the trades would mostly be refused)
    const holder = [...m.accounts.values()].find((x) => x.shares > x.reserved)
    const account = side === "SELL" && accountOf(m, chosen).shares <= accountOf(m, chosen).reserved && holder !== undefined ? holder.id : chosen
    const a = accountOf(m, account)
    const quantity = side === "BUY" ? size : Math.max(1, Math.floor(((a.shares - a.reserved) * size) / 100))
    const res = await r.wire.partner("GET", `/quote/SCOM?side=${side}&quantity=${quantity}${account === "master" ? "" : `&subAccountId=${account}`}`)
    expectStatus("quote", res, 200)
    collectQuotes(m.quotes, m.now)
    const price = price4(res.body.price)
    const rate = rate6(res.body.fxRate)
    const gross = grossOf(BigInt(quantity) * BigInt(price), rate)
    const fee = feeOf(gross)
    expect([cents(res.body.estimatedGross), cents(res.body.estimatedFee), cents(res.body.estimatedTotal)], "quote amounts").toEqual([
      gross,
      fee,
      side === "BUY" ? gross + fee : gross - fee
    ])
    expect([Date.parse(res.body.issuedAt), Date.parse(res.body.expiresAt)], "quote times").toEqual([m.now, m.now + QUOTE_TTL_MS])
    expect(res.body.marketStatus).toBe(marketOpen(m.now) ? "OPEN" : "CLOSED")
    // from 08:15 the quote shows the price the model pinned, 15 minutes late (D-240); before, the seeded history's
    expect([publishedPrice(m, m.now) ?? price, rate], "quote price and FX rate").toEqual([price, KES_RATE])
    m.quotes.push({
      quoteId: res.body.quoteId,
      account,
      side,
      quantity,
      price,
      rate,
      total: side === "BUY" ? gross + fee : gross - fee,
      expiresAt: m.now + QUOTE_TTL_MS,
      used: false
    })
  },
  toString: () => `quote(${master ? "master" : `user ${user}`}, ${side} ${size}${side === "SELL" ? "%" : ""})`
})

/** Trades on a quote, on the account it was issued for or (`other`) on another one. */
const tradeOf = (index: number, other: boolean): Cmd => ({
  check: (m) => m.quotes.length > 0,
  run: async (m, r) => {
    const q = pick(m.quotes, index, (x) => !x.used)
    const account = !other ? q.account : q.account === "master" ? (m.users[0] ?? "master") : "master"
    const a = accountOf(m, account)
    const res = await r.wire.partner("POST", `${accountPath(account)}/trade`, { symbol: "SCOM", type: q.side, quantity: q.quantity, quoteId: q.quoteId })
    // the order of the checks: the account, then the quote (scope, freshness), the market, then the money
    if (a.status !== "active") return expectStatus("trade", res, 403, "FORBIDDEN")
    if (a.kyc !== "VERIFIED") return expectStatus("trade", res, 403, "KYC_REQUIRED")
    if (q.collected === true) return expectStatus("trade", res, 404, "QUOTE_NOT_FOUND")
    if (account !== q.account) return expectStatus("trade", res, 403, "QUOTE_SCOPE_MISMATCH")
    if (q.used || m.now >= q.expiresAt) return expectStatus("trade", res, 409, "STALE_QUOTE")
    if (!marketOpen(m.now)) return expectStatus("trade", res, 422, "MARKET_CLOSED")
    if (q.side === "BUY" && a.wallet < q.total) return expectStatus("trade", res, 400, "INSUFFICIENT_FUNDS")
    if (q.side === "SELL" && a.shares - a.reserved < q.quantity) return expectStatus("trade", res, 422, "INSUFFICIENT_HOLDINGS")
    expectStatus(`trade ${q.side}`, res, 202)
    expect([res.body.status, res.body.quantity, cents(res.body.totalAmount)], "the order placed").toEqual(["PENDING", q.quantity, q.total])
    q.used = true
    if (q.side === "BUY") {
      a.wallet -= q.total
      a.escrow += q.total
    } else a.reserved += q.quantity
    m.orders.push({
      orderId: res.body.orderId,
      account,
      side: q.side,
      orderType: "MARKET",
      quantity: q.quantity,
      limit: null,
      stop: null,
      timeInForce: null,
      deadline: null,
      price: q.price,
      rate: q.rate,
      total: q.total,
      status: "PENDING",
      filled: 0,
      notional: 0n,
      escrow: q.side === "BUY" ? q.total : 0,
      cancelReason: null,
      rejectionCode: null
    })
    emit(m, "order.pending")
    await checkTrading(m, r, account)
  },
  toString: () => `trade(quote ${index}${other ? ", on another account" : ""})`
})

/** A quote and at once a trade on it (the usual flow; it also makes the SELL of units bought earlier reachable). */
const quoteTradeOf = (user: number, master: boolean, side: "BUY" | "SELL", size: number): Cmd => {
  const quote = quoteOf(user, master, side, size)
  const trade = tradeOf(0, false)
  return {
    check: () => true,
    run: async (m, r) => {
      await quote.run(m, r)
      await trade.run(m, r)
    },
    toString: () => `quoteTrade(${master ? "master" : `user ${user}`}, ${side} ${size}${side === "SELL" ? "%" : ""})`
  }
}

/** A sub-account opened, its KYC verified and `dollars` deposited at once: the way to a sub-account's orders and replaces. */
const onboardOf = (dollars: number): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    if (m.users.length < 6) await createUser.run(m, r)
    const newest = m.users.length - 1
    await kycOf(newest, "VERIFIED", "partner").run(m, r)
    await transferOf(newest, dollars * 100, "deposit").run(m, r)
  },
  toString: () => `onboard(${dollars} USD)`
})

/** A BUY quoted, traded and filled at once: units the resting and MARKET SELLs can then sell. */
const boughtOf = (user: number, master: boolean, size: number): Cmd => {
  const buy = quoteTradeOf(user, master, "BUY", size)
  const fill = deskOf(0, "fill")
  return {
    check: () => true,
    run: async (m, r) => {
      await buy.run(m, r)
      if (fill.check(m)) await fill.run(m, r)
    },
    toString: () => `bought(${master ? "master" : `user ${user}`}, ${size})`
  }
}

/** The partner cancels: a WORKING order, or one at the desk nothing has filled yet (D-033); the escrow or the reserved
 * units come back. */
const cancelOf = (index: number): Cmd => ({
  check: (m) => m.orders.length > 0,
  run: async (m, r) => {
    const o = pick(m.orders, index, (x) => x.status === "PENDING" || x.status === "WORKING")
    const a = accountOf(m, o.account)
    const res = await r.wire.partner("DELETE", `/orders/${o.orderId}`)
    if (o.status !== "PENDING" && o.status !== "WORKING") return expectStatus("cancel", res, 409, "CONFLICT")
    expectStatus(o.status === "WORKING" ? "cancel-working" : "cancel", res, 200)
    expect(res.body.status).toBe("CANCELLED")
    releaseUnfilled(a, o)
    Object.assign(o, { status: "CANCELLED", cancelReason: "PARTNER_REQUEST" })
    emit(m, "order.cancelled")
    await checkTrading(m, r, o.account)
  },
  toString: () => `cancel(order ${index})`
})

/** The desk fills all, half (partial) or all at 2% under the order's price (cheaper), or rejects. */
const deskOf = (index: number, action: "fill" | "partial" | "cheaper" | "reject"): Cmd => ({
  check: (m) => m.orders.length > 0,
  run: async (m, r) => {
    const o = pick(m.orders, index, atDesk)
    const a = accountOf(m, o.account)
    const remaining = o.quantity - o.filled
    // a decided order is asked for its whole quantity: a valid request, refused for the order's state
    const quantity = !atDesk(o) ? o.quantity : action === "partial" && remaining > 1 ? Math.floor(remaining / 2) : remaining
    const price = action === "cheaper" ? Math.round((o.price * 98) / 100) : o.price
    const res =
      action === "reject"
        ? await r.wire.admin("POST", `/_sim/desk/orders/${o.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "model" })
        : await r.wire.admin("POST", `/_sim/desk/orders/${o.orderId}/fill`, { quantity, ...(action === "cheaper" ? { price: price / 10_000 } : {}) })
    if (!atDesk(o)) return expectStatus(`desk-${action}`, res, 409, "CONFLICT")
    // a triggered LIMIT or STOP_LIMIT order fills within its limit (D-282): a SELL's cheaper fill may not
    if (action !== "reject" && o.limit !== null && (o.side === "BUY" ? price > o.limit : price < o.limit))
      return expectStatus(`desk-${action}`, res, 400, "VALIDATION_ERROR")
    expectStatus(`desk-${action}`, res, 200)
    if (action === "reject") {
      releaseUnfilled(a, o)
      Object.assign(o, { status: "REJECTED", rejectionCode: "DESK_REJECTED" })
      emit(m, "order.rejected")
      emit(m, "trade.rejected")
    } else {
      // each fill costs the difference of the cumulative gross and fee, so partial fills add up to one whole fill
      const notional = o.notional + BigInt(quantity) * BigInt(price)
      const gross = grossOf(notional, o.rate) - grossOf(o.notional, o.rate)
      const fee = feeOf(grossOf(notional, o.rate)) - feeOf(grossOf(o.notional, o.rate))
      const complete = quantity === remaining
      if (o.side === "BUY") {
        const refund = complete ? o.escrow - gross - fee : 0
        a.escrow -= gross + fee + refund
        a.wallet += refund
        o.escrow -= gross + fee + refund
        a.shares += quantity
      } else {
        a.wallet += gross - fee
        a.shares -= quantity
        a.reserved -= quantity
      }
      Object.assign(o, { notional, filled: o.filled + quantity, status: complete ? "FILLED" : "PARTIALLY_FILLED" })
      if (complete) {
        emit(m, "order.filled")
        emit(m, "trade.settled")
      }
    }
    expect([res.body.status, res.body.filledQuantity], "the order decided").toEqual([o.status, o.filled])
    await checkTrading(m, r, o.account)
  },
  toString: () => `${action}(order ${index})`
})

/** Idempotency-Keys are kept 24 hours (D-037). */
const KEY_TTL_MS = 24 * 3_600_000

/**
 * Resends one of the partner's earlier successful mutations with its Idempotency-Key: as it was (the stored answer
 * comes back and nothing happens again, D-037), or with another amount or externalId (422 IDEMPOTENCY_KEY_REUSED,
 * D-190, and nothing happens).
 */
const resendOf = (index: number, changed: boolean): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    const kept = r.wire.mutations.filter((x) => m.now - x.at < KEY_TTL_MS)
    if (kept.length === 0) return void count("resend none")
    const x = recent(kept, index)
    const body = x.body as Record<string, unknown> | undefined
    if (!changed) {
      const res = await r.wire.partner(x.method, x.path, x.body, x.key)
      expectStatus("resend", res, x.status)
      expect(res.body, `the stored answer of ${x.method} ${x.path}`).toEqual(x.answer)
      return
    }
    const other =
      body === undefined
        ? undefined
        : typeof body.amount === "number"
          ? { ...body, amount: Math.round(body.amount * 100 + 1) / 100 }
          : typeof body.externalId === "string"
            ? { ...body, externalId: `${body.externalId}-other` }
            : typeof body.kycStatus === "string"
              ? { ...body, kycStatus: body.kycStatus === "PENDING" ? "VERIFIED" : "PENDING", kycLevel: body.kycStatus === "PENDING" ? "BASIC" : undefined }
              : undefined
    if (other === undefined) return void count("resend-other none")
    const res = await r.wire.partner(x.method, x.path, other, x.key)
    expectStatus("resend-other", res, 422, "IDEMPOTENCY_KEY_REUSED")
  },
  toString: () => `resend(mutation ${index}${changed ? ", another body" : ""})`
})

/**
 * The partner's next mutation crashes just before or just after its COMMIT; the engine restarts on its committed state
 * and the client resends the request with its Idempotency-Key (crash-wire.ts). The command that makes the request
 * checks its final answer and the state as if nothing had happened: nothing twice, nothing lost, the same answer.
 */
const crashOf = (point: CrashPoint): Cmd => ({
  check: () => true,
  run: async (_m, r) => {
    if (!r.wire.crashNext(point)) count("crash n/a")
  },
  toString: () => `crash(${point})`
})

/** The receiver answers `status` from now on (a 5xx makes every attempt fail and be retried). */
const receiverOf = (status: number): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    r.receiver.setStatus(status)
    m.receiverStatus = status
    count(`receiver ${status}`)
  },
  toString: () => `receiver(${status})`
})

const idx = fc.nat({ max: 7 })
/** Mostly the latest quote or order, sometimes an older one. */
const latest = fc.oneof(fc.constant(0), fc.constant(0), fc.nat({ max: 9 }))
const amount = fc.oneof(fc.integer({ min: 1, max: 500_000 }), fc.integer({ min: 1, max: 300 }), fc.constant(0))
const transfer = fc.tuple(idx, amount, fc.constantFrom<"deposit" | "withdraw">("deposit", "deposit", "withdraw")).map(([u, a, k]) => transferOf(u, a, k))
const quote = fc
  .tuple(idx, fc.boolean(), fc.constantFrom<"BUY" | "SELL">("BUY", "BUY", "SELL"), fc.integer({ min: 1, max: 400 }))
  .map(([u, master, side, size]) => quoteOf(u, master, side, size))
const quoteTrade = fc
  .tuple(idx, fc.boolean(), fc.constantFrom<"BUY" | "SELL">("BUY", "SELL"), fc.integer({ min: 1, max: 400 }))
  .map(([u, master, side, size]) => quoteTradeOf(u, master, side, size))
const trade = fc.tuple(latest, fc.constantFrom(false, false, false, true)).map(([q, other]) => tradeOf(q, other))
const desk = fc.tuple(latest, fc.constantFrom<"fill" | "partial" | "cheaper" | "reject">("fill", "partial", "cheaper", "reject")).map(([o, a]) => deskOf(o, a))
const kyc = fc
  .tuple(
    idx,
    fc.constantFrom<"NONE" | "PENDING" | "VERIFIED" | "REJECTED">("VERIFIED", "VERIFIED", "VERIFIED", "PENDING", "REJECTED", "NONE"),
    fc.constantFrom<"partner" | "compliance">("partner", "partner", "compliance")
  )
  .map(([u, s, by]) => kycOf(u, s, by))
const freeze = fc.tuple(idx, fc.boolean(), fc.constantFrom<"partner" | "compliance">("partner", "compliance")).map(([u, frozen, by]) => freezeOf(u, frozen, by))
/** Seconds: within a quote's life, just past it, and the retry schedule's steps (30 min and 2 h reach the last attempts). */
const advance = fc.constantFrom(1, 5, 30, 61, 300, 1_800, 7_200).map(advanceOf)
/** Seconds: the 900 s refreshes resting orders look at; or to NSE's next close, where DAY orders expire. */
const advanceRefresh = fc.constantFrom<number | "close">(900, 900, 1_800, 3_600, "close").map(advanceOf)
const resting = fc
  .tuple(
    fc.tuple(
      idx,
      fc.constantFrom(true, false, false),
      fc.constantFrom<"BUY" | "SELL">("BUY", "BUY", "SELL"),
      fc.constantFrom<RestingType>("LIMIT", "STOP", "STOP_LIMIT")
    ),
    fc.oneof(fc.integer({ min: 1, max: 400 }), fc.constant(0)),
    fc.nat({ max: 8 }),
    fc.nat({ max: 8 }),
    fc.constantFrom<TimeInForce>("DAY", "DAY", "GTD", "GTD", "GTC"),
    fc.constantFrom(10, 25, 50, 95, 200, 0, 0, -1, -3)
  )
  .map(([[u, master, side, type], size, limitAt, stopAt, tif, minutes]) => restingOf(u, master, side, type, size, limitAt, stopAt, tif, minutes))
const replace = fc
  .tuple(latest, fc.option(fc.integer({ min: 1, max: 500 }), { nil: undefined }), fc.nat({ max: 8 }), fc.boolean())
  // at least one field: a new quantity, a new price, or both
  .map(([i, q, priceAt, withPrice]) => replaceOf(i, q, withPrice || q === undefined ? priceAt : undefined))
const pin = fc.tuple(fc.constantFrom(-500, -300, -150, -50, 50, 150, 300, 500), fc.integer({ min: -50, max: 50 })).map(([bps, tail]) => pinOf(bps, tail))
const receiver = fc.constantFrom(200, 204, 500, 503).map(receiverOf)

/** Picked uniformly, so the commands listed twice come twice as often. */
const commands: Array<fc.Arbitrary<Cmd>> = [
  fc.constant(createUser),
  transfer,
  transfer,
  kyc,
  kyc,
  freeze,
  freeze,
  idx.map(closeOf),
  quote,
  trade,
  quoteTrade,
  quoteTrade,
  latest.map(cancelOf),
  desk,
  desk,
  advance,
  resting,
  resting,
  // three times: an accepted replace needs a sub-account order still WORKING, an active account and the funds
  replace,
  replace,
  replace,
  pin,
  pin,
  advanceRefresh,
  advanceRefresh,
  // 5 USD: a wallet a BUY can nearly empty (a STOP BUY's top-up at its trigger, a larger replace, then fall short)
  fc.constantFrom(5, 500, 20_000).map(onboardOf),
  fc.constantFrom(5, 500, 20_000).map(onboardOf),
  fc.tuple(idx, fc.boolean(), fc.integer({ min: 1, max: 400 })).map(([u, master, size]) => boughtOf(u, master, size)),
  receiver,
  fc.tuple(latest, fc.boolean()).map(([i, changed]) => resendOf(i, changed)),
  fc.constantFrom(...CRASH_POINTS).map(crashOf)
]

/** The last step of every run: every account, order and delivery record read back once more. */
const finalCheck: Cmd = {
  check: () => true,
  run: async (m, r) => {
    await checkMasterWallet(m, r)
    for (const id of m.users) await checkUser(m, r, id)
    for (const id of m.accounts.keys()) await checkTrading(m, r, id)
    await checkDeliveries(m, r, false)
  },
  toString: () => "finalCheck"
}

// ---------------------------------------------------------------------------------------------------------------
// Running

/** Milliseconds spent per kind of command over a property run (printed with the outcomes: where the time goes). */
const timings = new Map<string, number>()
const timed = (c: Cmd): Cmd => ({
  check: (m) => c.check(m),
  run: async (m, r) => {
    const began = performance.now()
    try {
      await c.run(m, r)
    } finally {
      const kind = c.toString().split("(")[0] ?? ""
      timings.set(kind, (timings.get(kind) ?? 0) + performance.now() - began)
    }
  },
  toString: () => c.toString()
})

interface RunOptions {
  readonly numRuns: number
  readonly seed: number
  readonly path?: string | undefined
  readonly plant?: boolean
  /** postgres: the admin URL; every run's engine starts on one temporary database, emptied first (E-202). */
  readonly databaseUrl?: string | undefined
  /** Adds to the outcomes counted so far (more runs for the reach check) instead of starting them afresh. */
  readonly addOutcomes?: boolean
}

/**
 * E-202: on postgres every run's engine starts on one temporary database (migrated by the first) whose tables are
 * emptied before the run: creating or copying a database per run costs over a second here, emptying it 50 ms. It
 * must be emptied: the engine's ids come from its seed, and a shrinking run replays a seed.
 */
const scope = Effect.runSync(Scope.make())
let database: string | undefined
const engineFor = async (engineSeed: number, adminUrl: string | undefined, use: (options: EngineOptions) => Promise<void>) => {
  if (adminUrl === undefined) return use({ seed: engineSeed, store: "memory" })
  database ??= await Effect.runPromise(Scope.provide(withTemporaryDatabase(adminUrl), scope))
  await emptyTables(database)
  await use({ seed: engineSeed, store: "postgres", databaseUrl: database })
}

/** Runs the property; answers fast-check's details (a failure is the caller's to report). */
const runModel = async (options: RunOptions) => {
  // A shrunk command list replays from fast-check's path and the commands' own replay path (which commands ran):
  // SOKONI_MODEL_PATH carries both, as `path@replayPath`.
  const [path, replayPath] = options.path === undefined ? [] : options.path.split("@")
  if (options.addOutcomes !== true) {
    outcomes.clear()
    timings.clear()
  }
  const receiver = await startReceiver()
  let runs = 0
  try {
    const property = fc.asyncProperty(
      fc.integer({ min: 1, max: 2 ** 31 - 1 }),
      fc.commands(commands, { maxCommands: MAX_COMMANDS, size: "max", ...(replayPath === undefined ? {} : { replayPath }) }),
      async (engineSeed, cmds) => {
        runs++
        await engineFor(engineSeed, options.databaseUrl, async (engine) => {
          const wire = await startWire(engine)
          try {
            receiver.received.length = 0
            receiver.setStatus(200)
            const hook = await wire.partner("POST", "/webhooks", { url: receiver.url, events: [...WEBHOOK_EVENTS], secret: WEBHOOK_SECRET })
            expect(hook.status, JSON.stringify(hook.body)).toBe(201)
            // E-250: SCOM pinned at the run's first instant, so every price a trigger looks at is the model's
            const setUpPrice = 170_000 + (engineSeed % 20_001)
            const pinned = await wire.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: setUpPrice / 10_000 })
            expect([pinned.status, pinned.body.effectiveAt], JSON.stringify(pinned.body)).toEqual([200, new Date(START).toISOString()])
            const model = freshModel(setUpPrice)
            const real: Real = { wire, receiver, webhookId: hook.body.id, plant: options.plant === true }
            await fc.asyncModelRun(() => ({ model, real }), [...cmds, finalCheck].map(timed))
          } finally {
            await wire.stop()
          }
        })
      }
    )
    const details = await fc.check(property, {
      numRuns: options.numRuns,
      seed: options.seed,
      ...(path === undefined ? {} : { path, endOnFailure: true })
    })
    return { details, runs }
  } finally {
    await receiver.stop()
  }
}

/** The replay value of a failure: fast-check's path, then `@` and the shrunk commands' replay path. */
const replayPathOf = (details: Details) => {
  const cmds = details.counterexample?.[1] as { metadataForReplay?: () => string } | undefined
  const replay = /^replayPath="(.*)"$/.exec(cmds?.metadataForReplay?.() ?? "")?.[1]
  return `${details.counterexamplePath}${replay === undefined ? "" : `@${replay}`}`
}

/** The one-line replay command; a store's failure replays that store's test only (`-t`). */
const replayOf = (details: Details, store?: "memory" | "postgres") =>
  `${store === "postgres" ? "DATABASE_URL=... " : ""}SOKONI_MODEL_SEED=${details.seed} SOKONI_MODEL_PATH='${replayPathOf(details)}' ${REPLAY}${store === undefined ? "" : ` -t ${store}`}`

/** Fails with the shrunk commands and the replay command; keeps what the run reached for a failure to print. */
const report = (label: "memory" | "postgres", details: Details, runs: number) => {
  if (details.failed) {
    const replay = replayOf(details, label)
    console.error(`api model (${label}) failed; replay with:\n  ${replay}`)
    throw new Error(`${fc.defaultReportMessage(details)}\n${String(details.errorInstance)}\nreplay: ${replay}`)
  }
  const requests = [...outcomes].filter(([k]) => !k.startsWith("receiver")).reduce((n, [, v]) => n + v, 0)
  const stats = [
    `api model (${label}): ${runs} runs, seed ${details.seed}; outcomes ${JSON.stringify(Object.fromEntries([...outcomes].sort()))}`,
    `api model (${label}): ${requests} checked requests (${Math.round(requests / Math.max(1, runs))} a run, set-up not counted)`,
    `api model (${label}): ms per command kind ${JSON.stringify(Object.fromEntries([...timings].map(([k, v]) => [k, Math.round(v)])))}`
  ].join("\n")
  // What the generator reached and where the time went: printed when the test fails (the reach check, say) or
  // on request (SOKONI_MODEL_STATS=1), not into every green run.
  if (process.env.SOKONI_MODEL_STATS === "1") console.log(stats)
  else onTestFailed(() => console.log(stats))
}

/**
 * What the memory run must reach, each more than so many times in `numRuns` (checked from the default 500 runs on:
 * fewer runs are quick looks, where a rare answer may not come up): the interesting answers, not only refusals (a
 * refused unfreeze, which needs a compliance freeze first, is rarer).
 */
const reachOf = (numRuns: number): Array<[string, number]> => [
  ["deposit 200", numRuns / 100],
  ["withdraw 200", numRuns / 100],
  ["deposit 400 INSUFFICIENT_FUNDS", numRuns / 100],
  ["deposit 403 FORBIDDEN", numRuns / 100],
  ["trade BUY 202", numRuns / 100],
  ["trade SELL 202", numRuns / 100],
  ["trade 403 KYC_REQUIRED", numRuns / 100],
  ["trade 403 QUOTE_SCOPE_MISMATCH", numRuns / 100],
  ["trade 409 STALE_QUOTE", numRuns / 100],
  ["trade 422 INSUFFICIENT_HOLDINGS", numRuns / 100],
  ["desk-fill 200", numRuns / 100],
  ["desk-partial 200", numRuns / 100],
  ["desk-reject 200", numRuns / 100],
  ["cancel 200", numRuns / 100],
  ["cancel 409 CONFLICT", numRuns / 100],
  ["unfreeze 403 FORBIDDEN", 0],
  ["kyc-compliance 200", numRuns / 100],
  ["close 200", numRuns / 100],
  ["close 409 CONFLICT", numRuns / 100],
  ["resend 200", numRuns / 100],
  ["crash before-commit", numRuns / 100],
  ["crash after-commit", numRuns / 100],
  ["resend-other 422 IDEMPOTENCY_KEY_REUSED", numRuns / 100],
  ["kyc 400 VALIDATION_ERROR", numRuns / 100],
  ["advance-to 200", numRuns / 100],
  // resting orders (E-250): placed, triggered, expired (WORKING and after a trigger), replaced or refused, cancelled
  // while WORKING; a STOP BUY's top-up and its rejection at the trigger are rarer (printed, not asserted)
  ["resting BUY 202", numRuns / 100],
  ["resting SELL 202", numRuns / 100],
  ["trigger", numRuns / 50],
  ["expire WORKING", numRuns / 100],
  ["expire triggered", 0],
  ["replace 200", numRuns / 100],
  ["replace 409 CONFLICT", numRuns / 100],
  ["cancel-working 200", numRuns / 50],
  ["pin 200", numRuns / 100]
]

describe("API model over the wire (fast-check)", () => {
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it(`memory: ${MEMORY_RUNS} command sequences agree with the model (seed ${SEED})`, async () => {
    const { details, runs } = await runModel({ numRuns: MEMORY_RUNS, seed: SEED, path: PATH, plant: PLANT })
    report("memory", details, runs)
    if (PATH !== undefined || MEMORY_RUNS < 500) return
    // Short of a rare answer by chance? More runs from seeds SEED + 1, + 2... (each checked like the first).
    await expectReach(outcomes, reachOf(MEMORY_RUNS), async (batch) => {
      const more = await runModel({ numRuns: MEMORY_RUNS / 5, seed: SEED + batch, plant: PLANT, addOutcomes: true })
      report("memory", more.details, more.runs)
    })
  }, 900_000)

  it.skipIf(DATABASE_URL === undefined)(
    `postgres: ${POSTGRES_RUNS} command sequences agree with the model (seed ${SEED})`,
    { ...onPostgres, timeout: 900_000 },
    async () => {
      const { details, runs } = await runModel({ numRuns: POSTGRES_RUNS, seed: SEED, path: PATH, databaseUrl: DATABASE_URL, plant: PLANT })
      report("postgres", details, runs)
    }
  )
})

describe("the model test can fail", () => {
  // A model that expects a withdrawal to leave the sub-account one cent richer than it does (the planted
  // disagreement): the property must fail, shrink to the few commands that show it, and replay from its path alone.
  it("catches a planted model/engine disagreement, shrinks it and replays it from seed and path", async () => {
    const first = await runModel({ numRuns: 200, seed: 42, plant: true })
    expect(first.details.failed).toBe(true)
    const shrunk = [...((first.details.counterexample?.[1] ?? []) as Iterable<Cmd>)].map(String)
    expect(shrunk.at(-1)).toMatch(/^withdraw\(/)
    expect(shrunk.length).toBeLessThanOrEqual(4)
    expect(String(first.details.errorInstance)).toContain("newBalance")
    const replay = replayOf(first.details)
    const path = replayPathOf(first.details)
    expect(path).toMatch(/^[0-9:]+@.+$/)
    expect(replay).toBe(`SOKONI_MODEL_SEED=42 SOKONI_MODEL_PATH='${path}' ${REPLAY}`)
    // the replay command's two values alone run the shrunk case again, and it fails the same way
    const again = await runModel({ numRuns: 1, seed: first.details.seed, path, plant: true })
    expect(again.details.failed).toBe(true)
    expect(again.runs).toBe(1)
    expect([...((again.details.counterexample?.[1] ?? []) as Iterable<Cmd>)].map(String)).toEqual(shrunk)
    // and the honest model agrees with the engine on the runs of the same seed that found it
    expect((await runModel({ numRuns: first.details.numRuns, seed: 42 })).details.failed).toBe(false)
  }, 300_000)
})
