/**
 * WebhookDelivery: sends the event log's events to the partners' webhooks, signed, retried on the engine's clock,
 * with a record per delivery. Owns the outbox (delivery records and attempt jobs written in the event's own
 * transaction), signing, the retry schedule, the 8 s rule and the delivery records' updates.
 * Does not own registrations (app/webhooks/, domain/webhooks/), the transport (sim/outbound.ts) nor the log (events/event-log.ts).
 *
 * Outbox, step by step (so a crash neither loses a delivery nor re-sends an attempt it already counted):
 * 1. EventLog.append runs `enqueue` in the event's transaction: one record (attempts 0) and one `webhook.attempt`
 *    job due at the event's time per subscribed active webhook.
 * 2. The attempt job's transaction counts the attempt, marks the record `sending` and already schedules what comes
 *    next (attempt n+1 after its delay, or after the 6th a `webhook.settle` job); it commits before any byte is sent.
 * 3. After that commit the bytes are signed and sent (Scheduler follow-up, outside every transaction), and the
 *    outcome is written in a new transaction: on 2xx the pre-scheduled job is deleted.
 * A crash between 2 and 3 leaves the next job in place: the attempt counts as made and the delivery goes on.
 */
import { createHmac } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { type AttemptRecord, Deliveries, type DeliveryDoc, deliveryPartition, timeSortKey, type WebhookDoc, Webhooks } from "../app/docs.ts"
import { DeliveryAttemptPayload, DeliverySettlePayload } from "../app/job-payloads.ts"
import { isSandboxPartition, partnerOfPartition } from "../app/principal.ts"
import { isoAt } from "../sim/clock.ts"
import { EngineClock } from "../sim/clock.ts"
import { FLAT_RETRY_DELAYS_MS, PlantedDefects, retriedEventId } from "../sim/defects.ts"
import { Outbound, type OutboundResult } from "../sim/outbound.ts"
import { type DeliveryFault, Faults } from "../sim/faults.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { Trace } from "../sim/trace.ts"
import { type LoggedEvent, Store, type StoreError, type Tx } from "../store/port.ts"
import { ConsoleFeed } from "./console-feed.ts"
import { EventLog, envelopeOf } from "./event-log.ts"

/** Spec "Events", delivery rules 1 and 2: 2xx within 8 s; 6 attempts, the later ones 5 s, 30 s, 5 min, 30 min, 2 h
 * after the previous one. */
export const TIMEOUT_MS = 8_000
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [5_000, 30_000, 300_000, 1_800_000, 7_200_000]
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1
/** When an attempt is surely over (timeout plus a margin): the earliest a later job may assume it failed. */
export const SETTLE_AFTER_MS = TIMEOUT_MS + 1_000
/** D-055: this many deliveries in a row that exhausted all attempts disable the webhook. */
export const DISABLE_AFTER = 20
export const SIGNATURE_HEADER = "x-service-signature"
export const ATTEMPT_JOB = "webhook.attempt"
export const SETTLE_JOB = "webhook.settle"

/** The list an event's append reads (its partition's webhooks), to name it up front (`prefetch`, E-405). */
export const webhooksRead = (partition: string) => ({ collection: Webhooks.name, list: { partition, limit: 1000, order: "asc" } }) as const

/** Hex HMAC-SHA256 of the exact bytes sent, keyed with the webhook's secret (spec "Events"). */
export const sign = (secret: string, body: string): string => createHmac("sha256", secret).update(body, "utf8").digest("hex")

/** Headers every delivery sets itself: another signature header may not take their names. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set(["content-type", "content-length", "user-agent", "host", "connection", "transfer-encoding"])
const HEADER_TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

/**
 * The extra signature header names of `serve --webhook-signature-header` (D-054, D-181), lower-cased and without
 * repeats or the spec's own name, or what is wrong with one of them. Pure.
 */
export const signatureHeaderNames = (raw: ReadonlyArray<string>): ReadonlyArray<string> | { readonly problem: string } => {
  const names: Array<string> = []
  for (const given of raw) {
    const name = given.trim().toLowerCase()
    if (!HEADER_TOKEN.test(name)) return { problem: `--webhook-signature-header ${JSON.stringify(given)} is not an HTTP header name` }
    if (RESERVED_HEADERS.has(name)) return { problem: `--webhook-signature-header ${given}: every delivery sets that header itself` }
    if (name !== SIGNATURE_HEADER && !names.includes(name)) names.push(name)
  }
  return names
}

/** The same JSON value in other bytes: a space after every ':' and ',' outside strings (as Python's json.dumps writes). */
export const spaced = (body: string): string => {
  let out = ""
  let inString = false
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string
    out += c
    if (inString) {
      if (c === "\\") out += body[++i] ?? ""
      else if (c === '"') inString = false
    } else if (c === '"') inString = true
    else if (c === ":" || c === ",") out += " "
  }
  return out
}

export interface DeliveryOptions {
  /** More header names carrying the same signature (facts row 11.2: `x-mystocks-signature`); none by default. */
  readonly extraSignatureHeaders?: ReadonlyArray<string> | undefined
  /**
   * TEST ONLY, the planted defect `webhook-reserialised` (sim/defects.ts, E-190): send the JSON with a space after
   * ':' and ',' but sign its compact re-serialisation, as a sender that signs a parsed copy would.
   */
  readonly reserialisedSignature?: boolean | undefined
}

/** A dropped attempt as the sender sees it: no answer within the 8 s (the receiver never got it; docs/faults.md). */
const DROPPED: OutboundResult = { kind: "timeout" }

const isSuccess = (result: OutboundResult) => result.kind === "answered" && result.status >= 200 && result.status < 300

export class WebhookDelivery extends Context.Service<
  WebhookDelivery,
  {
    /** Signs `body` with the webhook's secret and POSTs it once (the test endpoint; the retries use the jobs). */
    readonly send: (webhook: WebhookDoc, body: string) => Effect.Effect<OutboundResult>
  }
>()("sokoni/WebhookDelivery") {
  static readonly make = (options: DeliveryOptions = {}) =>
    Effect.gen(function* () {
      const store = yield* Store
      const clock = yield* EngineClock
      const entropy = yield* Entropy
      const outbound = yield* Outbound
      const scheduler = yield* Scheduler
      const events = yield* EventLog
      const trace = yield* Trace
      const feed = yield* ConsoleFeed
      const faults = yield* Faults
      // TEST ONLY (sim/defects.ts, E-190): both false unless `serve --plant-defect` names them.
      const planted = yield* PlantedDefects
      const newEventIdOnRetry = planted.has("retry-new-event-id")
      const retryDelays = planted.has("retry-schedule") ? FLAT_RETRY_DELAYS_MS : RETRY_DELAYS_MS
      const signatureHeaders = [SIGNATURE_HEADER, ...(options.extraSignatureHeaders ?? []).map((h) => h.toLowerCase()).filter((h) => h !== SIGNATURE_HEADER)]

      const send = (webhook: WebhookDoc, compact: string) => {
        const body = options.reserialisedSignature === true ? spaced(compact) : compact
        const signature = sign(webhook.secret, options.reserialisedSignature === true ? JSON.stringify(JSON.parse(body)) : body)
        const headers: Record<string, string> = { "content-type": "application/json", "user-agent": "Sokoni-Webhooks/1" }
        for (const name of signatureHeaders) headers[name] = signature
        return outbound.post({ url: webhook.url, headers, body, timeoutMs: TIMEOUT_MS, partnerId: partnerOfPartition(webhook.partition) })
      }

      /**
       * Whether an attempt to `webhook` is answered at once by a simulated receiver (then it runs inline, so the run is
       * deterministic) or may take up to the timeout on the network.
       */
      const answersAtOnce = (webhook: WebhookDoc) =>
        outbound.mode === "simulated" || (outbound.simulates?.(webhook.url, partnerOfPartition(webhook.partition)) ?? false)

      // Written when called (`putHere`, E-429): every caller yields it at once in a generator's body.
      const putDelivery = (tx: Tx, d: DeliveryDoc) =>
        Deliveries.putHere(tx, d.deliveryId, deliveryPartition(d.partition, d.webhookId), timeSortKey(d.createdAt, d.deliveryId), d)

      /** Step 1, in the event's transaction. */
      // Each step's generator is made once (Effect.fnUntraced), not per call: see sim/scheduler.ts.
      const enqueue: (tx: Tx, event: LoggedEvent) => Effect.Effect<void, StoreError> = Effect.fnUntraced(function* (tx: Tx, event: LoggedEvent) {
        const { list } = webhooksRead(event.partition)
        const hooks = yield* Webhooks.list(tx, event.partition, list)
        for (const webhook of hooks) {
          if (webhook.status !== "active" || !webhook.events.includes(event.name)) continue
          const deliveryId = yield* entropy.idHere("dlv")
          const job = yield* scheduler.scheduleHere(tx, ATTEMPT_JOB, event.timestamp, { deliveryId, attempt: 1 })
          yield* putDelivery(tx, {
            deliveryId,
            webhookId: webhook.id,
            partition: event.partition,
            eventId: event.eventId,
            event: event.name,
            position: event.position,
            createdAt: event.timestamp,
            attempts: 0,
            state: "pending",
            statusCode: null,
            latencyMs: null,
            success: false,
            lastAttemptAt: null,
            nextAttemptAt: event.timestamp,
            nextJobSeq: job.seq
          })
        }
      })

      /** Delivery `d` with attempt `record` appended to its history. */
      const withAttempt = (d: DeliveryDoc, record: AttemptRecord): DeliveryDoc => ({ ...d, history: [...(d.history ?? []), record] })
      /**
       * Tells the console of attempt `record` once `tx` commits, if one listens (no hook to run after every outcome's
       * commit otherwise; callers ask `feed.heard()` first, so an unheard attempt costs no step: E-450).
       */
      const tellConsole = (tx: Tx, deliveryId: string, record: AttemptRecord) =>
        tx.afterCommit(feed.publish(() => ({ kind: "delivery", deliveryId, attempt: record.attempt, outcome: record.outcome, status: record.status })))

      /** Step 3's write: the outcome of attempt `attempt`, unless a later job already moved the delivery on. */
      /** `sent`: the bytes of the body sent; undefined when a fault plan dropped the attempt before sending. */
      const recordOutcomeIn = Effect.fnUntraced(function* (tx: Tx, deliveryId: string, attempt: number, result: OutboundResult, sent: number | undefined) {
        const found = yield* Deliveries.getHere(tx, deliveryId)
        if (Option.isNone(found) || found.value.attempts !== attempt || found.value.state !== "sending") return
        const answered = result.kind === "answered" ? result : undefined
        const record: AttemptRecord = {
          attempt,
          at: found.value.lastAttemptAt ?? found.value.createdAt,
          outcome: sent === undefined ? "dropped" : result.kind,
          status: answered?.status ?? null,
          latencyMs: answered?.latencyMs ?? null,
          bytes: sent ?? null
        }
        const d = withAttempt(found.value, record)
        if (feed.heard()) yield* tellConsole(tx, deliveryId, record)
        const ok = isSuccess(result)
        const last = attempt >= MAX_ATTEMPTS
        if ((ok || last) && d.nextJobSeq !== null) yield* tx.deleteJob(d.nextJobSeq)
        yield* putDelivery(tx, {
          ...d,
          state: ok ? "delivered" : last ? "failed" : "retrying",
          success: ok,
          statusCode: result.kind === "answered" ? result.status : null,
          latencyMs: result.kind === "answered" ? result.latencyMs : null,
          nextAttemptAt: ok || last ? null : d.nextAttemptAt,
          nextJobSeq: ok || last ? null : d.nextJobSeq
        })
        if (ok || last) yield* countOutcome(tx, d.webhookId, ok)
      })
      const recordOutcome = (deliveryId: string, attempt: number, result: OutboundResult, sent: number | undefined) =>
        store.transact((tx) => recordOutcomeIn(tx, deliveryId, attempt, result, sent))

      /** D-055: consecutive exhausted deliveries, reset by a success; the 20th disables the webhook. */
      // A plain generator its callers delegate to (`yield* countOutcome(...)` in their own generator's body): not an
      // effect of its own, which cost three steps per delivery (E-452).
      const countOutcome = function* (tx: Tx, webhookId: string, ok: boolean) {
        const found = yield* Webhooks.getDocHere(tx, webhookId)
        if (Option.isNone(found)) return
        const webhook = found.value.body
        const failures = ok ? 0 : webhook.consecutiveFailures + 1
        const status = failures >= DISABLE_AFTER ? "disabled" : webhook.status
        // Most outcomes are a success after a success: nothing to write then (a write per delivery for nothing).
        if (failures === webhook.consecutiveFailures && status === webhook.status) return
        yield* tx.put(Webhooks.name, { ...found.value, body: { ...webhook, consecutiveFailures: failures, status } })
      }

      /** Step 3: build the exact bytes, sign, send, trace, record. Runs outside every transaction. */
      const attemptNow = Effect.fnUntraced(
        function* (d: DeliveryDoc, webhook: WebhookDoc, attempt: number, at: number, fault: DeliveryFault | undefined, event: LoggedEvent | undefined) {
          if (event === undefined) return yield* Effect.logWarning(`delivery ${d.deliveryId}: event ${d.eventId} is no longer in the log`)
          const envelope = envelopeOf(event, isSandboxPartition(d.partition))
          const body = JSON.stringify(newEventIdOnRetry && attempt > 1 ? { ...envelope, eventId: retriedEventId(envelope.eventId, attempt) } : envelope)
          const traced = (result: OutboundResult) =>
            trace.record({
              kind: "webhook",
              deliveryId: d.deliveryId,
              webhookId: d.webhookId,
              eventId: d.eventId,
              event: d.event,
              attempt,
              at: isoAt(at),
              outcome: result.kind,
              ...(result.kind === "answered" ? { status: result.status, latencyMs: result.latencyMs } : {}),
              ...(fault === undefined ? {} : { fault: fault.fault })
            })
          // A fault plan may drop the attempt (never sent) or send the same bytes twice (the first answer counts).
          const result = fault?.fault === "drop" ? DROPPED : yield* send(webhook, body)
          yield* traced(result)
          if (fault?.fault === "duplicate") yield* Effect.flatMap(send(webhook, body), traced)
          yield* recordOutcome(d.deliveryId, attempt, result, fault?.fault === "drop" ? undefined : Buffer.byteLength(body))
        },
        // Whatever stops the send or the write (a failure, a defect) is a crash for the outbox: the next job is
        // already committed and carries the delivery on.
        (effect, d, _webhook, attempt) =>
          Effect.catchCause(effect, (cause) =>
            Effect.logWarning(`delivery ${d.deliveryId} attempt ${attempt}: outcome not recorded; the next job goes on`, cause)
          )
      )

      /** Step 2, in the job's transaction; returns step 3 as the scheduler's follow-up. */
      const onAttempt = Effect.fnUntraced(function* (tx: Tx, payload: typeof DeliveryAttemptPayload.Type) {
        const { deliveryId, attempt, held } = payload
        const found = yield* Deliveries.getHere(tx, deliveryId)
        if (Option.isNone(found)) return
        const d = found.value
        if (d.state === "delivered" || d.state === "failed" || d.attempts >= attempt) return
        const now = yield* clock.nowHere()
        const webhook = yield* Webhooks.getHere(tx, d.webhookId)
        if (Option.isNone(webhook)) return
        const atOnce = answersAtOnce(webhook.value)
        // The previous attempt may still be on the wire (a slow real endpoint): wait until it is surely over. A
        // simulated send is never in flight when a job runs, so there `sending` means its outcome was lost.
        if (!atOnce && d.state === "sending" && d.lastAttemptAt !== null && now < d.lastAttemptAt + SETTLE_AFTER_MS) {
          const job = yield* scheduler.scheduleHere(tx, ATTEMPT_JOB, d.lastAttemptAt + SETTLE_AFTER_MS, payload)
          yield* putDelivery(tx, { ...d, nextAttemptAt: job.dueAt, nextJobSeq: job.seq })
          return
        }
        // An attempt a fault plan delays (or holds back so later ones overtake it) is asked once, then runs as booked.
        // Asked only while a fault plan is in force (`busy`): a step and its answer per attempt otherwise (E-452).
        const fault =
          held === true || !faults.busy() ? undefined : yield* faults.forDelivery({ partnerId: partnerOfPartition(d.partition), deliveryId, attempt, now })
        if (fault?.fault === "delay" || fault?.fault === "reorder") {
          const job = yield* scheduler.scheduleHere(tx, ATTEMPT_JOB, now + fault.holdMs, { deliveryId, attempt, held: true })
          yield* putDelivery(tx, { ...d, nextAttemptAt: job.dueAt, nextJobSeq: job.seq })
          return
        }
        const last = attempt >= MAX_ATTEMPTS
        const next = last
          ? yield* scheduler.scheduleHere(tx, SETTLE_JOB, now + SETTLE_AFTER_MS, { deliveryId, attempt })
          : yield* scheduler.scheduleHere(tx, ATTEMPT_JOB, now + (retryDelays[attempt - 1] ?? 0), { deliveryId, attempt: attempt + 1 })
        const sending: DeliveryDoc = {
          ...d,
          attempts: attempt,
          state: "sending",
          lastAttemptAt: now,
          nextAttemptAt: last ? null : next.dueAt,
          nextJobSeq: next.seq
        }
        yield* putDelivery(tx, sending)
        // The event is read here, in the job's transaction already open, not in a read of its own after it (events
        // are never changed once logged).
        const logged = yield* tx.readEvents(d.partition, (d.position ?? 1) - 1, 1)
        const followUp = attemptNow(sending, webhook.value, attempt, now, fault, logged[0])
        // A simulated endpoint answers at once: run inline so the run is deterministic. A real one may take 8 s:
        // do not hold up the scheduler's other jobs.
        return atOnce ? followUp : Effect.asVoid(Effect.forkDetach(followUp))
      })

      /** After the 6th attempt: if its outcome was never written (a crash), the delivery is failed. */
      const onSettle = Effect.fnUntraced(function* (tx: Tx, { deliveryId, attempt }: typeof DeliverySettlePayload.Type) {
        const found = yield* Deliveries.getHere(tx, deliveryId)
        if (Option.isNone(found) || found.value.state !== "sending" || found.value.attempts !== attempt) return
        const at = found.value.lastAttemptAt ?? found.value.createdAt
        const record: AttemptRecord = { attempt, at, outcome: "lost", status: null, latencyMs: null, bytes: null }
        const lost = withAttempt(found.value, record)
        if (feed.heard()) yield* tellConsole(tx, deliveryId, record)
        yield* putDelivery(tx, { ...lost, state: "failed", statusCode: null, latencyMs: null, nextAttemptAt: null, nextJobSeq: null })
        yield* countOutcome(tx, found.value.webhookId, false)
      })

      yield* events.onAppend(enqueue)
      yield* scheduler.register(ATTEMPT_JOB, DeliveryAttemptPayload, onAttempt)
      yield* scheduler.register(SETTLE_JOB, DeliverySettlePayload, onSettle)
      return WebhookDelivery.of({ send })
    })

  static readonly layer = (options?: DeliveryOptions) => Layer.effect(WebhookDelivery, WebhookDelivery.make(options))
}
