/**
 * Typed access to the documents the app keeps in the store: collection names, ids, sort keys and the body types.
 * Owns nothing but naming and (de)serialising; the store is schemaless JSON and only this module casts it.
 */
import { Effect, Option } from "effect"
import type { OrderRecord } from "../domain/order.ts"
import type { ReadTx, StoreError, Tx } from "../store/port.ts"
import type { Environment, KeyKind, Tier } from "./principal.ts"

export interface PartnerDoc {
  readonly partnerId: string
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
  readonly markupBps: number
  readonly createdAt: number
}

export interface ApiKeyDoc {
  readonly keyHash: string
  readonly partnerId: string
  readonly environment: Environment
  readonly kind: KeyKind
  readonly status: "active" | "revoked"
  readonly last4: string
  readonly createdAt: number
}

export interface WalletDoc {
  readonly cents: number
}

export interface HoldingDoc {
  readonly symbol: string
  readonly quantity: number
  readonly reserved: number
}

/** Per-partition money totals; the conservation invariant is checked against these. */
export interface LedgerDoc {
  readonly seeded: number
  readonly topUps: number
  readonly feesCollected: number
  readonly marketNet: number
}

export interface QuoteDoc {
  readonly quoteId: string
  readonly partition: string
  readonly account: string
  readonly symbol: string
  readonly side: "BUY" | "SELL" | null
  readonly quantity: number | null
  readonly cashValue: number | null
  /** Whole units a cashValue quote buys at its price: the quantity an order on this quote gets. */
  readonly derivedQuantity: number | null
  readonly price: number
  readonly rate: number
  readonly issuedAt: number
  readonly expiresAt: number
  readonly status: "OPEN" | "USED" | "EXPIRED"
}

export interface IdempotencyDoc {
  readonly fingerprint: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  readonly storedAt: number
}

interface Collection<A> {
  readonly name: string
  readonly get: (tx: ReadTx, id: string) => Effect.Effect<Option.Option<A>, StoreError>
  readonly put: (tx: Tx, id: string, partition: string, sortKey: string, body: A) => Effect.Effect<void, StoreError>
  readonly list: (
    tx: ReadTx,
    partition: string,
    options: { after?: string | undefined; limit: number; order: "asc" | "desc" }
  ) => Effect.Effect<ReadonlyArray<A>, StoreError>
}

const collection = <A>(name: string): Collection<A> => ({
  name,
  get: (tx, id) =>
    Effect.map(
      tx.get(name, id),
      Option.map((d) => d.body as A)
    ),
  put: (tx, id, partition, sortKey, body) => tx.put(name, { id, partition, sortKey, body }),
  list: (tx, partition, options) => Effect.map(tx.list(name, { partition, ...options }), (docs) => docs.map((d) => d.body as A))
})

export const Partners = collection<PartnerDoc>("partners")
export const ApiKeys = collection<ApiKeyDoc>("apiKeys")
export const Wallets = collection<WalletDoc>("wallets")
export const Holdings = collection<HoldingDoc>("holdings")
export const Ledgers = collection<LedgerDoc>("ledgers")
export const Quotes = collection<QuoteDoc>("quotes")
export const Orders = collection<OrderRecord>("orders")
export const IdempotencyRecords = collection<IdempotencyDoc>("idempotency")

/** End-user sub-accounts (served with the accounts issue); quotes and orders check that an id exists here. */
export interface SubAccountDoc {
  readonly subAccountId: string
  readonly partition: string
  readonly status: "active" | "frozen" | "closed"
}
export const SubAccounts = collection<SubAccountDoc>("subAccounts")

/** True when `subAccountId` exists in `partition` (another partner's or environment's id does not). */
export const subAccountExists = (tx: ReadTx, partition: string, subAccountId: string) =>
  Effect.map(SubAccounts.get(tx, subAccountId), (found) => Option.isSome(found) && found.value.partition === partition)

/** Sort key that orders by creation time, then id: the same order on every store. */
export const timeSortKey = (createdAt: number, id: string) => `${String(createdAt).padStart(15, "0")}|${id}`

export const walletId = (partition: string, account: string) => `${partition}|${account}`
export const holdingId = (partition: string, account: string, symbol: string) => `${partition}|${account}|${symbol}`

/** A webhook registration. A deleted one moves to the partition `${partition}|deleted` so its in-flight deliveries
 * can still read its url and secret while lists of the live partition no longer see it. */
export interface WebhookDoc {
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
export const Webhooks = collection<WebhookDoc>("webhooks")
export const deletedWebhookPartition = (partition: string) => `${partition}|deleted`

/** One event to one webhook and its attempts (D-057); document partition `${partition}|${webhookId}`. */
export interface DeliveryDoc {
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
  /** The job that runs next for this delivery (next attempt, or the final settle), deleted on success. */
  readonly nextJobSeq: number | null
}
export const Deliveries = collection<DeliveryDoc>("webhookDeliveries")
export const deliveryPartition = (partition: string, webhookId: string) => `${partition}|${webhookId}`
