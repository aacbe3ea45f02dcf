/**
 * Webhooks: partners' registrations (create, list, update, delete), the signed test event and the delivery records'
 * listing. Owns the registration rules (HTTPS, catalogue events, secret length, 20 per partition, D-054/D-055) and
 * the test endpoint's outcome (D-056); a registration subscribing to `market.status` starts the market watch
 * (app/market-calendar.ts, D-232). Does not own deliveries of business events (events/webhook-delivery.ts) nor the
 * transport (sim/outbound.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { TIMEOUT_MS, WebhookDelivery } from "../events/webhook-delivery.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Store, type StoreError } from "../store/port.ts"
import { checkLimit, decodeCursor, encodeCursor } from "./cursor.ts"
import { EVENT_NAMES as CONTRACT_EVENT_NAMES } from "../contract/catalogue.gen.ts"
import { MARKET_STATUS_EVENT, startMarketWatch } from "./market-calendar.ts"
import { Deliveries, type DeliveryDoc, deletedWebhookPartition, deliveryPartition, timeSortKey, type WebhookDoc, Webhooks } from "./docs.ts"
import { isSandboxPartition, type Principal } from "./principal.ts"

export const MAX_WEBHOOKS = 20
export const MIN_SECRET_LENGTH = 16

/** The event catalogue, from the contract's EventName (aliases included): the names a webhook may subscribe to. */
export const EVENT_NAMES: ReadonlyArray<string> = CONTRACT_EVENT_NAMES

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

/** HTTPS, or (simulation only, E-070) plain http to a loopback address so a local receiver can be used. */
export const checkUrl = (url: string) => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return fail("VALIDATION_ERROR", "url must be an absolute HTTPS URL", { param: "url" })
  }
  if (parsed.protocol === "https:" || (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname))) return url
  return fail("VALIDATION_ERROR", "url must use HTTPS (plain http is accepted only for a loopback address)", { param: "url" })
}

export const checkEvents = (events: ReadonlyArray<string>) => {
  if (events.length === 0) return fail("VALIDATION_ERROR", "events must name at least one catalogue event", { param: "events" })
  const unknown = events.filter((e) => !EVENT_NAMES.includes(e))
  if (unknown.length > 0) return fail("VALIDATION_ERROR", `unknown events: ${unknown.join(", ")}`, { param: "events", invalid: unknown })
  if (new Set(events).size !== events.length) return fail("VALIDATION_ERROR", "events must not repeat a name", { param: "events" })
  return events
}

export const checkSecret = (secret: string) =>
  secret.length >= MIN_SECRET_LENGTH ? secret : fail("VALIDATION_ERROR", `secret must be at least ${MIN_SECRET_LENGTH} characters`, { param: "secret" })

export interface CreateWebhookInput {
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly secret: string
}

export interface UpdateWebhookInput {
  readonly url?: string | undefined
  readonly events?: ReadonlyArray<string> | undefined
  readonly secret?: string | undefined
  readonly status?: "active" | "disabled" | undefined
}

const toWire = (w: WebhookDoc): Schemas["Webhook"] => ({ id: w.id, url: w.url, events: [...w.events], status: w.status })

const toRecord = (d: DeliveryDoc): Schemas["DeliveryRecord"] => ({
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

export class WebhookService extends Context.Service<
  WebhookService,
  {
    readonly create: (principal: Principal, input: CreateWebhookInput) => Effect.Effect<Schemas["Webhook"], ApiFailure | StoreError>
    readonly list: (principal: Principal) => Effect.Effect<Schemas["WebhookList"], StoreError>
    readonly update: (principal: Principal, id: string, input: UpdateWebhookInput) => Effect.Effect<Schemas["Webhook"], ApiFailure | StoreError>
    readonly remove: (principal: Principal, id: string) => Effect.Effect<Schemas["MessageResponse"], ApiFailure | StoreError>
    readonly test: (principal: Principal, id: string) => Effect.Effect<Schemas["WebhookTestResult"], ApiFailure | StoreError>
    readonly deliveries: (
      principal: Principal,
      id: string,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) => Effect.Effect<Schemas["DeliveryList"], ApiFailure | StoreError>
  }
>()("sokoni/WebhookService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const delivery = yield* WebhookDelivery

    const notFound = (id: string) => fail("NOT_FOUND", `no webhook ${id}`)

    /** The caller's live (not deleted) registration, or 404: another partner's or environment's id is unknown. */
    const owned = (doc: Option.Option<WebhookDoc>, principal: Principal, id: string) =>
      Option.isSome(doc) && doc.value.partition === principal.partition && !doc.value.deleted ? Effect.succeed(doc.value) : Effect.fail(notFound(id))

    const create = Effect.fn("WebhookService.create")(function* (principal: Principal, input: CreateWebhookInput) {
      const url = yield* liftFailure(checkUrl(input.url))
      const events = yield* liftFailure(checkEvents(input.events))
      const secret = yield* liftFailure(checkSecret(input.secret))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const existing = yield* Webhooks.list(tx, principal.partition, { limit: MAX_WEBHOOKS + 1, order: "asc" })
          if (existing.length >= MAX_WEBHOOKS)
            return yield* Effect.fail(fail("VALIDATION_ERROR", `at most ${MAX_WEBHOOKS} webhooks per partner and environment`, { limit: MAX_WEBHOOKS }))
          const id = yield* entropy.id("wh")
          const createdAt = yield* clock.now
          const doc: WebhookDoc = {
            id,
            partition: principal.partition,
            url,
            events,
            secret,
            status: "active",
            deleted: false,
            createdAt,
            consecutiveFailures: 0
          }
          yield* Webhooks.put(tx, id, principal.partition, timeSortKey(createdAt, id), doc)
          if (events.includes(MARKET_STATUS_EVENT)) yield* startMarketWatch(tx, createdAt)
          return toWire(doc)
        })
      )
    })

    const list = Effect.fn("WebhookService.list")(function* (principal: Principal) {
      const docs = yield* store.read((tx) => Webhooks.list(tx, principal.partition, { limit: MAX_WEBHOOKS, order: "asc" }))
      const answer: Schemas["WebhookList"] = { webhooks: docs.map(toWire) }
      return answer
    })

    const update = Effect.fn("WebhookService.update")(function* (principal: Principal, id: string, input: UpdateWebhookInput) {
      if (input.url === undefined && input.events === undefined && input.secret === undefined && input.status === undefined)
        return yield* Effect.fail(fail("VALIDATION_ERROR", "give at least one of url, events, secret, status"))
      const url = input.url === undefined ? undefined : yield* liftFailure(checkUrl(input.url))
      const events = input.events === undefined ? undefined : yield* liftFailure(checkEvents(input.events))
      const secret = input.secret === undefined ? undefined : yield* liftFailure(checkSecret(input.secret))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const current = yield* owned(yield* Webhooks.get(tx, id), principal, id)
          const next: WebhookDoc = {
            ...current,
            url: url ?? current.url,
            events: events ?? current.events,
            secret: secret ?? current.secret,
            status: input.status ?? current.status,
            // Re-enabling starts the failure count again (D-055).
            consecutiveFailures: input.status === "active" ? 0 : current.consecutiveFailures
          }
          yield* Webhooks.put(tx, id, principal.partition, timeSortKey(current.createdAt, id), next)
          if (next.status === "active" && next.events.includes(MARKET_STATUS_EVENT)) yield* startMarketWatch(tx, yield* clock.now)
          return toWire(next)
        })
      )
    })

    const remove = Effect.fn("WebhookService.remove")(function* (principal: Principal, id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const current = yield* owned(yield* Webhooks.get(tx, id), principal, id)
          // Kept (out of the live partition) so its in-flight deliveries can still sign and send.
          yield* Webhooks.put(tx, id, deletedWebhookPartition(principal.partition), timeSortKey(current.createdAt, id), { ...current, deleted: true })
          const answer: Schemas["MessageResponse"] = { message: `Webhook ${id} deleted; deliveries already under way still complete` }
          return answer
        })
      )
    })

    /** D-056: one signed test.event, one attempt, recorded like any delivery; 502 unless 2xx within 8 s. */
    const test = Effect.fn("WebhookService.test")(function* (principal: Principal, id: string) {
      const prepared = yield* store.transact((tx) =>
        Effect.gen(function* () {
          const webhook = yield* owned(yield* Webhooks.get(tx, id), principal, id)
          const eventId = yield* entropy.id("evt")
          const deliveryId = yield* entropy.id("dlv")
          const now = yield* clock.now
          const record: DeliveryDoc = {
            deliveryId,
            webhookId: id,
            partition: principal.partition,
            eventId,
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
          yield* Deliveries.put(tx, deliveryId, deliveryPartition(principal.partition, id), timeSortKey(now, deliveryId), record)
          return { webhook, record }
        })
      )
      const { webhook, record } = prepared
      const envelope = {
        eventId: record.eventId,
        event: "test.event",
        timestamp: isoAt(record.createdAt),
        data: { webhookId: id, message: "Test event from Sokoni", test: true },
        ...(isSandboxPartition(principal.partition) ? { isSandbox: true } : {})
      }
      const result = yield* delivery.send(webhook, JSON.stringify(envelope))
      const httpStatus = result.kind === "answered" ? result.status : null
      const success = httpStatus !== null && httpStatus >= 200 && httpStatus < 300
      yield* store.transact((tx) =>
        Deliveries.put(tx, record.deliveryId, deliveryPartition(principal.partition, id), timeSortKey(record.createdAt, record.deliveryId), {
          ...record,
          state: success ? "delivered" : "failed",
          success,
          statusCode: httpStatus,
          latencyMs: result.kind === "answered" ? result.latencyMs : null
        })
      )
      if (!success) {
        const why =
          result.kind === "answered"
            ? `answered ${result.status}`
            : result.kind === "timeout"
              ? `did not answer within ${TIMEOUT_MS / 1000} s`
              : "is unreachable"
        return yield* Effect.fail(fail("WEBHOOK_TEST_FAILED", `the endpoint ${why}`, { httpStatus, eventId: record.eventId }))
      }
      const answer: Schemas["WebhookTestResult"] = {
        success,
        eventId: record.eventId,
        message: "Test event delivered",
        webhookId: id,
        url: webhook.url,
        httpStatus
      }
      return answer
    })

    const deliveries = Effect.fn("WebhookService.deliveries")(function* (
      principal: Principal,
      id: string,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) {
      const limit = yield* liftFailure(checkLimit(query.limit, 20, 100))
      const scope = `deliveries|${principal.partition}|${id}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          yield* owned(yield* Webhooks.get(tx, id), principal, id)
          const docs = yield* tx.list(Deliveries.name, { partition: deliveryPartition(principal.partition, id), after, limit: limit + 1, order: "desc" })
          const page = docs.slice(0, limit)
          const hasMore = docs.length > limit
          // A delivery whose first attempt is still to come has no attempt to report yet.
          const records = page.map((d) => d.body as DeliveryDoc).filter((d) => d.attempts > 0)
          const answer: Schemas["DeliveryList"] = {
            deliveries: records.map(toRecord),
            count: records.length,
            hasMore,
            nextCursor: hasMore ? encodeCursor(scope, page.at(-1)?.sortKey ?? "") : null
          }
          return answer
        })
      )
    })

    return WebhookService.of({ create, list, update, remove, test, deliveries })
  })

  static readonly layer = Layer.effect(WebhookService, WebhookService.make)
}
