/**
 * Typed access to the documents the app keeps in the store: collection names, ids, sort keys and the body types.
 * Owns nothing but naming and (de)serialising; the store is schemaless JSON and only this module casts it, after
 * checking the body against its collection's shape where one is given (doc-shapes.ts).
 */
import { Effect, Exit, Option, type Schema } from "effect"
import { joinFlat, shared } from "../domain/strings.ts"
import type { EntryKind, Posting, TransactionType } from "../domain/ledger.ts"
import type { OrderRecord, Side } from "../domain/order.ts"
import type { ActionRecord } from "../domain/reference/corporate-actions.ts"
import type { DividendRecord } from "../domain/reference/dividends.ts"
import type { SubAccountRecord } from "../domain/subaccount.ts"
import type { AlertRecord } from "../domain/alerts/decide-alert.ts"
import type { DeviceRecord } from "../domain/accounts/decide-device.ts"
import type { DeliveryRecord } from "../domain/webhooks/decide-test.ts"
import type { WebhookRecord } from "../domain/webhooks/decide-webhook.ts"
import type { QuoteRecord } from "../domain/trading/decide-quote.ts"
import type { IssuedTokenRecord, OAuthClientRecord } from "../domain/partners/decide-access.ts"
import type { UpgradeRequestRecord } from "../domain/partners/decide-account.ts"
import type { ApiKeyRecord, PartnerRecord } from "../domain/partners/decide-partner.ts"
import type { ApplicationRecord } from "../domain/portal/decide-application.ts"
import type { IncidentRecord } from "../domain/incidents/decide-incident.ts"
import { type Doc, type IdSequence, type ListOptions, putHere, type ReadTx, type StoreError, type Tx } from "../store/port.ts"
import * as Shapes from "./doc-shapes.ts"

/** A partner, in "global": the shape its rules read (domain/partners/decide-partner.ts); absent status means active. */
export type PartnerDoc = PartnerRecord

/** An API key, in "global" by its SHA-256: the shape its rules read (domain/partners/decide-partner.ts). */
export type ApiKeyDoc = ApiKeyRecord

export interface HoldingDoc {
  readonly symbol: string
  readonly quantity: number
  readonly reserved: number
}

/** The stored quote: the shape its rules read (domain/trading/decide-quote.ts). */
export type QuoteDoc = QuoteRecord

/**
 * How long a used or expired quote is kept after its TTL (E-400): a trade on it answers STALE_QUOTE until then, and
 * QUOTE_NOT_FOUND ("expired and collected") after. An open quote carries no keepUntil: it stays until its expiry job
 * marks it expired (and announces quote.expired), however late that job runs.
 */
export const QUOTE_KEPT_AFTER_TTL_MS = 60_000
/** When a quote that is no longer open may be dropped (E-400). */
export const quoteKeepUntil = (quote: Pick<QuoteDoc, "expiresAt">): number => quote.expiresAt + QUOTE_KEPT_AFTER_TTL_MS

export interface IdempotencyDoc {
  readonly fingerprint: string
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
  readonly storedAt: number
  /**
   * Absent on a stored answer. `in_flight` and `released` are claims written by engines before E-289 (a claim
   * committed ahead of its request); a database may still hold some, and the guard takes them for no record.
   */
  readonly state?: "in_flight" | "released"
  /** The number of such an old claim. */
  readonly claim?: number
}

export interface Collection<A> {
  readonly name: string
  readonly get: (tx: ReadTx, id: string) => Effect.Effect<Option.Option<A>, StoreError>
  /** `get`'s answer through `f`: `Effect.map(get(tx, id), f)`, a step less on a store that answers at once (getNow). */
  readonly getWith: <B>(tx: ReadTx, id: string, f: (found: Option.Option<A>) => B) => Effect.Effect<B, StoreError>
  /** `get` with the document's partition and sort key (to write it back where it is), its body checked the same way. */
  readonly getDoc: (tx: ReadTx, id: string) => Effect.Effect<Option.Option<Doc<A>>, StoreError>
  /**
   * `get`, `getWith` and `getDoc` read when called on a store that answers at once (`getNow`), a step less each (the
   * week's jobs, E-451): for `yield*` at once in a generator's body only, like `putHere`.
   */
  readonly getHere: (tx: ReadTx, id: string) => Effect.Effect<Option.Option<A>, StoreError>
  readonly getWithHere: <B>(tx: ReadTx, id: string, f: (found: Option.Option<A>) => B) => Effect.Effect<B, StoreError>
  readonly getDocHere: (tx: ReadTx, id: string) => Effect.Effect<Option.Option<Doc<A>>, StoreError>
  /** `keepUntil`: when the API can no longer return it, so the store may drop it (E-400); absent, it is kept. */
  readonly put: (tx: Tx, id: string, partition: string, sortKey: string, body: A, keepUntil?: number) => Effect.Effect<void, StoreError>
  /** `put` through `putHere` (store/port.ts): written when called, for `yield*` at once in a generator's body only. */
  readonly putHere: (tx: Tx, id: string, partition: string, sortKey: string, body: A, keepUntil?: number) => Effect.Effect<void, StoreError>
  readonly list: (
    tx: ReadTx,
    partition: string,
    options: { after?: string | undefined; limit: number; order: "asc" | "desc" }
  ) => Effect.Effect<ReadonlyArray<A>, StoreError>
  /** `list` with each document's id and sort key (for cursors and filters on the key), its body checked the same way. */
  readonly listDocs: (tx: ReadTx, options: ListOptions) => Effect.Effect<ReadonlyArray<Doc<A>>, StoreError>
}

const noDoc: Effect.Effect<Option.Option<never>> = Effect.succeedNone

/** True when `checked` is a check already passed (a success exit): what it gives is wrapped as it is, without a step. */
const passed = <A>(checked: Effect.Effect<A, StoreError>): checked is Exit.Success<A, StoreError> =>
  Exit.isExit(checked) && Exit.isSuccess(checked as Exit.Exit<A, StoreError>)

/**
 * A collection; with a `shape` (doc-shapes.ts), every body read is checked against it first. Modules that own a
 * collection of their own (listings, audit records, usage, ...) declare it here too, so their reads are checked alike.
 * The money path's collections (orders, ledger, wallet rows, receipts) take no shape: their typed tables decode them
 * on PostgreSQL (store/pg-codec.ts), and the quote->trade path does not pay for a second look.
 */
export const collection = <A>(name: string, shape?: Schema.Codec<A>): Collection<A> => {
  const check = Shapes.checkShape(name, shape)
  const checkDoc = (d: Doc): Effect.Effect<Doc<A>, StoreError> => Effect.map(check(d.id, d.body), () => d as Doc<A>)
  // The continuations of a read, made once per collection rather than per read (issue 25: allocation per command).
  const someBody = Option.match({ onNone: () => Effect.succeedNone, onSome: (d: Doc) => Effect.asSome(check(d.id, d.body)) })
  const someDoc = Option.match({ onNone: () => Effect.succeedNone, onSome: (d: Doc) => Effect.asSome(checkDoc(d)) })
  // A store that holds the document in memory answers at once (`Tx.getNow`): one step, not four (issue 25).
  const bodyNow = (tx: ReadTx, id: string) => {
    const d = tx.getNow?.(name, id)
    if (d === undefined) return noDoc
    const checked = check(d.id, d.body)
    return passed(checked) ? Effect.succeedSome(checked.value) : Effect.asSome(checked)
  }
  const docNow = (tx: ReadTx, id: string) => {
    const d = tx.getNow?.(name, id)
    if (d === undefined) return noDoc
    const checked = check(d.id, d.body)
    return passed(checked) ? Effect.succeedSome(d as Doc<A>) : Effect.asSome(Effect.as(checked, d as Doc<A>))
  }
  /**
   * The bodies of a list, checked: in a plain loop while every check has passed already (the memory store hands back
   * bodies it has seen, E-347; an empty list, the usual webhooks read of an event), else through `Effect.forEach`.
   * A forEach is four steps before its first element (issue 25).
   */
  const bodiesOf = (docs: ReadonlyArray<Doc>): Effect.Effect<ReadonlyArray<A>, StoreError> => {
    const bodies: Array<A> = []
    for (const d of docs) {
      const checked = check(d.id, d.body)
      if (!passed(checked)) return Effect.forEach(docs, (x) => check(x.id, x.body))
      bodies.push(checked.value)
    }
    return Effect.succeed(bodies)
  }
  const docsOf = (docs: ReadonlyArray<Doc>): Effect.Effect<ReadonlyArray<Doc<A>>, StoreError> => {
    for (const d of docs) if (!passed(check(d.id, d.body))) return Effect.forEach(docs, checkDoc)
    return Effect.succeed(docs as ReadonlyArray<Doc<A>>)
  }
  const withNow = <B>(tx: ReadTx, id: string, f: (found: Option.Option<A>) => B): Effect.Effect<B, StoreError> => {
    const d = tx.getNow?.(name, id)
    if (d === undefined) return Effect.succeed(f(Option.none()))
    const checked = check(d.id, d.body)
    return passed(checked) ? Effect.succeed(f(Option.some(checked.value))) : Effect.map(checked, (body) => f(Option.some(body)))
  }
  const getWith: Collection<A>["getWith"] = (tx, id, f) =>
    tx.getNow === undefined ? Effect.map(Effect.flatMap(tx.get(name, id), someBody), f) : Effect.suspend(() => withNow(tx, id, f))
  const get: Collection<A>["get"] = (tx, id) => (tx.getNow === undefined ? Effect.flatMap(tx.get(name, id), someBody) : Effect.suspend(() => bodyNow(tx, id)))
  const getDoc: Collection<A>["getDoc"] = (tx, id) =>
    tx.getNow === undefined ? Effect.flatMap(tx.get(name, id), someDoc) : Effect.suspend(() => docNow(tx, id))
  return {
    name,
    getWith,
    get,
    getDoc,
    getHere: (tx, id) => (tx.getNow === undefined ? get(tx, id) : bodyNow(tx, id)),
    getWithHere: (tx, id, f) => (tx.getNow === undefined ? getWith(tx, id, f) : withNow(tx, id, f)),
    getDocHere: (tx, id) => (tx.getNow === undefined ? getDoc(tx, id) : docNow(tx, id)),
    put: (tx, id, partition, sortKey, body, keepUntil) =>
      tx.put(name, keepUntil === undefined ? { id, partition, sortKey, body } : { id, partition, sortKey, body, keepUntil }),
    putHere: (tx, id, partition, sortKey, body, keepUntil) =>
      putHere(tx, name, keepUntil === undefined ? { id, partition, sortKey, body } : { id, partition, sortKey, body, keepUntil }),
    list: (tx, partition, options) => Effect.flatMap(tx.list(name, { partition, ...options }), bodiesOf),
    listDocs: (tx, options) => Effect.flatMap(tx.list(name, options), docsOf)
  }
}

/**
 * Bumped after every commit that wrote a partner or key document, in this process: caches of credentials compare it,
 * so a key change made here is seen by the very next request (E-052). Process-wide: a bump by another engine in the
 * same process only costs a cache miss.
 */
let credentialsGeneration = 0
export const currentCredentialsGeneration = () => credentialsGeneration
const bumpCredentials = Effect.sync(() => {
  credentialsGeneration += 1
})

/** A collection whose writes invalidate cached credentials once they commit. */
const credentialCollection = <A>(name: string, shape?: Schema.Codec<A>): Collection<A> => {
  const plain = collection<A>(name, shape)
  const put: Collection<A>["put"] = (tx, id, partition, sortKey, body) =>
    Effect.andThen(plain.put(tx, id, partition, sortKey, body), tx.afterCommit(bumpCredentials))
  // No write at once here: the bump must go with the write, and these collections are off the hot path.
  return { ...plain, put, putHere: put }
}

export const Partners = credentialCollection<PartnerDoc>("partners", Shapes.PartnerShape)
export const ApiKeys = credentialCollection<ApiKeyDoc>("apiKeys", Shapes.ApiKeyShape)
export const Holdings = collection<HoldingDoc>("holdings", Shapes.HoldingShape)
export const Quotes = collection<QuoteDoc>("quotes", Shapes.QuoteShape)
export const Orders = collection<OrderRecord>("orders")
export const IdempotencyRecords = collection<IdempotencyDoc>("idempotency")
/** Corporate actions and dividends raised through the control API (D-302), partition "global", by announcement time. */
export const SimActions = collection<ActionRecord>("simCorporateActions", Shapes.ActionShape)
export const SimDividends = collection<DividendRecord>("simDividends", Shapes.DividendShape)

export const SubAccounts = collection<SubAccountRecord>("subAccounts", Shapes.SubAccountShape)

/** Unique keys of sub-accounts in a partition (externalId, uid) -> the sub-account id. */
export interface SubAccountKeyDoc {
  readonly subAccountId: string
}
export const SubAccountKeys = collection<SubAccountKeyDoc>("subAccountKeys", Shapes.SubAccountKeyShape)
export const externalIdKey = (partition: string, externalId: string) => `${partition}|ext|${externalId}`
export const uidKey = (partition: string, uid: string) => `${partition}|uid|${uid}`

/** The child partition of one sub-account's rows (devices, wallet history): wiped with its parent. */
/** Shared (E-485): each of a sub-account's wallet transactions keeps it for good. */
export const accountPartition = (partition: string, subAccountId: string) => shared(joinFlat([partition, subAccountId], "/"))

/** A push-notification device of a sub-account (D-028); the token is kept, only its last 8 characters are shown. */
export type DeviceDoc = DeviceRecord
export const Devices = collection<DeviceDoc>("devices", Shapes.DeviceShape)

/** One journal entry of the double-entry ledger (domain/ledger.ts): postings that sum to zero. */
export interface JournalEntryDoc {
  readonly entryId: string
  readonly partition: string
  /** Position in the partition's journal: 1, 2, 3... in commit order. */
  readonly seq: number
  readonly at: number
  readonly kind: EntryKind
  readonly postings: ReadonlyArray<Posting>
  readonly orderId: string | null
  /** The subscription an entry moved money for (absent on other entries). */
  readonly subscriptionId?: string
  readonly side: Side | null
  readonly reference: string | null
  readonly note: string | null
  readonly description: string
}
export const Journal = collection<JournalEntryDoc>("journal")

/** The balance of one ledger account, kept equal to the sum of its postings in the same transaction. */
export interface BalanceDoc {
  readonly account: string
  readonly cents: number
  readonly updatedAt: number
}
export const Balances = collection<BalanceDoc>("balances")
export const balanceId = (partition: string, account: string) => `${partition}|${account}`

/** A sub-account's view of one entry that moved its wallet (D-026), listed per sub-account, newest first. */
export interface WalletTxnDoc {
  readonly transactionId: string
  readonly subAccountId: string
  readonly type: TransactionType
  readonly cents: number
  readonly balanceAfter: number
  readonly orderId: string | null
  /** The subscription the row belongs to (absent on other rows). */
  readonly subscriptionId?: string
  readonly reference: string | null
  readonly description: string
  readonly at: number
  /** The journal position of its entry: the order the ledger posted rows of one millisecond in (absent on rows of an earlier version). */
  readonly seq?: number
}
export const WalletTxns = collection<WalletTxnDoc>("walletTxns")

/**
 * The store id sequence (`tx.nextId`) that numbers changes to units held, fills and splits alike: the cost basis
 * (app/portfolio.ts) needs to know whether a fill of the same instant as a split came before it or after. Values
 * follow the order transactions ask for them, which is commit order where it matters: the fills of one partition hold
 * its lock, and a corporate action is a global step that runs while no partition transaction does (E-321).
 */
export const UNIT_CHANGES: IdSequence = "unitChanges"

/** Sort key that orders by creation time, then id: the same order on every store. */
export const timeSortKey = (createdAt: number, id: string) => joinFlat([String(createdAt).padStart(15, "0"), id], "|")

export const holdingId = (partition: string, account: string, symbol: string) => `${partition}|${account}|${symbol}`

/** A webhook registration: the record its rules read (domain/webhooks/decide-webhook.ts). A deleted one moves to the
 * partition `${partition}|deleted` so its in-flight deliveries can still read its url and secret while lists of the
 * live partition no longer see it. */
export type WebhookDoc = WebhookRecord
export const Webhooks = collection<WebhookDoc>("webhooks", Shapes.WebhookShape)
export const deletedWebhookPartition = (partition: string) => `${partition}|deleted`

/** One event to one webhook and its attempts (D-057); document partition `${partition}|${webhookId}`: the record the
 * test delivery's rules read (domain/webhooks/decide-test.ts), and the history of its attempts. */
export interface DeliveryDoc extends DeliveryRecord {
  /** Each attempt whose outcome was recorded, oldest first (absent on deliveries stored before; the console, E-384). */
  readonly history?: ReadonlyArray<AttemptRecord>
}

/** One attempt of a delivery as it ended: when, how, and the bytes sent (null when not known). */
export interface AttemptRecord {
  readonly attempt: number
  readonly at: number
  /** `dropped`: a fault plan dropped it unsent (docs/faults.md); `lost`: its outcome was never written (a crash). */
  readonly outcome: "answered" | "timeout" | "unreachable" | "dropped" | "lost"
  readonly status: number | null
  readonly latencyMs: number | null
  readonly bytes: number | null
}
export const Deliveries = collection<DeliveryDoc>("webhookDeliveries", Shapes.DeliveryShape)
export const deliveryPartition = (partition: string, webhookId: string) => `${partition}|${webhookId}`

/** A partner's settings in one environment (D-065), id = the partition. Absent until first changed: the partner's
 * own markup and empty defaults apply. A credential collection: the markup rides on the cached principal. */
export interface PartnerSettingsDoc {
  readonly markupBps: number
  readonly notificationEmail: string | null
  readonly ipAllowlist: ReadonlyArray<string>
  readonly updatedAt: number
}
export const PartnerSettingsDocs = credentialCollection<PartnerSettingsDoc>("partnerSettings", Shapes.PartnerSettingsShape)

/** Whether a partner may use `POST /oauth/token` (set by the operator, `POST /_sim/partners/{id}/oauth`); id = partnerId. */
export type OAuthClientDoc = OAuthClientRecord
export const OAuthClients = credentialCollection<OAuthClientDoc>("oauthClients", Shapes.OAuthClientShape)

/**
 * Which key of a kind is the partner's active one in a partition (id = `keyPointerId`): rotation finds the old one here.
 * Stored in "global", like the keys (`pointKey`), so a sandbox reset (which wipes the partition) keeps it.
 */
export interface KeyPointerDoc {
  readonly keyHash: string
}
export const KeyPointers = collection<KeyPointerDoc>("keyPointers", Shapes.KeyPointerShape)
export const keyPointerId = (partition: string, kind: "full" | "data") => `${partition}|${kind}`
/** Makes `keyHash` the partition's active key of `kind`: the pointer is written to "global" with the keys, never to the
 * partition itself, which a sandbox reset wipes. */
export const pointKey = (tx: Tx, partition: string, kind: "full" | "data", keyHash: string) =>
  KeyPointers.put(tx, keyPointerId(partition, kind), "global", keyPointerId(partition, kind), { keyHash })

/** A partner application (D-011, D-121), id = applicationId; `partnerId` once a partner exists for its uid. */
export type ApplicationDoc = ApplicationRecord
export const Applications = collection<ApplicationDoc>("applications", Shapes.ApplicationShape)
/** The latest application of an identity-provider uid (id = uid). */
export const ApplicationsByUid = collection<{ readonly applicationId: string }>("applicationsByUid", Shapes.ApplicationByUidShape)

/** A short-lived `svc_oauth_` access token (portal session 3600 s, client credentials 900 s), id = its SHA-256; it
 * dies with its parent key (domain/partners/decide-access.ts). */
export type AccessTokenDoc = IssuedTokenRecord
export const AccessTokens = credentialCollection<AccessTokenDoc>("accessTokens", Shapes.AccessTokenShape)

/** A portal member's personal preferences (POST /me deployment_preference), id = uid. */
export interface PortalPrefsDoc {
  readonly deploymentPreference: "hosted" | "onprem" | "both"
}
export const PortalPrefs = collection<PortalPrefsDoc>("portalPrefs", Shapes.PortalPrefsShape)

/** A filed tier or sandbox-to-live request (POST /upgrade-request), partition = the partner id. */
export type UpgradeRequestDoc = UpgradeRequestRecord
export const UpgradeRequests = collection<UpgradeRequestDoc>("upgradeRequests", Shapes.UpgradeRequestShape)

/** A platform incident (D-193), in the `global` partition, sorted by start time. */
export type IncidentDoc = IncidentRecord
export const Incidents = collection<IncidentDoc>("incidents", Shapes.IncidentShape)

/** A price alert (D-053, D-076), in its partner's production partition, sorted by creation. */
export type PriceAlertDoc = AlertRecord
export const PriceAlerts = collection<PriceAlertDoc>("priceAlerts", Shapes.PriceAlertShape)

/** The market.status watch (D-232), one document `market-status` in the global partition: whether its job chain
 * runs, each exchange's phase at the last boundary it saw, and the boundary it waits for. */
export interface MarketWatchDoc {
  readonly running: boolean
  readonly phases: Readonly<Record<string, "OPEN" | "CLOSED" | "HOLIDAY">>
  readonly dueAt: number
}
export const MarketWatch = collection<MarketWatchDoc>("marketWatch", Shapes.MarketWatchShape)
