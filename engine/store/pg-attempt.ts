/**
 * One attempt of a postgres write transaction (pg-locking.ts): what it holds and has seen, and how it ends when it
 * must run again (a busy lock, a deadlock, a failed batch of writes). Split from pg-locking.ts, which runs attempts.
 */
import { Option, type Scope } from "effect"
import type { SqlConnection, SqlError } from "effect/sql"
import type { Batch } from "./pg-batch.ts"
import type { TxConnection } from "./pg-chained.ts"
import { GLOBAL_ROOT, type HeldLocks, type LockMode, lockRootOf } from "./partition-locks.ts"
import type { Wanted } from "./pg-prefetch.ts"
import { type Doc, StoreError, type Tx } from "./port.ts"

/** Marks the StoreError a lock call fails with when the attempt has to run again. */
export const RUN_AGAIN = Symbol.for("sokoni/store/run-again")

export const runAgainError = (why: string) => new StoreError({ message: `postgres store: ${why}; the transaction runs again`, cause: RUN_AGAIN })

/** An attempt that must not commit: run the transaction again, taking `locks` before it starts, writing at once if `eager`. */
export class RunAgain {
  readonly locks: ReadonlyMap<string, LockMode>
  readonly eager: boolean
  constructor(locks: ReadonlyMap<string, LockMode>, eager: boolean) {
    this.locks = locks
    this.eager = eager
  }
}

const isSqlError = (u: unknown): u is SqlError.SqlError => typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "SqlError"

/** A deadlock (40P01) or serialization failure (40001): the whole transaction may simply run again. */
export const retryable = (error: unknown): boolean => {
  const sqlError = error instanceof StoreError ? error.cause : error
  if (!isSqlError(sqlError)) return false
  const tag = (sqlError.reason as { readonly _tag?: string })._tag
  return tag === "DeadlockError" || tag === "SerializationError"
}

/** A string PostgreSQL text can hold (postgres.ts refuses the others before they reach the server). */
export const representable = (value: string): boolean => value.isWellFormed() && !value.includes("\u0000")

/** What a read saw of a row, to compare with a later read. */
export const seenOf = (doc: Option.Option<Doc>): string => (Option.isNone(doc) ? "none" : JSON.stringify([doc.value.partition, doc.value.body]))

export const covers = (held: LockMode | undefined, wanted: LockMode) => held === "exclusive" || held === wanted

export interface Attempt {
  readonly held: HeldLocks
  /** `get`s that found nothing, by `collection\u0000id`, until the attempt writes that id itself. */
  readonly misses: Map<string, readonly [string, string]>
  /** What `get` saw of "global" rows (seenOf), by `collection\u0000id`, until the attempt writes the row. */
  readonly globalSeen: Map<string, string>
  /** Rows the work said it will read (`Tx.prefetch`): read with the next lock the attempt takes in the database. */
  readonly wanted: Array<Wanted>
  /** Holds the attempt's connection once its SQL transaction has begun; closing it rolls back what is still open. */
  readonly scope: Scope.Closeable
  /** The attempt's deferred writes (pg-batch.ts), sent before COMMIT; an eager attempt's defers nothing. */
  readonly batch: Batch
  conn: SqlConnection.Connection | undefined
  /** The connection with the scope of its reservation (pg-chained.ts), once the transaction has begun. */
  tx: TxConnection | undefined
  /** True between BEGIN and a successful COMMIT. */
  open: boolean
  /** True once the COMMIT opened the connection's next transaction (`COMMIT AND CHAIN`, E-436). */
  chained: boolean
  closed: boolean
  runAgain: boolean
}

export const restore = <K, V>(map: Map<K, V>, saved: ReadonlyMap<K, V>) => {
  map.clear()
  for (const [k, v] of saved) map.set(k, v)
}

/**
 * The port's operations on the attempt's connection (postgres.ts `makeTx`), and a put made at once: joined to a
 * deferring batch (the StoreError the put fails with, or undefined), or "not deferring" (nothing done).
 */
export interface RawTx extends Tx {
  readonly putDeferred: (collection: string, doc: Doc) => StoreError | undefined | "not deferring"
  /**
   * What `get` would answer from the deferring batch alone (a pending write, or a row it kept or knows missing), with no
   * statement to send; undefined when it must ask the database (or the batch does not defer).
   */
  readonly getKnown: (collection: string, id: string) => Option.Option<Doc> | undefined
}

/**
 * A put the attempt can make at once (E-439): its partner partition already held exclusive (so "global" shared), the
 * transaction begun and its writes deferred. Locking it would take nothing and begin nothing: the put only joins the
 * batch, with no step of the effect runtime for the lock check, the connection or the miss it clears.
 */
export const putAtOnce = (attempt: Attempt, partition: string): boolean => {
  if (!attempt.batch.deferring || attempt.conn === undefined || attempt.runAgain || !representable(partition)) return false
  const root = lockRootOf(partition)
  return root !== GLOBAL_ROOT && attempt.held.modeOf(root) === "exclusive" && covers(attempt.held.modeOf(GLOBAL_ROOT), "shared")
}
