/**
 * The postgres adapter of the store port: durable documents, gapless counters, the event log rows and due jobs.
 * Owns: running the schema's migrations at startup (migrations/), the SQL of each port operation and the mapping of
 * driver failures to `StoreError`. Does not own: the meaning of documents, which table a collection lives in and its
 * typed columns (pg-tables.ts), nor the connection settings beyond the URL.
 *
 * Semantics follow the memory adapter (memory.ts), which is the reference:
 * - `transact` runs `work` in ONE SQL transaction holding the locks of the partitions it touches: in this process a
 *   table of per-partition locks, across processes transaction-scoped advisory locks keyed by a 64-bit hash of the
 *   partition's root; transactions of different partners run at the same time (pg-locking.ts, E-320).
 * - Counters (`nextSeq`, event positions under `log:<partition>`) are rows updated inside the transaction, under
 *   their partition's lock, so a rollback leaves no gap and values follow commit order. Job seqs and `nextId` are PG
 *   sequences: taken without waiting, not rolled back (E-321), drawn a block at a time per store (E-435).
 * - Bodies and payloads are stored as JSON text (not jsonb), so they come back with their exact key order. The money
 *   path's collections (orders, balances, journal, wallet history, idempotency receipts) have tables of their own
 *   whose typed columns the database constrains; the write of a document stays one statement (docs/storage.md).
 * - In a write transaction, writes whose result is not awaited wait in the attempt's batch and go in one statement
 *   before COMMIT (pg-batch.ts, E-317); the lock statement also reads counters and hinted rows (pg-prefetch.ts, E-318).
 * - Lists order by the sort key compared by UTF-16 code units, as JavaScript's `<` does (the `sort_order` column holds
 *   the key's code units in hex, compared with the "C" collation); ties keep first-insertion order like the memory
 *   adapter's Map buckets (`insert_seq`).
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { migrations } from "./migrations/index.ts"
import {
  ALL_SEQUENCES,
  bodyText,
  putTextProblem,
  type DocRow,
  decodeJson,
  docOf,
  encodeJson,
  type EventRow,
  eventOf,
  type JobRow,
  jobOf,
  representable,
  requireSafeInteger,
  requireText,
  sequenceOf,
  sortOrderOf,
  sqlLimit,
  toNumber,
  toStoreError
} from "./pg-codec.ts"
import { DOCUMENTS, dropExpiredStatement, dropRow, getStatement, listStatement, putStatement, TYPED_TABLES, tableOf } from "./pg-tables.ts"
import { after, type Batch, deferPut, ensureApplyFunction, getThrough, knownOf } from "./pg-batch.ts"
import { ensureLockFunction, listKey } from "./pg-prefetch.ts"
import { type CommitFaults, type IdSequence, isIdSequence, type Job, type LoggedEvent, noCommitFaults, type ReadTx, Store, StoreError } from "./port.ts"
import { makeLockingTransact } from "./pg-locking.ts"
import type { RawTx } from "./pg-attempt.ts"
import { makeIdBlocks } from "./pg-id-blocks.ts"
import { GLOBAL_ROOT, lockRootOf, makeLockTable } from "./partition-locks.ts"

const MIGRATIONS_TABLE = "sokoni_store_migrations"

/** Runs the store's migrations with the current SqlClient (idempotent; bookkeeping in `sokoni_store_migrations`). */
export const migrate: Effect.Effect<void, StoreError, SqlClient.SqlClient> = Migrator.make({})({
  loader: migrations,
  table: MIGRATIONS_TABLE
}).pipe(
  Effect.asVoid,
  Effect.mapError((cause) => new StoreError({ message: `postgres store: migration failed: ${cause.message}`, cause }))
)

/** Every table a partition's rows live in: a partition wipe deletes from each, in one statement. */
const PARTITIONED_TABLES = [...TYPED_TABLES.map((t) => t.name), "events", DOCUMENTS.name]

/** A partition and its children (`p/...`): in "C" (byte) order those sort from `p/` up to, not including, `p0`. */
const DELETE_PARTITION = (() => {
  const where = `WHERE partition = $1 OR ((partition COLLATE "C") >= $2 AND (partition COLLATE "C") < $3)`
  const last = PARTITIONED_TABLES.at(-1) as string
  const ctes = PARTITIONED_TABLES.slice(0, -1).map((table, i) => `wipe_${i} AS (DELETE FROM ${table} ${where})`)
  return `WITH ${ctes.join(", ")} DELETE FROM ${last} ${where}`
})()

const COUNTER_VALUE = "SELECT value FROM counters WHERE name = $1"

/** Statement texts with parameters, built once: a tagged template is compiled again on every call (E-317). */
const SQL = {
  stepCounter: "INSERT INTO counters (name, value) VALUES ($1, 1) ON CONFLICT (name) DO UPDATE SET value = counters.value + 1 RETURNING value",
  // A block of a sequence's values (pg-id-blocks.ts, E-435): in a row's order, nextval runs row by row.
  nextvals: "SELECT nextval($1) AS value FROM generate_series(1, $2::integer)",
  scheduleJob: "INSERT INTO jobs (seq, kind, due_at, payload, partition) VALUES ($1, $2, $3, $4, $5)",
  nextJob: "SELECT seq, kind, due_at, payload FROM jobs ORDER BY due_at ASC, seq ASC LIMIT 1",
  // The row is locked by the DELETE, so a concurrent claimer skips it (SKIP LOCKED) rather than run it too.
  claimJob: `DELETE FROM jobs WHERE seq = (
    SELECT seq FROM jobs WHERE due_at <= $1 ORDER BY due_at ASC, seq ASC LIMIT 1 FOR UPDATE SKIP LOCKED
  ) RETURNING seq, kind, due_at, payload`,
  deleteJob: "DELETE FROM jobs WHERE seq = $1 RETURNING seq"
} as const

/** The partition a job's payload names (its `partition` field), for inspection in SQL; null when it names none. */
const jobPartitionOf = (payload: unknown): string | null => {
  const partition = typeof payload === "object" && payload !== null ? (payload as { readonly partition?: unknown }).partition : undefined
  return typeof partition === "string" && representable(partition) ? partition : null
}

/** The store on the current SqlClient, after running the migrations; `faults` inject crashes around commits (E-290). */
export const makePostgresStoreWith = (faults: CommitFaults) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    yield* Effect.andThen(ensureApplyFunction(sql), ensureLockFunction(sql)).pipe(Effect.mapError(toStoreError("create the store's functions")))
    const locks = makeLockTable()
    const idBlocks = makeIdBlocks()

    const query = <A>(operation: string, statement: Effect.Effect<A, SqlError.SqlError>) => Effect.mapError(statement, toStoreError(operation))
    /** A statement of pg-tables.ts, which names the table of the collection. */
    const statement = <A extends object = Record<string, unknown>>(
      operation: string,
      built: { readonly text: string; readonly params: ReadonlyArray<unknown> }
    ) => query(operation, sql.unsafe<A>(built.text, built.params))

    const nextSeq = (name: string): Effect.Effect<number, StoreError> =>
      Effect.andThen(
        requireText("nextSeq", { counter: name }),
        query("nextSeq", sql.unsafe<{ readonly value: bigint | number | string }>(SQL.stepCounter, [name])).pipe(
          Effect.flatMap((rows) =>
            rows[0] === undefined
              ? Effect.fail(new StoreError({ message: `postgres store: nextSeq returned no row for ${name}` }))
              : Effect.succeed(toNumber(rows[0].value))
          )
        )
      )

    /**
     * A counter of a partner partition (`<kind>:<partition>`) under a deferring batch: its partition is locked (the
     * locking Tx took it), so no one else moves it before the commit; it is read once, stepped in the batch, and read
     * from the batch after that (E-318). Other counters are rows that concurrent transactions take in turn: stepped
     * at once, after any savepoint still open in the batch.
     */
    const nextSeqIn =
      (batch: Batch | undefined) =>
      (name: string): Effect.Effect<number, StoreError> => {
        if (batch === undefined || !batch.deferring) return nextSeq(name)
        const colon = name.indexOf(":")
        if (colon === -1 || lockRootOf(name.slice(colon + 1)) === GLOBAL_ROOT) return after(batch, "counters", undefined, nextSeq(name), true)
        return Effect.andThen(
          requireText("nextSeq", { counter: name }),
          Effect.suspend(() => {
            const pending = batch.counter(name)
            const current =
              pending !== undefined
                ? Effect.succeed(pending)
                : query("nextSeq", sql.unsafe<{ readonly value: unknown }>(COUNTER_VALUE, [name])).pipe(
                    Effect.map((rows) => (rows[0] === undefined ? 0 : toNumber(rows[0].value)))
                  )
            return Effect.map(current, (value) => {
              batch.add({ op: { k: "counter", n: name, v: value + 1 }, table: "counters", collection: undefined })
              return value + 1
            })
          })
        )
      }

    /** Next value of a PG sequence: never waited for, never rolled back; drawn a block at a time (E-435). */
    const nextval = (operation: string, name: IdSequence | "jobs"): Effect.Effect<number, StoreError> =>
      idBlocks.next(sequenceOf(name), (count) =>
        query(operation, sql.unsafe<{ readonly value: bigint | number | string }>(SQL.nextvals, [sequenceOf(name), count])).pipe(
          Effect.map((rows) => rows.map((row) => toNumber(row.value)).sort((a, b) => a - b))
        )
      )

    /** Whether a `dropExpired` can remove anything, and its SQL limit: a name PostgreSQL cannot hold has no rows. */
    const dropLimit = (collection: string, partition: string, limit: number) => {
      const sqlLim = sqlLimit(limit)
      return !representable(collection) || !representable(partition) || sqlLim === undefined || sqlLim === 0 ? undefined : sqlLim
    }

    /**
     * The port's operations on the current connection; locking is pg-locking.ts's decorator around them. With a
     * deferring `batch` (an attempt's, pg-batch.ts) writes whose result is not awaited wait in it, and reads of what
     * they touch send it first.
     */
    const makeTx = (hooks: Array<Effect.Effect<void>>, batch?: Batch): RawTx => ({
      putDeferred: (collection, doc) => (batch?.deferring ? deferPut(batch, collection, doc) : "not deferring"),
      getKnown: (collection, id) =>
        batch?.deferring && representable(collection) && representable(id) ? knownOf(batch, tableOf(collection).name, collection, id) : undefined,
      get: (collection, id) =>
        !representable(collection) || !representable(id)
          ? Effect.succeed(Option.none())
          : getThrough(
              batch,
              tableOf(collection).name,
              collection,
              id,
              statement<DocRow>("get", getStatement(collection, id)).pipe(Effect.map((rows) => rows[0]))
            ),

      // Checked and encoded without an Effect step each: a trade puts about ten documents.
      put: (collection, doc) =>
        Effect.suspend(() => {
          if (batch?.deferring) {
            const problem = deferPut(batch, collection, doc)
            return problem === undefined ? Effect.void : Effect.fail(problem)
          }
          const problem = putTextProblem(collection, doc.id, doc.partition, doc.sortKey)
          if (problem !== undefined) return Effect.fail(problem)
          const body = bodyText("put", doc.body)
          if (body instanceof StoreError) return Effect.fail(body)
          return Effect.asVoid(statement("put", putStatement(collection, doc, sortOrderOf(doc.sortKey), body)))
        }),

      list: (collection, options) => {
        if (!representable(collection) || !representable(options.partition)) return Effect.succeed([])
        const limit = sqlLimit(options.limit)
        const bound = options.after === undefined ? undefined : sortOrderOf(options.after)
        const table = tableOf(collection).name
        // Read ahead with the attempt's hints (E-405), and no write of the attempt touched the table since.
        const ahead =
          batch?.deferring && options.after === undefined && !batch.touches(table, collection) ? batch.listed(listKey(collection, options)) : undefined
        if (ahead !== undefined) return Effect.succeed(ahead)
        const listed = statement<DocRow>("list", listStatement(collection, { partition: options.partition, order: options.order, after: bound, limit }))
        return after(batch, table, collection, listed).pipe(Effect.map((rows) => (limit === undefined ? rows.slice(0, options.limit) : rows).map(docOf)))
      },

      deletePartition: (partition) =>
        Effect.andThen(
          requireText("deletePartition", { partition }),
          after(batch, undefined, undefined, query("deletePartition", sql.unsafe(DELETE_PARTITION, [partition, `${partition}/`, `${partition}0`]))).pipe(
            Effect.tap(() => Effect.sync(() => batch?.forgetRows()))
          )
        ),

      dropExpired: (collection, partition, upTo, limit) => {
        const sqlLim = dropLimit(collection, partition, limit)
        if (sqlLim === undefined) return Effect.succeed(0)
        return Effect.andThen(
          requireSafeInteger("dropExpired", "upTo", upTo),
          after(
            batch,
            tableOf(collection).name,
            collection,
            statement<{ readonly id: string }>("dropExpired", dropExpiredStatement(collection, partition, upTo, sqlLim)),
            true
          )
        ).pipe(
          Effect.map((rows) => {
            if (rows.length > 0) batch?.forgetRows()
            return rows.length
          })
        )
      },

      dropExpiredLater: (collection, partition, upTo, limit) => {
        const sqlLim = dropLimit(collection, partition, limit)
        if (sqlLim === undefined) return Effect.void
        if (!batch?.deferring) return Effect.asVoid(makeTx(hooks, batch).dropExpired(collection, partition, upTo, limit))
        return Effect.map(requireSafeInteger("dropExpired", "upTo", upTo), () => batch.add(dropRow(collection, partition, upTo, sqlLim)))
      },

      deleteJobLater: (seq) =>
        batch?.deferring
          ? Effect.sync(() => batch.add({ op: { k: "deleteJob", s: seq }, table: "jobs", collection: undefined }))
          : Effect.asVoid(makeTx(hooks, batch).deleteJob(seq)),

      nextSeq: (name) => (isIdSequence(name) ? nextval("nextSeq", name) : nextSeqIn(batch)(name)),

      nextId: (name) => nextval("nextId", name),

      // What locks is pg-locking.ts's decorator of this Tx; reads outside a transaction take none.
      lockPartition: () => Effect.void,

      appendEvent: (partition, event) =>
        Effect.gen(function* () {
          yield* requireText("appendEvent", { partition, eventId: event.eventId, name: event.name })
          const timestamp = yield* requireSafeInteger("appendEvent", "timestamp", event.timestamp)
          const payload = yield* encodeJson("appendEvent", event.payload)
          const position = yield* nextSeqIn(batch)(`log:${partition}`)
          const row = { partition, position, event_id: event.eventId, name: event.name, timestamp }
          if (batch?.deferring) batch.add({ op: { k: "event", r: row }, json: { column: "payload", text: payload }, table: "events", collection: undefined })
          else
            yield* query(
              "appendEvent",
              sql`
            INSERT INTO events (partition, position, event_id, name, timestamp, payload)
            VALUES (${partition}, ${position}, ${event.eventId}, ${event.name}, ${timestamp}, ${payload})`
            )
          const logged: LoggedEvent = {
            position,
            partition,
            eventId: event.eventId,
            name: event.name,
            timestamp: event.timestamp,
            payload: decodeJson(payload)
          }
          return logged
        }),

      readEvents: (partition, afterPosition, limit) => {
        if (!representable(partition)) return Effect.succeed([])
        const sqlLim = sqlLimit(limit)
        const read = query(
          "readEvents",
          sql<EventRow>`
          SELECT partition, position, event_id, name, timestamp, payload FROM events
          WHERE partition = ${partition} AND position > ${afterPosition}
          ORDER BY position ASC ${sqlLim === undefined ? sql`` : sql`LIMIT ${sqlLim}`}`
        )
        return after(batch, "events", undefined, read).pipe(Effect.map((rows) => (sqlLim === undefined ? rows.slice(0, limit) : rows).map(eventOf)))
      },

      scheduleJob: (job) =>
        Effect.gen(function* () {
          yield* requireText("scheduleJob", { kind: job.kind })
          const dueAt = yield* requireSafeInteger("scheduleJob", "dueAt", job.dueAt)
          const payload = yield* encodeJson("scheduleJob", job.payload)
          // The seq drawn at once (a sequence: nothing to wait for, nothing to undo; mostly from the block, E-435).
          const seq = yield* nextval("scheduleJob", "jobs")
          const scheduled: Job = { seq, kind: job.kind, dueAt: job.dueAt, payload: decodeJson(payload) }
          const row = { seq, kind: job.kind, due_at: dueAt, payload, partition: jobPartitionOf(job.payload) }
          // Deferring: the row sent with the batch, so no savepoint still open has to be taken first (a grouped
          // unit's, E-406).
          if (batch?.deferring) batch.add({ op: { k: "job", r: row }, table: "jobs", collection: undefined })
          else yield* after(batch, "jobs", undefined, query("scheduleJob", sql.unsafe(SQL.scheduleJob, [seq, row.kind, dueAt, payload, row.partition])), true)
          return scheduled
        }),

      nextJob: after(batch, "jobs", undefined, query("nextJob", sql.unsafe<JobRow>(SQL.nextJob))).pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), jobOf))
      ),

      // The row is locked by the DELETE, so a concurrent claimer skips it (SKIP LOCKED) rather than run it too; once
      // committed it is gone for everyone, whichever partitions the claimers lock (E-277).
      claimJob: (upTo) =>
        Effect.andThen(
          requireSafeInteger("claimJob", "upTo", upTo),
          after(batch, "jobs", undefined, query("claimJob", sql.unsafe<JobRow>(SQL.claimJob, [upTo])), true)
        ).pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), jobOf))),

      deleteJob: (seq) =>
        after(batch, "jobs", undefined, query("deleteJob", sql.unsafe<{ readonly seq: unknown }>(SQL.deleteJob, [seq])), true).pipe(
          Effect.map((rows) => rows.length > 0)
        ),

      afterCommit: (effect) => Effect.sync(() => void hooks.push(effect))
    })

    const { transact, openTx, transactGrouped, close } = makeLockingTransact(sql, locks, makeTx, faults)
    yield* Effect.addFinalizer(() => close)

    // Reads run outside any transaction and take no lock: each statement sees what was committed when it ran. Inside
    // an open transaction of the fiber they go through it (its connection, its locks, its own writes: E-289).
    const read = <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      Effect.flatMap(openTx, (current) => work(current ?? makeTx([])))

    return Store.of({ kind: "postgres", transact, read, transactGrouped })
  })

export const makePostgresStore = makePostgresStoreWith(noCommitFaults)

/** A pooled PgClient for `databaseUrl`, closed with the layer: the store and the postgres rate windows share it. */
export const PostgresClientLayer = (databaseUrl: string): Layer.Layer<SqlClient.SqlClient, StoreError> =>
  Layer.effect(SqlClient.SqlClient, PgClient.make({ url: Redacted.make(databaseUrl), maxConnections: 4 }).pipe(Effect.mapError(toStoreError("connect")))).pipe(
    Layer.provide(Reactivity.layer)
  )

/** The `Store` on the SqlClient of the context, migrated at startup. */
export const PostgresStoreOnClient: Layer.Layer<Store, StoreError, SqlClient.SqlClient> = Layer.effect(Store, makePostgresStore)

/** A `Store` on its own pooled PgClient for `databaseUrl`, migrated at startup; the pool closes with the layer. */
export const PostgresStoreLayer = (databaseUrl: string): Layer.Layer<Store, StoreError> =>
  PostgresStoreOnClient.pipe(Layer.provide(PostgresClientLayer(databaseUrl)))

/**
 * Empties every table of the engine on `databaseUrl` (the store's and the rate windows'), the schema kept: what a
 * fresh database migrated from nothing would hold. `POST /_sim/reset` runs it between the old world's release and the
 * new world's start (E-242); it assumes no other engine process is using the database.
 */
export const wipePostgresStore = (databaseUrl: string): Effect.Effect<void, StoreError> =>
  Effect.scoped(
    Effect.gen(function* () {
      const sql = yield* PgClient.makeClient({ url: Redacted.make(databaseUrl) })
      yield* sql.unsafe(`DO $$ BEGIN
        IF to_regclass('ledger_postings') IS NOT NULL THEN
          TRUNCATE ${TYPED_TABLES.map((t) => t.name).join(", ")}, ledger_postings;
        END IF;
        IF to_regclass('documents') IS NOT NULL THEN
          TRUNCATE documents, counters, events, jobs;
          ALTER SEQUENCE documents_insert_seq RESTART;
        END IF;
        IF to_regclass('${sequenceOf("jobs")}') IS NOT NULL THEN
          ${ALL_SEQUENCES.map((name) => `ALTER SEQUENCE ${name} RESTART;`).join(" ")}
        END IF;
        IF to_regclass('rate_windows') IS NOT NULL THEN TRUNCATE rate_windows; END IF;
      END $$`)
    })
  ).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((cause) => new StoreError({ message: `postgres store: wipe failed: ${cause.message}`, cause }))
  )
