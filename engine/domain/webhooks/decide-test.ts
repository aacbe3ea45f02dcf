/**
 * The signed test event of a registration (D-056) as pure rules: one `test.event`, one attempt, recorded like any
 * delivery; its outcome answers 200 on a 2xx and 502 WEBHOOK_TEST_FAILED otherwise. The dispatcher
 * (app/webhooks/service.ts) writes the record `sending` in one transaction, sends outside every transaction (a send
 * waits up to 8 s), then writes the outcome in a second one: the attempt is recorded even if the answer is lost.
 * Also the DeliveryRecord projection of the deliveries' listing.
 * Owns: the test delivery's record, envelope and outcome. Does not own signing or sending (events/webhook-delivery.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { WebhookRecord } from "./decide-webhook.ts"

const isoAt = (ms: number) => new Date(ms).toISOString()

/** One event to one webhook and its attempts (D-057; app/docs.ts Deliveries, whose record adds the attempt history). */
export interface DeliveryRecord {
  readonly deliveryId: string
  readonly webhookId: string
  readonly partition: string
  readonly eventId: string
  readonly event: string
  /** Event-log position of the event; null for a synthetic test.event (not in the log). */
  readonly position: number | null
  readonly createdAt: number
  readonly attempts: number
  readonly state: "pending" | "sending" | "retrying" | "delivered" | "failed"
  readonly statusCode: number | null
  readonly latencyMs: number | null
  readonly success: boolean
  readonly lastAttemptAt: number | null
  readonly nextAttemptAt: number | null
  readonly nextJobSeq: number | null
}

/** How the one attempt ended (sim/outbound.ts's result, as the rule needs it). */
export type AttemptResult =
  | { readonly kind: "answered"; readonly status: number; readonly latencyMs: number }
  | { readonly kind: "timeout" }
  | { readonly kind: "unreachable" }

/** The test delivery as first written (its attempt under way) and the exact envelope to sign and send. */
export interface TestDelivery {
  readonly record: DeliveryRecord
  readonly body: string
}

/** The test event for `webhook` (already owned by the caller), ids drawn once ownership is known (event, then delivery). */
export const decideTestDelivery = (
  webhook: WebhookRecord,
  command: { readonly sandbox: boolean },
  now: number,
  ids: { readonly eventId: string; readonly deliveryId: string }
): TestDelivery => {
  const record: DeliveryRecord = {
    deliveryId: ids.deliveryId,
    webhookId: webhook.id,
    partition: webhook.partition,
    eventId: ids.eventId,
    event: "test.event",
    position: null,
    createdAt: now,
    attempts: 1,
    state: "sending",
    statusCode: null,
    latencyMs: null,
    success: false,
    lastAttemptAt: now,
    nextAttemptAt: null,
    nextJobSeq: null
  }
  const envelope = {
    eventId: record.eventId,
    event: "test.event",
    timestamp: isoAt(record.createdAt),
    data: { webhookId: webhook.id, message: "Test event from Sokoni", test: true },
    ...(command.sandbox ? { isSandbox: true } : {})
  }
  return { record, body: JSON.stringify(envelope) }
}

/** The attempt's outcome: the record as it ends (delivered only on a 2xx) and the answer or the 502. */
export const decideTestOutcome = (
  webhook: WebhookRecord,
  record: DeliveryRecord,
  result: AttemptResult,
  timeoutMs: number
): { readonly record: DeliveryRecord; readonly answer: Schemas["WebhookTestResult"] | ApiFailure } => {
  const httpStatus = result.kind === "answered" ? result.status : null
  const success = httpStatus !== null && httpStatus >= 200 && httpStatus < 300
  const ended: DeliveryRecord = {
    ...record,
    state: success ? "delivered" : "failed",
    success,
    statusCode: httpStatus,
    latencyMs: result.kind === "answered" ? result.latencyMs : null
  }
  if (!success) {
    const why =
      result.kind === "answered" ? `answered ${result.status}` : result.kind === "timeout" ? `did not answer within ${timeoutMs / 1000} s` : "is unreachable"
    return { record: ended, answer: fail("WEBHOOK_TEST_FAILED", `the endpoint ${why}`, { httpStatus, eventId: record.eventId }) }
  }
  return {
    record: ended,
    answer: { success, eventId: record.eventId, message: "Test event delivered", webhookId: webhook.id, url: webhook.url, httpStatus }
  }
}

/** A delivery as the listing shows it: its last attempt's time (or its creation's, before any attempt). */
export const deliveryToWire = (d: DeliveryRecord): Schemas["DeliveryRecord"] => ({
  deliveryId: d.deliveryId,
  event: d.event,
  statusCode: d.statusCode,
  success: d.success,
  latencyMs: d.latencyMs,
  attempts: d.attempts,
  deliveredAt: isoAt(d.lastAttemptAt ?? d.createdAt),
  eventId: d.eventId,
  nextAttemptAt: d.nextAttemptAt === null ? null : isoAt(d.nextAttemptAt)
})
