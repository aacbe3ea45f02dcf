/**
 * The model and the wire of the API model test (api.model.test.ts): what a partner's sandbox should look like after
 * each command, written from the spec and the decisions, not from the engine's code, and the plumbing that drives a
 * real engine over HTTP (node:http on a free port, `fetch`) and a local webhook receiver that fails on demand.
 *
 * The model owns: the master wallet and every sub-account's wallet, escrow, holdings and reserved units; its status
 * (active, frozen by whom, closed) and KYC; the quotes issued (price, FX rate, expiry, used); the orders and their states;
 * the simulated clock; and one webhook's delivery records (attempts, retry times, outcomes, D-055 disabling). The
 * resting orders' prices, triggers, deadlines and jobs are resting-model.ts's.
 * Money is integer cents computed here with BigInt (gross = quantity x price / FX rate, fee 0.75%, both rounded half
 * up: spec "Fees"), independently of engine/domain/money.ts, so an arithmetic slip in the engine disagrees with it.
 */
import { createHmac } from "node:crypto"
import { createServer, type Server } from "node:http"
import { expect } from "vitest"
import { type RunningServer, startServer } from "../../engine/http/node-server.ts"
import type { EngineConfig } from "../../engine/runtime.ts"
import type { CrashPoint } from "../../engine/sim/crashes.ts"
import { makeCrashSwitch } from "./crash-wire.ts"
import { contractProblems } from "../http/harness.ts"

export const ADMIN_TOKEN = "model-admin"
/** Monday 2026-11-23 08:00 UTC: NSE (09:00-15:00 Nairobi, UTC+3) is open until 12:00 UTC. */
export const START = Date.parse("2026-11-23T08:00:00.000Z")
/** What a new partner's sandbox master wallet holds (USD 100,000). */
export const SEED_CENTS = 10_000_000
/** Spec "Quotes": a quote lives 60 s and is single-use. */
export const QUOTE_TTL_MS = 60_000
/** Spec "Events", delivery rules 1 and 2: 6 attempts, the later ones 5 s, 30 s, 5 min, 30 min, 2 h after the previous. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [5_000, 30_000, 300_000, 1_800_000, 7_200_000]
export const MAX_ATTEMPTS = 6
/** D-055: this many exhausted deliveries in a row disable the webhook. */
export const DISABLE_AFTER = 20
export const WEBHOOK_SECRET = "whsec_model_0123456789"
/** The events the model's webhook subscribes to: every one the commands can cause, and whose cause the model knows. */
export const WEBHOOK_EVENTS = [
  "order.pending",
  "order.filled",
  "trade.settled",
  "order.rejected",
  "trade.rejected",
  "order.cancelled",
  "order.replaced",
  "deposit.confirmed",
  "withdraw.confirmed",
  "account.frozen",
  "account.closed",
  "kyc.updated"
] as const

// ---------------------------------------------------------------------------------------------------------------
// Money (spec "Fees": 0.75% of the gross, rounded to the cent; USD gross = local notional / FX rate)

/** a / b rounded half up, for a, b >= 0. */
const divHalfUp = (a: bigint, b: bigint) => (2n * a + b) / (2n * b)
/** Wire decimals to scaled integers (prices have 4 decimals, FX rates 6). */
export const price4 = (x: number) => Math.round(x * 10_000)
export const rate6 = (x: number) => Math.round(x * 1_000_000)
export const cents = (x: number) => Math.round(x * 100)
/** USD cents of a local notional (sum of quantity x price4) at an FX rate (local units per USD, rate6). */
export const grossOf = (notional: bigint, rate: number) => Number(divHalfUp(notional * 1_000_000n * 100n, BigInt(rate) * 10_000n))
export const feeOf = (gross: number) => Number(divHalfUp(BigInt(gross) * 75n, 10_000n))

// ---------------------------------------------------------------------------------------------------------------
// The model

export interface AccountModel {
  /** `master` or the sub-account id. */
  readonly id: string
  status: "active" | "frozen" | "closed"
  frozenBy: "partner" | "compliance" | null
  kyc: "NONE" | "PENDING" | "VERIFIED" | "REJECTED"
  /** Cents: spendable wallet, and what open BUY orders hold in escrow. */
  wallet: number
  escrow: number
  /** SCOM units held, and those reserved by open SELL orders. */
  shares: number
  reserved: number
}

export interface QuoteModel {
  readonly quoteId: string
  readonly account: string
  readonly side: "BUY" | "SELL"
  readonly quantity: number
  readonly price: number
  readonly rate: number
  /** BUY: gross + fee; SELL: gross - fee (cents). */
  readonly total: number
  readonly expiresAt: number
  used: boolean
  /** Dropped by the store once past its keep (E-400): a trade on it is QUOTE_NOT_FOUND, "expired and collected". */
  collected?: boolean
}

/** How many of the partner's quotes past their keep one new quote collects, and how long a used or expired one is kept. */
const QUOTES_COLLECTED_PER_ISSUE = 4
const QUOTE_KEEP_AFTER_EXPIRY_MS = 60_000

/**
 * What issuing a quote at `now` collects (E-400, E-299): up to 4 of the partner's quotes whose keep (expiry + 60 s,
 * used or not) has come, earliest keep first, then by id.
 */
export const collectQuotes = (quotes: ReadonlyArray<QuoteModel>, now: number) => {
  const keep = (q: QuoteModel) => q.expiresAt + QUOTE_KEEP_AFTER_EXPIRY_MS
  const due = quotes.filter((q) => q.collected !== true && keep(q) <= now)
  due.sort((a, b) => keep(a) - keep(b) || (a.quoteId < b.quoteId ? -1 : a.quoteId > b.quoteId ? 1 : 0))
  for (const q of due.slice(0, QUOTES_COLLECTED_PER_ISSUE)) q.collected = true
}

/** The engine's canonical states: an expired order shows `status: CANCELLED`, `canonicalStatus: EXPIRED` (D-283). */
export type OrderStatus = "WORKING" | "PENDING" | "PARTIALLY_FILLED" | "FILLED" | "REJECTED" | "CANCELLED" | "EXPIRED"

export interface OrderModel {
  readonly orderId: string
  readonly account: string
  readonly side: "BUY" | "SELL"
  readonly orderType: "MARKET" | "LIMIT" | "STOP" | "STOP_LIMIT"
  /** A replace may change the quantity and the limit or stop of a WORKING order (D-284). */
  quantity: number
  limit: number | null
  stop: number | null
  readonly timeInForce: "DAY" | "GTD" | "GTC" | null
  /** When a DAY or GTD order expires (epoch ms); null for GTC and MARKET orders. */
  readonly deadline: number | null
  /** `priceAtOrder` (price4): the quote's (MARKET), the reference price while WORKING (E-160), the trigger's after. */
  price: number
  readonly rate: number
  /** `totalAmount` (cents) at `price`. */
  total: number
  status: OrderStatus
  filled: number
  /** Sum of quantity x price4 over the fills (local notional). */
  notional: bigint
  /** Cents a BUY still holds in escrow. */
  escrow: number
  cancelReason: string | null
  rejectionCode: string | null
}

/** A job the engine booked for an order (E-161): its trigger look at a refresh, or its expiry at its deadline. */
export interface OrderJob {
  readonly at: number
  /** Booking order: jobs due at one instant run in it (E-251). */
  readonly seq: number
  readonly kind: "trigger" | "expire"
  readonly orderId: string
}

export interface DeliveryModel {
  readonly event: string
  readonly createdAt: number
  attempts: number
  success: boolean
  statusCode: number | null
  lastAttemptAt: number | null
  /** When the next attempt is due; null once delivered or failed for good. */
  nextDue: number | null
}

export interface Model {
  now: number
  readonly accounts: Map<string, AccountModel>
  /** Sub-account ids in creation order (commands pick them by index). */
  readonly users: Array<string>
  readonly quotes: Array<QuoteModel>
  readonly orders: Array<OrderModel>
  readonly deliveries: Array<DeliveryModel>
  /** SCOM pins in call order, each from the instant it takes effect (D-240); the run's set-up pins one at START. */
  readonly pins: Array<{ readonly effectiveAt: number; readonly price: number }>
  readonly jobs: Array<OrderJob>
  jobSeq: number
  /** What the receiver answers now. */
  receiverStatus: number
  webhookActive: boolean
  consecutiveFailures: number
}

export const freshModel = (setUpPrice: number): Model => ({
  now: START,
  accounts: new Map([["master", { id: "master", status: "active", frozenBy: null, kyc: "VERIFIED", wallet: SEED_CENTS, escrow: 0, shares: 0, reserved: 0 }]]),
  users: [],
  quotes: [],
  orders: [],
  deliveries: [],
  pins: [{ effectiveAt: START, price: setUpPrice }],
  jobs: [],
  jobSeq: 0,
  receiverStatus: 200,
  webhookActive: true,
  consecutiveFailures: 0
})

export const accountOf = (m: Model, id: string) => m.accounts.get(id) as AccountModel

/** The model's event: a delivery record is due at once on the active webhook (spec "Events", rule 1). */
export const emit = (m: Model, event: (typeof WEBHOOK_EVENTS)[number]) => {
  if (!m.webhookActive) return
  m.deliveries.push({ event, createdAt: m.now, attempts: 0, success: false, statusCode: null, lastAttemptAt: null, nextDue: m.now })
}

/** NSE is open on weekdays 06:00-12:00 UTC (the runs stay within the first two days of the week: no holidays). */
export const marketOpen = (t: number) => {
  const d = new Date(t)
  const minutes = d.getUTCHours() * 60 + d.getUTCMinutes()
  return d.getUTCDay() >= 1 && d.getUTCDay() <= 5 && minutes >= 360 && minutes < 720
}

/** The earliest due attempt at or before `until`, if any. */
export const nextDueBy = (m: Model, until: number): number | undefined => {
  let due: number | undefined
  for (const d of m.deliveries) if (d.nextDue !== null && d.nextDue <= until && (due === undefined || d.nextDue < due)) due = d.nextDue
  return due
}

/** Every attempt due at `at` is made and answered with the receiver's current status. */
export const attemptAt = (m: Model, at: number) => {
  let made = 0
  for (const d of m.deliveries) {
    if (d.nextDue === null || d.nextDue > at) continue
    made++
    d.attempts++
    d.lastAttemptAt = at
    d.statusCode = m.receiverStatus
    const ok = m.receiverStatus >= 200 && m.receiverStatus < 300
    d.success = ok
    d.nextDue = ok || d.attempts >= MAX_ATTEMPTS ? null : at + (RETRY_DELAYS_MS[d.attempts - 1] ?? 0)
    if (ok) m.consecutiveFailures = 0
    else if (d.attempts >= MAX_ATTEMPTS) {
      m.consecutiveFailures++
      if (m.consecutiveFailures >= DISABLE_AFTER) m.webhookActive = false
    }
  }
  return made
}

/**
 * Whether the attempts due at `at` would disable the webhook (D-055): the receiver fails them and enough of them are
 * last attempts. The engine writes an attempt's outcome after the receiver answers, while its clock goes on running
 * the jobs due at the same instant: an event one of them fires then may or may not find the webhook active (E-252).
 */
export const wouldDisableAt = (m: Model, at: number) => {
  if (!m.webhookActive || (m.receiverStatus >= 200 && m.receiverStatus < 300)) return false
  const last = m.deliveries.filter((d) => d.nextDue !== null && d.nextDue <= at && d.attempts + 1 >= MAX_ATTEMPTS).length
  return last > 0 && m.consecutiveFailures + last >= DISABLE_AFTER
}

/** A delivery record as the wire shows it, minus what the model cannot know (ids, the real latency). */
export const recordOf = (d: {
  event: string
  attempts: number
  success: boolean
  statusCode: number | null
  deliveredAt: string
  nextAttemptAt: string | null
}) => JSON.stringify([d.event, d.attempts, d.success, d.statusCode, d.deliveredAt, d.nextAttemptAt])

/** Records as the wire lists them: a delivery whose first attempt is still to come is not listed yet. */
export const expectedRecords = (m: Model) =>
  m.deliveries
    .filter((d) => d.attempts > 0)
    .map((d) =>
      recordOf({
        event: d.event,
        attempts: d.attempts,
        success: d.success,
        statusCode: d.statusCode,
        deliveredAt: new Date(d.lastAttemptAt ?? d.createdAt).toISOString(),
        nextAttemptAt: d.nextDue === null ? null : new Date(d.nextDue).toISOString()
      })
    )
    .sort()

// ---------------------------------------------------------------------------------------------------------------
// The wire

export interface Reply {
  readonly status: number
  readonly body: any
}

/** How many answers of each kind (command and status) a whole property run saw: the generator's reach. */
export const outcomes = new Map<string, number>()
export const count = (key: string) => outcomes.set(key, (outcomes.get(key) ?? 0) + 1)

/** A webhook receiver on a free loopback port that answers whatever status it is told, and keeps what it got. */
export const startReceiver = async () => {
  const received: Array<{ body: string; signature: string | undefined }> = []
  let status = 200
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), signature: req.headers["x-service-signature"] as string | undefined })
      res.writeHead(status, { "content-type": "text/plain" })
      res.end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    setStatus: (s: number) => {
      status = s
    },
    /** Every body received was signed with the webhook's secret (spec "Events": HMAC-SHA256 hex of the bytes). */
    checkSignatures: () => {
      for (const r of received) expect(r.signature, "webhook signature").toBe(createHmac("sha256", WEBHOOK_SECRET).update(r.body, "utf8").digest("hex"))
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>

export interface EngineOptions {
  readonly seed: number
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
}

let idempotencySeq = 0

/** An engine on a free port, a partner of it, and calls over the wire whose every answer is checked against the contract. */
export const startWire = async (options: EngineOptions) => {
  // On the memory store the engine can crash and restart on its committed state (crash-wire.ts).
  const crash = options.store === "memory" ? makeCrashSwitch() : undefined
  const config: EngineConfig = {
    store: options.store,
    databaseUrl: options.databaseUrl,
    clock: "manual",
    start: START,
    seed: options.seed,
    desk: "manual",
    adminToken: ADMIN_TOKEN,
    // E-201: a run's few hundred requests fall in one virtual minute; tier limits are tested elsewhere.
    rateLimit: "off",
    ...(crash === undefined ? {} : { memory: crash.memory, logger: crash.logger })
  }
  let server: RunningServer = await startServer(config, 0)
  const restart = async () => {
    await server.stop({ idleLingerMs: 0 })
    server = await startServer(config, 0)
  }
  const sendRaw = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    const parsed: unknown = text === "" ? null : response.headers.get("content-type")?.startsWith("application/json") ? JSON.parse(text) : text
    return { status: response.status, headers: response.headers, body: parsed, text }
  }
  const checked = (method: string, path: string, headers: Record<string, string>, raw: Awaited<ReturnType<typeof sendRaw>>): Reply => {
    const { text, ...reply } = raw
    const problems = contractProblems(method, path, headers, reply)
    if (problems.length > 0) throw new Error(`${method} ${path} ${reply.status} breaks the contract:\n  ${problems.join("\n  ")}\n  ${text.slice(0, 500)}`)
    return reply
  }
  const send = async (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> =>
    checked(method, path, headers, await sendRaw(method, path, headers, body))
  /** A mutation under the crash the model armed, if any: the answer the client ends with, after a restart and a resend. */
  const sendCrashing = async (method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply> => {
    if (crash === undefined || !crash.pending()) return send(method, path, headers, body)
    const again = () => sendRaw(method, path, headers, body)
    const { reply, fired } = await crash.through(again, again, restart)
    count(fired === undefined ? "crash not reached" : `crash ${fired}`)
    return checked(method, path, headers, reply)
  }
  const admin = (method: string, path: string, body?: unknown) => send(method, path, { authorization: `Bearer ${ADMIN_TOKEN}` }, body)
  const made = await admin("POST", "/_sim/partners", { businessName: "Model Partner", email: "model@partner.test" })
  if (made.status !== 201) throw new Error(`partner not created: ${JSON.stringify(made.body)}`)
  const key = made.body.sandboxKey as string
  /** The partner's successful mutations, with their keys and answers (the idempotency commands resend them). */
  const mutations: Array<Mutation> = []
  let now = START
  const partner = async (method: string, path: string, body?: unknown, idempotencyKey?: string) => {
    const mutation = method !== "GET"
    const usedKey = idempotencyKey ?? `model-key-${++idempotencySeq}`
    const headers = { "x-api-key": key, ...(mutation ? { "idempotency-key": usedKey } : {}) }
    const reply = await (mutation ? sendCrashing : send)(method, `/api/sandbox/v1/partner${path}`, headers, body)
    if (mutation && idempotencyKey === undefined && reply.status >= 200 && reply.status < 300)
      mutations.push({ method, path, body, key: usedKey, at: now, status: reply.status, answer: reply.body })
    return reply
  }
  return {
    url: server.url,
    admin,
    partner,
    mutations,
    /** The partner's next mutation crashes at `point` (memory store only: false on postgres, where nothing is armed). */
    crashNext: (point: CrashPoint): boolean => {
      crash?.crashNext(point)
      return crash !== undefined
    },
    /** The model's clock, so each mutation knows when it was made (keys are kept 24 h, D-037). */
    setNow: (t: number) => {
      now = t
    },
    // Every answer has been read when a run stops its engine: no request is on its way, so no linger (E-278).
    stop: () => server.stop({ idleLingerMs: 0 })
  }
}

export interface Mutation {
  readonly method: string
  readonly path: string
  readonly body: unknown
  readonly key: string
  readonly at: number
  readonly status: number
  readonly answer: unknown
}
export type Wire = Awaited<ReturnType<typeof startWire>>
