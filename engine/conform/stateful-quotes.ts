/**
 * The quote checks of `sokoni conform`: a quote past its expiresAt (on the target's own clock) places no order, and a
 * quote places one order only. Owns their oracles; the shared pieces are stateful-kit.ts.
 */
import { isoAt } from "../sim/clock.ts"
import type { RunContext } from "./conform.ts"
import { caller, codeOf, partnerFor, quoteOf, type StatefulCheck, SYMBOL, Verdict, tradingCaller } from "./stateful-kit.ts"
import type { Exchange } from "./target.ts"

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
export const quoteTtl: StatefulCheck = {
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
export const quoteSingleUse: StatefulCheck = {
  id: "quote-single-use",
  suite: "stateful: quotes",
  operation: "placeTrade",
  name: "quote-single-use: a second trade on a used quote (new Idempotency-Key) is refused with 409 STALE_QUOTE",
  run: async (ctx) => {
    const v = new Verdict(ctx)
    const trading = await tradingCaller(ctx, v)
    if ("skip" in trading) return v.skip(trading.skip)
    const { call } = trading
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
