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
 *
 * E-521: the kept connections are the store's own, not the pool's (at most `max`, opened when first needed, on the
 * client's settings): multiplexed, so an attempt's last writes and its COMMIT go in one write (pg-pipelined.ts). A
 * transaction that finds none free takes a pooled one, as before, and does not keep it. A client that is not a
 * PgClient (no settings to open one with) keeps pooled connections, as before.
 */
import { PgConnection, type PgClient } from "@effect/sql-pg"
import { Effect, Exit, Scope } from "effect"
import type { SqlClient, SqlConnection, SqlError } from "effect/sql"
import { type Pipeline, pipelinedConnection, type Statement } from "./pg-pipelined.ts"
import { StoreError } from "./port.ts"

/** A connection of write transactions, with the scope its reservation lives in. */
export interface TxConnection {
  readonly conn: SqlConnection.Connection
  readonly scope: Scope.Closeable
  /** Statements in one write: on the store's own connections (E-521), not on pooled ones. */
  readonly pipeline: Pipeline | undefined
  /** Its `idle_in_transaction_session_timeout` is off (set once, before it is first kept open). */
  tuned: boolean
  /** Commits in a row that chained the next transaction. */
  chained: number
  /**
   * Taken from the kept ones: it waited in its empty transaction, and the server may have ended it meanwhile (a
   * restart, an administrator, a network cut), which the engine learns only from its next statement.
   */
  waited: boolean
  /** One of the store's own, kept after a plain COMMIT (its chain at CHAIN_LIMIT): BEGIN before it is used again. */
  outside: boolean
}

/**
 * Chained commits in a row before one plain COMMIT gives the connection back. A session sends its activity counts
 * (rows inserted, updated, deleted: what autovacuum and ANALYZE go by) only while idle outside a transaction, so a
 * connection that never left one would hide its writes from autovacuum until it disconnects.
 */
export const CHAIN_LIMIT = 200

/** Kept at most: the store's own connections, beside the pool (4), which serves reads and transactions beyond these. */
export const MAX_KEPT = 2

/** What the store's own connections say in pg_stat_activity (tests look for it). */
export const KEPT_APPLICATION_NAME = "sokoni-store-tx"

/** The batch's statements and the commit did not all succeed: the first failure, and whether it was a write's. */
export class PipelineFailed {
  readonly cause: SqlError.SqlError
  readonly write: boolean
  constructor(cause: SqlError.SqlError, write: boolean) {
    this.cause = cause
    this.write = write
  }
}

const storeError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ message: `postgres store: ${operation} failed: ${cause.message}`, cause })

/** The settings the store's own connections are opened with: the client's, multiplexed; none when not a PgClient. */
const ownSettings = (sql: SqlClient.SqlClient): PgConnection.Config | undefined => {
  const config = (sql as unknown as Partial<PgClient.PgClient>).config
  if (config === undefined || config.stream !== undefined) return undefined
  // Off for the session, so a server's idle timeout does not end a transaction kept open on purpose.
  const startupParameters = { ...config.startupParameters, idle_in_transaction_session_timeout: "0" }
  return { ...config, multiplex: true, applicationName: KEPT_APPLICATION_NAME, startupParameters }
}

export const makeChainedConnections = (sql: SqlClient.SqlClient, max: number = MAX_KEPT) => {
  const kept: Array<TxConnection> = []
  const settings = ownSettings(sql)
  /** The store's own connections open now, kept or in an attempt. */
  let own = 0
  let closed = false

  const giveBack = (tx: TxConnection, open: boolean) =>
    Effect.andThen(open ? Effect.ignore(tx.conn.executeRaw("ROLLBACK", [])) : Effect.void, Scope.close(tx.scope, Exit.void)).pipe(
      Effect.ensuring(Effect.sync(() => void (tx.pipeline !== undefined && own--)))
    )

  /** A connection of the pool's (reserved) or, while fewer than `max` are open, one of the store's own. */
  const connect = Effect.gen(function* () {
    const scope = yield* Scope.make()
    const mine = settings !== undefined && own < max
    if (mine) own++
    const opened = mine
      ? Effect.map(PgConnection.make(settings), (pg): Pick<TxConnection, "conn" | "pipeline"> => pipelinedConnection(pg))
      : Effect.map(sql.reserve, (conn): Pick<TxConnection, "conn" | "pipeline"> => ({ conn, pipeline: undefined }))
    const { conn, pipeline } = yield* Scope.provide(opened, scope).pipe(
      Effect.mapError(storeError("connect")),
      Effect.onError(() =>
        Effect.andThen(
          Scope.close(scope, Exit.void),
          Effect.sync(() => void (mine && own--))
        )
      )
    )
    const tx: TxConnection = { conn, scope, pipeline, tuned: mine, chained: 0, waited: false, outside: false }
    return tx
  })

  const begin = (tx: TxConnection) =>
    tx.conn.executeRaw("BEGIN", []).pipe(
      Effect.mapError(storeError("BEGIN")),
      Effect.onError(() => giveBack(tx, true))
    )

  /** A connection inside a transaction that has run nothing yet: a kept one, or a new or pooled one after BEGIN. */
  const take: Effect.Effect<TxConnection, StoreError> = Effect.suspend(() => {
    const ready = kept.pop()
    if (ready === undefined) return Effect.tap(connect, begin)
    if (!ready.outside) {
      ready.waited = true
      return Effect.succeed(ready)
    }
    // Kept outside a transaction: a BEGIN that fails says the server ended it meanwhile; it is closed for a new one.
    ready.outside = false
    ready.waited = false
    return Effect.catch(Effect.as(begin(ready), ready), () => Effect.tap(connect, begin))
  })

  /** Whether the connection is to be kept after this commit, its next transaction chained. */
  const keeps = (tx: TxConnection) => !closed && tx.chained < CHAIN_LIMIT && (tx.pipeline !== undefined || (settings === undefined && kept.length < max))

  /** What a COMMIT (AND CHAIN) answered: true when it chained (the connection is to be kept). */
  const committed = (tx: TxConnection, result: unknown): Effect.Effect<boolean> => {
    if ((result as { readonly command?: unknown }).command === "COMMIT") {
      tx.tuned = true
      tx.chained++
      return Effect.succeed(true)
    }
    // "ROLLBACK" answers the COMMIT of an aborted transaction (as a plain COMMIT would, E-436 keeps that): the
    // chained one it may have opened is rolled back too, and the connection is not kept.
    return Effect.as(Effect.ignore(tx.conn.executeRaw("ROLLBACK", [])), false)
  }

  /**
   * Ends the attempt's transaction: with `COMMIT AND CHAIN` while the connection is to be kept (its next transaction
   * open), else COMMIT. True when the connection is to be kept.
   */
  const commit = (tx: TxConnection): Effect.Effect<boolean, StoreError> =>
    Effect.suspend(() => {
      if (!keeps(tx)) return Effect.as(Effect.mapError(tx.conn.executeRaw("COMMIT", []), storeError("COMMIT")), false)
      // Off for this session, so a server's idle timeout does not end a transaction kept open on purpose.
      const tune = tx.tuned ? Effect.void : tx.conn.executeRaw("SET idle_in_transaction_session_timeout = 0", [])
      return Effect.andThen(tune, tx.conn.executeRaw("COMMIT AND CHAIN", [])).pipe(
        Effect.mapError(storeError("COMMIT")),
        Effect.flatMap((result) => committed(tx, result))
      )
    })

  /**
   * `writes` and the COMMIT in one write (E-521), on a connection with a pipeline: all of them or none, as a write that
   * fails aborts the transaction and the COMMIT behind it then rolls back. True when the connection is to be kept;
   * PipelineFailed when a statement failed (the transaction is then not committed).
   */
  const commitWith = (tx: TxConnection, pipeline: Pipeline, writes: ReadonlyArray<Statement>): Effect.Effect<boolean, PipelineFailed> =>
    Effect.suspend(() => {
      const keep = keeps(tx)
      return Effect.flatMap(pipeline([...writes, [keep ? "COMMIT AND CHAIN" : "COMMIT", []]]), (exits) => {
        for (const [i, exit] of exits.entries()) {
          if (Exit.isFailure(exit)) {
            const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
            if (failure !== undefined) return Effect.fail(new PipelineFailed(failure.error, i < writes.length))
            return Effect.die(exit.cause)
          }
        }
        const result = exits.at(-1) as Exit.Success<PgConnection.Result>
        return keep ? committed(tx, result.value) : Effect.succeed(false)
      })
    })

  /**
   * After the attempt: kept when its commit chained a transaction, or when it is one of the store's own that committed
   * without (BEGIN when next used), while the store is open; else given back (the store's own are closed).
   */
  const release = (tx: TxConnection, chained: boolean, open: boolean): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (!closed && kept.length < max && (chained || (tx.pipeline !== undefined && !open))) {
        tx.outside = !chained
        if (!chained) tx.chained = 0
        kept.push(tx)
        return Effect.void
      }
      return giveBack(tx, open || chained)
    })

  /** When the store closes: every kept connection rolls back its empty transaction and is closed or goes back. */
  const close = Effect.suspend(() => {
    closed = true
    return Effect.forEach(kept.splice(0), (tx) => giveBack(tx, true), { discard: true })
  })

  return { take, commit, commitWith, release, close }
}

export type ChainedConnections = ReturnType<typeof makeChainedConnections>
