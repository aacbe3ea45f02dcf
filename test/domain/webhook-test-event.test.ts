/**
 * The signed test event (domain/webhooks/decide-test.ts, D-056): one `test.event` attempt recorded like a delivery,
 * its envelope marked isSandbox only in the sandbox, delivered only on a 2xx (any other answer, a timeout or an
 * unreachable endpoint is a 502 WEBHOOK_TEST_FAILED naming why), and the listing's projection of a delivery.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { type AttemptResult, decideTestDelivery, decideTestOutcome, deliveryToWire } from "../../engine/domain/webhooks/decide-test.ts"
import { decideCreateWebhook } from "../../engine/domain/webhooks/decide-webhook.ts"
import { OPEN_AT, PARTITION } from "./decider-fixtures.ts"

const webhook = decideCreateWebhook(
  { partition: PARTITION, input: { url: "https://example.com/hook", events: ["order.filled"], secret: "s".repeat(16) } },
  OPEN_AT,
  { webhookId: "wh_1" }
).webhook
const ids = { eventId: "evt_1", deliveryId: "dlv_1" }
const prepared = (sandbox = true) => decideTestDelivery(webhook, { sandbox }, OPEN_AT, ids)

describe("the test delivery", () => {
  it("is one attempt under way, outside the event log, with the drawn ids", () => {
    expect(prepared().record).toMatchObject({
      deliveryId: "dlv_1",
      eventId: "evt_1",
      webhookId: "wh_1",
      partition: PARTITION,
      event: "test.event",
      position: null,
      attempts: 1,
      state: "sending",
      lastAttemptAt: OPEN_AT,
      nextAttemptAt: null
    })
  })

  it("is not a success while under way: the listing shows it undelivered until its answer comes", () => {
    const { record } = prepared()
    expect([record.success, record.statusCode, record.latencyMs]).toEqual([false, null, null])
  })

  it("sends an envelope that says test, and isSandbox only in the sandbox", () => {
    const sandbox = JSON.parse(prepared(true).body)
    expect(sandbox).toEqual({
      eventId: "evt_1",
      event: "test.event",
      timestamp: new Date(OPEN_AT).toISOString(),
      data: { webhookId: "wh_1", message: "Test event from Sokoni", test: true },
      isSandbox: true
    })
    expect(JSON.parse(prepared(false).body)).not.toHaveProperty("isSandbox")
  })
})

describe("the outcome", () => {
  const answered = (status: number): AttemptResult => ({ kind: "answered", status, latencyMs: 12 })

  it("is delivered exactly on a 2xx answer", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 599 }), (status) => {
        const { record, answer } = decideTestOutcome(webhook, prepared().record, answered(status), 8_000)
        const ok = status >= 200 && status < 300
        return record.success === ok && record.state === (ok ? "delivered" : "failed") && record.statusCode === status && answer instanceof ApiFailure !== ok
      })
    )
  })

  it("answers the delivered event's id and the endpoint", () => {
    expect(decideTestOutcome(webhook, prepared().record, answered(204), 8_000).answer).toEqual({
      success: true,
      eventId: "evt_1",
      message: "Test event delivered",
      webhookId: "wh_1",
      url: webhook.url,
      httpStatus: 204
    })
  })

  it("a failure is WEBHOOK_TEST_FAILED saying why, with no status when nothing answered", () => {
    const why = (result: AttemptResult) => {
      const { record, answer } = decideTestOutcome(webhook, prepared().record, result, 8_000)
      if (!(answer instanceof ApiFailure)) throw new Error("expected a refusal")
      return { code: answer.code, message: answer.message, httpStatus: answer.extras?.httpStatus, latencyMs: record.latencyMs }
    }
    expect(why(answered(500))).toEqual({ code: "WEBHOOK_TEST_FAILED", message: "the endpoint answered 500", httpStatus: 500, latencyMs: 12 })
    expect(why({ kind: "timeout" })).toEqual({
      code: "WEBHOOK_TEST_FAILED",
      message: "the endpoint did not answer within 8 s",
      httpStatus: null,
      latencyMs: null
    })
    expect(why({ kind: "unreachable" }).message).toBe("the endpoint is unreachable")
  })
})

describe("the listing's projection", () => {
  it("dates a delivery by its last attempt, or by its creation before any", () => {
    const record = prepared().record
    expect(deliveryToWire({ ...record, lastAttemptAt: OPEN_AT + 5_000 }).deliveredAt).toBe(new Date(OPEN_AT + 5_000).toISOString())
    expect(deliveryToWire({ ...record, lastAttemptAt: null }).deliveredAt).toBe(new Date(OPEN_AT).toISOString())
    expect(deliveryToWire({ ...record, nextAttemptAt: OPEN_AT + 30_000 }).nextAttemptAt).toBe(new Date(OPEN_AT + 30_000).toISOString())
  })
})
