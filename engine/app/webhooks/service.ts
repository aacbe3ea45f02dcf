/**
 * Webhooks: partners' registrations (create, list, update, delete), the signed test event and the delivery records'
 * listing, as dispatchers. A command's request is checked before its transaction (guards write nothing); the
 * transaction loads the registration, asks the rule (domain/webhooks/) and writes its plan: the registration, and the
 * market watch when a live registration names `market.status` (app/market-calendar.ts, D-232). Ids are drawn only
 * once the rule accepted the command (E-350).
 * Owns: the registrations' storage and the transactions. Does not own the rules (domain/webhooks/), deliveries of
 * business events (events/webhook-delivery.ts) nor the transport (sim/outbound.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { decideTestDelivery, decideTestOutcome, deliveryToWire } from "../../domain/webhooks/decide-test.ts"
import {
  type CreateWebhookInput,
  checkCreate,
  checkUpdate,
  decideCreateWebhook,
  decideDeleteWebhook,
  decideUpdateWebhook,
  MAX_WEBHOOKS,
  ownedWebhook,
  refuseMoreWebhooks,
  type UpdateWebhookInput,
  type WebhookPlan,
  webhookToWire
} from "../../domain/webhooks/decide-webhook.ts"
import { TIMEOUT_MS, WebhookDelivery } from "../../events/webhook-delivery.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { checkLimit, decodeCursor, encodeCursor } from "../cursor.ts"
import { Deliveries, deletedWebhookPartition, deliveryPartition, timeSortKey, Webhooks } from "../docs.ts"
import { startMarketWatch } from "../market-calendar.ts"
import { isSandboxPartition, type Principal } from "../principal.ts"

/** The registration `id` as stored, if any (whoever owns it: the rule decides). */
const loadWebhook = (tx: ReadTx, id: string) => Effect.map(Webhooks.get(tx, id), Option.getOrUndefined)

/** Writes a registration plan in `tx`: the registration where the plan places it, then the watch if it needs one. */
const writePlan = <A>(tx: Tx, plan: WebhookPlan<A>, now: number) =>
  Effect.gen(function* () {
    const w = plan.webhook
    const partition = plan.placement === "live" ? w.partition : deletedWebhookPartition(w.partition)
    yield* Webhooks.put(tx, w.id, partition, timeSortKey(w.createdAt, w.id), w)
    if (plan.startsMarketWatch) yield* startMarketWatch(tx, now)
    return plan.answer
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

    const create = Effect.fn("WebhookService.create")(function* (principal: Principal, input: CreateWebhookInput) {
      const checked = yield* liftFailure(checkCreate(input))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const existing = yield* Webhooks.list(tx, principal.partition, { limit: MAX_WEBHOOKS + 1, order: "asc" })
          const refused = refuseMoreWebhooks(existing.length)
          if (refused !== undefined) return yield* Effect.fail(refused)
          const webhookId = yield* entropy.idHere("wh")
          const now = yield* clock.nowHere()
          const plan = decideCreateWebhook({ partition: principal.partition, input: checked }, now, { webhookId })
          return yield* writePlan(tx, plan, now)
        })
      )
    })

    const list = Effect.fn("WebhookService.list")(function* (principal: Principal) {
      const docs = yield* store.read((tx) => Webhooks.list(tx, principal.partition, { limit: MAX_WEBHOOKS, order: "asc" }))
      const answer: Schemas["WebhookList"] = { webhooks: docs.map(webhookToWire) }
      return answer
    })

    const update = Effect.fn("WebhookService.update")(function* (principal: Principal, id: string, input: UpdateWebhookInput) {
      const checked = yield* liftFailure(checkUpdate(input))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const plan = yield* liftFailure(decideUpdateWebhook(yield* loadWebhook(tx, id), { partition: principal.partition, id, input: checked }))
          return yield* writePlan(tx, plan, yield* clock.nowHere())
        })
      )
    })

    const remove = Effect.fn("WebhookService.remove")(function* (principal: Principal, id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const plan = yield* liftFailure(decideDeleteWebhook(yield* loadWebhook(tx, id), { partition: principal.partition, id }))
          return yield* writePlan(tx, plan, yield* clock.nowHere())
        })
      )
    })

    /** D-056: the record written `sending`, one attempt outside every transaction, then its outcome written. */
    const test = Effect.fn("WebhookService.test")(function* (principal: Principal, id: string) {
      const { webhook, prepared } = yield* store.transact((tx) =>
        Effect.gen(function* () {
          const webhook = yield* liftFailure(ownedWebhook(yield* loadWebhook(tx, id), principal.partition, id))
          const eventId = yield* entropy.idHere("evt")
          const deliveryId = yield* entropy.idHere("dlv")
          const prepared = decideTestDelivery(webhook, { sandbox: isSandboxPartition(principal.partition) }, yield* clock.nowHere(), { eventId, deliveryId })
          const r = prepared.record
          yield* Deliveries.put(tx, r.deliveryId, deliveryPartition(r.partition, r.webhookId), timeSortKey(r.createdAt, r.deliveryId), r)
          return { webhook, prepared }
        })
      )
      const result = yield* delivery.send(webhook, prepared.body)
      const outcome = decideTestOutcome(webhook, prepared.record, result, TIMEOUT_MS)
      const r = outcome.record
      yield* store.transact((tx) => Deliveries.put(tx, r.deliveryId, deliveryPartition(r.partition, r.webhookId), timeSortKey(r.createdAt, r.deliveryId), r))
      return yield* liftFailure(outcome.answer)
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
          yield* liftFailure(ownedWebhook(yield* loadWebhook(tx, id), principal.partition, id))
          const docs = yield* Deliveries.listDocs(tx, { partition: deliveryPartition(principal.partition, id), after, limit: limit + 1, order: "desc" })
          const page = docs.slice(0, limit)
          const hasMore = docs.length > limit
          // A delivery whose first attempt is still to come has no attempt to report yet.
          const records = page.map((d) => d.body).filter((d) => d.attempts > 0)
          const answer: Schemas["DeliveryList"] = {
            deliveries: records.map(deliveryToWire),
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
