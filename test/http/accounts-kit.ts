/**
 * Helpers for the accounts, wallets, ledger and order tests: a partner's calls on either base with a fresh
 * Idempotency-Key per mutation, the events committed since the last look, and the common set-ups (a sub-account, a
 * verified one, a funded one, one trading with the helpers the order tests share). Every answer still goes through the
 * harness, so it is checked against the contract.
 */
import { type Effect, Exit } from "effect"
import { afterEach, expect } from "vitest"
import type { Principal } from "../../engine/app/principal.ts"
import { TradingService } from "../../engine/app/trading/service.ts"
import { Store } from "../../engine/store/port.ts"
import { type Reply, startEngine } from "./harness.ts"

export const SANDBOX = "/api/sandbox/v1/partner"
export const LIVE = "/api/v1/partner"

export type Engine = ReturnType<typeof startEngine>
export type Env = "sandbox" | "production"

export interface TraceEvent {
  readonly event: string
  readonly partition: string
  readonly position: number
  readonly data: any
}

let keySeq = 0

/** A partner of `engine` with helpers bound to its keys. */
export const partnerOf = async (engine: Engine) => {
  const keys = await engine.newPartner()
  const base = (env: Env) => (env === "sandbox" ? SANDBOX : LIVE)
  const key = (env: Env) => (env === "sandbox" ? keys.sandboxKey : keys.liveKey)
  const call = (env: Env, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
    engine.call(method, `${base(env)}${path}`, {
      headers: { "x-api-key": key(env), ...(method === "GET" ? {} : { "idempotency-key": `kit-key-${++keySeq}` }), ...headers },
      body
    })
  const sb = (method: string, path: string, body?: unknown) => call("sandbox", method, path, body)
  const createUser = async (env: Env = "sandbox", body: Record<string, unknown> = {}) => {
    const r = await call(env, "POST", "/users", { externalId: `ext-${++keySeq}`, ...body })
    expect(r.status).toBe(201)
    return r.body as { subAccountId: string; externalId: string }
  }
  const verify = async (id: string, env: Env = "sandbox") => {
    const r = await call(env, "POST", `/users/${id}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC" })
    expect(r.status).toBe(200)
  }
  const deposit = async (id: string, amount: number, env: Env = "sandbox") => {
    const r = await call(env, "POST", `/users/${id}/deposit`, { amount })
    expect(r.status).toBe(200)
    return r.body
  }
  const credit = async (env: Env, amount: number) => {
    const r = await engine.admin("POST", `/_sim/partners/${keys.partnerId}/wallet/credit`, { environment: env, amount })
    expect(r.status).toBe(200)
    return r.body
  }
  const reset = () => engine.call("POST", "/api/sandbox/v1/reset", { headers: { "x-api-key": keys.sandboxKey } })
  const partition = (env: Env) => `${keys.partnerId}:${env}`
  return { keys, call, sb, createUser, verify, deposit, credit, reset, partition }
}

/**
 * A KYC-verified sandbox sub-account of `p` funded with `usd`, and `trade`, which places a quote-backed SCOM order
 * on it and expects 202 (the set-up trading tests share).
 */
export const tradingAccount = async (p: Awaited<ReturnType<typeof partnerOf>>, externalId: string, usd = 100) => {
  const id = (await p.createUser("sandbox", { externalId })).subAccountId
  await p.verify(id)
  await p.deposit(id, usd)
  const trade = async (side: "BUY" | "SELL", quantity: number) => {
    const q = await p.sb("GET", `/quote/SCOM?side=${side}&quantity=${quantity}&subAccountId=${id}`)
    expect(q.status).toBe(200)
    const r = await p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM", type: side, quantity, quoteId: q.body.quoteId })
    expect(r.status).toBe(202)
    return r.body
  }
  return { id, trade }
}

/** Reads the trace's events; `since` skips those already seen. */
export const eventsOf = async (engine: Engine): Promise<ReadonlyArray<TraceEvent>> =>
  String((await engine.admin("GET", "/_sim/trace")).body)
    .split("\n")
    .filter((l) => l.includes('"kind":"event"'))
    .map((l) => JSON.parse(l) as TraceEvent)

/** A function answering the events committed since its previous call. */
export const eventWatcher = (engine: Engine) => {
  let seen = 0
  return async () => {
    const all = await eventsOf(engine)
    const fresh = all.slice(seen)
    seen = all.length
    return fresh
  }
}

/** Store documents of a collection in a partition, read straight from the engine's store. */
export const storeDocs = (engine: Engine, collection: string, partition: string) =>
  engine.runtime.runPromise(Store.use((store) => store.read((tx) => tx.list(collection, { partition, limit: 1_000_000, order: "asc" }))))

/** The ApiFailure of a service call's failed exit: code, message and extras (param / params). */
export const failureOf = (exit: Exit.Exit<unknown, unknown>) => {
  if (!Exit.isFailure(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit)}`)
  const error = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: { code: string; message: string; extras?: Record<string, unknown> } } | undefined
  if (error === undefined) throw new Error(`no failure in ${String(exit.cause)}`)
  return { code: error.error.code, message: error.error.message, ...error.error.extras }
}

/**
 * A new partner of `engine` with a trading sub-account funded with `usd` (tradingAccount), and what the order tests do
 * with it: a quote (200 expected), a SCOM.KE order on the sub-account (`placed` expects 202 and answers its id), a
 * replace, a desk fill (200 expected), SCOM.KE's exchange price pinned, the clock advanced, the sub-account's wallet
 * and escrow in cents, an order as the sub-account's list shows it, the dead jobs, the events since the last look,
 * and TradingService called past the gateway as the partner's full key.
 */
export const trader = async (engine: Engine, usd: number, externalId = "trader") => {
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, externalId, usd)
  const quote = async (query: string) => {
    const r = await p.sb("GET", `/quote/${query}`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { quoteId: string; [k: string]: any }
  }
  const place = (body: Record<string, unknown>) => p.sb("POST", `/users/${id}/trade`, { symbol: "SCOM.KE", ...body })
  const placed = async (body: Record<string, unknown>) => {
    const r = await place(body)
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    return r.body.orderId as string
  }
  const patch = (orderId: string, body: unknown, user = id) => p.sb("PATCH", `/users/${user}/orders/${orderId}`, body)
  const fill = async (orderId: string, body: unknown = {}) => {
    const r = await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, body)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body
  }
  const pin = async (price: number) => expect((await engine.admin("PUT", "/_sim/market/prices/SCOM.KE", { price })).status).toBe(200)
  const advance = async (body: { seconds?: number; to?: string }) => expect((await engine.admin("POST", "/_sim/clock/advance", body)).status).toBe(200)
  const balances = async () => {
    const docs = await storeDocs(engine, "balances", p.partition("sandbox"))
    const all = Object.fromEntries(docs.map((d) => [(d.body as { account: string }).account, (d.body as { cents: number }).cents]))
    return { wallet: all[`wallet:${id}`] ?? 0, escrow: all[`escrow:${id}`] ?? 0 }
  }
  const order = async (orderId: string) => (await p.sb("GET", `/users/${id}/orders`)).body.orders.find((o: { orderId: string }) => o.orderId === orderId)
  const deadJobs = () => storeDocs(engine, "deadJobs", "global")
  const principal = (environment: "sandbox" | "production" = "sandbox"): Principal => ({
    partnerId: p.keys.partnerId,
    environment,
    keyKind: "full",
    tier: "starter",
    markupBps: 0,
    partition: p.partition("sandbox")
  })
  /** Runs a TradingService call and answers its exit. */
  const service = <A, E>(f: (t: TradingService["Service"]) => Effect.Effect<A, E>) => engine.runtime.runPromiseExit(TradingService.use(f))
  return { engine, p, id, trade, quote, place, placed, patch, fill, pin, advance, balances, order, deadJobs, principal, service, watch: eventWatcher(engine) }
}

/**
 * The setup of a file whose tests each trade on an engine of their own: `setup(usd)` starts one and answers `trader`'s
 * kit for a sub-account funded with `usd` (`defaultUsd` when not given); the file's afterEach disposes of them all.
 */
export const freshTraders = (defaultUsd: number) => {
  const engines: Array<Engine> = []
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.dispose()
  })
  return async (usd = defaultUsd) => {
    const engine = startEngine()
    engines.push(engine)
    return trader(engine, usd)
  }
}
