/**
 * The API model test's commands for resting orders and time (api.model.test.ts runs them with the others): LIMIT,
 * STOP and STOP_LIMIT orders placed BUY or SELL, DAY, GTD or GTC, on the master account or a sub-account (D-280,
 * D-281); a replace of a sub-account's order, WORKING or not (D-284); SCOM pins through the control API (D-240); and
 * clock advances, which stop at each instant the model expects a trigger, an expiry or a webhook attempt (E-203,
 * E-250). Each predicts the answer's status and error code, the order and its money, and the events it fires.
 * Owns the commands only: the model of prices, triggers and expiries is resting-model.ts's.
 */
import { expect } from "vitest"
import { accountOf, attemptAt, cents, count, emit, nextDueBy, type OrderModel, price4, wouldDisableAt } from "./api-model.ts"
import { accountPath, checkDeliveries, checkTrading, type Cmd, expectStatus, hasUsers, pick, userAt } from "./api-checks.ts"
import {
  book,
  dayDeadline,
  DELAY_MS,
  jobsActAt,
  KES_RATE,
  nextJobBy,
  nextRefresh,
  pinEffectiveAt,
  referenceOf,
  REFRESH_MS,
  runJobsAt,
  totalAt
} from "./resting-model.ts"

export type RestingType = "LIMIT" | "STOP" | "STOP_LIMIT"
export type TimeInForce = "DAY" | "GTD" | "GTC"

/** Limit and stop prices are set this many basis points from SCOM's latest pin: some trigger soon, some never. */
export const OFFSETS_BPS: ReadonlyArray<number> = [-400, -200, -100, -40, 0, 40, 100, 200, 400]
const offsetPrice = (base: number, at: number) => Math.max(1, Math.round((base * (10_000 + (OFFSETS_BPS[at % OFFSETS_BPS.length] as number))) / 10_000))
/** The price SCOM was pinned at last (in effect now or soon): what limits and stops are set around. */
const latestPin = (m: { readonly pins: ReadonlyArray<{ readonly price: number }> }) => (m.pins.at(-1) as { readonly price: number }).price
const wire4 = (p: number) => p / 10_000
const iso = (t: number) => new Date(t).toISOString()

/** The most units a wallet of `wallet` cents buys at `price` (at least one): a BUY that leaves less than a unit's cost. */
const allIn = (wallet: number, price: number) => {
  let q = Math.max(1, Math.floor((wallet * 100 * KES_RATE) / (price * 1_007_500)))
  while (q > 1 && totalAt("BUY", q, price, KES_RATE) > wallet) q--
  while (totalAt("BUY", q + 1, price, KES_RATE) <= wallet) q++
  return q
}

/**
 * A resting order: a BUY of `size` units (0: all the wallet affords, so that a STOP BUY's top-up at its trigger or
 * a larger replace falls short) or a SELL of 1-110% of the account's free units (an account with free
 * units when the chosen one has none), its limit and stop `limitAt` and `stopAt` offsets from SCOM's price; a
 * GTD order expires `gtdMinutes` from now, or for `gtdMinutes` <= 0 at the (1 - gtdMinutes)-th refresh from now. Refusals: the account (403), then the money (D-280).
 */
export const restingOf = (
  user: number,
  master: boolean,
  side: "BUY" | "SELL",
  orderType: RestingType,
  size: number,
  limitAt: number,
  stopAt: number,
  timeInForce: TimeInForce,
  gtdMinutes: number
): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    // for even `user` a sub-account that can trade, when there is one (else the sub-accounts' orders are rare)
    const tradable = m.users.filter((id) => accountOf(m, id).status === "active" && accountOf(m, id).kyc === "VERIFIED")
    const chosen =
      master || !hasUsers(m) ? "master" : user % 2 === 0 && tradable.length > 0 ? (tradable[(user >> 1) % tradable.length] as string) : userAt(m, user)
    const holder = [...m.accounts.values()].find((x) => x.shares > x.reserved)
    const account = side === "SELL" && accountOf(m, chosen).shares <= accountOf(m, chosen).reserved && holder !== undefined ? holder.id : chosen
    const a = accountOf(m, account)
    const base = latestPin(m)
    const limit = orderType === "STOP" ? null : offsetPrice(base, limitAt)
    const stop = orderType === "LIMIT" ? null : offsetPrice(base, stopAt)
    // a SELL of 1% to 110% of the free units (at least one): mostly within them, sometimes beyond
    const quantity =
      side === "SELL"
        ? Math.max(1, Math.floor(((a.shares - a.reserved) * ((size % 110) + 1)) / 100))
        : size > 0
          ? size
          : allIn(a.wallet, referenceOf({ orderType, limit, stop }))
    // a GTD deadline off the refresh grid, or on it (`gtdMinutes` <= 0: the refresh after next, and so on), where the
    // expiry and a trigger fall at one instant and the engine's job order decides (E-251)
    const expiresAt = timeInForce !== "GTD" ? null : gtdMinutes > 0 ? m.now + gtdMinutes * 60_000 : nextRefresh(m.now) - gtdMinutes * REFRESH_MS
    const res = await r.wire.partner("POST", `${accountPath(account)}/trade`, {
      symbol: "SCOM",
      type: side,
      orderType,
      quantity,
      ...(limit === null ? {} : { limitPrice: wire4(limit) }),
      ...(stop === null ? {} : { stopPrice: wire4(stop) }),
      timeInForce,
      ...(expiresAt === null ? {} : { expiresAt: iso(expiresAt) })
    })
    if (a.status !== "active") return expectStatus("resting", res, 403, "FORBIDDEN")
    if (a.kyc !== "VERIFIED") return expectStatus("resting", res, 403, "KYC_REQUIRED")
    const price = referenceOf({ orderType, limit, stop })
    const total = totalAt(side, quantity, price, KES_RATE)
    if (side === "BUY" && a.wallet < total) return expectStatus("resting", res, 400, "INSUFFICIENT_FUNDS")
    if (side === "SELL" && a.shares - a.reserved < quantity) return expectStatus("resting", res, 422, "INSUFFICIENT_HOLDINGS")
    expectStatus(`resting ${side}`, res, 202)
    expect(
      [
        res.body.status,
        res.body.orderType,
        res.body.quantity,
        price4(res.body.priceAtOrder),
        cents(res.body.totalAmount),
        res.body.timeInForce,
        res.body.expiresAt
      ],
      "the resting order placed"
    ).toEqual(["WORKING", orderType, quantity, price, total, timeInForce, expiresAt === null ? undefined : iso(expiresAt)])
    if (side === "BUY") {
      a.wallet -= total
      a.escrow += total
    } else a.reserved += quantity
    const deadline = timeInForce === "DAY" ? dayDeadline(m.now) : expiresAt
    const order: OrderModel = {
      orderId: res.body.orderId,
      account,
      side,
      orderType,
      quantity,
      limit,
      stop,
      timeInForce,
      deadline,
      price,
      rate: KES_RATE,
      total,
      status: "WORKING",
      filled: 0,
      notional: 0n,
      escrow: side === "BUY" ? total : 0,
      cancelReason: null,
      rejectionCode: null
    }
    m.orders.push(order)
    // no event at placement (D-280); the trigger job first looks at the next refresh, the expiry job at the deadline
    book(m, "trigger", nextRefresh(m.now), order.orderId)
    if (deadline !== null) book(m, "expire", deadline, order.orderId)
    await checkTrading(m, r, account)
  },
  toString: () =>
    `resting(${master ? "master" : `user ${user}`}, ${side} ${orderType} ${side === "SELL" ? `${(size % 110) + 1}%` : size > 0 ? size : "all-in"}, limit ${limitAt}, stop ${stopAt}, ${timeInForce}${timeInForce !== "GTD" ? "" : gtdMinutes > 0 ? ` ${gtdMinutes} min` : ` refresh ${1 - gtdMinutes}`})`
})

/**
 * The partner replaces one of a sub-account's orders (only that path exists, D-284): a new quantity, a new limit or
 * stop (`priceAt` an offset from SCOM's price; the stop of a STOP, and of a STOP_LIMIT for odd `priceAt`), or both.
 * Only a WORKING order is replaceable (409 CONFLICT, nothing changed); then the account (403); then the money.
 */
export const replaceOf = (index: number, quantity: number | undefined, priceAt: number | undefined): Cmd => ({
  check: (m) => m.orders.some((o) => o.account !== "master"),
  run: async (m, r) => {
    const o = pick(
      m.orders.filter((x) => x.account !== "master"),
      index,
      (x) => x.status === "WORKING"
    )
    const a = accountOf(m, o.account)
    const field = o.orderType === "STOP" || (o.orderType === "STOP_LIMIT" && priceAt !== undefined && priceAt % 2 === 1) ? "stop" : "limit"
    const newPrice = priceAt === undefined ? undefined : offsetPrice(latestPin(m), priceAt)
    const res = await r.wire.partner("PATCH", `/users/${o.account}/orders/${o.orderId}`, {
      ...(quantity === undefined ? {} : { quantity }),
      ...(newPrice === undefined ? {} : { [field === "stop" ? "stopPrice" : "limitPrice"]: wire4(newPrice) })
    })
    if (o.status !== "WORKING") return expectStatus("replace", res, 409, "CONFLICT")
    if (a.status !== "active") return expectStatus("replace", res, 403, "FORBIDDEN")
    if (a.kyc !== "VERIFIED") return expectStatus("replace", res, 403, "KYC_REQUIRED")
    const next = {
      quantity: quantity ?? o.quantity,
      limit: field === "limit" && newPrice !== undefined ? newPrice : o.limit,
      stop: field === "stop" && newPrice !== undefined ? newPrice : o.stop
    }
    const price = referenceOf({ orderType: o.orderType, ...next })
    const total = totalAt(o.side, next.quantity, price, o.rate)
    if (o.side === "BUY" && total - o.escrow > a.wallet) return expectStatus("replace", res, 400, "INSUFFICIENT_FUNDS")
    if (o.side === "SELL" && next.quantity - o.quantity > a.shares - a.reserved) return expectStatus("replace", res, 422, "INSUFFICIENT_HOLDINGS")
    expectStatus("replace", res, 200)
    const wireOf = (p: number | null) => (p === null ? null : wire4(p))
    expect([res.body.status, res.body.quantity, cents(res.body.totalAmount), res.body.limitPrice, res.body.stopPrice], "the replaced order").toEqual([
      "WORKING",
      next.quantity,
      total,
      wireOf(next.limit),
      wireOf(next.stop)
    ])
    // a BUY's escrow becomes the new total (the extra taken, the surplus back); a SELL's reservation follows
    if (o.side === "BUY") {
      a.wallet -= total - o.escrow
      a.escrow += total - o.escrow
      o.escrow = total
    } else a.reserved += next.quantity - o.quantity
    Object.assign(o, next, { price, total })
    emit(m, "order.replaced")
    await checkTrading(m, r, o.account)
  },
  toString: () => `replace(order ${index}${quantity === undefined ? "" : `, quantity ${quantity}`}${priceAt === undefined ? "" : `, price ${priceAt}`})`
})

/**
 * The operator sets SCOM's exchange price `bps` from its latest pin, plus `tail` ten-thousandths (D-240): in effect
 * from NSE's next open 900 s instant, shown 15 minutes later.
 */
export const pinOf = (bps: number, tail: number): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    const price = Math.max(1, Math.round((latestPin(m) * (10_000 + bps)) / 10_000) + tail)
    const res = await r.wire.admin("PUT", "/_sim/market/prices/SCOM.KE", { price: wire4(price) })
    expectStatus("pin", res, 200)
    const effectiveAt = pinEffectiveAt(m.now)
    expect([price4(res.body.price), res.body.setAt, res.body.effectiveAt, res.body.visibleFrom], "the pin").toEqual([
      price,
      iso(m.now),
      iso(effectiveAt),
      iso(effectiveAt + DELAY_MS)
    ])
    m.pins.push({ effectiveAt, price })
  },
  toString: () => `pin(${bps > 0 ? "+" : ""}${bps} bps ${tail > 0 ? "+" : ""}${tail})`
})

/**
 * Moves the clock `seconds` on, or to NSE's next close (12:00 UTC: where DAY orders expire). It stops (`to`) at each instant a webhook attempt is due (E-203) or the model expects
 * a trigger or an expiry (E-250), and awaits the attempts' outcomes before moving on, so the attempts made are
 * exactly the model's. Jobs that change nothing (a look that does not trigger) run on the way without a stop; the model
 * books their next look. An instant where a job fires an event while an attempt may disable the webhook is not
 * crossed: the advance stops 1 ms before it (E-252).
 */
export const advanceOf = (seconds: number | "close"): Cmd => ({
  check: () => true,
  run: async (m, r) => {
    let target = seconds === "close" ? dayDeadline(m.now) : m.now + seconds * 1000
    const touched = new Set<string>()
    for (;;) {
      const job = nextJobBy(m, target)
      const due = nextDueBy(m, target)
      if (job === undefined && due === undefined) break
      const at = Math.min(job ?? Number.POSITIVE_INFINITY, due ?? Number.POSITIVE_INFINITY)
      const acts = job === at && jobsActAt(m, at)
      if (!acts && due !== at) {
        runJobsAt(m, at, count)
        continue
      }
      if (acts && wouldDisableAt(m, at)) {
        count("advance held")
        target = at - 1
        continue
      }
      const res = await r.wire.admin("POST", "/_sim/clock/advance", { to: iso(at) })
      expectStatus("advance-to", res, 200)
      m.now = Math.max(m.now, at)
      r.wire.setNow(m.now)
      if (job === at) for (const id of runJobsAt(m, at, count)) touched.add(id)
      const attempts = attemptAt(m, at)
      if (due === at) expect(attempts).toBeGreaterThan(0)
      await checkDeliveries(m, r, true)
    }
    if (target > m.now) {
      const res = await r.wire.admin("POST", "/_sim/clock/advance", { to: iso(target) })
      expectStatus("advance", res, 200)
      expect(Date.parse(res.body.now)).toBe(target)
      m.now = target
      r.wire.setNow(m.now)
    }
    await checkDeliveries(m, r, false)
    for (const id of touched) await checkTrading(m, r, id)
  },
  toString: () => (seconds === "close" ? "advance(to NSE's close)" : `advance(${seconds} s)`)
})
