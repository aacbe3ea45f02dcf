/**
 * Connections of the postgres adapter's write transactions that stay in a transaction between attempts (E-436).
 * Owns: taking a connection for an attempt (one whose transaction is already open, or a pooled one after BEGIN), and
 * what becomes of it when the attempt ends. Does not own the attempt's statements (pg-locking.ts).
 *
 * Why: BEGIN was a round trip of its own on every write transaction (two of a quote->trade pair's nine), and each
 * round trip costs the engine CPU (the socket write) as well as time. A committed attempt ends with `COMMIT AND CHAIN`,
 * which commits and opens the next transaction in the same round trip; the connection is kept (up to `max`) for the
 * next attempt, which skips BEGIN. A transaction that has run no statement holds no lock and no snapshot (READ
 * COMMITTED takes one per statement), so waiting open it changes nothing another session sees. An attempt that does
 * not commit rolls back and gives its connection back to the pool, as before; so do the kept ones when the store
 * closes. Kept connections are the store's alone: pooled reads (and the rate windows' writes) never run inside them.
 */
import { Effect, Exit, Scope } from "effect"
import type { SqlClient, SqlConnection, SqlError } from "effect/sql"
import { StoreError } from "./port.ts"

/** A connection of write transactions, with the scope its reservation lives in. */
export interface TxConnection {
  readonly conn: SqlConnection.Connection
  readonly scope: Scope.Closeable
  /** Its `idle_in_transaction_session_timeout` is off (set once, before it is first kept open). */
  tuned: boolean
  /** Commits in a row that chained the next transaction. */
  chained: number
  /**
   * Taken from the kept ones: it waited in its empty transaction, and the server may have ended it meanwhile (a
   * restart, an administrator, a network cut), which the engine learns only from its next statement.
   */
  waited: boolean
}

/**
 * Chained commits in a row before one plain COMMIT gives the connection back. A session sends its activity counts
 * (rows inserted, updated, deleted: what autovacuum and ANALYZE go by) only while idle outside a transaction, so a
 * connection that never left one would hide its writes from autovacuum until it disconnects.
 */
export const CHAIN_LIMIT = 200

/** Kept at most: the pool (4 connections) keeps two for reads and for transactions beyond these. */
export const MAX_KEPT = 2

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ message: `postgres store: ${operation} failed: ${cause.message}`, cause })

export const makeChainedConnections = (sql: SqlClient.SqlClient, max: number = MAX_KEPT) => {
  const kept: Array<TxConnection> = []
  let closed = false

  const giveBack = (tx: TxConnection, open: boolean) =>
    Effect.andThen(open ? Effect.ignore(tx.conn.executeRaw("ROLLBACK", [])) : Effect.void, Scope.close(tx.scope, Exit.void))

  /** A connection inside a transaction that has run nothing yet: a kept one, or a pooled one after BEGIN. */
  const take: Effect.Effect<TxConnection, StoreError> = Effect.suspend(() => {
    const ready = kept.pop()
    if (ready !== undefined) {
      ready.waited = true
      return Effect.succeed(ready)
    }
    return Effect.gen(function* () {
      const scope = yield* Scope.make()
      const conn = yield* Scope.provide(sql.reserve, scope).pipe(
        Effect.mapError(storeError("connect")),
        Effect.onError(() => Scope.close(scope, Exit.void))
      )
      const tx: TxConnection = { conn, scope, tuned: false, chained: 0, waited: false }
      yield* conn.executeRaw("BEGIN", []).pipe(
        Effect.mapError(storeError("BEGIN")),
        Effect.onError(() => giveBack(tx, true))
      )
      return tx
    })
  })

  /**
   * Ends the attempt's transaction: with `COMMIT AND CHAIN` while there is room to keep the connection (its next
   * transaction open), else COMMIT. True when the connection is to be kept.
   */
  const commit = (tx: TxConnection): Effect.Effect<boolean, StoreError> =>
    Effect.suspend(() => {
      if (closed || kept.length >= max || tx.chained >= CHAIN_LIMIT) {
        return Effect.as(Effect.mapError(tx.conn.executeRaw("COMMIT", []), storeError("COMMIT")), false)
      }
      // Off for this session, so a server's idle timeout does not end a transaction kept open on purpose.
      const tune = tx.tuned ? Effect.void : tx.conn.executeRaw("SET idle_in_transaction_session_timeout = 0", [])
      return Effect.andThen(tune, tx.conn.executeRaw("COMMIT AND CHAIN", [])).pipe(
        Effect.mapError(storeError("COMMIT")),
        Effect.flatMap((result) => {
          if ((result as { readonly command?: unknown }).command === "COMMIT") {
            tx.tuned = true
            tx.chained++
            return Effect.succeed(true)
          }
          // "ROLLBACK" answers the COMMIT of an aborted transaction (as a plain COMMIT would, E-436 keeps that): the
          // chained one it may have opened is rolled back too, and the connection is not kept.
          return Effect.as(Effect.ignore(tx.conn.executeRaw("ROLLBACK", [])), false)
        })
      )
    })

  /** After the attempt: kept when its commit chained a transaction (and the store is open), else given back. */
  const release = (tx: TxConnection, chained: boolean, open: boolean): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (chained && !closed && kept.length < max) {
        kept.push(tx)
        return Effect.void
      }
      return giveBack(tx, open || chained)
    })

  /** When the store closes: every kept connection rolls back its empty transaction and goes back to the pool. */
  const close = Effect.suspend(() => {
    closed = true
    return Effect.forEach(kept.splice(0), (tx) => giveBack(tx, true), { discard: true })
  })

  return { take, commit, release, close }
}

export type ChainedConnections = ReturnType<typeof makeChainedConnections>
