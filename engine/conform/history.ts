/**
 * A run's history and its verdict as a whole (issue 23, part 3): every request and answer with the instants it was
 * sent and answered, every webhook delivery received, every stream message, as JSON lines; and the checker that
 * judges them together, as Jepsen's Elle judges a history rather than one answer at a time. Per wallet no negative
 * balance and the balance equal to its ledger (history-money.ts); per Idempotency-Key the same answer every time; per
 * eventId the same bytes on every delivery; per rate-limit window never more admitted than its limit and `Remaining`
 * never rising; per order no move out of a terminal state, and REST, webhooks and stream agreeing (history-orders.ts);
 * every stamp of "now" within its exchange on the target's clock (history-time.ts).
 * Resets split it into worlds; a logical clock orders what one instant cannot (E-287).
 * Owns the rule list, the key, delivery and rate-limit rules, and the verdict's report rows. Does not own the format
 * (history-entries.ts), recording (target.ts) nor the command (engine/cli).
 */
import type { CheckResult, RunReport, TimelineEntry } from "../report/model.ts"
import {
  answeredBefore,
  type ExchangeEntry,
  exchanges,
  groupBy,
  type HistoryEntry,
  type Rule,
  type Violation,
  withParsedBodies,
  worlds
} from "./history-entries.ts"
import { negativeBalances, walletLedger } from "./history-money.ts"
import { orderAgreement, orderTransitions } from "./history-orders.ts"
import { timestamps } from "./history-time.ts"

export * from "./history-entries.ts"

export const RULES: ReadonlyArray<{ readonly rule: Rule; readonly name: string }> = [
  { rule: "no-negative-balance", name: "per wallet: no answer shows a negative balance (a wallet's, a sub-account's, a transfer's result)" },
  {
    rule: "wallet-ledger",
    name: "per wallet, where the history holds ledger reads: each row's balanceAfter follows from its amount, and a transfer's newBalance is what the ledger lists"
  },
  { rule: "idempotent-answer", name: "per Idempotency-Key: one request answered alike every time (a second execution is a double debit)" },
  { rule: "delivery-bytes", name: "per eventId: the same bytes on every delivery" },
  { rule: "stream-once", name: "per stream connection: each event id at most once" },
  { rule: "rate-window", name: "per rate-limit window: at most its limit admitted, X-RateLimit-Remaining never rising" },
  { rule: "order-transition", name: "per order, as REST answers show it: no move out of a terminal state (REJECTED, CANCELLED, EXPIRED)" },
  {
    rule: "order-agreement",
    name: "per order: REST, webhooks and the stream agree on its fate, and REST is never behind an event already received"
  },
  {
    rule: "timestamps",
    name: "per answer that stamps now (a created resource's createdAt, the status's timestamp): within its send and answer on the target's clock, up to the harness's first clock move"
  }
]

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

/** Per stream connection (entries that name theirs): no event id twice. */
const streamOnce = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const read = history.flatMap((e, i) => (e.kind === "stream" && e.connection !== undefined && e.id !== undefined ? [{ e, i }] : []))
  return [...groupBy(read, ({ e }) => `${e.connection} ${e.id}`).values()].flatMap((group) => {
    const [first, again] = group
    if (first === undefined || again === undefined) return []
    return [
      {
        rule: "stream-once" as const,
        message: `stream connection ${first.e.connection} (${first.e.caller}) carried event id ${first.e.id} (${first.e.event ?? "no name"}) twice, at ${first.e.at} and ${again.e.at}`,
        entries: [first.i, again.i]
      }
    ]
  })
}

/**
 * Whether `e` was sent in the last second before its window's reset. A sliding window's reset is the second its
 * oldest hit leaves, rounded up: hits from within that one second leave during it, one by one, while the reset stays
 * the same (the next oldest rounds to it too), so Remaining may rise then without a slot being counted back. A
 * simulated week found it (issue 25: 289 then 290 at 08:48:29.437, reset 08:48:30).
 */
const inResetSecond = (e: ExchangeEntry) => {
  const sent = Date.parse(e.sentAt)
  const reset = (e.rate?.reset ?? 0) * 1000
  return sent >= reset - 1000 && sent < reset
}

/**
 * Within one window (caller and X-RateLimit-Reset): `Remaining` may not rise from an answer to a request sent after
 * it came (requests in flight together may be answered in any order) unless it was sent in the reset's own second
 * (`inResetSecond`), and no more than `Limit` are admitted.
 */
const rateWindows = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const limited = exchanges(history).filter(({ e }) => e.rate !== undefined)
  return [...groupBy(limited, ({ e, w }) => `${w} ${e.caller} ${e.rate?.reset}`).values()].flatMap((group) => {
    const found: Array<Violation> = []
    for (const [n, b] of group.entries()) {
      if (inResetSecond(b.e)) continue
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

/** Every rule over the whole history. */
export const checkHistory = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<Violation> =>
  withParsedBodies(() => [
    ...negativeBalances(history),
    ...walletLedger(history),
    ...idempotentAnswers(history),
    ...deliveryBytes(history),
    ...streamOnce(history),
    ...rateWindows(history),
    ...orderTransitions(history),
    ...orderAgreement(history),
    ...timestamps(history)
  ])

const timelineOf = (history: ReadonlyArray<HistoryEntry>, indexes: ReadonlyArray<number>): Array<TimelineEntry> =>
  indexes.flatMap((i): Array<TimelineEntry> => {
    const e = history[i]
    if (e === undefined) return []
    if (e.kind === "delivery") return [{ at: e.at, kind: "delivery", text: `#${i + 1} delivery ${e.eventId} ${e.raw.slice(0, 200)}` }]
    if (e.kind === "stream") return [{ at: e.at, kind: "event", text: `#${i + 1} stream ${e.event ?? ""} ${e.id ?? ""}` }]
    if (e.kind === "reset") return [{ at: e.at, kind: "clock", text: `#${i + 1} the target started over` }]
    if (e.kind === "clock") return [{ at: e.at, kind: "clock", text: `#${i + 1} the harness moved the target's clock: ${e.what}` }]
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
