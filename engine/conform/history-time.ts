/**
 * The history's timestamps against the target's clock (issue 23, part 3): the recorded instants are on the target's
 * clock (the wall clock plus the skew conform measured, or the target's virtual clock as read), so what the target
 * stamps "now" must fall between the send and the answer of the exchange that made it. Checked: the `createdAt` of a
 * resource a POST just created (a 2xx answer that is not a replay of an earlier one under the same key) and the
 * `timestamp` of GET /status. Only up to the first clock move of the harness's own (a `clock` entry: an advance or a
 * reset through the control API), after which the instants and the target's stamps need not agree. A slack of
 * TIMESTAMP_SLACK_MS covers the skew's measuring error and coarse stamps.
 */
import { type ExchangeEntry, exchanges, type HistoryEntry, jsonOf, type Violation } from "./history-entries.ts"

export const TIMESTAMP_SLACK_MS = 2_000

/** The history up to (not including) the harness's first move of the target's clock. */
const beforeClockMoves = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<HistoryEntry> => {
  const first = history.findIndex((e) => e.kind === "clock")
  return first === -1 ? history : history.slice(0, first)
}

/** What the answer stamps as "now", if it stamps anything: a created resource's createdAt, the status's timestamp. */
const stampOf = (e: ExchangeEntry): string | undefined => {
  const { method, path, status } = e
  if (status < 200 || status >= 300) return undefined
  const json = jsonOf(e)
  if (typeof json !== "object" || json === null) return undefined
  const fields = json as { createdAt?: unknown; timestamp?: unknown }
  if (method === "POST" && typeof fields.createdAt === "string") return fields.createdAt
  if (method === "GET" && path.endsWith("/status") && typeof fields.timestamp === "string") return fields.timestamp
  return undefined
}

export const timestamps = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const seenBodies = new Set<string>()
  const found: Array<Violation> = []
  for (const { e, i } of exchanges(beforeClockMoves(history))) {
    // An answer without a stamp is not looked at, nor then its replays (the same body, so no stamp either).
    const stamp = stampOf(e)
    const at = stamp === undefined ? Number.NaN : Date.parse(stamp)
    if (Number.isNaN(at)) continue
    // A replay repeats the first answer, stamp included: only the first answer under a key was made now.
    const replayKey = e.idempotencyKey === undefined ? undefined : `${e.caller} ${e.idempotencyKey} ${e.body}`
    if (replayKey !== undefined && seenBodies.has(replayKey)) continue
    if (replayKey !== undefined) seenBodies.add(replayKey)
    const from = Date.parse(e.sentAt) - TIMESTAMP_SLACK_MS
    const to = Date.parse(e.answeredAt) + TIMESTAMP_SLACK_MS
    if (at >= from && at <= to) continue
    found.push({
      rule: "timestamps",
      message: `${e.method} ${e.path} (${e.caller}) was sent at ${e.sentAt} and answered at ${e.answeredAt} on the target's clock, but stamped ${stamp} (more than ${TIMESTAMP_SLACK_MS / 1000} s outside)`,
      entries: [i]
    })
  }
  return found
}
