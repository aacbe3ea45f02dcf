/**
 * The postgres adapter of the store port: durable documents, gapless counters, the event log rows and due jobs in
 * generic tables. Owns: the schema (migrated at startup), the SQL of each port operation and the mapping of driver
 * failures to `StoreError`. Does not own: the meaning of documents, nor the connection settings beyond the URL.
 *
 * Semantics follow the memory adapter (memory.ts), which is the reference:
 * - `transact` runs `work` in ONE SQL transaction holding the locks of the partitions it touches: in this process a
 *   table of per-partition locks, across processes transaction-scoped advisory locks keyed by a 64-bit hash of the
 *   partition's root; transactions of different partners run at the same time (pg-locking.ts, E-320).
 * - Counters (`nextSeq`, event positions under `log:<partition>`) are rows updated inside the transaction, under
 *   their partition's lock, so a rollback leaves no gap and values follow commit order. Job seqs and `nextId` are PG
 *   sequences: taken without waiting, not rolled back (E-321).
 * - Bodies and payloads are stored as JSON text (not jsonb), so they come back with their exact key order.
 * - Lists order by the sort key compared by UTF-16 code units, as JavaScript's `<` does (the `sort_order` column holds
 *   the key's code units in hex, compared with the "C" collation); ties keep first-insertion order like the memory
 *   adapter's Map buckets (`insert_seq`).
 */
import { Effect, Layer, Option, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { Migrator, SqlClient, type SqlError } from "effect/sql"
import { PgClient, PgMigrator } from "@effect/sql-pg"
import {
  type CommitFaults,
  type Doc,
  ID_SEQUENCES,
  type IdSequence,
  isIdSequence,
  type Job,
  type LoggedEvent,
  noCommitFaults,
  type ReadTx,
  Store,
  StoreError,
  type Tx
} from "./port.ts"
import { makeLockingTransact } from "./pg-locking.ts"
import { makeLockTable } from "./partition-locks.ts"

/** The PG sequence behind a `nextId` sequence or the job seqs. */
const sequenceOf = (name: IdSequence | "jobs"): string => `ids_${name.toLowerCase().replace(/[^a-z0-9]/g, "_")}`
const ALL_SEQUENCES = ["jobs" as const, ...ID_SEQUENCES].map(sequenceOf)

const MIGRATIONS_TABLE = "sokoni_store_migrations"

const migrations = PgMigrator.fromRecord({
  "0001_store_tables": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE documents (
      collection text NOT NULL,
      id text NOT NULL,
      partition text NOT NULL,
      sort_key text NOT NULL,
      sort_order text COLLATE "C" NOT NULL,
      insert_seq bigint NOT NULL,
      body text,
      PRIMARY KEY (collection, id)
    )`
    yield* sql`CREATE INDEX documents_list_idx ON documents (collection, partition, sort_order, insert_seq)`
    yield* sql`CREATE SEQUENCE documents_insert_seq`
    yield* sql`CREATE TABLE counters (
      name text PRIMARY KEY,
      value bigint NOT NULL
    )`
    yield* sql`CREATE TABLE events (
      partition text NOT NULL,
      position bigint NOT NULL,
      event_id text NOT NULL,
      name text NOT NULL,
      timestamp bigint NOT NULL,
      payload text,
      PRIMARY KEY (partition, position)
    )`
    yield* sql`CREATE TABLE jobs (
      seq bigint PRIMARY KEY,
      kind text NOT NULL,
      due_at bigint NOT NULL,
      payload text
    )`
    yield* sql`CREATE INDEX jobs_due_idx ON jobs (due_at, seq)`
  }),
  // deletePartition finds a partition and its children (`p/...`) by range in byte order: `p/` <= child < `p0`.
  "0002_partition_idx": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE INDEX documents_partition_idx ON documents ((partition COLLATE "C"))`
  }),
  // Job seqs and id sequences leave the counters table (E-321): a row there is a lock every partition waits on.
  "0003_id_sequences": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Each sequence continues from its counter row, if a database from before kept one.
    for (const name of ["jobs" as const, ...ID_SEQUENCES]) {
      yield* sql.unsafe(`CREATE SEQUENCE ${sequenceOf(name)}`)
      yield* sql.unsafe(`SELECT setval('${sequenceOf(name)}', COALESCE((SELECT value FROM counters WHERE name = '${name}'), 0) + 1, false)`)
    }
  }),
  // Retention (E-400): when the API can no longer return a document; dropExpired finds the earliest by this index.
  "0004_documents_keep_until": Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* sql`ALTER TABLE documents ADD COLUMN keep_until bigint`
    yield* sql`CREATE INDEX documents_keep_idx ON documents (collection, partition, keep_until) WHERE keep_until IS NOT NULL`
  })
})

/** Runs the store's migrations with the current SqlClient (idempotent; bookkeeping in `sokoni_store_migrations`). */
export const migrate: Effect.Effect<void, StoreError, SqlClient.SqlClient> = Migrator.make({})({
  loader: migrations,
  table: MIGRATIONS_TABLE
}).pipe(
  Effect.asVoid,
  Effect.mapError((cause) => new StoreError({ message: `postgres store: migration failed: ${cause.message}`, cause }))
)

const toStoreError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ message: `postgres store: ${operation} failed: ${cause.message}`, cause })

/** JSON text of a value; `undefined` (what JSON.stringify gives for undefined) is stored as SQL NULL. */
const encodeJson = (operation: string, value: unknown): Effect.Effect<string | null, StoreError> =>
  Effect.try({
    try: () => JSON.stringify(value) ?? null,
    catch: (cause) => new StoreError({ message: `postgres store: ${operation}: value is not JSON: ${String(cause)}`, cause })
  })

const decodeJson = (text: string | null): unknown => (text === null ? undefined : JSON.parse(text))

/** The string's UTF-16 code units as 4 hex digits each: "C"-collation order on it is JavaScript's `<` order. */
export const sortOrderOf = (sortKey: string): string => {
  let out = ""
  for (let i = 0; i < sortKey.length; i++) out += sortKey.charCodeAt(i).toString(16).padStart(4, "0")
  return out
}

const requireSafeInteger = (operation: string, field: string, value: number): Effect.Effect<number, StoreError> =>
  Number.isSafeInteger(value)
    ? Effect.succeed(value)
    : Effect.fail(new StoreError({ message: `postgres store: ${operation}: ${field} must be a safe integer, got ${value}` }))

/** LIMIT in SQL when it means the same as `Array.prototype.slice(0, limit)`, otherwise slice in JavaScript. */
const sqlLimit = (limit: number): number | undefined => (Number.isSafeInteger(limit) && limit >= 0 ? limit : undefined)

/**
 * PostgreSQL text holds neither NUL nor lone surrogates (the driver would turn those into U+FFFD). Writes of such
 * strings fail with StoreError before reaching the server (so the transaction stays usable); reads of them find nothing,
 * as nothing can have been stored under them.
 */
const representable = (value: string): boolean => value.isWellFormed() && !value.includes("\u0000")

const requireText = (operation: string, fields: Record<string, string>): Effect.Effect<void, StoreError> => {
  for (const [field, value] of Object.entries(fields)) {
    if (!representable(value)) {
      return Effect.fail(
        new StoreError({
          message: `postgres store: ${operation}: ${field} ${JSON.stringify(value)} contains NUL or a lone surrogate`
        })
      )
    }
  }
  return Effect.void
}

const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value))

interface DocRow {
  readonly id: string
  readonly partition: string
  readonly sort_key: string
  readonly body: string | null
  readonly keep_until: bigint | number | string | null
}

interface EventRow {
  readonly partition: string
  readonly position: bigint | number | string
  readonly event_id: string
  readonly name: string
  readonly timestamp: bigint | number | string
  readonly payload: string | null
}

interface JobRow {
  readonly seq: bigint | number | string
  readonly kind: string
  readonly due_at: bigint | number | string
  readonly payload: string | null
}

const docOf = (row: DocRow): Doc => ({
  id: row.id,
  partition: row.partition,
  sortKey: row.sort_key,
  body: decodeJson(row.body),
  ...(row.keep_until === null ? {} : { keepUntil: toNumber(row.keep_until) })
})

const eventOf = (row: EventRow): LoggedEvent => ({
  position: toNumber(row.position),
  partition: row.partition,
  eventId: row.event_id,
  name: row.name,
  timestamp: toNumber(row.timestamp),
  payload: decodeJson(row.payload)
})

const jobOf = (row: JobRow): Job => ({
  seq: toNumber(row.seq),
  kind: row.kind,
  dueAt: toNumber(row.due_at),
  payload: decodeJson(row.payload)
})

/** The store on the current SqlClient, after running the migrations; `faults` inject crashes around commits (E-290). */
export const makePostgresStoreWith = (faults: CommitFaults) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* migrate
    const locks = makeLockTable()

    const query = <A>(operation: string, statement: Effect.Effect<A, SqlError.SqlError>) => Effect.mapError(statement, toStoreError(operation))

    const nextSeq = (name: string): Effect.Effect<number, StoreError> =>
      Effect.andThen(
        requireText("nextSeq", { counter: name }),
        query(
          "nextSeq",
          sql<{ readonly value: bigint | number | string }>`
          INSERT INTO counters (name, value) VALUES (${name}, 1)
          ON CONFLICT (name) DO UPDATE SET value = counters.value + 1
          RETURNING value`
        ).pipe(
          Effect.flatMap((rows) =>
            rows[0] === undefined
              ? Effect.fail(new StoreError({ message: `postgres store: nextSeq returned no row for ${name}` }))
              : Effect.succeed(toNumber(rows[0].value))
          )
        )
      )

    /** Next value of a PG sequence: never waited for, never rolled back. */
    const nextval = (operation: string, name: IdSequence | "jobs"): Effect.Effect<number, StoreError> =>
      query(operation, sql<{ readonly value: bigint | number | string }>`SELECT nextval(${sequenceOf(name)}) AS value`).pipe(
        Effect.map((rows) => toNumber(rows[0]?.value))
      )

    /** The port's operations on the current connection; locking is pg-locking.ts's decorator around them. */
    const makeTx = (hooks: Array<Effect.Effect<void>>): Tx => ({
      get: (collection, id) =>
        !representable(collection) || !representable(id)
          ? Effect.succeed(Option.none())
          : query("get", sql<DocRow>`SELECT id, partition, sort_key, body, keep_until FROM documents WHERE collection = ${collection} AND id = ${id}`).pipe(
              Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), docOf))
            ),

      put: (collection, doc) =>
        Effect.gen(function* () {
          yield* requireText("put", { collection, id: doc.id, partition: doc.partition, sortKey: doc.sortKey })
          const body = yield* encodeJson("put", doc.body)
          const keepUntil = doc.keepUntil === undefined ? null : yield* requireSafeInteger("put", "keepUntil", doc.keepUntil)
          // A doc that stays in its partition keeps its place among equal sort keys; one that moves goes last.
          yield* query(
            "put",
            sql`
            INSERT INTO documents (collection, id, partition, sort_key, sort_order, insert_seq, body, keep_until)
            VALUES (${collection}, ${doc.id}, ${doc.partition}, ${doc.sortKey}, ${sortOrderOf(doc.sortKey)},
                    nextval('documents_insert_seq'), ${body}, ${keepUntil})
            ON CONFLICT (collection, id) DO UPDATE SET
              partition = EXCLUDED.partition,
              sort_key = EXCLUDED.sort_key,
              sort_order = EXCLUDED.sort_order,
              insert_seq = CASE WHEN documents.partition = EXCLUDED.partition
                                THEN documents.insert_seq ELSE EXCLUDED.insert_seq END,
              body = EXCLUDED.body,
              keep_until = EXCLUDED.keep_until`
          )
        }),

      list: (collection, options) => {
        if (!representable(collection) || !representable(options.partition)) return Effect.succeed([])
        const asc = options.order === "asc"
        const limit = sqlLimit(options.limit)
        const after =
          options.after === undefined ? sql`` : asc ? sql`AND sort_order > ${sortOrderOf(options.after)}` : sql`AND sort_order < ${sortOrderOf(options.after)}`
        const orderBy = asc ? sql`ORDER BY sort_order ASC, insert_seq ASC` : sql`ORDER BY sort_order DESC, insert_seq DESC`
        return query(
          "list",
          sql<DocRow>`
          SELECT id, partition, sort_key, body, keep_until FROM documents
          WHERE collection = ${collection} AND partition = ${options.partition} ${after}
          ${orderBy} ${limit === undefined ? sql`` : sql`LIMIT ${limit}`}`
        ).pipe(Effect.map((rows) => (limit === undefined ? rows.slice(0, options.limit) : rows).map(docOf)))
      },

      deletePartition: (partition) =>
        Effect.gen(function* () {
          yield* requireText("deletePartition", { partition })
          // Children are `partition/...`: in "C" (byte) order they sort from `partition/` up to, not including,
          // `partition0` ('0' follows '/'), so one index range finds them without LIKE's wildcards.
          const from = `${partition}/`
          const to = `${partition}0`
          yield* query(
            "deletePartition",
            sql`DELETE FROM documents WHERE partition = ${partition}
                OR ((partition COLLATE "C") >= ${from} AND (partition COLLATE "C") < ${to})`
          )
          yield* query(
            "deletePartition",
            sql`DELETE FROM events WHERE partition = ${partition}
                OR ((partition COLLATE "C") >= ${from} AND (partition COLLATE "C") < ${to})`
          )
        }),

      dropExpired: (collection, partition, upTo, limit) => {
        const sqlLim = sqlLimit(limit)
        if (!representable(collection) || !representable(partition) || sqlLim === undefined || sqlLim === 0) return Effect.succeed(0)
        return Effect.andThen(
          requireSafeInteger("dropExpired", "upTo", upTo),
          query(
            "dropExpired",
            sql<{ readonly id: string }>`
            DELETE FROM documents WHERE collection = ${collection} AND id IN (
              SELECT id FROM documents
              WHERE collection = ${collection} AND partition = ${partition} AND keep_until IS NOT NULL AND keep_until <= ${upTo}
              ORDER BY keep_until ASC LIMIT ${sqlLim}
            ) RETURNING id`
          )
        ).pipe(Effect.map((rows) => rows.length))
      },

      nextSeq: (name) => (isIdSequence(name) ? nextval("nextSeq", name) : nextSeq(name)),

      nextId: (name) => nextval("nextId", name),

      // What locks is pg-locking.ts's decorator of this Tx; reads outside a transaction take none.
      lockPartition: () => Effect.void,

      appendEvent: (partition, event) =>
        Effect.gen(function* () {
          yield* requireText("appendEvent", { partition, eventId: event.eventId, name: event.name })
          const timestamp = yield* requireSafeInteger("appendEvent", "timestamp", event.timestamp)
          const payload = yield* encodeJson("appendEvent", event.payload)
          const position = yield* nextSeq(`log:${partition}`)
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
        return query(
          "readEvents",
          sql<EventRow>`
          SELECT partition, position, event_id, name, timestamp, payload FROM events
          WHERE partition = ${partition} AND position > ${afterPosition}
          ORDER BY position ASC ${sqlLim === undefined ? sql`` : sql`LIMIT ${sqlLim}`}`
        ).pipe(Effect.map((rows) => (sqlLim === undefined ? rows.slice(0, limit) : rows).map(eventOf)))
      },

      scheduleJob: (job) =>
        Effect.gen(function* () {
          yield* requireText("scheduleJob", { kind: job.kind })
          const dueAt = yield* requireSafeInteger("scheduleJob", "dueAt", job.dueAt)
          const payload = yield* encodeJson("scheduleJob", job.payload)
          const seq = yield* nextval("scheduleJob", "jobs")
          yield* query("scheduleJob", sql`INSERT INTO jobs (seq, kind, due_at, payload) VALUES (${seq}, ${job.kind}, ${dueAt}, ${payload})`)
          const scheduled: Job = { seq, kind: job.kind, dueAt: job.dueAt, payload: decodeJson(payload) }
          return scheduled
        }),

      nextJob: query("nextJob", sql<JobRow>`SELECT seq, kind, due_at, payload FROM jobs ORDER BY due_at ASC, seq ASC LIMIT 1`).pipe(
        Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), jobOf))
      ),

      // The row is locked by the DELETE, so a concurrent claimer skips it (SKIP LOCKED) rather than run it too; once
      // committed it is gone for everyone, whichever partitions the claimers lock (E-277).
      claimJob: (upTo) =>
        Effect.andThen(
          requireSafeInteger("claimJob", "upTo", upTo),
          query(
            "claimJob",
            sql<JobRow>`
            DELETE FROM jobs WHERE seq = (
              SELECT seq FROM jobs WHERE due_at <= ${upTo} ORDER BY due_at ASC, seq ASC LIMIT 1 FOR UPDATE SKIP LOCKED
            ) RETURNING seq, kind, due_at, payload`
          )
        ).pipe(Effect.map((rows) => Option.map(Option.fromUndefinedOr(rows[0]), jobOf))),

      deleteJob: (seq) =>
        query("deleteJob", sql<{ readonly seq: unknown }>`DELETE FROM jobs WHERE seq = ${seq} RETURNING seq`).pipe(Effect.map((rows) => rows.length > 0)),

      afterCommit: (effect) => Effect.sync(() => void hooks.push(effect))
    })

    const { transact, openTx } = makeLockingTransact(sql, locks, makeTx, faults)

    // Reads run outside any transaction and take no lock: each statement sees what was committed when it ran. Inside
    // an open transaction of the fiber they go through it (its connection, its locks, its own writes: E-289).
    const read = <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
      Effect.flatMap(openTx, (current) => work(current ?? makeTx([])))

    return Store.of({ kind: "postgres", transact, read })
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
