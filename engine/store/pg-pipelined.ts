/**
 * A connection of the store's own for write transactions (pg-chained.ts, E-521): a multiplexed PgConnection that only
 * one attempt uses at a time, seen by effect/sql as any other connection, plus `pipeline`, which sends statements in
 * one write and waits for their answers together.
 *
 * Why: a pooled connection reserved for a transaction is pinned, and the driver runs a pinned connection's statements
 * one round trip each. A multiplexed one queues every statement submitted before its next flush (a microtask) into
 * one socket write, each statement its own extended-protocol cycle with its own Sync, answered in order. Nothing else
 * submits to it (it is not in the pool, and an attempt runs its statements one after another), so the statements of
 * `pipeline` are all there is on the wire, in the order given.
 */
import type { PgConnection } from "@effect/sql-pg"
import { Effect, type Exit, Fiber, Stream } from "effect"
import type { SqlConnection, SqlError } from "effect/sql"

/** A statement's text and parameters. */
export type Statement = readonly [string, ReadonlyArray<unknown>]

export type Pipeline = (statements: ReadonlyArray<Statement>) => Effect.Effect<ReadonlyArray<Exit.Exit<PgConnection.Result, SqlError.SqlError>>>

export interface PipelinedConnection {
  readonly conn: SqlConnection.Connection
  /**
   * Sends `statements` in one write, in order, and gives every one's outcome. Each is its own cycle: one that fails
   * does not stop the next from running, but inside a transaction block the transaction is then aborted, so a COMMIT
   * behind it answers ROLLBACK (what makes "writes; COMMIT" in one write all-or-nothing).
   */
  readonly pipeline: Pipeline
}

type Transform = (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined

export const pipelinedConnection = (pg: PgConnection.PgConnection): PipelinedConnection => {
  const rowsOf = (transform: Transform) => (result: PgConnection.Result) => (transform === undefined ? result.rows : transform(result.rows))
  const conn: SqlConnection.Connection = {
    execute: (sql, params, transform) => Effect.map(pg.query(sql, params), rowsOf(transform)),
    executeRaw: (sql, params) => pg.query(sql, params),
    // A transform keeps a chunk's length (it renames columns), so the chunk stays non-empty.
    executeStream: (sql, params, transform) =>
      transform === undefined ? pg.stream(sql, params) : Stream.mapArray(pg.stream(sql, params), (rows) => transform(rows) as typeof rows),
    executeValues: (sql, params) => pg.queryValues(sql, params),
    executeValuesUnprepared: (sql, params) => pg.queryValues(sql, params, false),
    executeUnprepared: (sql, params, transform) => Effect.map(pg.query(sql, params, false), rowsOf(transform))
  }
  const pipeline: Pipeline = (statements) =>
    Effect.gen(function* () {
      // Each statement but the last is submitted by a fiber started at once: it runs synchronously up to the wait for
      // its answer, so it is queued before the next is, and all of them before the queue's flush.
      const earlier: Array<Fiber.Fiber<Exit.Exit<PgConnection.Result, SqlError.SqlError>>> = []
      for (const [sql, params] of statements.slice(0, -1)) {
        earlier.push(yield* Effect.forkChild(Effect.exit(pg.query(sql, params)), { startImmediately: true }))
      }
      const last = statements.at(-1)
      const lastExit = last === undefined ? undefined : yield* Effect.exit(pg.query(last[0], last[1]))
      // Joined in a loop, not by `forEach`, whose set-up is about five steps for what is one fiber, a COMMIT's (E-541).
      const exits: Array<Exit.Exit<PgConnection.Result, SqlError.SqlError>> = []
      for (const fiber of earlier) exits.push(yield* Fiber.join(fiber))
      if (lastExit !== undefined) exits.push(lastExit)
      return exits
    })
  return { conn, pipeline }
}
