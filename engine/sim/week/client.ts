/**
 * How the simulated week talks to the engine: every request goes through the gateway (the real command path: guards,
 * idempotency, handlers, audit, trace), in-process, without sockets or Web Request objects; and every partner-API
 * exchange and webhook delivery goes into the run's history (engine/conform/history*.ts's format), stamped with the
 * engine's own clock, so `sokoni history check` can judge the week as it judges a conform run.
 * Owns the request shape, the history entries and the counters. Does not own what is asked (drive.ts).
 */
import { Effect } from "effect"
import type { HistoryEntry } from "../../conform/history-entries.ts"
import type { EngineRequest } from "../../http/exchange.ts"
import { Gateway } from "../../http/gateway.ts"
import { EngineClock, isoAt } from "../clock.ts"
import { Scheduler } from "../scheduler.ts"
import type { SimReceivers } from "../outbound.ts"

export const WEEK_ADMIN_TOKEN = "week-admin-token"

export interface Answer {
  readonly status: number
  readonly body: string
  readonly json: unknown
}

export interface WeekCounters {
  requests: number
  /** Webhook requests that reached a receiver (answered or timed out). */
  received: number
  /** Refused partner requests (4xx) by error code: a week's ordinary refusals (funds, holdings, closed market). */
  readonly refusals: Map<string, number>
  /** 5xx answers and anything else a healthy engine never gives; each becomes a problem of the verdict. */
  readonly problems: Array<string>
}

const parse = (text: string): unknown => {
  if (text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const numberHeader = (headers: Readonly<Record<string, string>>, name: string) => {
  const raw = headers[name]
  return raw === undefined ? undefined : Number(raw)
}

/** The rate-limit headers of an answer, as the history's `rate` (conform/target.ts rateOf reads the same three). */
const rateOf = (headers: Readonly<Record<string, string>>) => {
  const limit = numberHeader(headers, "x-ratelimit-limit")
  const remaining = numberHeader(headers, "x-ratelimit-remaining")
  const reset = numberHeader(headers, "x-ratelimit-reset")
  return limit === undefined || remaining === undefined || reset === undefined ? undefined : { limit, remaining, reset }
}

type Envelope = { eventId?: unknown; event?: unknown; data?: Record<string, unknown> } | null

/** An envelope's two first fields, as the engine writes them (events/event-log.ts envelopeOf): ids and names need no escapes. */
const ENVELOPE_HEAD = /^\{"eventId":"([^"\\]*)","event":"([^"\\]*)"/

/**
 * What the driver reads of a delivery: its eventId and event, and the data of an order.filled (how a partner learns
 * what it bought). Only those are parsed: the others' ids are read off the head of the body, which saves a
 * 10,000-order week about 1% of its CPU. A body of another form is parsed whole.
 */
const envelopeOf = (body: string): Envelope => {
  const head = ENVELOPE_HEAD.exec(body)
  if (head === null || head[2] === "order.filled") return parse(body) as Envelope
  return { eventId: head[1], event: head[2] }
}

/**
 * The week's client: `call` sends one request through the gateway and records it; `drain` takes what the simulated
 * receivers got since the last drain and records each request that reached a receiver (an unreachable attempt
 * reached nobody). Taking after every action keeps the receivers' list short (it is scanned when it overflows).
 */
export const makeClient = (history: Array<HistoryEntry>, receivers: SimReceivers, counters: WeekCounters) =>
  Effect.gen(function* () {
    const gateway = yield* Gateway
    const clock = yield* EngineClock
    const scheduler = yield* Scheduler
    let tick = 0
    let keys = 0
    // Made once (Effect.fnUntraced), not per request: see sim/scheduler.ts.
    /** `mayRefuse` false: a refusal (4xx) is the driver's bug, not the week's (set-up, the desk, the clock): a problem. */
    const call = Effect.fnUntraced(function* (method: string, target: string, key: string | undefined, body?: unknown, mayRefuse = false) {
      const q = target.indexOf("?")
      const path = q === -1 ? target : target.slice(0, q)
      const search = q === -1 ? "" : target.slice(q)
      const admin = path.startsWith("/_sim/")
      const idempotencyKey = method === "GET" || admin ? undefined : `week-key-${String(++keys).padStart(8, "0")}`
      const requestBody = body === undefined ? undefined : JSON.stringify(body)
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (admin) headers.authorization = `Bearer ${WEEK_ADMIN_TOKEN}`
      if (key !== undefined) headers["x-api-key"] = key
      if (idempotencyKey !== undefined) headers["idempotency-key"] = idempotencyKey
      const request: EngineRequest = { method, path, query: new URLSearchParams(search), search, headers, body: requestBody, remoteAddress: "127.0.0.1" }
      const sentAt = isoAt(yield* clock.nowHere())
      const sentSeq = ++tick
      const response = yield* gateway.handle(request)
      counters.requests += 1
      if (response.status >= 500) counters.problems.push(`${method} ${target} answered ${response.status}: ${response.body.slice(0, 300)}`)
      if (!mayRefuse && response.status >= 400) counters.problems.push(`${method} ${target} answered ${response.status}: ${response.body.slice(0, 300)}`)
      if (!admin && response.status >= 400 && response.status < 500) {
        const code = String((parse(response.body) as { error?: { code?: unknown } } | null)?.error?.code ?? response.status)
        counters.refusals.set(code, (counters.refusals.get(code) ?? 0) + 1)
      }
      if (!admin)
        history.push({
          kind: "exchange",
          sentAt,
          answeredAt: isoAt(yield* clock.nowHere()),
          sentSeq,
          answeredSeq: ++tick,
          caller: `${path.includes("/sandbox/") ? "sandbox" : "production"}:…${(key ?? "").slice(-4)}`,
          method,
          path: target,
          idempotencyKey,
          requestBody,
          status: response.status,
          rate: rateOf(response.headers),
          body: response.body
        })
      // Parsed when asked for: the driver reads a few answers (a quote's id, a created partner), not the others.
      let json: unknown
      let parsed = false
      const text = response.body
      return {
        status: response.status,
        body: text,
        get json() {
          if (!parsed) {
            json = parse(text)
            parsed = true
          }
          return json
        }
      } satisfies Answer
    })
    /** The deliveries received since the last drain, each parsed once for whoever reads them. */
    const drain = Effect.sync(() =>
      receivers.take().flatMap((r) => {
        if (r.result.kind === "unreachable") return []
        const envelope = envelopeOf(r.body)
        history.push({ kind: "delivery", at: isoAt(r.at), eventId: String(envelope?.eventId ?? ""), raw: r.body })
        counters.received += 1
        return [{ status: r.result.kind === "answered" ? r.result.status : 0, envelope }]
      })
    )
    /**
     * Moves the engine's clock to `at`, running every job due on the way at its own instant: what the control API's
     * advance does after checking its body, called directly (one call per action of the week; the gateway would only
     * add its guards to each).
     */
    const advanceTo = (at: number) => scheduler.advance({ to: at })
    return { call, drain, advanceTo }
  })

export type WeekClient = Effect.Success<ReturnType<typeof makeClient>>
