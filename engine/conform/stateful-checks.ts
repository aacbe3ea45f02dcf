/**
 * The stateful checks of `sokoni conform` (issue 10, part 1b): rules no request-by-request fuzzer sees, because they
 * hold between requests. Quote TTL and single use; idempotency (same body replayed, different body refused, a burst
 * of one key creating one thing); an exact rate-limit oracle (which request is the first 429, and the Remaining,
 * Reset and Retry-After it must carry); money conserved through a trade (wallet + escrow + fees, against the fee rule
 * recomputed here); webhook signatures over the bytes sent; cross-partner access refused.
 * Owns the checks and their oracles. Does not own the transport (target.ts) nor the run (conform.ts).
 *
 * With a control API each check starts from a fresh partner and waits on the target's virtual clock; without one it
 * uses the keys given and waits real time (the report marks those long waits), and the rate-limit oracle runs last.
 */
import { createHmac, timingSafeEqual } from "node:crypto"
import type { TimelineEntry } from "../report/model.ts"
import { isoAt } from "../sim/clock.ts"
import type { RegisteredCheck, RunContext } from "./conform.ts"
import type { Credentials, Outcome } from "./contract-checks.ts"
import { startReceiver } from "./receiver.ts"
import { type Exchange, PRODUCTION_BASE, rateOf, SANDBOX_BASE } from "./target.ts"

export type StatefulCheck = RegisteredCheck

/** The fee rule recomputed independently of the engine: 0.75 % of gross, in cents, rounded half away from zero. */
export const BASE_FEE_BPS = 75
export const baseFeeCents = (grossCents: number) => Math.floor((grossCents * BASE_FEE_BPS * 2 + 10_000) / 20_000)

const cents = (amount: unknown) => (typeof amount === "number" ? Math.round(amount * 100) : Number.NaN)

const SYMBOL = "SCOM.KE"
/** The exchange SYMBOL trades on (its market calendar decides whether a trade can be placed). */
const EXCHANGE = "NSE"

/** A failed outcome on an exchange, or a skipped one, built as the checks go. */
class Verdict {
  readonly exchanges: Array<Exchange> = []
  readonly notes: Array<TimelineEntry> = []
  readonly startedAt: number
  private readonly ctx: RunContext
  constructor(ctx: RunContext) {
    this.ctx = ctx
    this.startedAt = ctx.startedAt
  }
  keep(x: Exchange) {
    this.exchanges.push(x)
    return x
  }
  note(text: string, at: number, kind: TimelineEntry["kind"] = "note") {
    this.notes.push({ at: isoAt(at), kind, text })
  }
  private timeline(): ReadonlyArray<TimelineEntry> {
    return [...this.ctx.target.timelineOf(this.exchanges), ...this.notes].sort((a, b) => a.at.localeCompare(b.at))
  }
  fail(message: string, failing?: Exchange): Outcome {
    return { status: "failed", message, exchanges: this.exchanges, failing: failing ?? this.exchanges[this.exchanges.length - 1], timeline: this.timeline() }
  }
  pass(message?: string): Outcome {
    return { status: "passed", ...(message === undefined ? {} : { message }), exchanges: this.exchanges, timeline: this.timeline() }
  }
  skip(message: string): Outcome {
    return { status: "skipped", message, exchanges: this.exchanges, timeline: this.timeline() }
  }
}

const codeOf = (x: Exchange): string | undefined => (x.json as { error?: { code?: string } } | null)?.error?.code

/** The partner a check runs as: a fresh one with the control API, else the keys given. */
const partnerFor = async (ctx: RunContext): Promise<Credentials> => (await ctx.freshPartner()) ?? ctx.credentials

/** A sandbox caller for a partner (the sandbox wallet is funded everywhere), keyed, with Idempotency-Keys of its own. */
const caller = (ctx: RunContext, v: Verdict, who: Credentials, env: "sandbox" | "production" = "sandbox") => {
  const key = env === "sandbox" ? who.sandboxKey : who.liveKey
  const base = env === "sandbox" ? SANDBOX_BASE : PRODUCTION_BASE
  // Keys unique to this caller: without a control API every check shares one partner's keys and its idempotency store.
  const prefix = `conform-${ctx.seed}-${++callers}-${v.startedAt}`
  let n = 0
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    v.keep(
      await ctx.target.call(method, `${base}${path}`, {
        headers: {
          ...(key === undefined ? {} : { "x-api-key": key }),
          ...(method === "GET" ? {} : { "idempotency-key": `${prefix}-${n++}` }),
          ...headers
        },
        ...(body === undefined ? {} : { body })
      })
    )
  return { key, call }
}

let callers = 0

type Call = ReturnType<typeof caller>["call"]

/**
 * Why a trade cannot be placed now, read from the API's market calendar (GET /market/status of the check symbol's
 * exchange), or undefined when it is open. Asked only without a control API: with one, the target's clock sits in a
 * session. A closed market skips the trading checks with its next opening, rather than failing them on a correct
 * target (E-284).
 */
const marketClosed = async (ctx: RunContext, call: Call): Promise<string | undefined> => {
  if (ctx.target.hasControl) return undefined
  const r = await call("GET", `/market/status?exchange=${EXCHANGE}`)
  const status = (r.json as { serverTime?: string; exchanges?: Record<string, { isOpen?: boolean; nextOpen?: string | null }> } | null)?.exchanges?.[EXCHANGE]
  if (r.status !== 200 || status?.isOpen !== false) return undefined
  const at = (r.json as { serverTime?: string }).serverTime ?? "now"
  return `needs ${EXCHANGE} open to trade ${SYMBOL}: the API's market calendar says it is closed at ${at}, next open ${status.nextOpen ?? "unknown"} (GET /market/status); run conform again then`
}

const quoteOf = (x: Exchange) =>
  x.json as { quoteId?: string; issuedAt?: string; expiresAt?: string; estimatedGross?: number; estimatedFee?: number; estimatedTotal?: number }

/** The spec's quote TTL (60 s, "Money/trade flow"), and the most conform waits for one quote to expire. */
export const QUOTE_TTL_MS = 60_000
const QUOTE_WAIT_BOUND_MS = QUOTE_TTL_MS + 5_000

/**
 * How long, on the target's own clock, until the quote is past its expiresAt (plus a second). With a control API the
 * target's virtual clock is read; without one, from the quote's own `issuedAt` and what conform's clock says has
 * passed since the answer came (a target's clock ahead or behind conform's does not matter), else from the clock
 * skew measured at the start.
 */
const untilExpired = async (ctx: RunContext, q: Exchange, answeredAt: number): Promise<number> => {
  const quote = quoteOf(q)
  const expiresAt = Date.parse(quote.expiresAt ?? "")
  const issuedAt = Date.parse(quote.issuedAt ?? "")
  // Born expired (a mock's example, issued and expiring at one instant): nothing to wait for.
  if (expiresAt <= issuedAt) return 0
  const left =
    !ctx.target.hasControl && !Number.isNaN(issuedAt) ? expiresAt - issuedAt - (ctx.now() - answeredAt) : expiresAt - (await ctx.target.nowOnTarget())
  return Math.max(0, left + 1_000)
}

/** quote-ttl: a quote past its expiresAt no longer places an order (409 STALE_QUOTE). */
const quoteTtl: StatefulCheck = {
  id: "quote-ttl",
  suite: "stateful: quotes",
  operation: "placeTrade",
  name: "quote-ttl: a trade on a quote past its expiresAt is refused with 409 STALE_QUOTE",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const q = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=1`)
    const answeredAt = ctx.now()
    const quote = quoteOf(q)
    if (q.status !== 200 || quote.quoteId === undefined || quote.expiresAt === undefined) return v.fail(`GET /quote answered ${q.status}; no quote to expire`)
    const lifetime = Date.parse(quote.expiresAt) - Date.parse(quote.issuedAt ?? "")
    if (lifetime > QUOTE_TTL_MS + 1_000)
      return v.fail(`the quote lives ${Math.round(lifetime / 1000)} s (issuedAt ${quote.issuedAt}, expiresAt ${quote.expiresAt}); the spec's TTL is 60 s`, q)
    // A second past expiresAt; nothing to wait when the quote is born expired (a mock's fixed example).
    const waitMs = await untilExpired(ctx, q, answeredAt)
    const now = await ctx.target.nowOnTarget()
    if (waitMs > QUOTE_WAIT_BOUND_MS)
      return v.fail(
        `the quote expires ${Math.round(waitMs / 1000)} s from now on the target's clock (expiresAt ${quote.expiresAt}), more than its 60 s TTL allows; not waited`,
        q
      )
    const how =
      waitMs === 0 ? "virtual" : await ctx.target.wait(waitMs, `quote ${quote.quoteId} to pass its expiresAt ${quote.expiresAt} on the target's clock`)
    if (waitMs > 0)
      v.note(
        `waited ${Math.round(waitMs / 1000)} s ${how === "virtual" ? "on the target's virtual clock" : "of real time (long wait: the target has no virtual clock)"}`,
        now,
        "clock"
      )
    const t = await call("POST", "/trade", { symbol: SYMBOL, type: "BUY", quantity: 1, quoteId: quote.quoteId })
    if (t.status !== 409 || codeOf(t) !== "STALE_QUOTE")
      return v.fail(
        `a trade at ${isoAt(await ctx.target.nowOnTarget())}, past the quote's expiresAt ${quote.expiresAt}, was answered ${t.status} ${codeOf(t) ?? ""}; expected 409 STALE_QUOTE`
      )
    return v.pass(how === "real" ? `long wait: ${Math.round(waitMs / 1000)} s of real time` : undefined)
  }
}

/** quote-single-use: a quote places one order; the second trade on it is refused (409 STALE_QUOTE). */
const quoteSingleUse: StatefulCheck = {
  id: "quote-single-use",
  suite: "stateful: quotes",
  operation: "placeTrade",
  name: "quote-single-use: a second trade on a used quote (new Idempotency-Key) is refused with 409 STALE_QUOTE",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const closed = await marketClosed(ctx, call)
    if (closed !== undefined) return v.skip(closed)
    const q = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=1`)
    const quoteId = quoteOf(q).quoteId
    if (q.status !== 200 || quoteId === undefined) return v.fail(`GET /quote answered ${q.status}`)
    const order = { symbol: SYMBOL, type: "BUY", quantity: 1, quoteId }
    const first = await call("POST", "/trade", order)
    if (first.status !== 202) return v.fail(`the first trade on a fresh quote was answered ${first.status} ${codeOf(first) ?? ""}; expected 202`)
    const second = await call("POST", "/trade", order)
    if (second.status !== 409 || codeOf(second) !== "STALE_QUOTE")
      return v.fail(`a second trade on quote ${quoteId} was answered ${second.status} ${codeOf(second) ?? ""}; expected 409 STALE_QUOTE`)
    return v.pass()
  }
}

/**
 * A sub-account named by run (seed and start on the target's clock): a target keeps its sub-accounts from run to run,
 * and an externalId is unique per partner, so a fixed one would be refused the second time (E-284).
 */
const subAccountBody = (ctx: RunContext, n: string) => ({
  externalId: `conform-${ctx.seed}-${ctx.startedAt.toString(36)}-${n}`,
  email: `conform-${ctx.seed}-${ctx.startedAt.toString(36)}-${n}@partner.test`,
  firstName: "Con",
  lastName: "Form"
})

/** idempotency-replay: the same key and body answer the first answer again, marked replayed, and create nothing new. */
const idempotencyReplay: StatefulCheck = {
  id: "idempotency-replay",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-replay: the same Idempotency-Key and body answer the first 201 again (Idempotent-Replayed: true), creating one sub-account",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const idem = { "idempotency-key": `conform-replay-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const body = subAccountBody(ctx, "replay")
    const first = await call("POST", "/users", body, idem)
    if (first.status !== 201) return v.fail(`POST /users answered ${first.status} ${codeOf(first) ?? ""}; expected 201`)
    const again = await call("POST", "/users", body, idem)
    if (again.status !== first.status || again.text !== first.text)
      return v.fail(`the replay answered ${again.status} ${again.text.slice(0, 120)}; expected the first answer again (${first.status}, same body)`)
    if (again.responseHeaders.get("idempotent-replayed") !== "true") return v.fail("the replay lacks Idempotent-Replayed: true")
    return v.pass()
  }
}

/** idempotency-different-body: the same key with another body is refused (422 IDEMPOTENCY_KEY_REUSED, D-190). */
const idempotencyDifferentBody: StatefulCheck = {
  id: "idempotency-different-body",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-different-body: the same Idempotency-Key with a different body is refused with 422 IDEMPOTENCY_KEY_REUSED",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const idem = { "idempotency-key": `conform-reuse-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const first = await call("POST", "/users", subAccountBody(ctx, "reuse-a"), idem)
    if (first.status !== 201) return v.fail(`POST /users answered ${first.status} ${codeOf(first) ?? ""}; expected 201`)
    const other = await call("POST", "/users", subAccountBody(ctx, "reuse-b"), idem)
    if (other.status !== 422 || codeOf(other) !== "IDEMPOTENCY_KEY_REUSED")
      return v.fail(`the same key with another body was answered ${other.status} ${codeOf(other) ?? ""}; expected 422 IDEMPOTENCY_KEY_REUSED`)
    return v.pass()
  }
}

/**
 * idempotency-concurrent: a burst of one key and body sent at once creates exactly one sub-account; every other
 * answer is 409 CONFLICT (still in flight) or the replay of the one 201.
 */
const idempotencyConcurrent: StatefulCheck = {
  id: "idempotency-concurrent",
  suite: "stateful: idempotency",
  operation: "createSubAccount",
  name: "idempotency-concurrent: 8 requests with one Idempotency-Key at once create one sub-account; the others get 409 CONFLICT or its replay",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const who = await partnerFor(ctx)
    if (who.sandboxKey === undefined) return v.skip("needs a sandbox key or --admin-token")
    const headers = { "x-api-key": who.sandboxKey, "idempotency-key": `conform-burst-${ctx.seed}-${await ctx.target.nowOnTarget()}` }
    const body = subAccountBody(ctx, "burst")
    const answers = await Promise.all(Array.from({ length: 8 }, () => ctx.target.call("POST", `${SANDBOX_BASE}/users`, { headers, body })))
    for (const a of answers) v.keep(a)
    const created = answers.filter((a) => a.status === 201 && a.responseHeaders.get("idempotent-replayed") !== "true")
    if (created.length !== 1)
      return v.fail(`${created.length} answers were a fresh 201 (not replayed); exactly one request may create`, created[1] ?? answers[0])
    const id = (created[0]?.json as { subAccountId?: string } | undefined)?.subAccountId
    const odd = answers.find(
      (a) => !(a.status === 409 && codeOf(a) === "CONFLICT") && !(a.status === 201 && (a.json as { subAccountId?: string }).subAccountId === id)
    )
    if (odd !== undefined)
      return v.fail(`an answer in the burst was ${odd.status} ${odd.text.slice(0, 120)}; expected 409 CONFLICT or the replay of ${id}`, odd)
    return v.pass(`${answers.filter((a) => a.status === 409).length} of 8 were 409 CONFLICT`)
  }
}

/**
 * rate-limit-oracle: from the first answer of a fresh window, the exact request that must be the first 429 and what
 * every answer must carry: Limit constant, Remaining one less each time, Reset fixed at the window's first request
 * + 60 s (rounded up to the second), and the 429's Remaining 0, RATE_LIMITED and a Retry-After that reaches Reset.
 */
const rateLimitOracle: StatefulCheck = {
  id: "rate-limit-oracle",
  suite: "stateful: rate limit",
  operation: "getMasterWallet",
  name: "rate-limit-oracle: the first 429 is exactly request limit + 1 of the window, with the X-RateLimit-Remaining, Reset and Retry-After the window implies",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    // A starter partner's production window (100) with the control API; else the sandbox key's window as it stands.
    const made = ctx.target.hasControl ? await makeStarter(ctx) : undefined
    const env = made !== undefined ? "production" : "sandbox"
    const key = made?.liveKey ?? ctx.credentials.sandboxKey
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const path = `${env === "production" ? PRODUCTION_BASE : SANDBOX_BASE}/wallet`
    const get = () => ctx.target.call("GET", path, { headers: { "x-api-key": key } })
    const before = await ctx.target.nowOnTarget()
    const first = v.keep(await get())
    const after = await ctx.target.nowOnTarget()
    const rate = rateOf(first.responseHeaders)
    if (first.status !== 200 || rate === undefined) return v.fail(`the first request was answered ${first.status} without integer X-RateLimit-* headers`)
    if (made !== undefined && rate.remaining !== rate.limit - 1)
      return v.fail(`a fresh partner's first request carries X-RateLimit-Remaining ${rate.remaining}; expected ${rate.limit - 1} (limit ${rate.limit})`)
    if (made !== undefined) {
      const lo = Math.ceil((before + 60_000) / 1000)
      const hi = Math.ceil((after + 60_000) / 1000)
      if (rate.reset < lo || rate.reset > hi)
        return v.fail(
          `X-RateLimit-Reset ${rate.reset} of a fresh window's first request; expected ${lo === hi ? lo : `${lo}..${hi}`} (its instant + 60 s, rounded up)`
        )
    }
    // Remaining r means r more requests are admitted; the next one is the first 429.
    for (let i = 1; i <= rate.remaining; i++) {
      const x = await get()
      const r = rateOf(x.responseHeaders)
      const expected = rate.remaining - i
      if (x.status !== 200 || r === undefined || r.remaining !== expected || r.limit !== rate.limit || r.reset !== rate.reset) {
        v.keep(x)
        return v.fail(
          `request ${i + 1} of the window was answered ${x.status} with Limit ${r?.limit} Remaining ${r?.remaining} Reset ${r?.reset}; expected 200 with Limit ${rate.limit} Remaining ${expected} Reset ${rate.reset}`,
          x
        )
      }
      if (i === rate.remaining) v.keep(x)
    }
    const limited = v.keep(await get())
    const at = await ctx.target.nowOnTarget()
    const r = rateOf(limited.responseHeaders)
    const n = rate.remaining + 2
    if (limited.status !== 429 || codeOf(limited) !== "RATE_LIMITED")
      return v.fail(`request ${n} of the window (limit ${rate.limit}) was answered ${limited.status}; expected the first 429 RATE_LIMITED`, limited)
    if (r === undefined || r.remaining !== 0 || r.reset !== rate.reset || r.limit !== rate.limit)
      return v.fail(
        `the 429 carries Limit ${r?.limit} Remaining ${r?.remaining} Reset ${r?.reset}; expected Limit ${rate.limit} Remaining 0 Reset ${rate.reset}`,
        limited
      )
    const retryAfter = Number(limited.responseHeaders.get("retry-after"))
    const due = rate.reset - Math.floor(at / 1000)
    if (!Number.isInteger(retryAfter) || retryAfter < 1 || retryAfter < due - 1 || retryAfter > due + 1)
      return v.fail(`the 429's Retry-After is ${limited.responseHeaders.get("retry-after")}; expected about ${due} s (until Reset ${rate.reset})`, limited)
    return v.pass(`request ${n} was the first 429, as the window implies`)
  }
}

const makeStarter = async (ctx: RunContext): Promise<Credentials | undefined> => {
  const r = await ctx.target.admin("POST", "/_sim/partners", { businessName: "Conform Starter", email: `starter-${ctx.seed}@conform.test`, tier: "starter" })
  return r.status === 201 ? (r.json as Credentials) : undefined
}

const walletOf = (x: Exchange) => {
  const w = x.json as { balance?: number; available?: number; reserved?: number }
  return { balance: cents(w.balance), available: cents(w.available), reserved: cents(w.reserved) }
}

/**
 * money-invariants: a BUY through quote, trade and fill, against the fee rule recomputed here. The quote's fee is
 * 0.75 % of its gross (rounded half away from zero; a quantity is chosen whose fee is not a whole cent, so a rounding
 * error shows), the order's fee parts add up, its total is the quote's, the wallet moves the total from available to
 * reserved (balance unchanged) at acceptance and out of the balance at the fill, and the holding grows by the quantity.
 */
const moneyInvariants: StatefulCheck = {
  id: "money-invariants",
  suite: "stateful: money",
  operation: "placeTrade",
  name: "money-invariants: a BUY moves exactly gross + fee (0.75 %, half away from zero) from available to escrow, then out at the fill; nothing is created or lost",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const closed = await marketClosed(ctx, call)
    if (closed !== undefined) return v.skip(closed)
    const w0 = walletOf(await call("GET", "/wallet"))
    const h0 = await holdingOf(call)
    // Find a quantity whose fee has a fraction of a cent below one half: rounding it up is then off by a cent.
    let q: Exchange | undefined
    let quantity = 0
    for (const n of [997, 1009, 1013, 1019, 1021, 1031, 1033, 1039]) {
      const x = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=${n}`)
      const g = cents(quoteOf(x).estimatedGross)
      if (x.status !== 200) return v.fail(`GET /quote answered ${x.status}`)
      q = x
      quantity = n
      const rest = (g * BASE_FEE_BPS) % 10_000
      if (rest > 0 && rest < 5_000) break
    }
    if (q === undefined) return v.fail("no quote")
    const quote = quoteOf(q)
    const gross = cents(quote.estimatedGross)
    const fee = cents(quote.estimatedFee)
    const total = cents(quote.estimatedTotal)
    if (total !== gross + fee)
      return v.fail(`quote: estimatedTotal ${quote.estimatedTotal} is not estimatedGross ${quote.estimatedGross} + estimatedFee ${quote.estimatedFee}`, q)
    const t = await call("POST", "/trade", { symbol: SYMBOL, type: "BUY", quantity, quoteId: quote.quoteId })
    if (t.status !== 202) return v.fail(`the trade was answered ${t.status} ${codeOf(t) ?? ""}; expected 202`)
    const order = t.json as { orderId: string; fee?: number; baseFee?: number; partnerMarkupFee?: number; totalAmount?: number }
    const expectedBase = baseFeeCents(gross)
    if (cents(order.baseFee) !== expectedBase)
      return v.fail(`order baseFee ${order.baseFee} for a gross of ${gross / 100}: the fee rule (0.75 %, half away from zero) gives ${expectedBase / 100}`, t)
    if (cents(order.fee) !== cents(order.baseFee) + cents(order.partnerMarkupFee)) return v.fail(`order fee ${order.fee} is not baseFee + partnerMarkupFee`, t)
    if (cents(order.totalAmount) !== gross + cents(order.fee))
      return v.fail(`order totalAmount ${order.totalAmount} is not gross ${gross / 100} + fee ${order.fee}`, t)
    if (cents(order.fee) !== fee) return v.fail(`order fee ${order.fee} differs from the quote's estimatedFee ${quote.estimatedFee}`, t)
    const w1x = await call("GET", "/wallet")
    const w1 = walletOf(w1x)
    const paid = cents(order.totalAmount)
    if (w1.balance !== w0.balance || w1.available !== w0.available - paid || w1.reserved !== w0.reserved + paid)
      return v.fail(
        `after acceptance the wallet is balance ${w1.balance / 100}, available ${w1.available / 100}, reserved ${w1.reserved / 100}; expected ${w0.balance / 100}, ${(w0.available - paid) / 100}, ${(w0.reserved + paid) / 100} (total ${paid / 100} into escrow)`,
        w1x
      )
    if (!ctx.target.hasControl) return v.pass("checked up to acceptance; the fill needs the control API's desk")
    const fill = v.keep(await ctx.target.admin("POST", `/_sim/desk/orders/${order.orderId}/fill`, {}))
    if (fill.status !== 200) await ctx.target.wait(30_000, `the target's own desk to fill order ${order.orderId}`)
    const w2x = await call("GET", "/wallet")
    const w2 = walletOf(w2x)
    if (w2.balance !== w0.balance - paid || w2.reserved !== w0.reserved || w2.available !== w0.available - paid)
      return v.fail(
        `after the fill the wallet is balance ${w2.balance / 100}, available ${w2.available / 100}, reserved ${w2.reserved / 100}; expected ${(w0.balance - paid) / 100}, ${(w0.available - paid) / 100}, ${w0.reserved / 100}`,
        w2x
      )
    const h1 = await holdingOf(call)
    if (h1 !== h0 + quantity) return v.fail(`the holding of ${SYMBOL} is ${h1} after buying ${quantity}; expected ${h0 + quantity}`)
    return v.pass()
  }
}

const holdingOf = async (call: (method: string, path: string) => Promise<Exchange>) => {
  const p = await call("GET", "/portfolio")
  const holdings = (p.json as { holdings?: Array<{ symbol: string; quantity: number }> }).holdings ?? []
  return holdings.find((h) => h.symbol === SYMBOL)?.quantity ?? 0
}

/**
 * webhook-signature: a test delivery to a receiver conform runs on 127.0.0.1 carries x-service-signature = hex
 * HMAC-SHA256 of the exact bytes received, keyed with the secret registered.
 */
const webhookSignature: StatefulCheck = {
  id: "webhook-signature",
  suite: "stateful: webhooks",
  operation: "testWebhook",
  name: "webhook-signature: a delivery's x-service-signature is the HMAC-SHA256 of the exact bytes received (not of re-serialised JSON)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const receiver = await startReceiver(ctx.target.recordDelivery)
    try {
      const secret = `whsec_conform_${ctx.seed}_secret`
      const created = await call("POST", "/webhooks", { url: receiver.url, events: ["order.pending", "order.filled"], secret })
      const id = (created.json as { id?: string }).id
      if (created.status !== 201 || id === undefined) return v.fail(`POST /webhooks answered ${created.status} ${codeOf(created) ?? ""}; expected 201`)
      const tested = await call("POST", `/webhooks/${id}/test`, {})
      const got = receiver.received()
      const delivery = got[0]
      if (delivery === undefined) return v.fail(`POST /webhooks/${id}/test answered ${tested.status} but no delivery reached ${receiver.url}`, tested)
      v.note(`delivery received: ${delivery.body.slice(0, 160)}`, await ctx.target.nowOnTarget(), "delivery")
      const given = Buffer.from(delivery.signature ?? "", "hex")
      const expected = createHmac("sha256", secret).update(delivery.raw).digest()
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        const reserialised = createHmac("sha256", secret)
          .update(JSON.stringify(JSON.parse(delivery.body)))
          .digest("hex")
        return v.fail(
          `x-service-signature ${delivery.signature ?? "(missing)"} is not the HMAC of the ${delivery.raw.length} bytes received${reserialised === delivery.signature ? "; it is the HMAC of the re-serialised JSON" : ""}`,
          tested
        )
      }
      return v.pass()
    } finally {
      await receiver.close()
    }
  }
}

/** cross-partner-access: another partner's sub-account is invisible (404), never readable or writable. */
const crossPartner: StatefulCheck = {
  id: "cross-partner-access",
  suite: "stateful: isolation",
  operation: "getSubAccount",
  name: "cross-partner-access: a partner asking for another partner's sub-account gets 404 NOT_FOUND, and cannot deposit to it",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    if (!ctx.target.hasControl) return v.skip("needs two partners: --admin-token")
    const a = caller(ctx, v, await partnerFor(ctx))
    const b = caller(ctx, v, await partnerFor(ctx))
    const made = await a.call("POST", "/users", subAccountBody(ctx, "isolated"))
    const userId = (made.json as { subAccountId?: string }).subAccountId
    if (made.status !== 201 || userId === undefined) return v.fail(`POST /users answered ${made.status}`)
    const read = await b.call("GET", `/users/${userId}`)
    if (read.status !== 404) return v.fail(`partner B reading partner A's sub-account ${userId} was answered ${read.status}; expected 404`, read)
    const deposit = await b.call("POST", `/users/${userId}/deposit`, { amount: 1 })
    if (deposit.status !== 404) return v.fail(`partner B depositing to partner A's sub-account was answered ${deposit.status}; expected 404`, deposit)
    return v.pass()
  }
}

/**
 * resource-lifecycle: a created webhook is listed at once; once deleted, it is gone (404 on its test delivery and on a
 * second delete) and no longer listed.
 */
const resourceLifecycle: StatefulCheck = {
  id: "resource-lifecycle",
  suite: "stateful: resources",
  operation: "deleteWebhook",
  name: "resource-lifecycle: a created webhook is available at once (listed); after DELETE it is gone (404 on use and on a second delete)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const created = await call("POST", "/webhooks", {
      url: "https://hooks.conform.example/lifecycle",
      events: ["order.filled"],
      secret: `whsec_conform_${ctx.seed}_lifecycle`
    })
    const id = (created.json as { id?: string }).id
    if (created.status !== 201 || id === undefined) return v.fail(`POST /webhooks answered ${created.status} ${codeOf(created) ?? ""}; expected 201`)
    const listed = await call("GET", "/webhooks")
    const ids = () => ((listed.json as { webhooks?: Array<{ id: string }> }).webhooks ?? []).map((w) => w.id)
    if (listed.status !== 200 || !ids().includes(id)) return v.fail(`webhook ${id} was created but GET /webhooks does not list it`, listed)
    const deleted = await call("DELETE", `/webhooks/${id}`)
    if (deleted.status !== 200 && deleted.status !== 204) return v.fail(`DELETE /webhooks/${id} answered ${deleted.status}; expected 200`)
    const used = await call("POST", `/webhooks/${id}/test`, {})
    if (used.status !== 404) return v.fail(`a test delivery on deleted webhook ${id} was answered ${used.status}; expected 404`, used)
    const again = await call("DELETE", `/webhooks/${id}`)
    if (again.status !== 404) return v.fail(`a second DELETE of webhook ${id} was answered ${again.status}; expected 404`, again)
    const after = await call("GET", "/webhooks")
    if (((after.json as { webhooks?: Array<{ id: string }> }).webhooks ?? []).some((w) => w.id === id))
      return v.fail(`deleted webhook ${id} is still listed`, after)
    return v.pass()
  }
}

/**
 * sub-account-isolation: money moved to one sub-account is in its wallet only: the master wallet gives exactly that
 * amount, the other sub-account's wallet and transactions are untouched.
 */
const subAccountIsolation: StatefulCheck = {
  id: "sub-account-isolation",
  suite: "stateful: isolation",
  operation: "depositToSubAccount",
  name: "sub-account-isolation: a deposit to one sub-account moves exactly its amount out of the master wallet and touches no other sub-account",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const make = async (n: string) => {
      const r = await call("POST", "/users", subAccountBody(ctx, n))
      return r.status === 201 ? (r.json as { subAccountId?: string }).subAccountId : undefined
    }
    const a = await make("iso-a")
    const b = await make("iso-b")
    if (a === undefined || b === undefined) return v.fail("POST /users did not create two sub-accounts (201)")
    const master0 = walletOf(await call("GET", "/wallet"))
    const deposit = await call("POST", `/users/${a}/deposit`, { amount: 50, reference: "conform-isolation" })
    if (deposit.status !== 200) return v.fail(`POST /users/${a}/deposit answered ${deposit.status} ${codeOf(deposit) ?? ""}; expected 200`)
    const master1x = await call("GET", "/wallet")
    const master1 = walletOf(master1x)
    if (master1.balance !== master0.balance - 5_000)
      return v.fail(
        `the master wallet went from ${master0.balance / 100} to ${master1.balance / 100} for a 50.00 deposit to a sub-account; expected ${(master0.balance - 5_000) / 100}`,
        master1x
      )
    const balanceOf = async (id: string) => {
      const r = await call("GET", `/users/${id}`)
      return { r, cents: cents((r.json as { walletBalance?: number }).walletBalance) }
    }
    const inA = await balanceOf(a)
    if (inA.cents !== 5_000) return v.fail(`sub-account ${a} holds ${inA.cents / 100} after a 50.00 deposit; expected 50`, inA.r)
    const inB = await balanceOf(b)
    if (inB.cents !== 0) return v.fail(`sub-account ${b} holds ${inB.cents / 100} after a deposit to ${a}; expected 0`, inB.r)
    const txB = await call("GET", `/users/${b}/transactions`)
    const rows = (txB.json as { transactions?: Array<unknown> }).transactions
    if (txB.status !== 200 || (rows?.length ?? 0) !== 0)
      return v.fail(`sub-account ${b} lists ${rows?.length} transactions after a deposit to ${a}; expected none`, txB)
    return v.pass()
  }
}

interface EventEnvelope {
  readonly eventId?: string
  readonly event?: string
  readonly data?: { readonly orderId?: string }
}

/**
 * event-agreement: one order's story told three ways agrees: the REST order's status, the webhook deliveries a
 * loopback receiver got, and the event stream replayed from the start carry the same events, with the same eventIds,
 * in the same order.
 */
const eventAgreement: StatefulCheck = {
  id: "event-agreement",
  suite: "stateful: events",
  operation: "streamEvents",
  name: "event-agreement: REST order state, webhook deliveries and the SSE stream tell one order's events alike (same eventIds, same order)",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const { key, call } = caller(ctx, v, await partnerFor(ctx))
    if (key === undefined) return v.skip("needs a sandbox key or --admin-token")
    const closed = await marketClosed(ctx, call)
    if (closed !== undefined) return v.skip(closed)
    const receiver = await startReceiver(ctx.target.recordDelivery)
    try {
      const events = ["order.pending", "order.filled", "trade.settled"]
      const hook = await call("POST", "/webhooks", { url: receiver.url, events, secret: `whsec_conform_${ctx.seed}_agreement` })
      if (hook.status !== 201) return v.fail(`POST /webhooks answered ${hook.status}; expected 201`)
      const q = await call("GET", `/quote/${SYMBOL}?side=BUY&quantity=3`)
      const t = await call("POST", "/trade", { symbol: SYMBOL, type: "BUY", quantity: 3, quoteId: quoteOf(q).quoteId })
      const orderId = (t.json as { orderId?: string }).orderId
      if (t.status !== 202 || orderId === undefined) return v.fail(`the trade was answered ${t.status} ${codeOf(t) ?? ""}; expected 202`)
      let expectedStatus = "PENDING"
      let expected = ["order.pending"]
      if (ctx.target.hasControl) {
        const fill = v.keep(await ctx.target.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {}))
        if (fill.status === 200) {
          expectedStatus = "FILLED"
          expected = events
        }
      }
      // Deliveries leave on the target's scheduler: let a second pass (virtual with a control API).
      await ctx.target.wait(1_000, `the deliveries of order ${orderId} to leave`)
      const listed = await call("GET", `/orders?status=${expectedStatus}`)
      const rest = ((listed.json as { orders?: Array<{ orderId: string; canonicalStatus?: string; status?: string }> }).orders ?? []).find(
        (o) => o.orderId === orderId
      )
      if (rest === undefined) return v.fail(`GET /orders?status=${expectedStatus} does not list order ${orderId}`, listed)
      const mine = (e: EventEnvelope) => e.data?.orderId === orderId
      const deliveredNow = () =>
        receiver
          .received()
          .map((d) => {
            try {
              return JSON.parse(d.body) as EventEnvelope
            } catch {
              return {}
            }
          })
          .filter(mine)
      // A delivery in flight arrives in real time (the target's outbound call): give it up to 5 s, only if missing.
      for (let i = 0; i < 25 && deliveredNow().length < expected.length; i++) await ctx.target.pause(200)
      // Webhooks promise no order between events (each delivery is its own call, retried on its own): arrival order
      // is not checked, only which events came, so they are put in the order the events happened.
      const delivered = [...deliveredNow()].sort((a, b) => expected.indexOf(a.event ?? "") - expected.indexOf(b.event ?? ""))
      for (const d of delivered) v.note(`webhook ${d.event} ${d.eventId}`, await ctx.target.nowOnTarget(), "delivery")
      const webhookNames = delivered.map((d) => d.event)
      if (JSON.stringify(webhookNames) !== JSON.stringify(expected))
        return v.fail(
          `the receiver got ${JSON.stringify(webhookNames)} for order ${orderId} (REST says ${expectedStatus}); expected ${JSON.stringify(expected)}`
        )
      const stream = await ctx.target.readStream(
        `${SANDBOX_BASE}/stream?since=0`,
        { "x-api-key": key },
        (messages) => expected.every((name) => messages.some((m) => (m.data as EventEnvelope | undefined)?.event === name && mine(m.data as EventEnvelope))),
        10_000
      )
      v.keep(stream.exchange)
      const streamed = stream.messages.map((m) => m.data as EventEnvelope).filter((e) => e !== undefined && mine(e))
      for (const e of streamed) v.note(`stream ${e.event} ${e.eventId}`, await ctx.target.nowOnTarget(), "event")
      const pairs = (list: ReadonlyArray<EventEnvelope>) => list.map((e) => `${e.event} ${e.eventId}`)
      if (JSON.stringify(pairs(streamed)) !== JSON.stringify(pairs(delivered)))
        return v.fail(
          `the stream carried ${JSON.stringify(pairs(streamed))} for order ${orderId}; the webhooks carried ${JSON.stringify(pairs(delivered))}`,
          stream.exchange
        )
      return v.pass(`${expected.length} events agree (order ${expectedStatus})`)
    } finally {
      await receiver.close()
    }
  }
}

/** The stateful checks in the order they run; the rate-limit oracle last (without a control API it uses up a window). */
export const statefulChecks = (): ReadonlyArray<StatefulCheck> => [
  quoteTtl,
  quoteSingleUse,
  idempotencyReplay,
  idempotencyDifferentBody,
  idempotencyConcurrent,
  moneyInvariants,
  webhookSignature,
  eventAgreement,
  resourceLifecycle,
  crossPartner,
  subAccountIsolation,
  rateLimitOracle
]
