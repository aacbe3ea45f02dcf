/**
 * Wallets: the master wallet, deposits (master -> sub-account), withdrawals (sub-account -> master) and a
 * sub-account's wallet history. Wiring and reads: the transfer rules are pure in domain/wallets/decide-transfer.ts,
 * their dispatcher is transfer.ts (one transaction: the entry, its event, the answer).
 * Does not own the ledger's bookkeeping (app/ledger.ts) nor the local-currency rules (domain/transfer.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { escrowAccount, MASTER, subscriptionEscrowAccount, type TransactionType, walletAccount } from "../../domain/ledger.ts"
import { centsToWire } from "../../domain/money.ts"
import type { TransferRequest } from "../../domain/wallets/decide-transfer.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock, isoAt } from "../../sim/clock.ts"
import { PlantedDefects } from "../../sim/defects.ts"
import { Store, type StoreError } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { checkLimit, decodeCursor, encodeCursor } from "../cursor.ts"
import { accountPartition, Partners, timeSortKey, type WalletTxnDoc, WalletTxns } from "../docs.ts"
import { lastMovedAt, reservedBalance, walletBalance } from "../ledger.ts"
import type { Principal } from "../principal.ts"
import { transferring } from "./transfer.ts"

export type { TransferRequest }

export interface TransactionQuery {
  /** Epoch millis, inclusive (the route turns dates into whole UTC days). */
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly type?: TransactionType | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Rows read from the store per round while filling a history page. */
const HISTORY_CHUNK = 500

export class WalletService extends Context.Service<
  WalletService,
  {
    readonly master: (principal: Principal) => Effect.Effect<Schemas["MasterWallet"], StoreError>
    readonly deposit: (principal: Principal, id: string, request: TransferRequest) => Effect.Effect<Schemas["WalletTransferResponse"], ApiFailure | StoreError>
    readonly withdraw: (principal: Principal, id: string, request: TransferRequest) => Effect.Effect<Schemas["WalletTransferResponse"], ApiFailure | StoreError>
    readonly transactions: (principal: Principal, id: string, query: TransactionQuery) => Effect.Effect<Schemas["TransactionList"], ApiFailure | StoreError>
  }
>()("sokoni/WalletService") {
  static readonly make = Effect.gen(function* () {
    const planted = yield* PlantedDefects
    const store = yield* Store
    const clock = yield* EngineClock
    const events = yield* EventLog

    const master = Effect.fn("WalletService.master")(function* (principal: Principal) {
      const now = yield* clock.nowHere()
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          const p = principal.partition
          const available = yield* walletBalance(tx, p, MASTER)
          const reserved = yield* reservedBalance(tx, p, MASTER)
          const moved = [
            yield* lastMovedAt(tx, p, walletAccount(MASTER)),
            yield* lastMovedAt(tx, p, escrowAccount(MASTER)),
            yield* lastMovedAt(tx, p, subscriptionEscrowAccount(MASTER))
          ].filter((t): t is number => t !== undefined)
          const partner = yield* Partners.get(tx, principal.partnerId)
          // Never moved (a new production wallet): the wallet is as old as the partner.
          const updatedAt = moved.length > 0 ? Math.max(...moved) : Option.match(partner, { onNone: () => now, onSome: (x) => x.createdAt })
          const wallet: Schemas["MasterWallet"] = {
            balance: centsToWire(available + reserved),
            available: centsToWire(available),
            reserved: centsToWire(reserved),
            currency: "USD",
            environment: principal.environment,
            updatedAt: isoAt(updatedAt)
          }
          return wallet
        })
      )
    })

    const { deposit, withdraw } = transferring({ store, clock, events, planted })

    const transactions = Effect.fn("WalletService.transactions")(function* (principal: Principal, id: string, query: TransactionQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { from, to, type } = query
      if (from !== undefined && to !== undefined && from > to) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "from is after to", { params: ["from", "to"] }))
      }
      const scope = `transactions|${principal.partition}|${id}|${from ?? ""}|${to ?? ""}|${type ?? ""}`
      const cursor = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          yield* findSubAccount(tx, principal.partition, id)
          // Newest first: start below the cursor, or just above `to` (every key of a later millisecond sorts after it).
          const toBound = to === undefined ? undefined : timeSortKey(to + 1, "")
          let after = cursor === undefined ? toBound : toBound === undefined || cursor < toBound ? cursor : toBound
          const rows: Array<{ readonly key: string; readonly t: WalletTxnDoc }> = []
          let hasMore = false
          scan: for (;;) {
            const chunk = yield* WalletTxns.listDocs(tx, { partition: accountPartition(principal.partition, id), after, limit: HISTORY_CHUNK, order: "desc" })
            for (const d of chunk) {
              const t = d.body
              if (from !== undefined && t.at < from) break scan
              if (type !== undefined && t.type !== type) continue
              if (rows.length === limit) {
                hasMore = true
                break scan
              }
              rows.push({ key: d.sortKey, t })
            }
            if (chunk.length < HISTORY_CHUNK) break
            after = chunk.at(-1)?.sortKey
          }
          const last = rows.at(-1)
          const page: Schemas["TransactionList"] = {
            transactions: rows.map(({ t }) => ({
              transactionId: t.transactionId,
              subAccountId: t.subAccountId,
              type: t.type,
              amount: centsToWire(t.cents),
              currency: "USD",
              balanceAfter: centsToWire(t.balanceAfter),
              orderId: t.orderId,
              subscriptionId: t.subscriptionId ?? null,
              reference: t.reference,
              description: t.description,
              createdAt: isoAt(t.at)
            })),
            count: rows.length,
            hasMore,
            nextCursor: hasMore && last !== undefined ? encodeCursor(scope, last.key) : null
          }
          return page
        })
      )
    })

    return WalletService.of({ master, deposit, withdraw, transactions })
  })

  static readonly layer = Layer.effect(WalletService, WalletService.make)
}
