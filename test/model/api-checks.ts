/**
 * What the API model test's commands share (api.model.test.ts, resting-commands.ts): the real side of a run, how an
 * answer is checked and counted, how commands pick what they act on, and the read-backs that compare the engine's
 * accounts, orders and webhook delivery records with the model after a command.
 * Owns no state of its own beyond the outcome counts of api-model.ts.
 */
import type fc from "fast-check"
import { expect } from "vitest"
import { accountOf, cents, count, expectedRecords, type Model, price4, type Receiver, recordOf, type Wire } from "./api-model.ts"

export interface Real {
  readonly wire: Wire
  readonly receiver: Receiver
  readonly webhookId: string
  /** The planted disagreement (see the last test): the model expects a withdrawal to leave one cent more. */
  readonly plant: boolean
}
export type Cmd = fc.AsyncCommand<Model, Real>

export const expectStatus = (what: string, res: { status: number; body: any }, expected: number, code?: string) => {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(expected)
  if (code !== undefined) expect(res.body.error.code, `${what} error code`).toBe(code)
  count(`${what} ${res.status}${code === undefined ? "" : ` ${code}`}`)
}

/** The `i`-th latest element (modulo): commands mostly act on what the previous ones made. */
export const recent = <A>(xs: ReadonlyArray<A>, i: number) => xs[xs.length - 1 - (i % xs.length)] as A
/** For even `i` one of the latest elements that are `good` (an unused quote, an open order) when there is one. */
export const pick = <A>(xs: ReadonlyArray<A>, i: number, good: (x: A) => boolean) => {
  const candidates = xs.filter(good)
  return i % 2 === 0 && candidates.length > 0 ? recent(candidates, i >> 1) : recent(xs, i >> 1)
}
export const userAt = (m: Readonly<Model>, i: number) => m.users[i % m.users.length] as string
export const hasUsers = (m: Readonly<Model>) => m.users.length > 0
export const accountPath = (account: string) => (account === "master" ? "" : `/users/${account}`)

// ---------------------------------------------------------------------------------------------------------------
// Reading accounts back over the API. Each command reads what it may have changed (a request over the socket costs
// 1-3 ms here with its contract check, so a command does not re-read everything: the final step of every run does).

/** The master wallet: `balance` counts what open orders hold in escrow; `available` is what can be spent. */
export const checkMasterWallet = async (m: Model, r: Real) => {
  const a = accountOf(m, "master")
  const wallet = await r.wire.partner("GET", "/wallet")
  expectStatus("read-wallet", wallet, 200)
  expect([cents(wallet.body.balance), cents(wallet.body.available), cents(wallet.body.reserved)], "master wallet").toEqual([
    a.wallet + a.escrow,
    a.wallet,
    a.escrow
  ])
}

/** A sub-account's wallet, status and KYC. */
export const checkUser = async (m: Model, r: Real, id: string) => {
  const a = accountOf(m, id)
  const user = await r.wire.partner("GET", `/users/${id}`)
  expectStatus("read-user", user, 200)
  expect([cents(user.body.walletBalance), user.body.status, user.body.kycStatus], `wallet, status and KYC of ${id}`).toEqual([a.wallet, a.status, a.kyc])
}

/** An account's cash, escrow and SCOM units (held, and free of open SELL orders). */
export const checkHoldings = async (m: Model, r: Real, id: string) => {
  const a = accountOf(m, id)
  const portfolio = await r.wire.partner("GET", id === "master" ? "/portfolio" : `/users/${id}/portfolio`)
  expectStatus("read-portfolio", portfolio, 200)
  const scom = (portfolio.body.holdings as Array<{ symbol: string; quantity: number; availableQuantity: number }>).find((h) => h.symbol === "SCOM.KE")
  expect(
    [cents(portfolio.body.cashBalance), cents(portfolio.body.reservedCash), scom?.quantity ?? 0, scom?.availableQuantity ?? 0],
    `cash, escrow, SCOM held and free of ${id}`
  ).toEqual([a.wallet, a.escrow, a.shares, a.shares - a.reserved])
}

/** An account's orders: each one's state, fills, price and total, limit and stop, and why it was cancelled or rejected. */
export const checkOrders = async (m: Model, r: Real, id: string) => {
  const orders = await r.wire.partner("GET", id === "master" ? "/orders?limit=200" : `/users/${id}/orders?limit=200`)
  expectStatus("read-orders", orders, 200)
  const seen = new Map(
    (orders.body.orders as Array<any>).map((o) => [
      o.orderId,
      [
        o.status,
        o.canonicalStatus,
        o.filledQuantity,
        o.remainingQuantity,
        price4(o.priceAtOrder),
        cents(o.totalAmount),
        o.limitPrice === null ? null : price4(o.limitPrice),
        o.stopPrice === null ? null : price4(o.stopPrice),
        o.cancelReason,
        o.rejectionCode
      ]
    ])
  )
  const expected = new Map(
    m.orders
      .filter((o) => o.account === id)
      .map((o) => [
        o.orderId,
        [
          o.status === "EXPIRED" ? "CANCELLED" : o.status,
          o.status,
          o.filled,
          o.quantity - o.filled,
          o.price,
          o.total,
          o.limit,
          o.stop,
          o.cancelReason,
          o.rejectionCode
        ]
      ])
  )
  expect(seen, `orders of ${id}: status, canonicalStatus, filled, remaining, priceAtOrder, totalAmount, limit, stop, cancelReason, rejectionCode`).toEqual(
    expected
  )
}

/** After an order's money moved: the account's holdings and orders. */
export const checkTrading = async (m: Model, r: Real, id: string) => {
  await checkHoldings(m, r, id)
  await checkOrders(m, r, id)
}

/** The webhook's delivery records, every page. */
export const deliveryRecords = async (r: Real) => {
  const all: Array<string> = []
  let cursor: string | null = null
  do {
    const page: { status: number; body: any } = await r.wire.partner(
      "GET",
      `/webhooks/${r.webhookId}/deliveries?limit=100${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    )
    expectStatus("read-deliveries", page, 200)
    for (const d of page.body.deliveries) {
      // the real latency is the receiver's, so only its presence is the model's
      expect(d.latencyMs === null, "latencyMs is null exactly when no answer came").toBe(d.statusCode === null)
      all.push(recordOf(d))
    }
    cursor = page.body.nextCursor ?? null
  } while (cursor !== null)
  return all.sort()
}

/**
 * The delivery records equal the model's. An attempt's outcome is written when the receiver's answer comes back
 * over a real socket, a moment after the advance that made it answered: wait (a bounded poll) until they match.
 */
export const checkDeliveries = async (m: Model, r: Real, inFlight: boolean) => {
  const expected = expectedRecords(m)
  let actual = await deliveryRecords(r)
  const attempts = m.deliveries.reduce((n, d) => n + d.attempts, 0)
  // A retry's record while it is on the wire already counts it and still shows the previous (same) status: wait for
  // the receiver to have had every attempt too, not only for the records to look right.
  const settled = () => JSON.stringify(actual) === JSON.stringify(expected) && r.receiver.received.length === attempts
  // A failure bound, not a wait on speed: a passing run leaves as soon as the records settle, a busy machine has 30 s.
  const deadline = performance.now() + 30_000
  while (inFlight && !settled() && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    actual = await deliveryRecords(r)
  }
  expect(actual, "webhook delivery records").toEqual(expected)
  expect(r.receiver.received.length, "requests the receiver got").toBe(attempts)
  r.receiver.checkSignatures()
  // each attempt sent its delivery's event, as a sandbox envelope
  const sent = r.receiver.received.map((x) => JSON.parse(x.body) as { event: string; isSandbox?: boolean })
  expect(sent.every((b) => b.isSandbox === true)).toBe(true)
  expect(sent.map((b) => b.event).sort(), "events the receiver got").toEqual(m.deliveries.flatMap((d) => Array<string>(d.attempts).fill(d.event)).sort())
  const hook = await r.wire.partner("GET", "/webhooks")
  expectStatus("read-webhooks", hook, 200)
  expect(hook.body.webhooks[0].status, "webhook status (D-055)").toBe(m.webhookActive ? "active" : "disabled")
}
