/**
 * What the stateful checks of `sokoni conform` share (issue 10, part 1b): the verdict a check builds as it goes, the
 * partner and the keyed caller it runs as (Idempotency-Keys of its own), the market calendar that decides whether a
 * trade can be placed now, the fee rule recomputed independently of the engine, and small readers of the answers.
 * Owns no check. The checks live in stateful-*.ts by family; stateful-checks.ts lists them in their run order.
 */
import type { TimelineEntry } from "../report/model.ts"
import { isoAt } from "../sim/clock.ts"
import type { RegisteredCheck, RunContext } from "./conform.ts"
import type { Credentials, Outcome } from "./contract-checks.ts"
import { type Exchange, PRODUCTION_BASE, SANDBOX_BASE } from "./target.ts"

export type StatefulCheck = RegisteredCheck

/** The fee rule recomputed independently of the engine: 0.75 % of gross, in cents, rounded half away from zero. */
export const BASE_FEE_BPS = 75
export const baseFeeCents = (grossCents: number) => Math.floor((grossCents * BASE_FEE_BPS * 2 + 10_000) / 20_000)

export const cents = (amount: unknown) => (typeof amount === "number" ? Math.round(amount * 100) : Number.NaN)

export const SYMBOL = "SCOM.KE"
/** The exchange SYMBOL trades on (its market calendar decides whether a trade can be placed). */
export const EXCHANGE = "NSE"

/** A failed outcome on an exchange, or a skipped one, built as the checks go. */
export class Verdict {
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

export const codeOf = (x: Exchange): string | undefined => (x.json as { error?: { code?: string } } | null)?.error?.code

/** The partner a check runs as: a fresh one with the control API, else the keys given. */
export const partnerFor = async (ctx: RunContext): Promise<Credentials> => (await ctx.freshPartner()) ?? ctx.credentials

/** A sandbox caller for a partner (the sandbox wallet is funded everywhere), keyed, with Idempotency-Keys of its own. */
export const caller = (ctx: RunContext, v: Verdict, who: Credentials, env: "sandbox" | "production" = "sandbox") => {
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

export type Call = ReturnType<typeof caller>["call"]

/**
 * Why a trade cannot be placed now, read from the API's market calendar (GET /market/status of the check symbol's
 * exchange), or undefined when it is open. Asked only without a control API: with one, the target's clock sits in a
 * session. A closed market skips the trading checks with its next opening, rather than failing them on a correct
 * target (E-284).
 */
export const marketClosed = async (ctx: RunContext, call: Call): Promise<string | undefined> => {
  if (ctx.target.hasControl) return undefined
  const r = await call("GET", `/market/status?exchange=${EXCHANGE}`)
  const status = (r.json as { serverTime?: string; exchanges?: Record<string, { isOpen?: boolean; nextOpen?: string | null }> } | null)?.exchanges?.[EXCHANGE]
  if (r.status !== 200 || status?.isOpen !== false) return undefined
  const at = (r.json as { serverTime?: string }).serverTime ?? "now"
  return `needs ${EXCHANGE} open to trade ${SYMBOL}: the API's market calendar says it is closed at ${at}, next open ${status.nextOpen ?? "unknown"} (GET /market/status); run conform again then`
}

/** A check that trades: its keyed caller on its own partner, or why it cannot run now (no key; the market closed). */
export const tradingCaller = async (ctx: RunContext, v: Verdict): Promise<{ readonly key: string; readonly call: Call } | { readonly skip: string }> => {
  const { key, call } = caller(ctx, v, await partnerFor(ctx))
  if (key === undefined) return { skip: "needs a sandbox key or --admin-token" }
  const closed = await marketClosed(ctx, call)
  return closed === undefined ? { key, call } : { skip: closed }
}

export const quoteOf = (x: Exchange) =>
  x.json as { quoteId?: string; issuedAt?: string; expiresAt?: string; estimatedGross?: number; estimatedFee?: number; estimatedTotal?: number }

/**
 * A sub-account named by run (seed and start on the target's clock): a target keeps its sub-accounts from run to run,
 * and an externalId is unique per partner, so a fixed one would be refused the second time (E-284).
 */
export const subAccountBody = (ctx: RunContext, n: string) => ({
  externalId: `conform-${ctx.seed}-${ctx.startedAt.toString(36)}-${n}`,
  email: `conform-${ctx.seed}-${ctx.startedAt.toString(36)}-${n}@partner.test`,
  firstName: "Con",
  lastName: "Form"
})

export const walletOf = (x: Exchange) => {
  const w = x.json as { balance?: number; available?: number; reserved?: number }
  return { balance: cents(w.balance), available: cents(w.available), reserved: cents(w.reserved) }
}

export const holdingOf = async (call: (method: string, path: string) => Promise<Exchange>) => {
  const p = await call("GET", "/portfolio")
  const holdings = (p.json as { holdings?: Array<{ symbol: string; quantity: number }> }).holdings ?? []
  return holdings.find((h) => h.symbol === SYMBOL)?.quantity ?? 0
}

/** A sub-account of this run (named `n`) holding `amount` USD moved from the master wallet; or what went wrong. */
export const fundedSubAccount = async (ctx: RunContext, call: Call, n: string, amount: number): Promise<{ id: string } | { problem: string }> => {
  const made = await call("POST", "/users", subAccountBody(ctx, n))
  const id = (made.json as { subAccountId?: unknown } | null)?.subAccountId
  if (made.status !== 201 || typeof id !== "string") return { problem: `POST /users answered ${made.status} ${codeOf(made) ?? ""}; expected 201` }
  const deposit = await call("POST", `/users/${id}/deposit`, { amount, reference: `conform-${n}` })
  if (deposit.status !== 200) return { problem: `POST /users/${id}/deposit answered ${deposit.status} ${codeOf(deposit) ?? ""}; expected 200` }
  return { id }
}

/**
 * Deletes a webhook a check registered for its own receiver, once the check is done: a live target keeps its
 * webhooks, and this one would go on posting to a receiver that is gone, run after run. A failure here is no verdict.
 */
export const forgetWebhook = async (call: Call, hookId: string | undefined) => {
  if (hookId !== undefined) await call("DELETE", `/webhooks/${hookId}`).catch(() => undefined)
}
