/**
 * A postgres write attempt's connection (pg-locking.ts runs the attempts): beginning its SQL transaction on a
 * connection of its own (pg-chained.ts), running statements on it, taking in the database the locks the attempt holds
 * in this process (with the rows it said it wants, E-318/E-405), and its COMMIT. Split from pg-locking.ts, which owns
 * which locks an attempt takes and when it runs again.
 */
import { Effect, Scope } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { type Attempt, runAgainError } from "./pg-attempt.ts"
import type { ChainedConnections } from "./pg-chained.ts"
import { LOCK, lockParams, prefetchedOf } from "./pg-prefetch.ts"
import { type LockMode, lockOrder } from "./partition-locks.ts"
import { StoreError } from "./port.ts"

export const makeAttemptConnection = (sql: SqlClient.SqlClient, chained: ChainedConnections) => {
  const storeError = (operation: string) => (cause: SqlError.SqlError) =>
    new StoreError({ message: `postgres store: ${operation} failed: ${cause.message}`, cause })

  /**
   * Runs `effect` on the attempt's connection once its transaction has begun, on a pooled one before; decided when it
   * runs, not when it is built (an operation is often built before the lock that begins the transaction runs).
   */
  const inTx = <A, E, R>(attempt: Attempt, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => Effect.suspend(() => inTxNow(attempt, effect))
  /** `inTx` decided now, by a caller already running (in its own suspend). */
  const inTxNow = <A, E, R>(attempt: Attempt, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    attempt.conn === undefined ? effect : Effect.provideService(effect, sql.transactionService, [attempt.conn, 0])

  /**
   * The database's side of locks already held in this process, taken in `locks`' order; the same statement reads, once
   * they are held, the partitions' counters and the rows the work said it wants (pg-prefetch.ts, E-318).
   */
  const lockInDatabase = (attempt: Attempt, locks: ReadonlyArray<readonly [string, LockMode]>, first = false): Effect.Effect<void, StoreError> => {
    if (locks.length === 0) return Effect.void
    const wanted = attempt.wanted.splice(0)
    const { names, params } = lockParams(locks, wanted)
    // The first lock statement's rows are the command's reads named before it locked (E-472), all of them kept: read
    // in this transaction, before anything of the work ran, as the reads they stand for would be, only earlier.
    return inTx(attempt, sql.unsafe<{ readonly found: unknown }>(LOCK.call, params)).pipe(
      Effect.map((rows) => attempt.batch.learn(prefetchedOf(rows[0]?.found, names, wanted), first)),
      Effect.mapError(storeError("lock"))
    )
  }

  /**
   * Rows hinted once the transaction holds its locks (E-405): read together, by the lock function with no lock to
   * take, before the first read that would otherwise go to the database alone. Kept whatever their partition: they
   * were read in this transaction, just now, as the read they stand for would be.
   */
  const readWanted = (attempt: Attempt): Effect.Effect<void, StoreError> =>
    Effect.suspend(() => {
      if (attempt.wanted.length === 0 || attempt.conn === undefined) return Effect.void
      const wanted = attempt.wanted.splice(0)
      const { names, params } = lockParams([], wanted)
      return inTx(attempt, sql.unsafe<{ readonly found: unknown }>(LOCK.call, params)).pipe(
        Effect.map((rows) => attempt.batch.learn(prefetchedOf(rows[0]?.found, names, wanted), true)),
        Effect.mapError(storeError("prefetch"))
      )
    })

  /**
   * A connection of the attempt's own inside a transaction (a kept one, or BEGIN on a pooled one: pg-chained.ts), then
   * the advisory locks of every lock it holds in this process.
   */
  const begin = (attempt: Attempt): Effect.Effect<void, StoreError> =>
    Effect.suspend(() =>
      attempt.conn !== undefined
        ? Effect.void
        : Effect.gen(function* () {
            // Its end registered with the attempt at once: the connection never goes back to the pool with a
            // transaction open, whatever ends the attempt.
            const tx = yield* Effect.uninterruptible(
              Effect.tap(chained.take, (tx) =>
                Scope.addFinalizer(
                  attempt.scope,
                  Effect.suspend(() => chained.release(tx, attempt.chained, attempt.open))
                )
              )
            )
            attempt.conn = tx.conn
            attempt.tx = tx
            attempt.open = true
            const locks = lockInDatabase(
              attempt,
              [...attempt.held.heldNow()].sort(([a], [b]) => lockOrder(a, b)),
              true
            )
            yield* tx.waited ? Effect.catch(locks, (error) => firstStatementFailed(attempt, error)) : locks
          })
    )

  /**
   * The first statement on a connection that waited kept (pg-chained.ts) failed: nothing of this attempt reached the
   * server, and the connection is likely gone (ended while it waited). It goes back to the pool, not to the kept ones,
   * and the transaction runs again on another connection; a second failure there is the transaction's own.
   */
  const firstStatementFailed = (attempt: Attempt, error: StoreError): Effect.Effect<never, StoreError> =>
    Effect.suspend(() => {
      attempt.runAgain = true
      return Effect.fail(runAgainError(`a kept connection failed its first statement (${error.message})`))
    })

  /**
   * Sends the pending writes and commits: in one write on a connection with a pipeline (E-521), where a failed write
   * fails the batch as a failed flush would (the COMMIT behind it rolled back), else one after the other.
   */
  const commit = (attempt: Attempt): Effect.Effect<void, StoreError> =>
    Effect.suspend(() => {
      const tx = attempt.tx
      if (tx === undefined) return Effect.void
      const ended =
        tx.pipeline === undefined
          ? Effect.andThen(inTx(attempt, attempt.batch.flush), chained.commit(tx))
          : chained
              .commitWith(tx, tx.pipeline, attempt.batch.drain())
              .pipe(Effect.mapError((failed) => (failed.write ? attempt.batch.failedWith(failed.cause) : storeError("COMMIT")(failed.cause))))
      return Effect.map(ended, (next) => {
        attempt.open = false
        attempt.chained = next
      })
    })

  return { storeError, inTx, inTxNow, lockInDatabase, readWanted, begin, commit }
}
