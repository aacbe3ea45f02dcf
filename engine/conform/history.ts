/**
 * A run's history and its verdict as a whole (issue 23, part 3): every request and answer with the instants it was
 * sent and answered, every webhook delivery received, every stream message, as JSON lines; and the checker that
 * judges them together, as Jepsen's Elle judges a history rather than one answer at a time. Per wallet no negative
 * balance; per Idempotency-Key the same answer every time; per eventId the same bytes on every delivery; per
 * rate-limit window never more admitted than its limit and `Remaining` never rising; per order (REST answers) no move
 * out of a terminal state. Resets split it into worlds; a logical clock orders what one instant cannot (E-287).
 * Owns the history's format and the rules. Does not own recording (target.ts) nor the command (engine/cli).
 */
import type { CheckResult, RunReport, TimelineEntry } from "../report/model.ts"

/** One request and its answer. `caller` names the key without printing it (environment and its last 4 characters). */
export interface ExchangeEntry {
  readonly kind: "exchange"
  readonly sentAt: string
  readonly answeredAt: string
  /**
   * The order of the send and of the answer among every send and answer recorded (a logical clock): what came first
   * when a frozen or coarse clock gives both the same instant. Optional in a history recorded elsewhere.
   */
  readonly sentSeq?: number | undefined
  readonly answeredSeq?: number | undefined
  readonly caller: string
  readonly method: string
  readonly path: string
  readonly idempotencyKey?: string | undefined
  readonly requestBody?: string | undefined
  readonly status: number
  readonly rate?: { readonly limit: number; readonly remaining: number; readonly reset: number } | undefined
  readonly body: string
}

/** A webhook delivery received, its exact bytes. */
export interface DeliveryEntry {
  readonly kind: "delivery"
  readonly at: string
  readonly eventId: string
  readonly raw: string
}

/** A stream message read. */
export interface StreamEntry {
  readonly kind: "stream"
  readonly at: string
  readonly caller: string
  readonly id?: string | undefined
  readonly event?: string | undefined
  readonly data?: unknown
}

/**
 * The target started over (`POST /_sim/reset`): a new world, whose keys, ids and windows may repeat the old one's.
 * Nothing before it is compared with anything after it.
 */
export interface ResetEntry {
  readonly kind: "reset"
  readonly at: string
}

export type HistoryEntry = ExchangeEntry | DeliveryEntry | StreamEntry | ResetEntry

export type Rule = "no-negative-balance" | "idempotent-answer" | "delivery-bytes" | "rate-window" | "order-transition"

export const RULES: ReadonlyArray<{ readonly rule: Rule; readonly name: string }> = [
  { rule: "no-negative-balance", name: "per wallet: no answer shows a negative balance or available amount" },
  { rule: "idempotent-answer", name: "per Idempotency-Key: one request answered alike every time (a second execution is a double debit)" },
  { rule: "delivery-bytes", name: "per eventId: the same bytes on every delivery" },
  { rule: "rate-window", name: "per rate-limit window: at most its limit admitted, X-RateLimit-Remaining never rising" },
  { rule: "order-transition", name: "per order, as REST answers show it: no move out of a terminal state (REJECTED, CANCELLED, EXPIRED)" }
]

export interface Violation {
  readonly rule: Rule
  readonly message: string
  /** The entries (indexes in the history) that make it, in order. */
  readonly entries: ReadonlyArray<number>
}

/** Reads JSON lines; a line that is not an entry is an error naming it. */
export const parseHistory = (text: string): ReadonlyArray<HistoryEntry> =>
  text
    .split("\n")
    .map((line, n) => ({ line: line.trim(), n }))
    .filter(({ line }) => line !== "")
    .map(({ line, n }) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        throw new Error(`line ${n + 1} is not JSON`)
      }
      const kind = (parsed as { kind?: unknown } | null)?.kind
      if (kind !== "exchange" && kind !== "delivery" && kind !== "stream" && kind !== "reset")
        throw new Error(`line ${n + 1}: kind must be exchange, delivery, stream or reset`)
      return parsed as HistoryEntry
    })

const jsonOf = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The world each entry belongs to: how many resets came before it. */
const worlds = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<number> => {
  let world = 0
  return history.map((e) => (e.kind === "reset" ? ++world : world))
}

const exchanges = (history: ReadonlyArray<HistoryEntry>) => {
  const world = worlds(history)
  return history.flatMap((e, i) => (e.kind === "exchange" ? [{ e, i, w: world[i] ?? 0 }] : []))
}

const groupBy = <T>(items: ReadonlyArray<T>, key: (t: T) => string | undefined): Map<string, Array<T>> => {
  const groups = new Map<string, Array<T>>()
  for (const item of items) {
    const k = key(item)
    if (k === undefined) continue
    groups.set(k, [...(groups.get(k) ?? []), item])
  }
  return groups
}

const negativeBalances = (history: ReadonlyArray<HistoryEntry>): Array<Violation> =>
  exchanges(history).flatMap(({ e, i }) => {
    const body = jsonOf(e.body) as { balance?: unknown; available?: unknown } | undefined
    if (e.status >= 300 || typeof body !== "object" || body === null) return []
    const negative = (["balance", "available"] as const).filter((f) => typeof body[f] === "number" && (body[f] as number) < 0)
    return negative.length === 0
      ? []
      : [
          {
            rule: "no-negative-balance" as const,
            message: `${e.method} ${e.path} (${e.caller}) shows ${negative.map((f) => `${f} ${String(body[f])}`).join(", ")} at ${e.answeredAt}`,
            entries: [i]
          }
        ]
  })

const idempotentAnswers = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const keyed = exchanges(history).filter(({ e }) => e.idempotencyKey !== undefined && e.method !== "GET" && e.status < 300)
  const groups = groupBy(keyed, ({ e, w }) => `${w} ${e.caller} ${e.idempotencyKey} ${e.method} ${e.path} ${e.requestBody ?? ""}`)
  return [...groups.values()].flatMap((group) => {
    const first = group[0]
    const other = group.find(({ e }) => e.status !== first?.e.status || e.body !== first?.e.body)
    if (first === undefined || other === undefined) return []
    return [
      {
        rule: "idempotent-answer" as const,
        message: `Idempotency-Key ${first.e.idempotencyKey} (${first.e.caller}, ${first.e.method} ${first.e.path}, same body) was answered ${first.e.status} at ${first.e.answeredAt} and ${other.e.status} with another body at ${other.e.answeredAt}: executed twice`,
        entries: [first.i, other.i]
      }
    ]
  })
}

const deliveryBytes = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const world = worlds(history)
  const deliveries = history.flatMap((e, i) => (e.kind === "delivery" ? [{ e, i }] : []))
  return [...groupBy(deliveries, ({ e, i }) => `${world[i]} ${e.eventId}`).values()].flatMap((group) => {
    const first = group[0]
    const other = group.find(({ e }) => e.raw !== first?.e.raw)
    if (first === undefined || other === undefined) return []
    return [
      {
        rule: "delivery-bytes" as const,
        message: `event ${first.e.eventId} was delivered with other bytes at ${other.e.at} than at ${first.e.at}`,
        entries: [first.i, other.i]
      }
    ]
  })
}

/** Whether `a` was answered before `b` was sent: by the logical clock when both have it, else strictly by instants. */
const answeredBefore = (a: ExchangeEntry, b: ExchangeEntry): boolean =>
  a.answeredSeq !== undefined && b.sentSeq !== undefined ? a.answeredSeq < b.sentSeq : a.answeredAt < b.sentAt

/**
 * Within one window (caller and X-RateLimit-Reset): `Remaining` may not rise from an answer to a request sent after
 * it came (requests in flight together may be answered in any order), and no more than `Limit` are admitted.
 */
const rateWindows = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const limited = exchanges(history).filter(({ e }) => e.rate !== undefined)
  return [...groupBy(limited, ({ e, w }) => `${w} ${e.caller} ${e.rate?.reset}`).values()].flatMap((group) => {
    const found: Array<Violation> = []
    for (const [n, b] of group.entries()) {
      const rose = group.slice(0, n).find(({ e: a }) => answeredBefore(a, b.e) && (b.e.rate?.remaining ?? 0) > (a.rate?.remaining ?? 0))
      if (rose !== undefined) {
        found.push({
          rule: "rate-window",
          message: `X-RateLimit-Remaining rose from ${rose.e.rate?.remaining} (${rose.e.answeredAt}) to ${b.e.rate?.remaining} (${b.e.answeredAt}) within the window resetting at ${b.e.rate?.reset} (${b.e.caller})`,
          entries: [rose.i, b.i]
        })
        break
      }
    }
    const admitted = group.filter(({ e }) => e.status !== 429)
    const limit = group[0]?.e.rate?.limit ?? Number.POSITIVE_INFINITY
    if (admitted.length > limit)
      found.push({
        rule: "rate-window",
        message: `${admitted.length} requests admitted in the window resetting at ${group[0]?.e.rate?.reset} (${group[0]?.e.caller}); its limit is ${limit}`,
        entries: admitted.slice(limit).map(({ i }) => i)
      })
    return found
  })
}

const TERMINAL = new Set(["REJECTED", "CANCELLED", "EXPIRED"])

/**
 * Every (orderId, status) a REST answer shows: an order or a list of orders. Deliveries and stream messages tell of
 * past moments (a retried order.pending may arrive after order.filled; a resumed stream replays), so their order is
 * not the order's.
 */
const orderStates = (e: ExchangeEntry): ReadonlyArray<{ orderId: string; status: string }> => {
  const payload = e.status < 300 ? jsonOf(e.body) : undefined
  const one = (o: unknown) => {
    const order = o as { orderId?: unknown; status?: unknown; canonicalStatus?: unknown } | null
    const status = order?.canonicalStatus ?? order?.status
    return typeof order?.orderId === "string" && typeof status === "string" ? [{ orderId: order.orderId, status }] : []
  }
  const list = (payload as { orders?: unknown } | null)?.orders
  return Array.isArray(list) ? list.flatMap(one) : one(payload)
}

const orderTransitions = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const seen = exchanges(history).flatMap(({ e, i, w }) => orderStates(e).map((s) => ({ ...s, i, w })))
  return [...groupBy(seen, (s) => `${s.w} ${s.orderId}`).values()].flatMap((states) => {
    for (const [n, b] of states.entries()) {
      const a = states[n - 1]
      if (a === undefined || a.status === b.status) continue
      if (TERMINAL.has(a.status))
        return [{ rule: "order-transition" as const, message: `order ${b.orderId} moved ${a.status} -> ${b.status}`, entries: [a.i, b.i] }]
    }
    return []
  })
}

/** Every rule over the whole history. */
export const checkHistory = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<Violation> => [
  ...negativeBalances(history),
  ...idempotentAnswers(history),
  ...deliveryBytes(history),
  ...rateWindows(history),
  ...orderTransitions(history)
]

const timelineOf = (history: ReadonlyArray<HistoryEntry>, indexes: ReadonlyArray<number>): Array<TimelineEntry> =>
  indexes.flatMap((i): Array<TimelineEntry> => {
    const e = history[i]
    if (e === undefined) return []
    if (e.kind === "delivery") return [{ at: e.at, kind: "delivery", text: `#${i + 1} delivery ${e.eventId} ${e.raw.slice(0, 200)}` }]
    if (e.kind === "stream") return [{ at: e.at, kind: "event", text: `#${i + 1} stream ${e.event ?? ""} ${e.id ?? ""}` }]
    if (e.kind === "reset") return [{ at: e.at, kind: "clock", text: `#${i + 1} the target started over` }]
    return [
      {
        at: e.sentAt,
        kind: "request",
        text: `#${i + 1} ${e.method} ${e.path} (${e.caller})${e.idempotencyKey === undefined ? "" : ` Idempotency-Key ${e.idempotencyKey}`}`
      },
      {
        at: e.answeredAt,
        kind: "response",
        text: `#${i + 1} ${e.status}${e.rate === undefined ? "" : ` Remaining ${e.rate.remaining}/${e.rate.limit} Reset ${e.rate.reset}`} ${e.body.slice(0, 200)}`
      }
    ]
  })

/** One check per rule: failed with its violations on a timeline and the replay command, else passed. */
export const historyChecks = (history: ReadonlyArray<HistoryEntry>, replay: string): ReadonlyArray<CheckResult> => {
  const violations = checkHistory(history)
  return RULES.map(({ rule, name }): CheckResult => {
    const mine = violations.filter((v) => v.rule === rule)
    if (mine.length === 0) return { suite: "history", name: `history ${rule}: ${name}`, status: "passed", durationMs: 0 }
    return {
      suite: "history",
      name: `history ${rule}: ${name}`,
      status: "failed",
      durationMs: 0,
      message: mine.map((v) => v.message).join("; "),
      replay,
      timeline: mine.flatMap((v) => [
        { at: timelineOf(history, v.entries)[0]?.at ?? "", kind: "note" as const, text: `VIOLATION ${v.message}` },
        ...timelineOf(history, v.entries)
      ])
    }
  })
}

/** The report of `sokoni history check FILE`. */
export const historyReport = (file: string, history: ReadonlyArray<HistoryEntry>, replay: string): RunReport => {
  const instants = history.map((e) => (e.kind === "exchange" ? e.sentAt : e.at)).sort()
  return {
    tool: replay,
    seed: 0,
    target: file,
    startedAt: instants[0] ?? "",
    finishedAt: instants[instants.length - 1] ?? "",
    checks: historyChecks(history, replay),
    notes: [`${history.length} history entries checked as a whole`]
  }
}
