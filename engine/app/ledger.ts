/**
 * Ledger: wallets, holdings and the per-partition money totals, moved together inside the caller's transaction.
 * Owns applying a set of movements and the reads of balances. Does not own why money moves (the order state
 * machine computes movements; trading and accounts call this).
 */
import { Effect, Option } from "effect"
import type { Movements } from "../domain/order.ts"
import type { StoreError, Tx } from "../store/port.ts"
import { type HoldingDoc, Holdings, holdingId, type LedgerDoc, Ledgers, walletId, Wallets } from "./docs.ts"

const EMPTY_LEDGER: LedgerDoc = { seeded: 0, topUps: 0, feesCollected: 0, marketNet: 0 }

export const walletBalance = (tx: Tx, partition: string, account: string): Effect.Effect<number, StoreError> =>
  Effect.map(Wallets.get(tx, walletId(partition, account)), Option.match({ onNone: () => 0, onSome: (w) => w.cents }))

export const holding = (tx: Tx, partition: string, account: string, symbol: string): Effect.Effect<HoldingDoc, StoreError> =>
  Effect.map(
    Holdings.get(tx, holdingId(partition, account, symbol)),
    Option.getOrElse(() => ({ symbol, quantity: 0, reserved: 0 }))
  )

export const ledgerOf = (tx: Tx, partition: string): Effect.Effect<LedgerDoc, StoreError> =>
  Effect.map(
    Ledgers.get(tx, partition),
    Option.getOrElse(() => EMPTY_LEDGER)
  )

export const setWallet = (tx: Tx, partition: string, account: string, cents: number) =>
  Wallets.put(tx, walletId(partition, account), partition, account, { cents })

/** Seeds a wallet with virtual money (sandbox registration) and records it in the ledger. */
export const seedWallet = Effect.fn("Ledger.seedWallet")(function* (tx: Tx, partition: string, account: string, cents: number) {
  const balance = yield* walletBalance(tx, partition, account)
  yield* setWallet(tx, partition, account, balance + cents)
  const ledger = yield* ledgerOf(tx, partition)
  yield* Ledgers.put(tx, partition, partition, partition, { ...ledger, seeded: ledger.seeded + cents })
})

/** A master-wallet top-up fulfilled by the service operator (spec event wallet.credited); returns the new balance. */
export const creditWallet = Effect.fn("Ledger.creditWallet")(function* (tx: Tx, partition: string, cents: number) {
  const balance = (yield* walletBalance(tx, partition, "master")) + cents
  yield* setWallet(tx, partition, "master", balance)
  const ledger = yield* ledgerOf(tx, partition)
  yield* Ledgers.put(tx, partition, partition, partition, { ...ledger, topUps: ledger.topUps + cents })
  return balance
})

/** Applies an order transition's movements for `account` and `symbol`. */
export const applyMovements = Effect.fn("Ledger.applyMovements")(function* (tx: Tx, partition: string, account: string, symbol: string, movements: Movements) {
  if (movements.wallet !== 0) {
    const balance = yield* walletBalance(tx, partition, account)
    yield* setWallet(tx, partition, account, balance + movements.wallet)
  }
  if (movements.shares !== 0 || movements.sharesReserved !== 0) {
    const h = yield* holding(tx, partition, account, symbol)
    yield* Holdings.put(tx, holdingId(partition, account, symbol), partition, `${account}|${symbol}`, {
      symbol,
      quantity: h.quantity + movements.shares,
      reserved: h.reserved + movements.sharesReserved
    })
  }
  if (movements.feesCollected !== 0 || movements.marketNet !== 0) {
    const ledger = yield* ledgerOf(tx, partition)
    yield* Ledgers.put(tx, partition, partition, partition, {
      ...ledger,
      feesCollected: ledger.feesCollected + movements.feesCollected,
      marketNet: ledger.marketNet + movements.marketNet
    })
  }
})
