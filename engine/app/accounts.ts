/**
 * Accounts: creating end-user sub-accounts (`POST /users`, `POST /auto-register`) and reading them (one, a page,
 * wallet summaries). Owns: the sub-account documents and their unique keys (externalId, uid) per partner and
 * environment, the list scan, and the closure blockers a summary shows. Does not own status and KYC changes
 * (account-lifecycle/), money (wallets/, ledger.ts) nor devices (devices.ts).
 *
 * Every lookup is scoped to the caller's partition: another partner's or the other environment's id is NOT_FOUND,
 * exactly like an id that never existed.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { centsToWire } from "../domain/money.ts"
import { isTerminal } from "../domain/order-transitions.ts"
import { blockerToWire, type ClosureBlocker, closureBlockers, type SubAccountRecord, subAccountToWire } from "../domain/subaccount.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { checkLimit, decodeCursor, encodeCursor, scanPage } from "./cursor.ts"
import { externalIdKey, Orders, SubAccountKeys, SubAccounts, timeSortKey, uidKey } from "./docs.ts"
import { escrowBalance, holdingsOf, subscriptionEscrowBalance, walletBalance } from "./ledger.ts"
import { pendingSubscriptionCount } from "./subscription-docs.ts"
import type { Principal } from "./principal.ts"

/** Users scan at most this many records per request (spec Limits). */
export const USERS_SCAN_LIMIT = 1000
/** At most this many distinct ids in one `GET /users/summary`. */
export const SUMMARY_MAX_IDS = 20

const notFound = (id: string) => fail("NOT_FOUND", `sub-account ${id} was not found`)

/** The sub-account `id` of `partition`; NOT_FOUND for an unknown id and for another partition's. */
export const findSubAccount = (tx: ReadTx, partition: string, id: string): Effect.Effect<SubAccountRecord, ApiFailure | StoreError> =>
  Effect.flatMap(SubAccounts.get(tx, id), (found) =>
    Option.isSome(found) && found.value.partition === partition ? Effect.succeed(found.value) : Effect.fail(notFound(id))
  )

const findByKey = (tx: ReadTx, partition: string, keyId: string): Effect.Effect<Option.Option<SubAccountRecord>, StoreError> =>
  Effect.flatMap(SubAccountKeys.get(tx, keyId), (key) =>
    Option.isNone(key)
      ? Effect.succeed(Option.none())
      : Effect.map(
          SubAccounts.get(tx, key.value.subAccountId),
          Option.filter((s) => s.partition === partition)
        )
  )

export const saveSubAccount = (tx: Tx, s: SubAccountRecord) => SubAccounts.put(tx, s.subAccountId, s.partition, timeSortKey(s.createdAt, s.subAccountId), s)

/** The wire SubAccount with its current wallet balance. */
export const subAccountWire = (tx: ReadTx, s: SubAccountRecord) => Effect.map(walletBalance(tx, s.partition, s.subAccountId), (w) => subAccountToWire(s, w))

/** Open orders (not terminal) of `account`: counted only when escrow or reserved shares say there are some. */
const openOrderCount = (tx: ReadTx, partition: string, account: string) =>
  Effect.gen(function* () {
    let count = 0
    let after: string | undefined
    for (;;) {
      const page = yield* Orders.listDocs(tx, { partition, after, limit: 1000, order: "asc" })
      for (const d of page) {
        const o = d.body
        if (o.account === account && !isTerminal(o)) count++
      }
      if (page.length < 1000) return count
      after = page.at(-1)?.sortKey
    }
  })

/** What keeps the sub-account from closing, and its cash (D-022, D-029). */
export const accountPosition = (tx: ReadTx, s: SubAccountRecord) =>
  Effect.gen(function* () {
    const wallet = yield* walletBalance(tx, s.partition, s.subAccountId)
    const escrow = yield* escrowBalance(tx, s.partition, s.subAccountId)
    const holdings = yield* holdingsOf(tx, s.partition, s.subAccountId)
    const reserved = holdings.some((h) => h.reserved > 0)
    const openOrders = escrow > 0 || reserved ? yield* openOrderCount(tx, s.partition, s.subAccountId) : 0
    const positions = holdings.filter((h) => h.quantity > 0).length
    const subscribed = yield* subscriptionEscrowBalance(tx, s.partition, s.subAccountId)
    const pending = subscribed > 0 ? yield* pendingSubscriptionCount(tx, s.partition, s.subAccountId) : 0
    const blockers: ReadonlyArray<ClosureBlocker> = closureBlockers(wallet, escrow, openOrders, positions, { cents: subscribed, count: pending })
    return { wallet, escrow, reserved: escrow + subscribed, blockers }
  })

export interface CreateInput {
  readonly externalId: string
  readonly displayName?: string | undefined
  readonly email?: string | undefined
  readonly phone?: string | undefined
  readonly country?: string | undefined
}

export interface AutoRegisterInput {
  readonly uid: string
  readonly email?: string | undefined
  readonly externalId?: string | undefined
  readonly displayName?: string | undefined
}

export interface ListQuery {
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
  readonly status?: "active" | "frozen" | "closed" | "ALL" | undefined
  readonly externalId?: string | undefined
}

export class AccountsService extends Context.Service<
  AccountsService,
  {
    readonly create: (principal: Principal, input: CreateInput) => Effect.Effect<Schemas["SubAccount"], ApiFailure | StoreError>
    /** The uid's sub-account, and whether this call created it (201) or found it (200). */
    readonly autoRegister: (
      principal: Principal,
      input: AutoRegisterInput
    ) => Effect.Effect<{ readonly created: boolean; readonly body: Schemas["AutoRegisterResponse"] }, ApiFailure | StoreError>
    readonly get: (principal: Principal, id: string) => Effect.Effect<Schemas["SubAccount"], ApiFailure | StoreError>
    readonly list: (principal: Principal, query: ListQuery) => Effect.Effect<Schemas["SubAccountList"], ApiFailure | StoreError>
    readonly summaries: (principal: Principal, userIds: string) => Effect.Effect<Schemas["WalletSummaryResponse"], ApiFailure | StoreError>
  }
>()("sokoni/AccountsService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy

    /** Writes a new sub-account and its keys; the externalId must be free in the partition. */
    const insert = (tx: Tx, principal: Principal, input: CreateInput & { readonly uid: string | null }) =>
      Effect.gen(function* () {
        const partition = principal.partition
        if (Option.isSome(yield* SubAccountKeys.get(tx, externalIdKey(partition, input.externalId)))) {
          return yield* Effect.fail(fail("CONFLICT", `externalId ${input.externalId} already belongs to a sub-account`, { param: "externalId" }))
        }
        const now = yield* clock.nowHere()
        const s: SubAccountRecord = {
          subAccountId: yield* entropy.idHere("usr"),
          partition,
          externalId: input.externalId,
          uid: input.uid,
          displayName: input.displayName ?? null,
          email: input.email ?? null,
          phone: input.phone ?? null,
          country: input.country ?? null,
          kycStatus: "NONE",
          kycLevel: "NONE",
          kycRejectionCode: null,
          kycRejectionReason: null,
          kycReviewedAt: null,
          kycReference: null,
          status: "active",
          frozenBy: null,
          statusReason: null,
          createdAt: now,
          closedAt: null
        }
        yield* saveSubAccount(tx, s)
        const key = externalIdKey(partition, s.externalId)
        yield* SubAccountKeys.put(tx, key, partition, key, { subAccountId: s.subAccountId })
        if (input.uid !== null) {
          const uid = uidKey(partition, input.uid)
          yield* SubAccountKeys.put(tx, uid, partition, uid, { subAccountId: s.subAccountId })
        }
        return s
      })

    const create = Effect.fn("AccountsService.create")(function* (principal: Principal, input: CreateInput) {
      return yield* store.transact((tx) => Effect.map(insert(tx, principal, { ...input, uid: null }), (s) => subAccountToWire(s, 0)))
    })

    const autoRegister = Effect.fn("AccountsService.autoRegister")(function* (principal: Principal, input: AutoRegisterInput) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const existing = yield* findByKey(tx, principal.partition, uidKey(principal.partition, input.uid))
          if (Option.isSome(existing)) {
            const body: Schemas["AutoRegisterResponse"] = { ...(yield* subAccountWire(tx, existing.value)), uid: input.uid, created: false }
            return { created: false, body }
          }
          const s = yield* insert(tx, principal, {
            externalId: input.externalId ?? input.uid,
            displayName: input.displayName,
            email: input.email,
            uid: input.uid
          })
          const body: Schemas["AutoRegisterResponse"] = { ...subAccountToWire(s, 0), uid: input.uid, created: true }
          return { created: true, body }
        })
      )
    })

    const get = Effect.fn("AccountsService.get")(function* (principal: Principal, id: string) {
      return yield* store.read((tx) => Effect.flatMap(findSubAccount(tx, principal.partition, id), (s) => subAccountWire(tx, s)))
    })

    const list = Effect.fn("AccountsService.list")(function* (principal: Principal, query: ListQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 100, 200))
      const status = query.status
      const keep = (s: SubAccountRecord) => (status === undefined ? s.status !== "closed" : status === "ALL" || s.status === status)
      const scope = `users|${principal.partition}|${status ?? "open"}|${query.externalId ?? ""}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          if (query.externalId !== undefined) {
            // A direct lookup: one page of at most one sub-account (status also applies, spec).
            const found = yield* findByKey(tx, principal.partition, externalIdKey(principal.partition, query.externalId))
            const users = Option.isSome(found) && keep(found.value) ? [yield* subAccountWire(tx, found.value)] : []
            const page: Schemas["SubAccountList"] = { users, count: users.length, hasMore: false, nextCursor: null }
            return page
          }
          const scanned = yield* SubAccounts.listDocs(tx, { partition: principal.partition, after, limit: USERS_SCAN_LIMIT + 1, order: "asc" })
          const result = scanPage(scanned, limit, USERS_SCAN_LIMIT, keep)
          const users = yield* Effect.forEach(result.items, (body) => subAccountWire(tx, body))
          const page: Schemas["SubAccountList"] = {
            users,
            count: users.length,
            hasMore: result.hasMore,
            nextCursor: result.hasMore && result.lastKey !== undefined ? encodeCursor(scope, result.lastKey) : null
          }
          return page
        })
      )
    })

    const summaryItem = (principal: Principal, requestedId: string) =>
      store.read((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.nowHere()
          const byId = yield* Effect.option(findSubAccount(tx, principal.partition, requestedId))
          const found = Option.isSome(byId) ? byId : yield* findByKey(tx, principal.partition, externalIdKey(principal.partition, requestedId))
          if (Option.isNone(found)) {
            const missing: Schemas["WalletSummaryItem"] = {
              requestedId,
              subAccountId: null,
              userId: null,
              externalId: null,
              status: null,
              asOf: null,
              currencyWallets: [],
              buyingPower: null,
              currencyClosureBlockers: [],
              error: { code: "NOT_FOUND", message: `no sub-account ${requestedId}` }
            }
            return missing
          }
          const s = found.value
          const { wallet, reserved, blockers } = yield* accountPosition(tx, s)
          const item: Schemas["WalletSummaryItem"] = {
            requestedId,
            subAccountId: s.subAccountId,
            userId: s.subAccountId,
            externalId: s.externalId,
            status: s.status,
            asOf: isoAt(now),
            currencyWallets: [{ currency: "USD", balance: centsToWire(wallet + reserved), available: centsToWire(wallet), reserved: centsToWire(reserved) }],
            buyingPower: { currency: "USD", amount: centsToWire(wallet), cashAvailable: centsToWire(wallet), reserved: centsToWire(reserved) },
            currencyClosureBlockers: blockers.map(blockerToWire),
            error: null
          }
          return item
        })
      )

    const summaries = Effect.fn("AccountsService.summaries")(function* (principal: Principal, userIds: string) {
      const ids = [...new Set(userIds.split(",").map((id) => id.trim()))]
      if (ids.some((id) => id === "")) return yield* Effect.fail(fail("VALIDATION_ERROR", "userIds must not contain empty ids", { param: "userIds" }))
      if (ids.length > SUMMARY_MAX_IDS) {
        return yield* Effect.fail(
          fail("VALIDATION_ERROR", `userIds takes at most ${SUMMARY_MAX_IDS} distinct ids, got ${ids.length}`, {
            param: "userIds",
            max: SUMMARY_MAX_IDS,
            received: ids.length
          })
        )
      }
      // Items are read one by one, not as one snapshot (spec: "read independently, not atomically").
      const accounts = yield* Effect.forEach(ids, (id) => summaryItem(principal, id))
      const now = yield* clock.nowHere()
      const response: Schemas["WalletSummaryResponse"] = {
        accounts,
        count: accounts.length,
        asOf: isoAt(now),
        snapshotModel: "per_item",
        sandbox: principal.environment === "sandbox"
      }
      return response
    })

    return AccountsService.of({ create, autoRegister, get, list, summaries })
  })

  static readonly layer = Layer.effect(AccountsService, AccountsService.make)
}
