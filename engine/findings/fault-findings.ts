/**
 * The findings of a fault plan (docs/faults.md, E-375): which faults a partner's client met and how it answered them,
 * as the sentences `GET /_sim/findings` shows. Pure: the Faults service (sim/faults.ts) decides when and records them.
 */
import type { FindingInput } from "./findings.ts"

/** A request fault a client met, as the guard remembers it. */
export interface MetRequestFault {
  readonly partnerId: string
  readonly operationId: string
  readonly method: string
  readonly fault: string
  readonly retryAfterSeconds: number | null
  readonly idempotencyKey: string | null
}

const WHAT: Readonly<Record<string, string>> = {
  "429": "429 RATE_LIMITED",
  "500": "500 INTERNAL_ERROR",
  "503": "503 SERVICE_UNAVAILABLE",
  timeout: "a timeout (no answer, the connection closed)"
}

/** The fault met: what it was and what a client should do with it. */
export const metFinding = (m: MetRequestFault): FindingInput => ({
  partner: m.partnerId,
  kind: `fault.${m.fault}`,
  operation: m.operationId,
  message: `met an injected ${WHAT[m.fault] ?? m.fault}${m.retryAfterSeconds === null ? "" : ` with Retry-After ${m.retryAfterSeconds} s`}: nothing was processed; retry the same request${m.method === "GET" ? "" : " with the same Idempotency-Key"}${m.retryAfterSeconds === null ? "" : " once Retry-After has passed"}`
})

/** How the client answered: its key (for mutations) and its timing (when a Retry-After was announced). */
export const answerFindings = (
  m: MetRequestFault,
  answer: { readonly sameKey: boolean; readonly honouredRetryAfter: boolean | null; readonly afterSeconds: number }
): ReadonlyArray<FindingInput> => {
  const base = { partner: m.partnerId, operation: m.operationId }
  const out: Array<FindingInput> = []
  if (m.method !== "GET")
    out.push(
      answer.sameKey
        ? { ...base, kind: "fault.retry.same-key", message: `retried after an injected ${m.fault} with the same Idempotency-Key: it runs once` }
        : {
            ...base,
            kind: "fault.retry.new-key",
            message: `retried after an injected ${m.fault} ${m.idempotencyKey === null ? "without an Idempotency-Key" : "under a new Idempotency-Key"}: had the first request run, the retry would have run it twice; resend the same key`
          }
    )
  if (answer.honouredRetryAfter !== null)
    out.push(
      answer.honouredRetryAfter
        ? {
            ...base,
            kind: "fault.retry-after.honoured",
            message: `waited the Retry-After (${m.retryAfterSeconds} s) of an injected ${m.fault} before retrying`
          }
        : {
            ...base,
            kind: "fault.retry-after.ignored",
            message: `retried ${answer.afterSeconds} s after an injected ${m.fault} that said Retry-After ${m.retryAfterSeconds} s: too early, a real outage would answer it again`
          }
    )
  return out
}

const DELIVERY: Readonly<Record<string, string>> = {
  drop: "an attempt was dropped on the way (the engine saw no answer and retries on the schedule)",
  duplicate: "an attempt was sent twice, the same bytes and eventId: the receiver must process it once",
  delay: "an attempt was delayed",
  reorder: "an attempt was held so later ones overtook it: the receiver must not assume the order"
}

/** A webhook delivery fault the partner's receiver met. */
export const deliveryFinding = (partnerId: string, fault: string): FindingInput => ({
  partner: partnerId,
  kind: `fault.webhook.${fault}`,
  operation: "webhook delivery",
  message: `webhook delivery: ${DELIVERY[fault] ?? fault}`
})

/** A stream the partner's client had cut. */
export const cutFinding = (partnerId: string, afterMessages: number): FindingInput => ({
  partner: partnerId,
  kind: "fault.stream.cut",
  operation: "streamEvents",
  message: `the event stream was cut after ${afterMessages} messages: reconnect with Last-Event-ID to resume without a gap`
})

/** How a client came back after its stream was cut: resuming from a position, or starting live (missing the gap). */
export const reconnectFinding = (partnerId: string, resumed: boolean): FindingInput =>
  resumed
    ? {
        partner: partnerId,
        kind: "fault.stream.resumed",
        operation: "streamEvents",
        message: "reconnected after a stream cut from its last position (Last-Event-ID or since): nothing was missed"
      }
    : {
        partner: partnerId,
        kind: "fault.stream.restarted",
        operation: "streamEvents",
        message: "reconnected after a stream cut without Last-Event-ID or since: it started live and missed the events in between"
      }
