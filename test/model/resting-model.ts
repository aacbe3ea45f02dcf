/**
 * The resting-order part of the API model (api-model.ts), written from the decisions, not the engine's code: the
 * SCOM prices the model pins and when the feed shows them (D-240: a pin takes effect at NSE's next open 900 s instant
 * and is published 15 minutes later), the refresh grid on which WORKING orders look at the delayed price (D-243,
 * D-282: at each 900 s instant whose capture, 15 minutes earlier, was made while NSE was open), DAY and GTD deadlines
 * (D-281), the trigger and its STOP BUY shortfall or rejection (D-282, E-160), expiry of what is still open (D-283),
 * and the order of the engine's jobs at one instant (E-161: one trigger job per WORKING order, re-booked at each
 * refresh; one expiry job per deadline; jobs run in the order they were booked, E-251).
 * Owns: pins, the job queue, triggers, expiries, releases of unfilled escrow and units. Does not own: the money
 * arithmetic (api-model.ts), the wire or the commands (resting-commands.ts).
 */
import { type AccountModel, accountOf, emit, feeOf, grossOf, marketOpen, type Model, type OrderModel, START } from "./api-model.ts"

/** Spec line 16 and D-240: the feed refreshes every 900 s and shows what it captured 15 minutes earlier. */
export const REFRESH_MS = 900_000
export const DELAY_MS = 900_000
const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** KES per USD (rate6): the reference rate every SCOM quote and order shows (checked against each quote's fxRate). */
export const KES_RATE = 129_250_000

/** The next refresh instant strictly after `t`: when a WORKING order placed at `t` first looks (E-161). */
export const nextRefresh = (t: number) => (Math.floor(t / REFRESH_MS) + 1) * REFRESH_MS

/** D-240: a pin set at `t` takes effect at NSE's next open 900 s instant at or after `t`. */
export const pinEffectiveAt = (t: number) => {
  let k = Math.ceil(t / REFRESH_MS) * REFRESH_MS
  while (!marketOpen(k)) k += REFRESH_MS
  return k
}

/** The exchange's SCOM price at instant `t`: the last pin in effect then (the run's set-up pins at START). */
export const exchangePriceAt = (m: Model, t: number): number => {
  let price: number | undefined
  for (const p of m.pins) if (p.effectiveAt <= t) price = p.price
  if (price === undefined) throw new Error(`the model knows no SCOM price at ${new Date(t).toISOString()}`)
  return price
}

/** What a quote or a trigger sees at `now`: the price captured 15 minutes earlier; undefined before the set-up pin shows. */
export const publishedPrice = (m: Model, now: number): number | undefined => (now - DELAY_MS < START ? undefined : exchangePriceAt(m, now - DELAY_MS))

/** D-281: the close of the session a DAY order is placed in, or of the next one when NSE is closed (12:00 UTC). */
export const dayDeadline = (t: number) => {
  if (marketOpen(t)) return Math.floor(t / DAY_MS) * DAY_MS + 12 * HOUR_MS
  for (let day = Math.floor(t / DAY_MS) * DAY_MS; ; day += DAY_MS) {
    const weekday = new Date(day).getUTCDay()
    if (weekday >= 1 && weekday <= 5 && day + 6 * HOUR_MS > t) return day + 12 * HOUR_MS
  }
}

/** E-160: the price a resting order is escrowed and shown at until it triggers: the stop for STOP, else the limit. */
export const referenceOf = (o: { readonly orderType: string; readonly limit: number | null; readonly stop: number | null }) =>
  (o.orderType === "STOP" ? o.stop : o.limit) ?? 0

/** A BUY's total (gross + fee) or a SELL's (gross - fee) of `quantity` at `price`, in cents (spec "Fees"). */
export const totalAt = (side: "BUY" | "SELL", quantity: number, price: number, rate: number) => {
  const gross = grossOf(BigInt(quantity) * BigInt(price), rate)
  return side === "BUY" ? gross + feeOf(gross) : gross - feeOf(gross)
}

/** D-282: marketable at `price`: LIMIT within its limit, STOP past its stop, STOP_LIMIT both. */
export const marketable = (o: OrderModel, price: number) => {
  const buy = o.side === "BUY"
  const withinLimit = o.limit !== null && (buy ? price <= o.limit : price >= o.limit)
  const stopReached = o.stop !== null && (buy ? price >= o.stop : price <= o.stop)
  return o.orderType === "LIMIT" ? withinLimit : o.orderType === "STOP" ? stopReached : o.orderType === "STOP_LIMIT" && stopReached && withinLimit
}

export const atDesk = (o: OrderModel) => o.status === "PENDING" || o.status === "PARTIALLY_FILLED"
export const live = (o: OrderModel) => atDesk(o) || o.status === "WORKING"

/** Books a job the way the engine does: due at `at`, after every job booked before it (E-251). */
export const book = (m: Model, kind: "trigger" | "expire", at: number, orderId: string) => {
  m.jobs.push({ at, seq: ++m.jobSeq, kind, orderId })
}

/** What is unfilled goes back: a BUY's escrow to the wallet, a SELL's reserved units (cancel, reject, expiry). */
export const releaseUnfilled = (a: AccountModel, o: OrderModel) => {
  if (o.side === "BUY") {
    a.wallet += o.escrow
    a.escrow -= o.escrow
  } else a.reserved -= o.quantity - o.filled
  o.escrow = 0
}

/** The earliest job due at or before `until`, if any. */
export const nextJobBy = (m: Model, until: number): number | undefined => {
  let at: number | undefined
  for (const j of m.jobs) if (j.at <= until && (at === undefined || j.at < at)) at = j.at
  return at
}

const orderOf = (m: Model, orderId: string) => m.orders.find((o) => o.orderId === orderId) as OrderModel

/** Whether a job due at `at` changes an order (and so fires an event), the jobs before it at `at` notwithstanding. */
export const jobsActAt = (m: Model, at: number) =>
  m.jobs.some((j) => {
    if (j.at !== at) return false
    const o = orderOf(m, j.orderId)
    if (j.kind === "expire") return live(o)
    const price = publishedPrice(m, at)
    return o.status === "WORKING" && marketOpen(at - DELAY_MS) && price !== undefined && marketable(o, price)
  })

/**
 * Runs the jobs due at `at`, in booking order: triggers (D-282) and expiries (D-281, D-283). Answers the accounts
 * whose money or orders moved; counts each outcome with `count`.
 */
export const runJobsAt = (m: Model, at: number, count: (key: string) => void): Set<string> => {
  const touched = new Set<string>()
  const due = m.jobs.filter((j) => j.at === at).sort((x, y) => x.seq - y.seq)
  m.jobs.splice(0, m.jobs.length, ...m.jobs.filter((j) => j.at !== at))
  for (const job of due) {
    const o = orderOf(m, job.orderId)
    const a = accountOf(m, o.account)
    if (job.kind === "expire") {
      if (!live(o)) continue
      count(o.status === "WORKING" ? "expire WORKING" : "expire triggered")
      releaseUnfilled(a, o)
      Object.assign(o, { status: "EXPIRED", cancelReason: o.timeInForce === "GTD" ? "GTD_EXPIRED" : "DAY_EXPIRED" })
      emit(m, "order.cancelled")
      touched.add(o.account)
      continue
    }
    if (o.status !== "WORKING") continue
    const price = publishedPrice(m, at)
    if (!marketOpen(at - DELAY_MS) || price === undefined || !marketable(o, price)) {
      book(m, "trigger", at + REFRESH_MS, o.orderId)
      continue
    }
    touched.add(o.account)
    const total = totalAt(o.side, o.quantity, price, o.rate)
    const shortfall = o.side === "BUY" ? Math.max(0, total - o.escrow) : 0
    if (shortfall > a.wallet) {
      // a STOP BUY triggered above its stop that the wallet cannot top up: REJECTED, its escrow back
      count("trigger rejected")
      releaseUnfilled(a, o)
      Object.assign(o, { status: "REJECTED", rejectionCode: "INSUFFICIENT_FUNDS" })
      emit(m, "order.rejected")
      emit(m, "trade.rejected")
      continue
    }
    count(shortfall > 0 ? "trigger shortfall" : "trigger")
    a.wallet -= shortfall
    a.escrow += shortfall
    Object.assign(o, { status: "PENDING", price, total, escrow: o.escrow + shortfall })
    emit(m, "order.pending")
  }
  return touched
}
