/**
 * Registering webhooks (domain/webhooks/decide-webhook.ts): a URL is HTTPS or loopback http, events come from the
 * catalogue once each, a secret has 16 characters or more, a partner environment holds at most 20 registrations,
 * only the owner's live registration can be changed or deleted, an update replaces only what it gives (a new secret
 * is a rotation) and re-enabling clears the failure count, and a live registration naming market.status starts the
 * market watch.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import {
  checkCreate,
  checkEvents,
  checkSecret,
  checkUpdate,
  checkUrl,
  decideCreateWebhook,
  decideDeleteWebhook,
  decideUpdateWebhook,
  EVENT_NAMES,
  MARKET_STATUS_EVENT,
  MAX_WEBHOOKS,
  MIN_SECRET_LENGTH,
  refuseMoreWebhooks,
  type WebhookRecord
} from "../../engine/domain/webhooks/decide-webhook.ts"
import { accepted, codeOf, OPEN_AT, PARTITION } from "./decider-fixtures.ts"

const SECRET = "s".repeat(MIN_SECRET_LENGTH)
const input = { url: "https://example.com/hook", events: ["order.filled"], secret: SECRET }
const created = (over: Partial<WebhookRecord> = {}): WebhookRecord => ({
  ...decideCreateWebhook({ partition: PARTITION, input }, OPEN_AT, { webhookId: "wh_1" }).webhook,
  ...over
})
const paramOf = (value: unknown) => (value instanceof ApiFailure ? value.extras?.param : undefined)

describe("the URL rule", () => {
  it("accepts any https URL and plain http only to a loopback host", () => {
    const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}\.(com|ke|io)$/)
    fc.assert(fc.property(host, (h) => checkUrl(`https://${h}/x`) === `https://${h}/x`))
    fc.assert(fc.property(host, (h) => codeOf(checkUrl(`http://${h}/x`)) === "VALIDATION_ERROR"))
    for (const loopback of ["http://127.0.0.1:9000/in", "http://localhost/in", "http://[::1]:8080/"]) expect(checkUrl(loopback)).toBe(loopback)
  })

  it("refuses what is not an absolute URL, and other schemes", () => {
    for (const bad of ["example.com/hook", "/relative", "", "ftp://example.com/", "ws://localhost/"]) {
      expect(codeOf(checkUrl(bad))).toBe("VALIDATION_ERROR")
      expect(paramOf(checkUrl(bad))).toBe("url")
    }
  })
})

describe("the events and secret rules", () => {
  it("accepts any non-empty set of catalogue names, refuses an empty list, a repeat and an unknown name", () => {
    const names = fc.uniqueArray(fc.constantFrom(...EVENT_NAMES), { minLength: 1 })
    fc.assert(fc.property(names, (es) => checkEvents(es) === es))
    fc.assert(fc.property(names, (es) => codeOf(checkEvents([...es, es[0] ?? ""])) === "VALIDATION_ERROR"))
    expect(codeOf(checkEvents([]))).toBe("VALIDATION_ERROR")
    const unknown = checkEvents(["order.filled", "order.teleported"])
    expect(unknown instanceof ApiFailure && unknown.extras?.invalid).toEqual(["order.teleported"])
  })

  it("a secret needs at least 16 characters", () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }), (s) => s.length >= MIN_SECRET_LENGTH === (checkSecret(s) === s)))
  })

  it("checks a create's url, then events, then secret: the first broken rule answers", () => {
    expect(paramOf(checkCreate({ url: "nope", events: [], secret: "" }))).toBe("url")
    expect(paramOf(checkCreate({ ...input, events: [], secret: "" }))).toBe("events")
    expect(paramOf(checkCreate({ ...input, secret: "short" }))).toBe("secret")
    expect(accepted(checkCreate(input))).toEqual(input)
  })

  it("an update must give something, and what it gives is checked", () => {
    expect(codeOf(checkUpdate({}))).toBe("VALIDATION_ERROR")
    expect(accepted(checkUpdate({ status: "disabled" })).status).toBe("disabled")
    expect(paramOf(checkUpdate({ secret: "short" }))).toBe("secret")
    expect(paramOf(checkUpdate({ url: "http://example.com/", events: [] }))).toBe("url")
  })
})

describe("at most 20 registrations per partner environment", () => {
  it("refuses exactly from the 20th live registration on", () => {
    fc.assert(fc.property(fc.nat(60), (n) => (refuseMoreWebhooks(n) === undefined) === n < MAX_WEBHOOKS))
    expect(refuseMoreWebhooks(MAX_WEBHOOKS)?.extras?.limit).toBe(MAX_WEBHOOKS)
  })
})

describe("creating", () => {
  it("stores an active registration with its drawn id, no failures, and answers without the secret", () => {
    const plan = decideCreateWebhook({ partition: PARTITION, input }, OPEN_AT, { webhookId: "wh_9" })
    expect(plan.webhook).toMatchObject({ id: "wh_9", partition: PARTITION, status: "active", deleted: false, createdAt: OPEN_AT, consecutiveFailures: 0 })
    expect(plan.placement).toBe("live")
    expect(plan.answer).toEqual({ id: "wh_9", url: input.url, events: input.events, status: "active" })
    expect(JSON.stringify(plan.answer)).not.toContain(SECRET)
  })

  it("starts the market watch exactly when the registration names market.status", () => {
    const watching = decideCreateWebhook({ partition: PARTITION, input: { ...input, events: [MARKET_STATUS_EVENT] } }, OPEN_AT, { webhookId: "wh_2" })
    expect(watching.startsMarketWatch).toBe(true)
    expect(decideCreateWebhook({ partition: PARTITION, input }, OPEN_AT, { webhookId: "wh_3" }).startsMarketWatch).toBe(false)
  })
})

describe("who owns a registration", () => {
  it("another partition's, a deleted and an unknown registration are the same 404", () => {
    const command = { partition: PARTITION, id: "wh_1" }
    expect(codeOf(decideDeleteWebhook(undefined, command))).toBe("NOT_FOUND")
    expect(codeOf(decideDeleteWebhook(created({ partition: "ptn_other|sandbox" }), command))).toBe("NOT_FOUND")
    expect(codeOf(decideUpdateWebhook(created({ deleted: true }), { ...command, input: { status: "active" } }))).toBe("NOT_FOUND")
  })
})

describe("updating", () => {
  it("replaces only the fields given; a new secret replaces the old one (rotation)", () => {
    const plan = accepted(decideUpdateWebhook(created(), { partition: PARTITION, id: "wh_1", input: { secret: "n".repeat(20) } }))
    expect(plan.webhook).toEqual({ ...created(), secret: "n".repeat(20) })
  })

  it("re-enabling clears the failure count; anything else keeps it", () => {
    const failing = created({ status: "disabled", consecutiveFailures: 20 })
    const update = (i: Parameters<typeof decideUpdateWebhook>[1]["input"]) =>
      accepted(decideUpdateWebhook(failing, { partition: PARTITION, id: "wh_1", input: i }))
    expect(update({ status: "active" }).webhook.consecutiveFailures).toBe(0)
    expect(update({ url: "https://example.org/" }).webhook.consecutiveFailures).toBe(20)
    expect(update({ status: "disabled" }).webhook.consecutiveFailures).toBe(20)
  })

  it("starts the market watch only when the result is active and names market.status", () => {
    const naming = created({ events: [MARKET_STATUS_EVENT], status: "disabled" })
    const update = (i: Parameters<typeof decideUpdateWebhook>[1]["input"]) =>
      accepted(decideUpdateWebhook(naming, { partition: PARTITION, id: "wh_1", input: i }))
    expect(update({ url: "https://example.org/" }).startsMarketWatch).toBe(false)
    expect(update({ status: "active" }).startsMarketWatch).toBe(true)
    expect(update({ status: "active", events: ["order.filled"] }).startsMarketWatch).toBe(false)
  })
})

describe("deleting", () => {
  it("keeps the registration, marked deleted and out of the live partition", () => {
    const plan = accepted(decideDeleteWebhook(created(), { partition: PARTITION, id: "wh_1" }))
    expect(plan.webhook).toEqual({ ...created(), deleted: true })
    expect(plan.placement).toBe("deleted")
    expect(plan.startsMarketWatch).toBe(false)
    expect(plan.answer.message).toContain("wh_1")
  })
})
