/**
 * Grades a partner's webhook receiver over the wire (`sokoni webhooks check`): signs deliveries the way the engine
 * does (events/webhook-delivery.ts `sign`, `SIGNATURE_HEADER`), sends them through the Outbound seam, and scores what
 * the receiver answers. Owns the probes, their grading and the report's wording. Does not own the payloads
 * (conform/receiver-events.ts), the transport (sim/outbound.ts), nor writing the report (report/write.ts).
 *
 * Time: no clock is read here. The report's instants are on the checker's own clock: it starts at `startMs` (the
 * CLI passes wall time) and moves by each answer's measured latency (Outbound measures it) and by the retry delays,
 * which are compressed: a retry due 5 s later is sent at once and stamped 5 s later. The 8 s limit is `timeoutMs`,
 * passed to Outbound with every request, so tests can shrink it or script a timeout.
 *
 * What it cannot see: the receiver's side effects. A duplicate must be answered 2xx (else the sender retries it),
 * but whether the receiver applied it once or twice is invisible from outside; the report says so.
 */
import { Effect } from "effect"
import { SIGNATURE_HEADER, sign, spaced, TIMEOUT_MS } from "../events/webhook-delivery.ts"
import type { CheckResult, RunReport, TimelineEntry } from "../report/model.ts"
import { isoAt } from "../sim/clock.ts"
import { Outbound, type OutboundResult } from "../sim/outbound.ts"
import { makeGenerator } from "../sim/random.ts"
import { CHECKABLE_EVENTS, type CheckableEvent, type Delivery, makeEventFactory } from "./receiver-events.ts"

export const SUITE = "webhook receiver"

/** The engine's retry delays that the retry probe walks through (spec "Events" rule 2: 5 s, then 30 s). */
const RETRY_WALK_MS: ReadonlyArray<number> = [5_000, 30_000]

export interface ReceiverCheckOptions {
  readonly url: string
  readonly secret: string
  readonly seed: number
  /** Instant the checker's clock starts at (epoch ms); the deliveries' timestamps follow from it. */
  readonly startMs: number
  /** The events the valid-delivery probe sends, one each (default: every checkable event). */
  readonly events?: ReadonlyArray<CheckableEvent> | undefined
  /** How long an answer may take (default the contract's 8 s). */
  readonly timeoutMs?: number | undefined
  /**
   * More header names the signature is also sent under, besides x-service-signature: `x-mystocks-signature` for a
   * receiver written against the public service (facts row 11.2), as `serve --webhook-signature-header` sends it.
   */
  readonly signatureHeaders?: ReadonlyArray<string> | undefined
}

/** What one request got, with what was sent (for the timeline and a reproducer). */
interface Probe {
  readonly label: string
  /** Whether a correct receiver accepts it (2xx) or refuses it (non-2xx). */
  readonly expect: "accept" | "refuse"
  readonly body: string
  readonly signature: string
  readonly result: OutboundResult
  readonly at: number
}

const isAccepted = (r: OutboundResult) => r.kind === "answered" && r.status >= 200 && r.status < 300
const isRefused = (r: OutboundResult) => r.kind === "answered" && (r.status < 200 || r.status >= 300)

const outcomeText = (r: OutboundResult, timeoutMs: number) =>
  r.kind === "answered" ? `${r.status} in ${r.latencyMs} ms` : r.kind === "timeout" ? `no answer within ${timeoutMs} ms` : `unreachable (${r.reason})`

/** Single-quotes a word for a POSIX shell. */
const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`

/** The command that replays the whole check; the secret stays out of reports (read from the environment). */
export const replayCommand = (options: ReceiverCheckOptions): string =>
  [
    "npx sokoni webhooks check",
    `--url ${shellQuote(options.url)}`,
    `--secret "$SOKONI_WEBHOOK_SECRET"`,
    `--seed ${options.seed}`,
    ...(options.events === undefined ? [] : [`--events ${options.events.join(",")}`]),
    ...(options.signatureHeaders ?? []).map((name) => `--signature-header ${shellQuote(name)}`)
  ].join(" ")

/** Flips one byte of a digit inside `data` (a significant change: another amount or quantity). */
const flipDigit = (body: string, draw: () => number): string => {
  const dataAt = body.indexOf(`"data":`)
  const digits: Array<number> = []
  for (let i = dataAt; i < body.length; i++) if (body[i]! >= "0" && body[i]! <= "9") digits.push(i)
  const at = digits[draw() % digits.length] ?? body.length - 2
  const flipped = String.fromCharCode(body.charCodeAt(at) ^ 1) // 0<->1, 2<->3, ...: still a digit, another value
  return body.slice(0, at) + flipped + body.slice(at + 1)
}

/** The same JSON value in other bytes (the engine's own helper; its planted defect sends these). */
export { spaced }

/** Runs every probe against the receiver and returns the graded report. Never fails: problems are failed checks. */
export const checkReceiver = (options: ReceiverCheckOptions) =>
  Effect.gen(function* () {
    const outbound = yield* Outbound
    const timeoutMs = options.timeoutMs ?? TIMEOUT_MS
    const events = options.events ?? CHECKABLE_EVENTS
    const factory = makeEventFactory(options.seed)
    // A second stream from the seed for the tampering choices, so adding an event does not move the byte flipped.
    const draw = makeGenerator((options.seed ^ 0x5eed) >>> 0)
    const replay = replayCommand(options)
    const signatureNames = (options.signatureHeaders ?? []).map((name) => name.toLowerCase()).filter((name) => name !== SIGNATURE_HEADER)
    let now = options.startMs
    const every: Array<Probe> = []

    const send = (label: string, body: string, signature: string, expect: Probe["expect"]) =>
      Effect.gen(function* () {
        const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "Sokoni-Webhooks/1", [SIGNATURE_HEADER]: signature }
        for (const name of signatureNames) headers[name] = signature
        const at = now
        const result = yield* outbound.post({ url: options.url, headers, body, timeoutMs })
        now += result.kind === "answered" ? result.latencyMs : result.kind === "timeout" ? timeoutMs : 0
        const probe: Probe = { label, expect, body, signature, result, at }
        every.push(probe)
        return probe
      })
    const sendSigned = (label: string, delivery: Delivery) => send(label, delivery.body, sign(options.secret, delivery.body), "accept")
    // Order events in a probe are about an order of their own, so no receiver sees contradictory news of one order.
    let orders = 2
    const plainEvent = events.find((e) => !e.startsWith("order.")) ?? events[0] ?? "test.event"
    const fresh = () => factory.next(plainEvent, now, orders++)

    const timelineOf = (probes: ReadonlyArray<Probe>, notes: ReadonlyArray<TimelineEntry> = []): ReadonlyArray<TimelineEntry> =>
      [...probes.map((p): TimelineEntry => ({ at: isoAt(p.at), kind: "delivery", text: `${p.label}: ${outcomeText(p.result, timeoutMs)}` })), ...notes].sort(
        (a, b) => a.at.localeCompare(b.at)
      )
    const reproducerOf = (p: Probe) =>
      [
        `curl -sS -i -X POST ${shellQuote(options.url)} -H 'content-type: application/json'`,
        ...[SIGNATURE_HEADER, ...signatureNames].map((name) => `-H ${shellQuote(`${name}: ${p.signature}`)}`),
        `--data-binary ${shellQuote(p.body)}`
      ].join(" ")
    const durationOf = (probes: ReadonlyArray<Probe>) =>
      probes.reduce((sum, p) => sum + (p.result.kind === "answered" ? p.result.latencyMs : p.result.kind === "timeout" ? timeoutMs : 0), 0)

    /** A graded check from its probes: passed when `bad` is empty, else failed on the first bad probe. */
    const graded = (
      name: string,
      maxScore: number,
      probes: ReadonlyArray<Probe>,
      bad: ReadonlyArray<Probe>,
      why: (p: Probe) => string,
      extra: { readonly note?: string; readonly notes?: ReadonlyArray<TimelineEntry> } = {}
    ): CheckResult => {
      const first = bad[0]
      const message = first === undefined ? extra.note : [why(first), extra.note].filter((t) => t !== undefined).join(" ")
      return {
        suite: SUITE,
        name,
        status: first === undefined ? "passed" : "failed",
        durationMs: durationOf(probes),
        score: first === undefined ? maxScore : 0,
        maxScore,
        ...(message === undefined ? {} : { message }),
        ...(first === undefined ? {} : { reproducer: reproducerOf(first) }),
        replay,
        timeline: timelineOf(probes, extra.notes)
      }
    }
    const acceptedWhy = (p: Probe) => `${p.label} was answered ${outcomeText(p.result, timeoutMs)}; a correctly signed delivery must get a 2xx.`
    const refusedWhy = (p: Probe) =>
      p.result.kind === "answered"
        ? `${p.label} was answered ${outcomeText(p.result, timeoutMs)}: the receiver accepted bytes that do not match their signature.`
        : `${p.label} got ${outcomeText(p.result, timeoutMs)}; refuse it at once with a 4xx (401) instead.`

    const checks: Array<CheckResult> = []

    // 1. One correctly signed delivery per event, bytes exactly as the engine sends them.
    const valid: Array<Probe> = []
    for (const event of events) valid.push(yield* sendSigned(`signed ${event}`, factory.next(event, now, event === "order.rejected" ? 1 : 0)))
    checks.push(
      graded(
        "accepts a correctly signed delivery of each event",
        2,
        valid,
        valid.filter((p) => !isAccepted(p.result)),
        acceptedWhy
      )
    )

    // 2. The signature is over the raw bytes: other bytes of the same JSON, signed as sent, must be accepted.
    const rawBytes = fresh()
    const rawBody = spaced(rawBytes.body)
    const raw = yield* send(`signed ${rawBytes.envelope.event} with spaces after ':' and ','`, rawBody, sign(options.secret, rawBody), "accept")
    checks.push(
      graded(
        "verifies the signature over the raw bytes received (not re-serialised JSON)",
        2,
        [raw],
        isAccepted(raw.result) ? [] : [raw],
        (p) =>
          `${acceptedWhy(p)} The signature is the HMAC of the exact bytes sent; a receiver that re-serialises the JSON before verifying refuses valid deliveries whose bytes differ from its own serialisation.`
      )
    )

    // 3. A signature made with another secret.
    const wrong = fresh()
    const wrongProbe = yield* send(`${wrong.envelope.event} signed with a wrong secret`, wrong.body, sign(`${options.secret}-not`, wrong.body), "refuse")
    checks.push(graded("rejects a delivery signed with another secret", 2, [wrongProbe], isRefused(wrongProbe.result) ? [] : [wrongProbe], refusedWhy))

    // 4. The body changed after signing: one significant byte flipped, and one insignificant byte added.
    const tamperedDelivery = fresh()
    const signature = sign(options.secret, tamperedDelivery.body)
    const flipped = yield* send(
      `${tamperedDelivery.envelope.event} with one digit flipped after signing`,
      flipDigit(tamperedDelivery.body, draw),
      signature,
      "refuse"
    )
    const colon = tamperedDelivery.body.indexOf(":")
    const padded = `${tamperedDelivery.body.slice(0, colon + 1)} ${tamperedDelivery.body.slice(colon + 1)}`
    const added = yield* send(`${tamperedDelivery.envelope.event} with a space added after signing`, padded, signature, "refuse")
    checks.push(
      graded(
        "rejects a body changed after signing (a flipped byte, an added space)",
        2,
        [flipped, added],
        [flipped, added].filter((p) => !isRefused(p.result)),
        (p) =>
          p === added && p.result.kind === "answered"
            ? `${refusedWhy(p)} An added space leaves the JSON value unchanged, so only a receiver that verifies the raw bytes notices.`
            : refusedWhy(p)
      )
    )

    // 5. The same delivery twice (at-least-once delivery): both answered 2xx.
    const dup = fresh()
    const dupFirst = yield* sendSigned(`${dup.envelope.event} ${dup.envelope.eventId}`, dup)
    const dupAgain = yield* sendSigned(`the same ${dup.envelope.eventId} again`, dup)
    checks.push(
      graded(
        "answers 2xx to a repeated eventId (deduplication, as far as it can be seen)",
        1,
        [dupFirst, dupAgain],
        [dupFirst, dupAgain].filter((p) => !isAccepted(p.result)),
        (p) => `${acceptedWhy(p)} A refused duplicate is retried for up to 2 h and counts toward disabling the webhook.`,
        {
          note: "Limit: whether the receiver applied the event once is not visible from outside; only its answer is graded. Deduplicate by eventId."
        }
      )
    )

    // 6. Reordering: order.filled first, then the same order's earlier order.pending.
    if (events.includes("order.pending") && events.includes("order.filled")) {
      const order = orders++
      const filled = factory.next("order.filled", now, order)
      const pending = factory.next("order.pending", now - 115_000, order)
      const { orderId } = factory.order(order)
      const filledProbe = yield* sendSigned(`order.filled ${orderId}`, filled)
      const pendingProbe = yield* sendSigned(`order.pending ${orderId}, sent after its order.filled`, pending)
      checks.push(
        graded(
          "copes with reordering: order.pending after order.filled is answered 2xx",
          1,
          [filledProbe, pendingProbe],
          [filledProbe, pendingProbe].filter((p) => !isAccepted(p.result)),
          (p) => `${acceptedWhy(p)} Order is not guaranteed: derive state from the payload and keep the later status (FILLED).`
        )
      )
    } else {
      checks.push({
        suite: SUITE,
        name: "copes with reordering: order.pending after order.filled is answered 2xx",
        status: "skipped",
        durationMs: 0,
        score: 0,
        maxScore: 0,
        message: "needs order.pending and order.filled in --events",
        replay
      })
    }

    // 7. Retries on the compressed schedule: the answers to attempts 1 and 2 are dropped (a simulated failure), the
    //    same bytes come again 5 s and 30 s later on the checker's clock; both retries must be accepted.
    const retried = fresh()
    const attempts: Array<Probe> = [yield* sendSigned(`attempt 1 of ${retried.envelope.eventId} (answer dropped: simulated failure)`, retried)]
    const notes: Array<TimelineEntry> = []
    for (const [index, delay] of RETRY_WALK_MS.entries()) {
      now += delay
      notes.push({ at: isoAt(now), kind: "clock", text: `retry schedule: ${delay / 1000} s later (compressed, not waited)` })
      const last = index === RETRY_WALK_MS.length - 1
      attempts.push(yield* sendSigned(`attempt ${index + 2} of ${retried.envelope.eventId}${last ? "" : " (answer dropped: simulated failure)"}`, retried))
    }
    const retries = attempts.slice(1)
    checks.push(
      graded(
        "accepts a retried delivery (same eventId and bytes) after a failed attempt",
        1,
        attempts,
        retries.filter((p) => !isAccepted(p.result)),
        (p) => `${acceptedWhy(p)} A retry after a failure the receiver may never have seen must still be acknowledged.`,
        { notes }
      )
    )

    // 8. Every delivery that should be accepted answered within the limit (the probes above, not waited for again).
    const shouldAccept = every.filter((p) => p.expect === "accept")
    const slow = shouldAccept.filter((p) => p.result.kind === "timeout" || (p.result.kind === "answered" && p.result.latencyMs > timeoutMs))
    const slowest = Math.max(0, ...shouldAccept.map((p) => (p.result.kind === "answered" ? p.result.latencyMs : timeoutMs)))
    checks.push({
      ...graded(
        `answers within ${timeoutMs / 1000} s`,
        1,
        shouldAccept,
        slow,
        (p) => `${p.label} got ${outcomeText(p.result, timeoutMs)}: answer first (2xx), then process; a slower answer fails the attempt and is retried.`
      ),
      ...(slow.length === 0 ? { message: `slowest answer ${slowest} ms over ${shouldAccept.length} deliveries` } : {})
    })

    const report: RunReport = {
      tool: `sokoni webhooks check --url ${options.url} --seed ${options.seed}${options.events === undefined ? "" : ` --events ${options.events.join(",")}`}`,
      seed: options.seed,
      target: options.url,
      startedAt: isoAt(options.startMs),
      finishedAt: isoAt(now),
      checks
    }
    return report
  })
