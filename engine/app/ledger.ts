/**
 * Ledger: every money movement as one journal entry whose postings sum to zero, with the balances of the ledger
 * accounts kept equal to the sum of their postings in the same transaction; plus share holdings (not money).
 * Owns: posting entries (seed, top-up, transfers, order transitions), reading balances and holdings, and each
 * sub-account's wallet history rows. Does not own why money moves (accounts, wallets and trading decide, and check
 * funds first; a posting that would leave a wallet or an escrow negative is a bug and fails the whole transaction).
 *
 * Entry ids are `txn_` + a hash of (partition, journal position): deterministic without drawing from the seeded
 * generator, so adding the journal changed no id a scenario shows.
 */
import { hash } from "node:crypto"
import { Data, Effect, Option } from "effect"
import {
  compact,
  CREDITED,
  type EntryKind,
  escrowAccount,
  MASTER,
  mustStayNonNegative,
  orderPostings,
  type Posting,
  SEEDED,
  subscriptionEscrowAccount,
  sumOf,
  transactionTypeOf,
  transfer,
  walletAccount,
  walletOwner
} from "../domain/ledger.ts"
import { centsToWire } from "../domain/money.ts"
import type { Side } from "../domain/order.ts"
import { joinFlat } from "../domain/strings.ts"
import type { OrderTransition } from "../domain/trading/plan.ts"
import type { ReadTx, StoreError, Tx } from "../store/port.ts"
import { accountPartition, balanceId, Balances, type HoldingDoc, Holdings, holdingId, Journal, type JournalEntryDoc, timeSortKey, WalletTxns } from "./docs.ts"

/** A posting the ledger refuses: a bug in the caller (funds are checked before posting), so a defect, never an answer. */
export class LedgerInvariantError extends Data.TaggedError("LedgerInvariantError")<{ readonly message: string }> {}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"

/** `txn_` + 16 base32 characters of sha256(partition, position). */
export const entryIdOf = (partition: string, seq: number): string => {
  const digest = hash("sha256", `${partition}\u0000${seq}`, "buffer")
  const id = ["txn_"]
  for (let i = 0; i < 16; i++) id.push(ALPHABET[(digest[i] ?? 0) % 32] ?? "")
  return joinFlat(id)
}

/** Zero-padded journal position: the journal's sort key. */
export const seqKey = (seq: number) => String(seq).padStart(15, "0")

/** A balance row's cents, 0 when there is none; made once, not per read (issue 25: allocation per command). */
const centsOrZero = Option.match({ onNone: () => 0, onSome: (b: { readonly cents: number }) => b.cents })

export const balanceOf = (tx: ReadTx, partition: string, account: string): Effect.Effect<number, StoreError> =>
  Balances.getWith(tx, balanceId(partition, account), centsOrZero)

/** When the account last moved, if it ever did. */
export const lastMovedAt = (tx: ReadTx, partition: string, account: string): Effect.Effect<number | undefined, StoreError> =>
  Effect.map(Balances.get(tx, balanceId(partition, account)), (b) => (Option.isSome(b) ? b.value.updatedAt : undefined))

/** Available cash of `master` or a sub-account. */
export const walletBalance = (tx: ReadTx, partition: string, account: string) => balanceOf(tx, partition, walletAccount(account))
/** Cash held for the account's open BUY orders. */
export const escrowBalance = (tx: ReadTx, partition: string, account: string) => balanceOf(tx, partition, escrowAccount(account))
/** Cash held for the account's PENDING asset subscriptions. */
export const subscriptionEscrowBalance = (tx: ReadTx, partition: string, account: string) => balanceOf(tx, partition, subscriptionEscrowAccount(account))
/** Everything held for the account (open orders and pending subscriptions): the wire's `reserved` (contract). */
export const reservedBalance = (tx: ReadTx, partition: string, account: string) =>
  Effect.zipWith(escrowBalance(tx, partition, account), subscriptionEscrowBalance(tx, partition, account), (a, b) => a + b)

export const holding = (tx: ReadTx, partition: string, account: string, symbol: string): Effect.Effect<HoldingDoc, StoreError> =>
  Holdings.getWith(
    tx,
    holdingId(partition, account, symbol),
    Option.getOrElse(() => ({ symbol, quantity: 0, reserved: 0 }))
  )

/** Every holding of `account` (sort keys are `account|symbol`). */
export const holdingsOf = (tx: ReadTx, partition: string, account: string): Effect.Effect<ReadonlyArray<HoldingDoc>, StoreError> =>
  Effect.map(Holdings.listDocs(tx, { partition, after: `${account}|`, limit: 10_000, order: "asc" }), (docs) =>
    docs.filter((d) => d.sortKey.startsWith(`${account}|`)).map((d) => d.body)
  )

export interface EntryInput {
  readonly kind: EntryKind
  /** TEST ONLY, the planted defect `overdraw` (sim/defects.ts, E-190): a wallet may go negative. Never set otherwise. */
  readonly plantedOverdraw?: boolean | undefined
  readonly postings: ReadonlyArray<Posting>
  readonly at: number
  readonly description: string
  readonly orderId?: string | null | undefined
  /** Set on subscription entries only (absent elsewhere, so other entries' documents are unchanged). */
  readonly subscriptionId?: string | undefined
  readonly side?: Side | null | undefined
  readonly reference?: string | null | undefined
  readonly note?: string | null | undefined
}

export interface Posted {
  readonly entry: JournalEntryDoc
  /** Balance of each posted account after the entry. */
  readonly after: ReadonlyMap<string, number>
}

/**
 * Posts one balanced entry in `tx`: the journal row, the new balances, and a history row for each sub-account wallet
 * it moved. Dies (a defect: a 500 and a rollback, nothing written) on an entry that does not sum to zero or that would leave a wallet
 * or an escrow negative: callers check funds before posting, so either is a bug.
 */
export const postEntry = Effect.fnUntraced(function* (tx: Tx, partition: string, input: EntryInput) {
  // one posting per account: the journal, the balances and the history rows all read the same net amounts
  const postings = compact(input.postings)
  const sum = sumOf(postings)
  if (postings.length === 0 || sum !== 0) {
    return yield* Effect.die(new LedgerInvariantError({ message: `ledger entry ${input.kind} does not balance (${postings.length} postings, sum ${sum})` }))
  }
  const after = new Map<string, number>()
  for (const p of postings) {
    // Read where it is yielded (`getWithHere`): a step less per posting than `balanceOf` (E-502).
    const balance = (after.get(p.account) ?? (yield* Balances.getWithHere(tx, balanceId(partition, p.account), centsOrZero))) + p.cents
    if (balance < 0 && mustStayNonNegative(p.account) && input.plantedOverdraw !== true) {
      return yield* Effect.die(new LedgerInvariantError({ message: `ledger entry ${input.kind} would leave ${p.account} at ${centsToWire(balance)} USD` }))
    }
    after.set(p.account, balance)
  }
  const seq = yield* tx.nextSeq(`journal:${partition}`)
  const entry: JournalEntryDoc = {
    entryId: entryIdOf(partition, seq),
    partition,
    seq,
    at: input.at,
    kind: input.kind,
    postings,
    orderId: input.orderId ?? null,
    ...(input.subscriptionId === undefined ? {} : { subscriptionId: input.subscriptionId }),
    side: input.side ?? null,
    reference: input.reference ?? null,
    note: input.note ?? null,
    description: input.description
  }
  // Written where they are yielded (putHere): a step less each on the memory store (issue 25).
  yield* Journal.putHere(tx, entry.entryId, partition, seqKey(seq), entry)
  for (const [account, cents] of after) {
    yield* Balances.putHere(tx, balanceId(partition, account), partition, account, { account, cents, updatedAt: input.at })
  }
  for (const p of postings) {
    const owner = walletOwner(p.account)
    // the master wallet's transactions too: the TRANSACTIONS and STATEMENT reports list them (D-261)
    if (owner === undefined) continue
    yield* WalletTxns.putHere(tx, joinFlat([entry.entryId, owner], "|"), accountPartition(partition, owner), timeSortKey(input.at, entry.entryId), {
      transactionId: entry.entryId,
      subAccountId: owner,
      type: transactionTypeOf(input.kind, entry.side),
      cents: p.cents,
      balanceAfter: after.get(p.account) ?? 0,
      orderId: entry.orderId,
      ...(input.subscriptionId === undefined ? {} : { subscriptionId: input.subscriptionId }),
      reference: entry.reference,
      description: entry.description,
      at: input.at,
      seq
    })
  }
  return { entry, after } satisfies Posted
})

/** Seeds a wallet with virtual money (sandbox registration and reset); returns the new balance. */
export const seedWallet = Effect.fn("Ledger.seedWallet")(function* (tx: Tx, partition: string, account: string, cents: number, at: number) {
  const posted = yield* postEntry(tx, partition, {
    kind: "SEED",
    postings: transfer(SEEDED, walletAccount(account), cents),
    at,
    description: "Virtual funds seeded"
  })
  return posted.after.get(walletAccount(account)) ?? 0
})

/** A master-wallet top-up fulfilled by the service operator (spec event wallet.credited); returns the new balance. */
export const creditWallet = Effect.fn("Ledger.creditWallet")(function* (tx: Tx, partition: string, cents: number, at: number) {
  const posted = yield* postEntry(tx, partition, {
    kind: "CREDIT",
    postings: transfer(CREDITED, walletAccount(MASTER), cents),
    at,
    description: "Master wallet top-up"
  })
  return posted.after.get(walletAccount(MASTER)) ?? 0
})

export type { OrderTransition }

const orderDescription = (t: OrderTransition) => joinFlat([orderEntryOpening(t), t.side, " ", t.symbol, " (order ", t.orderId, ")"])

const orderEntryOpening = (t: OrderTransition) => {
  if (t.kind === "ORDER_PLACED") return "Escrow for "
  if (t.kind === "ORDER_REJECTED") return "Escrow returned: rejected "
  if (t.kind === "ORDER_CANCELLED") return "Escrow returned: cancelled "
  if (t.kind === "ORDER_EXPIRED") return "Escrow returned: expired "
  if (t.kind === "ORDER_REPLACED") return "Escrow surplus returned: replaced "
  return t.side === "SELL" ? "Proceeds of " : "Unused escrow returned: filled "
}

/** Applies an order transition: one journal entry for its money (if any moved), and its share movements. */
export const applyOrderTransition = Effect.fnUntraced(function* (tx: Tx, partition: string, t: OrderTransition) {
  const postings = orderPostings(t.account, t.movements, t.escrowDelta)
  if (postings === undefined) {
    return yield* Effect.die(new LedgerInvariantError({ message: `order ${t.orderId}: ${t.kind} movements do not balance` }))
  }
  if (postings.length > 0) {
    yield* postEntry(tx, partition, { kind: t.kind, postings, at: t.at, description: orderDescription(t), orderId: t.orderId, side: t.side })
  }
  const { shares, sharesReserved } = t.movements
  if (shares !== 0 || sharesReserved !== 0) {
    const h = yield* Holdings.getWithHere(
      tx,
      holdingId(partition, t.account, t.symbol),
      Option.getOrElse(() => ({ symbol: t.symbol, quantity: 0, reserved: 0 }))
    )
    yield* Holdings.put(tx, holdingId(partition, t.account, t.symbol), partition, `${t.account}|${t.symbol}`, {
      symbol: t.symbol,
      quantity: h.quantity + shares,
      reserved: h.reserved + sharesReserved
    })
  }
})
