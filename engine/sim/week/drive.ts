/**
 * Drives a planned week (plan.ts) through the engine, as partners would: the operator creates each partner and tops
 * up its sandbox master wallet, the partner registers its webhooks and sets up its sub-accounts (create, KYC,
 * deposit), then trades through quotes, withdraws now and then and watches prices with alerts, while the desk decides
 * orders by a seeded random policy (fills, partial fills, rejections, settlement failures) and some receivers fail.
 * A partner learns what it holds from its webhooks (order.filled), so it only sells what it was told it bought.
 * Owns the order of the calls and what each needs from earlier answers.
 */
import { Effect } from "effect"
import type { ScriptedAnswer, SimReceivers } from "../outbound.ts"
import type { WeekClient } from "./client.ts"
import { DEPOSIT_USD, type FailureKind, type WeekAction, type WeekPlan } from "./plan.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const LIVE = "/api/v1/partner"
/** Sub-accounts per partner whose orders are read back at the end of the week. */
const READ_BACK = 10
const SANDBOX_EVENTS = ["order.pending", "order.filled", "order.rejected", "trade.settled", "deposit.confirmed", "withdraw.confirmed"]

interface Partner {
  readonly partnerId: string
  readonly sandboxKey: string
  readonly liveKey: string
  readonly hookUrl: string
  readonly secret: string
}

export interface WeekProgress {
  readonly done: number
  readonly total: number
  readonly now: number
}

const FAILURES: Record<FailureKind, ScriptedAnswer> = {
  "500": { status: 500 },
  "503": { status: 503 },
  timeout: { status: 200, latencyMs: 9_000 },
  unreachable: { unreachable: true }
}

const field = (json: unknown, name: string): unknown => (typeof json === "object" && json !== null ? (json as Record<string, unknown>)[name] : undefined)

export const driveWeek = (plan: WeekPlan, client: WeekClient, receivers: SimReceivers, onProgress?: (p: WeekProgress) => void) =>
  Effect.gen(function* () {
    // A call whose refusal is not passed with `mayRefuse` is a problem of the verdict (the client notes it).
    const { drain, call } = client
    const partners: Array<Partner> = []
    const subAccounts: Array<string> = []
    /** What each sub-account holds per symbol, as its partner learnt it from order.filled (sells reserve it at once). */
    const held = new Map<string, number>()
    const told = new Set<string>()
    let clockAt = 0
    // The per-action steps' generators are made once (Effect.fnUntraced), not per action: see sim/scheduler.ts.
    const moveTo = (at: number) =>
      Effect.suspend(() =>
        at > clockAt
          ? Effect.asVoid(
              Effect.tap(client.advanceTo(at), () =>
                Effect.sync(() => {
                  clockAt = at
                })
              )
            )
          : Effect.void
      )
    /** Reads what the receivers got: a BUY's first order.filled adds to the holding it told of. */
    const learn = Effect.gen(function* () {
      for (const { envelope } of yield* drain) {
        const data = envelope?.data
        if (envelope?.event !== "order.filled" || data === undefined || data.type !== "BUY" || told.has(String(data.orderId))) continue
        told.add(String(data.orderId))
        const holding = `${String(data.subAccountId)} ${String(data.symbol)}`
        held.set(holding, (held.get(holding) ?? 0) + Number(data.quantity))
      }
    })

    const setUpPartner = (p: number) =>
      Effect.gen(function* () {
        const subs = plan.ownerOf.filter((owner) => owner === p).length
        const created = yield* call("POST", "/_sim/partners", undefined, { businessName: `Week Partner ${p}`, email: `ops${p}@week.test`, tier: "enterprise" })
        const partnerId = String(field(created.json, "partnerId"))
        const partner: Partner = {
          partnerId,
          sandboxKey: String(field(created.json, "sandboxKey")),
          liveKey: String(field(created.json, "liveKey")),
          hookUrl: `https://hooks.partner${p}.test/week`,
          secret: `whsec_week_${p}_0123456789abcdef`
        }
        partners.push(partner)
        yield* call("POST", `/_sim/partners/${partnerId}/wallet/credit`, undefined, { environment: "sandbox", amount: subs * DEPOSIT_USD })
        receivers.script(partner.hookUrl, [], { status: 200 }, { secret: partner.secret })
        yield* call("POST", `${SANDBOX}/webhooks`, partner.sandboxKey, { url: partner.hookUrl, events: SANDBOX_EVENTS, secret: partner.secret })
        yield* call("POST", `${LIVE}/webhooks`, partner.liveKey, { url: partner.hookUrl, events: ["price.alert"], secret: partner.secret })
      })

    const setUpSubAccount = Effect.fnUntraced(function* (i: number) {
      const partner = partners[plan.ownerOf[i] ?? 0] as Partner
      yield* moveTo(plan.setupAt[i] ?? 0)
      const created = yield* call("POST", `${SANDBOX}/users`, partner.sandboxKey, {
        externalId: `cust-${i}`,
        displayName: `Customer ${i}`,
        email: `c${i}@week.test`
      })
      const id = String(field(created.json, "subAccountId"))
      subAccounts.push(id)
      yield* call("POST", `${SANDBOX}/users/${id}/kyc`, partner.sandboxKey, { kycStatus: "VERIFIED", kycLevel: "BASIC", reference: `kyc-${i}` })
      yield* call("POST", `${SANDBOX}/users/${id}/deposit`, partner.sandboxKey, { amount: DEPOSIT_USD })
      yield* learn
    })

    const order = Effect.fnUntraced(function* (a: Extract<WeekAction, { kind: "order" }>) {
      const partner = partners[plan.ownerOf[a.subAccount] ?? 0] as Partner
      const id = subAccounts[a.subAccount] as string
      const holding = `${id} ${a.symbol}`
      const owned = held.get(holding) ?? 0
      const sell = a.sell && owned > 0
      const quantity = sell ? Math.min(a.quantity, owned) : a.quantity
      if (sell) held.set(holding, owned - quantity)
      const side = sell ? "SELL" : "BUY"
      const quote = yield* call("GET", `${SANDBOX}/quote/${a.symbol}?side=${side}&quantity=${quantity}&subAccountId=${id}`, partner.sandboxKey, undefined, true)
      if (quote.status !== 200) return
      yield* call(
        "POST",
        `${SANDBOX}/users/${id}/trade`,
        partner.sandboxKey,
        { symbol: a.symbol, type: side, quantity, quoteId: field(quote.json, "quoteId") },
        true
      )
    })

    const alert = Effect.fnUntraced(function* (a: Extract<WeekAction, { kind: "alert" }>) {
      const partner = partners[a.partner] as Partner
      const quote = yield* call("GET", `${LIVE}/quote/${a.symbol}?side=BUY&quantity=1`, partner.liveKey)
      const price = Number(field(quote.json, "price"))
      if (quote.status !== 200 || !Number.isFinite(price)) return
      // Just past the price on the alert's side: a small move of the feed fires it, a larger one the other way not.
      const threshold = Math.round(price * (a.condition === "above" ? 100 + a.percent : 100 - a.percent)) / 100
      yield* call("POST", `${LIVE}/price-alerts`, partner.liveKey, { symbol: a.symbol, exchange: "NSE", condition: a.condition, threshold })
    })

    const act = (a: WeekAction) => {
      switch (a.kind) {
        case "order":
          return order(a)
        case "withdraw": {
          const partner = partners[plan.ownerOf[a.subAccount] ?? 0] as Partner
          return Effect.asVoid(call("POST", `${SANDBOX}/users/${subAccounts[a.subAccount]}/withdraw`, partner.sandboxKey, { amount: a.amount }, true))
        }
        case "alert":
          return alert(a)
        case "flaky":
          return Effect.sync(() => {
            for (const [p, failures] of a.failures.entries()) {
              const partner = partners[p]
              if (partner !== undefined && failures.length > 0)
                receivers.script(
                  partner.hookUrl,
                  failures.map((f) => FAILURES[f]),
                  { status: 200 },
                  { secret: partner.secret }
                )
            }
          })
      }
    }

    const total = plan.options.subAccounts + plan.actions.length
    yield* moveTo((plan.setupAt[0] ?? 0) - 60_000)
    yield* call("PUT", "/_sim/desk/policy", undefined, {
      mode: "random",
      seed: plan.options.seed >>> 0,
      delaySeconds: 5,
      rejectionRate: 0.05,
      partialFillRate: 0.1,
      settlementFailureRate: 0.02
    })
    for (let p = 0; p < plan.options.partners; p++) yield* setUpPartner(p)
    for (let i = 0; i < plan.options.subAccounts; i++) {
      yield* setUpSubAccount(i)
      if (i % 250 === 0) onProgress?.({ done: i, total, now: clockAt })
    }
    for (const [n, a] of plan.actions.entries()) {
      yield* moveTo(a.at)
      yield* learn
      yield* act(a)
      if (n % 250 === 0) onProgress?.({ done: plan.options.subAccounts + n, total, now: clockAt })
    }
    yield* moveTo(plan.endsAt)
    yield* learn
    // The partners read back every sub-account's ledger (the history checker chains it) and the orders of their
    // first READ_BACK sub-accounts (compared with the webhooks: order agreement). Not every sub-account's orders: a
    // listing walks its partner's orders (the memory store sorts the partition per call), so reading all of them
    // would cost sub-accounts x orders, not orders.
    // One sub-account a simulated second, as at set-up: a partner's reads stay within its rate-limit window.
    for (const [i, id] of subAccounts.entries()) {
      const key = (partners[plan.ownerOf[i] ?? 0] as Partner).sandboxKey
      yield* moveTo(plan.endsAt + i * 1_000)
      if (i < READ_BACK * plan.options.partners) yield* call("GET", `${SANDBOX}/users/${id}/orders?limit=200`, key)
      yield* call("GET", `${SANDBOX}/users/${id}/transactions?limit=200`, key)
    }
    onProgress?.({ done: total, total, now: clockAt })
    return { partners: partners.map((p) => p.partnerId), simulatedMs: clockAt - (plan.setupAt[0] ?? 0) }
  })
