/**
 * Where asset subscriptions live in the store, and the one question other services ask of them (how many are
 * pending for an account, for the closure blockers). Owns naming and reading only; the lifecycle is
 * app/subscriptions/'s. Kept apart so accounts.ts can read it without importing the service (which imports it).
 *
 * A subscription is stored once, in its account's child partition (`partnerId:env/master` or `.../usr_...`), sorted by
 * (creation time, id): an account's list reads only its own rows, a sandbox reset wipes them with the parent, and a
 * read by id (`GET /subscriptions/{id}`) checks the record's own partner partition.
 */
import { Effect } from "effect"
import type { SubscriptionRecord } from "../domain/subscription.ts"
import type { ReadTx, StoreError, Tx } from "../store/port.ts"
import { SubscriptionShape } from "./doc-shapes.ts"
import { accountPartition, collection, timeSortKey } from "./docs.ts"

export const SUBSCRIPTIONS = "subscriptions"
/** The subscriptions, read through their shape (doc-shapes.ts). */
export const Subscriptions = collection<SubscriptionRecord>(SUBSCRIPTIONS, SubscriptionShape)

/** The partition of `account`'s subscriptions (`master` too): a child of the partner's, wiped with it. */
export const subscriptionPartition = (partition: string, account: string) => accountPartition(partition, account)

export const saveSubscription = (tx: Tx, r: SubscriptionRecord): Effect.Effect<void, StoreError> =>
  tx.put(SUBSCRIPTIONS, {
    id: r.subscriptionId,
    partition: subscriptionPartition(r.partition, r.account),
    sortKey: timeSortKey(r.createdAt, r.subscriptionId),
    body: r
  })

/** PENDING subscriptions of `account` (a scan of its own rows). */
export const pendingSubscriptionCount = (tx: ReadTx, partition: string, account: string): Effect.Effect<number, StoreError> =>
  Effect.gen(function* () {
    let count = 0
    let after: string | undefined
    for (;;) {
      const page = yield* Subscriptions.listDocs(tx, { partition: subscriptionPartition(partition, account), after, limit: 1000, order: "asc" })
      for (const d of page) if (d.body.status === "PENDING") count++
      if (page.length < 1000) return count
      after = page.at(-1)?.sortKey
    }
  })
