/**
 * Webhook registrations' rules (D-054, D-055, E-070) as pure functions: what a create or update request may say (an
 * HTTPS URL, catalogue events named once, a secret of 16 characters or more), the 20 registrations per partner
 * environment, who owns a registration, what create, update (a secret rotation included) and delete leave stored,
 * and when a registration starts the market.status watch (D-232). The dispatcher (app/webhooks/service.ts) checks the
 * request before its transaction, draws a new registration's id only once the cap allows it (E-350) and writes the
 * plan. The signed test event's record and outcome (D-056) are in decide-test.ts.
 * Owns: these rules and the Webhook answer. Does not own storing registrations, the watch itself nor deliveries.
 */
import { EVENT_NAMES as CONTRACT_EVENT_NAMES } from "../../contract/catalogue.gen.ts"
import type { Schemas } from "../../contract/wire.ts"
import { ApiFailure, fail } from "../errors.ts"

export const MAX_WEBHOOKS = 20
export const MIN_SECRET_LENGTH = 16

/** The event that tells receivers of exchange phase changes: a live registration naming it needs the watch running. */
export const MARKET_STATUS_EVENT = "market.status"

/** The event catalogue, from the contract's EventName (aliases included): the names a webhook may subscribe to. */
export const EVENT_NAMES: ReadonlyArray<string> = CONTRACT_EVENT_NAMES

/** A partner's webhook registration (app/docs.ts Webhooks); a deleted one is kept out of the live partition. */
export interface WebhookRecord {
  readonly id: string
  readonly partition: string
  readonly url: string
  readonly events: ReadonlyArray<string>
  readonly secret: string
  readonly status: "active" | "disabled"
  readonly deleted: boolean
  readonly createdAt: number
  /** Deliveries in a row that exhausted every attempt (D-055: 20 disables the webhook). */
  readonly consecutiveFailures: number
}

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

/** What a write leaves stored: the registration, in the live partition or (deleted) out of it. */
export interface WebhookPlan<A> {
  readonly webhook: WebhookRecord
  readonly placement: "live" | "deleted"
  /** The registration is live and names market.status: the watch must run (started unless it already does). */
  readonly startsMarketWatch: boolean
  readonly answer: A
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"])

/** HTTPS, or (simulation only, E-070) plain http to a loopback address so a local receiver can be used. */
export const checkUrl = (url: string): string | ApiFailure => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return fail("VALIDATION_ERROR", "url must be an absolute HTTPS URL", { param: "url" })
  }
  if (parsed.protocol === "https:" || (parsed.protocol === "http:" && LOOPBACK_HOSTS.has(parsed.hostname))) return url
  return fail("VALIDATION_ERROR", "url must use HTTPS (plain http is accepted only for a loopback address)", { param: "url" })
}

/** At least one name, each from the catalogue, none twice (checked in that order: the first broken rule answers). */
export const checkEvents = (events: ReadonlyArray<string>): ReadonlyArray<string> | ApiFailure => {
  if (events.length === 0) return fail("VALIDATION_ERROR", "events must name at least one catalogue event", { param: "events" })
  const unknown = events.filter((e) => !EVENT_NAMES.includes(e))
  if (unknown.length > 0) return fail("VALIDATION_ERROR", `unknown events: ${unknown.join(", ")}`, { param: "events", invalid: unknown })
  if (new Set(events).size !== events.length) return fail("VALIDATION_ERROR", "events must not repeat a name", { param: "events" })
  return events
}

export const checkSecret = (secret: string): string | ApiFailure =>
  secret.length >= MIN_SECRET_LENGTH ? secret : fail("VALIDATION_ERROR", `secret must be at least ${MIN_SECRET_LENGTH} characters`, { param: "secret" })

/** A create request's terms, checked in the order url, events, secret (the first broken rule answers). */
export const checkCreate = (input: CreateWebhookInput): CreateWebhookInput | ApiFailure => {
  const url = checkUrl(input.url)
  if (url instanceof ApiFailure) return url
  const events = checkEvents(input.events)
  if (events instanceof ApiFailure) return events
  const secret = checkSecret(input.secret)
  return secret instanceof ApiFailure ? secret : { url, events, secret }
}

/** An update request's terms: at least one field, and each given field valid (url, events, secret in that order). */
export const checkUpdate = (input: UpdateWebhookInput): UpdateWebhookInput | ApiFailure => {
  if (input.url === undefined && input.events === undefined && input.secret === undefined && input.status === undefined)
    return fail("VALIDATION_ERROR", "give at least one of url, events, secret, status")
  const url = input.url === undefined ? undefined : checkUrl(input.url)
  if (url instanceof ApiFailure) return url
  const events = input.events === undefined ? undefined : checkEvents(input.events)
  if (events instanceof ApiFailure) return events
  const secret = input.secret === undefined ? undefined : checkSecret(input.secret)
  if (secret instanceof ApiFailure) return secret
  return { url, events, secret, status: input.status }
}

/** At most 20 registrations per partner environment (deleted ones no longer count). */
export const refuseMoreWebhooks = (liveCount: number): ApiFailure | undefined =>
  liveCount >= MAX_WEBHOOKS ? fail("VALIDATION_ERROR", `at most ${MAX_WEBHOOKS} webhooks per partner and environment`, { limit: MAX_WEBHOOKS }) : undefined

/** The caller's live registration, or 404: another partner's or environment's id, and a deleted one, are unknown. */
export const ownedWebhook = (found: WebhookRecord | undefined, partition: string, id: string): WebhookRecord | ApiFailure =>
  found !== undefined && found.partition === partition && !found.deleted ? found : fail("NOT_FOUND", `no webhook ${id}`)

export const webhookToWire = (w: WebhookRecord): Schemas["Webhook"] => ({ id: w.id, url: w.url, events: [...w.events], status: w.status })

const watches = (w: WebhookRecord) => w.status === "active" && w.events.includes(MARKET_STATUS_EVENT)

/** A new registration (terms already checked, the cap already passed): active, no failures yet. */
export const decideCreateWebhook = (
  command: { readonly partition: string; readonly input: CreateWebhookInput },
  now: number,
  ids: { readonly webhookId: string }
): WebhookPlan<Schemas["Webhook"]> => {
  const { partition, input } = command
  const webhook: WebhookRecord = {
    id: ids.webhookId,
    partition,
    url: input.url,
    events: input.events,
    secret: input.secret,
    status: "active",
    deleted: false,
    createdAt: now,
    consecutiveFailures: 0
  }
  // A new registration is active, so naming market.status is enough to need the watch.
  return { webhook, placement: "live", startsMarketWatch: input.events.includes(MARKET_STATUS_EVENT), answer: webhookToWire(webhook) }
}

/**
 * An update of the caller's registration: the fields given replace the stored ones (a new secret signs every later
 * attempt, in-flight deliveries included: rotation); setting `active` starts the failure count again (D-055).
 */
export const decideUpdateWebhook = (
  found: WebhookRecord | undefined,
  command: { readonly partition: string; readonly id: string; readonly input: UpdateWebhookInput }
): WebhookPlan<Schemas["Webhook"]> | ApiFailure => {
  const current = ownedWebhook(found, command.partition, command.id)
  if (current instanceof ApiFailure) return current
  const { input } = command
  const webhook: WebhookRecord = {
    ...current,
    url: input.url ?? current.url,
    events: input.events ?? current.events,
    secret: input.secret ?? current.secret,
    status: input.status ?? current.status,
    consecutiveFailures: input.status === "active" ? 0 : current.consecutiveFailures
  }
  return { webhook, placement: "live", startsMarketWatch: watches(webhook), answer: webhookToWire(webhook) }
}

/** Deleting: the registration is kept, marked deleted and out of the live partition, so in-flight deliveries still sign and send. */
export const decideDeleteWebhook = (
  found: WebhookRecord | undefined,
  command: { readonly partition: string; readonly id: string }
): WebhookPlan<Schemas["MessageResponse"]> | ApiFailure => {
  const current = ownedWebhook(found, command.partition, command.id)
  if (current instanceof ApiFailure) return current
  return {
    webhook: { ...current, deleted: true },
    placement: "deleted",
    startsMarketWatch: false,
    answer: { message: `Webhook ${command.id} deleted; deliveries already under way still complete` }
  }
}
