/**
 * Webhook routes (contract tag "Webhooks"): registrations, the signed test event and delivery records. The bodies
 * mirror CreateWebhookRequest and UpdateWebhookRequest (types only); the rules (HTTPS, catalogue, secret length,
 * at most 20) are domain/webhooks/decide-webhook.ts's. Decoding only.
 */
import { Schema } from "effect"
import { WebhookService } from "../../app/webhooks/service.ts"
import { integer, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"

export const CreateWebhookBody = Schema.Struct({
  url: Schema.String,
  events: Schema.Array(Schema.String),
  secret: Schema.String
})

export const UpdateWebhookBody = Schema.Struct({
  url: Schema.optionalKey(Schema.String),
  events: Schema.optionalKey(Schema.Array(Schema.String)),
  secret: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.Literals(["active", "disabled"]))
})

const id = { id: required(text) }

export const webhookRoutes = [
  partnerRoute("createWebhook", 201, {
    body: CreateWebhookBody,
    handle: ({ body, principal }) => WebhookService.use((w) => w.create(principal, body))
  }),
  partnerRoute("listWebhooks", 200, {
    handle: ({ principal }) => WebhookService.use((w) => w.list(principal))
  }),
  partnerRoute("updateWebhook", 200, {
    params: id,
    body: UpdateWebhookBody,
    handle: ({ params, body, principal }) => WebhookService.use((w) => w.update(principal, params.id, body))
  }),
  partnerRoute("deleteWebhook", 200, {
    params: id,
    handle: ({ params, principal }) => WebhookService.use((w) => w.remove(principal, params.id))
  }),
  partnerRoute("testWebhook", 200, {
    params: id,
    handle: ({ params, principal }) => WebhookService.use((w) => w.test(principal, params.id))
  }),
  partnerRoute("listWebhookDeliveries", 200, {
    params: id,
    query: { limit: optional(integer({ min: 1, max: 100 })), ...PAGE },
    handle: ({ params, query, principal }) => WebhookService.use((w) => w.deliveries(principal, params.id, query))
  })
]
