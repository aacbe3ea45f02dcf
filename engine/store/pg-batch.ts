/**
 * The postgres adapter's deferred writes (E-317): a transaction's writes whose result the work does not wait for (a
 * document put, an event row, a dropped expired row, a discarded job) are kept here, in order, and sent in ONE
 * statement when something must see them: the COMMIT, or a read of a table they touch. Owns: the pending writes of one
 * attempt, what a read of the attempt finds among them, the savepoints they cross, and `sokoni_apply_<hash>`, the
 * PL/pgSQL function that runs them one after another (so they behave as the statements they replace, each seeing the
 * ones before it). Does not own: when the transaction begins or commits, nor locks (pg-locking.ts).
 *
 * Why a failure of the batch runs the attempt again, writing at once (`eager`): a write that fails (a constraint, a
 * repeated event id) used to fail where the work made it, which the work (or a savepoint of it) may catch; batched, it
 * fails later. The attempt is rolled back and runs again with every write sent when made, as before: the same outcome,
 * at the cost of a second run on a path that is already an error's.
 */
import { createHash } from "node:crypto"
import { Effect, Option } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { bodyText, type DocRow, decodeJson, docOf, putTextProblem, sortOrderOf } from "./pg-codec.ts"
import { ensureFunction } from "./pg-functions.ts"
import type { Statement } from "./pg-pipelined.ts"
import type { Prefetched } from "./pg-prefetch.ts"
import { DOCUMENTS, LEDGER_ENTRIES, putRow, type Table, TYPED_TABLES, upsertParts } from "./pg-tables.ts"
import { type Doc, StoreError } from "./port.ts"

/** One pending write, as the apply function reads it (`k` its kind, `r` its row), plus what a read needs of it. */
interface Write {
  readonly op: Record<string, unknown>
  readonly table: string
  /** The collection, for the documents table's rows (which share it). */
  readonly collection: string | undefined
  /** A put: the row's id and document (its body still JSON text), which a `get` of the attempt returns. */
  readonly put?: { readonly id: string; readonly partition: string; readonly sortKey: string; readonly body: string | null }
  /**
   * A column of the row (`op.r`, its last key) whose value is JSON text, left out of `op.r`: sent as the JSON it is, not
   * as a string of it (E-437). Omitted: the row is all in `op.r`.
   */
  readonly json?: { readonly column: string; readonly text: string | null }
}

/** The key of a journal entry's row under which its postings go (not a column: json_populate_record skips it). */
const POSTINGS_KEY = "@p"

/** A JSON-text column's value in the row: the JSON itself when it is an object or array, else a string of it. */
const jsonValue = (text: string | null): string => (text !== null && (text.startsWith("{") || text.startsWith("[")) ? text : JSON.stringify(text))

/**
 * A write's row as the apply function reads it: a put's row (with a journal entry's postings), else the op's own
 * fields (beside its kind, which goes in the kinds list). A JSON-text column of an object or array goes in as that
 * JSON itself: no escaping here nor unescaping in the database (json_populate_record gives a text column a nested
 * value's text as written, E-437). Other values (a string, a number, null, none) stay strings, as their text must
 * come back exactly.
 */
export const opText = (write: Pick<Write, "op" | "json">): string => {
  const { op, json } = write
  if (op.r === undefined) return JSON.stringify(op)
  const text = JSON.stringify(op.r)
  const postings = op.p === undefined ? "" : `,"${POSTINGS_KEY}":${JSON.stringify(op.p)}`
  if (json === undefined && postings === "") return text
  const value = json === undefined ? "" : `,${JSON.stringify(json.column)}:${jsonValue(json.text)}`
  // A row is an object with its id and partition at least, so its text ends with the "}" the added keys go before.
  return `${text.slice(0, -1)}${postings}${value}}`
}

interface Marker {
  readonly savepoint: string
}

type Entry = Write | Marker

const isMarker = (entry: Entry): entry is Marker => "savepoint" in entry

/** What the pending writes say about a row a `get` wants. */
export type Seen = { readonly _tag: "written"; readonly doc: Doc } | { readonly _tag: "absent" } | { readonly _tag: "flush" } | { readonly _tag: "unknown" }

const ALL_TABLES: ReadonlyArray<Table> = [...TYPED_TABLES, DOCUMENTS]

/** A write's kind, as the apply function's kinds list names it (no kind holds a comma). */
const kindOf = (write: Write): string => write.op.k as string

/** The PL/pgSQL variable a table's rows are read into (its row type): `v_orders`, `v_documents`, ... */
const rowVar = (table: string) => `v_${table}`

/**
 * The body of the apply function: one static statement per kind of write, so each keeps its plan between calls.
 * Each row is parsed once (E-470): into a variable of its table's row type, whose fields the statement takes as
 * parameters, not a function scan of the row; the kinds come as a separate list, so no op is parsed to find its kind.
 */
const applyBody = (): string => {
  const branches: Array<string> = []
  const variables: Array<string> = []
  const fill = (table: string) => `${rowVar(table)} := json_populate_record(NULL::${table}, r);`
  for (const table of ALL_TABLES) {
    variables.push(`${rowVar(table.name)} ${table.name};`)
    const { columns, values, conflict, updates } = upsertParts(table, (column) => `${rowVar(table.name)}.${column}`)
    const upsert = `INSERT INTO ${table.name} AS t (${columns.join(", ")}) VALUES (${values.join(", ")})
        ON CONFLICT ${conflict} DO UPDATE SET ${updates};`
    // The entry as written (an update keeps the id, partition and seq it was given): its postings follow it.
    const postings =
      table === LEDGER_ENTRIES
        ? `
        INSERT INTO ledger_postings (entry_id, partition, seq, account, cents)
        SELECT ${rowVar(table.name)}.id, ${rowVar(table.name)}.partition, ${rowVar(table.name)}.seq, p.account, p.cents
        FROM json_to_recordset(r->'${POSTINGS_KEY}') AS p(account text, cents bigint);`
        : ""
    branches.push(`WHEN 'put:${table.name}' THEN ${fill(table.name)}
        ${upsert}${postings}`)
    const collection = table.collection === undefined ? "collection = r->>'c' AND " : ""
    const rows = `SELECT id FROM ${table.name} WHERE ${collection}partition = r->>'p' AND keep_until <= (r->>'u')::bigint
        ORDER BY keep_until, id COLLATE "C" LIMIT (r->>'l')::bigint`
    // Row by row by key, not `id IN (rows)`: a plan of that made on an empty table joined the whole collection's
    // index on every drop, and the plan is kept for the session (E-522). Most drops find nothing and delete nothing.
    branches.push(`WHEN 'drop:${table.name}' THEN FOR v_id IN ${rows} LOOP DELETE FROM ${table.name} WHERE ${collection}id = v_id; END LOOP;`)
  }
  variables.push(`${rowVar("events")} events;`, `${rowVar("jobs")} jobs;`)
  const event = rowVar("events")
  branches.push(`WHEN 'event' THEN ${fill("events")}
        INSERT INTO events (partition, position, event_id, name, timestamp, payload)
        VALUES (${event}.partition, ${event}.position, ${event}.event_id, ${event}.name, ${event}.timestamp, ${event}.payload);`)
  branches.push(`WHEN 'counter' THEN INSERT INTO counters (name, value) VALUES (r->>'n', (r->>'v')::bigint)
        ON CONFLICT (name) DO UPDATE SET value = EXCLUDED.value;`)
  branches.push(`WHEN 'deleteJob' THEN DELETE FROM jobs WHERE seq = (r->>'s')::bigint;`)
  const job = rowVar("jobs")
  branches.push(`WHEN 'job' THEN ${fill("jobs")}
        INSERT INTO jobs (seq, kind, due_at, payload, partition) VALUES (${job}.seq, ${job}.kind, ${job}.due_at, ${job}.payload, ${job}.partition);`)
  return `DECLARE r json; kinds text[] := string_to_array(k, ','); i int := 0; v_id text;
      ${variables.join(" ")}
    BEGIN
      FOR r IN SELECT value FROM json_array_elements(rows) LOOP
        i := i + 1;
        CASE kinds[i]
          ${branches.join("\n          ")}
        END CASE;
      END LOOP;
    END`
}

/**
 * The apply function of this build: named by a hash of its text, so a change of the tables' columns makes another.
 * Its statements are planned once per session (`force_generic_plan`, E-470): with parameters that are a row's
 * fields, PL/pgSQL's default planned most of them again on every call (a custom plan never looked dearer).
 */
export const APPLY = (() => {
  const body = `SET plan_cache_mode = force_generic_plan AS $apply$ ${applyBody()} $apply$`
  const name = `sokoni_apply_${createHash("sha256").update(body).digest("hex").slice(0, 12)}`
  const create = `CREATE OR REPLACE FUNCTION ${name}(k text, rows json) RETURNS void LANGUAGE plpgsql ${body}`
  return { name, call: `SELECT ${name}($1::text, $2::json)`, create }
})()

/** Creates the apply function unless it exists (pg-functions.ts). */
export const ensureApplyFunction = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> =>
  ensureFunction(sql, "sokoni_apply", `${APPLY.name}(text,json)`, APPLY.create)

export interface Batch {
  /** False for an attempt that writes at once (`eager`): every method below then has nothing to do. */
  readonly deferring: boolean
  /** Set when sending the batch failed: the attempt must not commit, and runs again eager. */
  readonly failed: () => boolean
  readonly add: (write: Write) => void
  /** The row `id` of `collection` (stored in `table`) as the pending writes leave it, if they say. */
  readonly seen: (table: string, collection: string, id: string) => Seen
  /**
   * Keeps what the lock statement read (pg-prefetch.ts): counters, and the rows it found or did not; the rows of
   * partitions the attempt does not hold only when `all` (read after the locks, just before their first read).
   */
  readonly learn: (prefetched: Prefetched, all: boolean) => void
  /** A list kept by `learn` (its key: pg-prefetch.ts `listKey`), while no write of the attempt touched its table. */
  readonly listed: (key: string) => ReadonlyArray<Doc> | undefined
  /** Keeps a row read under the attempt's exclusive lock of its partition: no one else changes it before the commit. */
  readonly remember: (table: string, collection: string, id: string, row: DocRow) => void
  /** Forgets the rows kept: a new lock is about to be taken (a row missed before may exist now), or a wipe ran. */
  readonly forgetRows: () => void
  /** The value counter `name` has in this attempt (a pending step's, or as read with the lock), if known. */
  readonly counter: (name: string) => number | undefined
  /** True when a savepoint still open waits in the batch: a write sent at once must come after it. */
  readonly openSavepoint: () => boolean
  /** True when a pending write touches `table` (for the documents table: `collection`'s rows). */
  readonly touches: (table: string, collection?: string) => boolean
  /** Sends the pending writes, if any (with the savepoints still open among them); a failure marks the batch failed. */
  readonly flush: Effect.Effect<void, StoreError>
  /**
   * The statements `flush` would send, taken out of the batch, for the caller to send with its COMMIT in one write
   * (E-521); it reports a failure of theirs with `failedWith`.
   */
  readonly drain: () => ReadonlyArray<Statement>
  /** Marks the batch failed by `cause` (a drained statement's): the StoreError a failed flush fails with. */
  readonly failedWith: (cause: SqlError.SqlError) => StoreError
  /** A savepoint, taken when the writes after it are sent (not at all if none are sent before it ends). */
  readonly mark: (savepoint: string) => void
  /** The savepoint's unit ended well: nothing can roll back to it any more. */
  readonly release: (savepoint: string) => void
  /** Undoes the writes since `savepoint`; false when they reached the database (a ROLLBACK TO is then needed). */
  readonly rollbackTo: (savepoint: string) => boolean
}

/** A row kept by the attempt (its body still JSON text), or null: known not to be there. */
type Kept = { readonly partition: string; readonly sortKey: string; readonly body: string | null } | null

const TYPED_NAMES: ReadonlySet<string> = new Set(TYPED_TABLES.map((table) => table.name))

/**
 * A kept row's key. A typed table holds one collection and its writes name none (`Write.collection`), so its rows are
 * kept by table and id alone: a put must find (and forget) the row a read kept under the collection's name.
 */
const keyOf = (table: string, collection: string, id: string) =>
  TYPED_NAMES.has(table) ? `${table}\u0000\u0000${id}` : `${table}\u0000${collection}\u0000${id}`

/** A put joining a deferring batch, made now: the StoreError `put` would fail with, or undefined once added (E-439). */
export const deferPut = (batch: Batch, collection: string, doc: Doc): StoreError | undefined => {
  const problem = putTextProblem(collection, doc.id, doc.partition, doc.sortKey)
  if (problem !== undefined) return problem
  const body = bodyText("put", doc.body)
  if (body instanceof StoreError) return body
  batch.add(putRow(collection, doc, sortOrderOf(doc.sortKey), body))
  return undefined
}

/** The batch of an attempt; `exclusive(partition)` says whether the attempt holds the partition's root exclusive. */
export const makeBatch = (sql: SqlClient.SqlClient, eager: boolean, exclusive: (partition: string) => boolean): Batch => {
  let entries: Array<Entry> = []
  const open = new Set<string>()
  let failed = false
  const kept = new Map<string, Kept>()
  const counters = new Map<string, number>()
  /** Lists read ahead (E-405), by key, with the table and collection a write must not touch for them to stay true. */
  const lists = new Map<string, { readonly table: string; readonly collection: string; readonly docs: ReadonlyArray<Doc> }>()
  const touching = (table: string, collection: string) => pending(table, collection, () => true)
  const pending = (table: string, collection: string, changes: (write: Write) => boolean) =>
    entries.some((e) => !isMarker(e) && e.table === table && (e.collection === undefined || e.collection === collection) && changes(e))
  const pendingPut = (table: string, collection: string, id: string) => pending(table, collection, (w) => w.put?.id === id)
  /** A pending put of the row, or a pending drop of its table (which may remove it). */
  const pendingChange = (table: string, collection: string, id: string) => pending(table, collection, (w) => w.put === undefined || w.put.id === id)
  const dropLists = (table: string, collection: string | undefined) => {
    for (const [key, list] of lists) if (list.table === table && (collection === undefined || list.collection === collection)) lists.delete(key)
  }

  const applyOf = (writes: ReadonlyArray<Write>): Statement => [APPLY.call, [writes.map(kindOf).join(","), `[${writes.map(opText).join(",")}]`]]

  /** The pending writes as statements (apply calls, and the savepoints still open between them), taken out. */
  const statements = (): Array<Statement> => {
    const pending = entries
    entries = []
    let segment: Array<Write> = []
    const out: Array<Statement> = []
    for (const entry of pending) {
      if (!isMarker(entry)) segment.push(entry)
      else if (open.has(entry.savepoint)) {
        // A unit still open may roll back to this point: the savepoint must exist in the database.
        if (segment.length > 0) out.push(applyOf(segment))
        out.push([`SAVEPOINT ${entry.savepoint}`, []])
        segment = []
      }
    }
    if (segment.length > 0) out.push(applyOf(segment))
    return out
  }

  const failedWith = (cause: SqlError.SqlError) => {
    failed = true
    return new StoreError({ message: `postgres store: batched writes failed: ${cause.message}; the transaction runs again`, cause })
  }

  return {
    deferring: !eager,
    failed: () => failed,
    add: (write) => {
      entries.push(write)
      dropLists(write.table, write.collection)
      if (write.put !== undefined) kept.delete(keyOf(write.table, write.collection ?? "", write.put.id))
      else if (write.op.k === "counter") counters.set(write.op.n as string, write.op.v as number)
      else if ((write.op.k as string).startsWith("drop:")) {
        // Which rows it removes is the database's to say: forget those of its table (and collection) kept.
        const prefix = write.collection === undefined ? `${write.table}\u0000` : keyOf(write.table, write.collection, "")
        for (const key of kept.keys()) if (key.startsWith(prefix)) kept.delete(key)
      }
    },
    learn: (prefetched, all) => {
      for (const [name, value] of prefetched.counters) counters.set(name, value)
      for (const { table, collection, id, row } of prefetched.rows) {
        // Read from the database while writes of the attempt to the row may wait here: the pending ones answer
        // first (`seen`), and once sent the row read would be stale, so it is not kept. A missing row stays missing
        // unless the attempt puts it (a pending drop removes rows, it does not make them).
        if (row === undefined) {
          if (!pendingPut(table, collection, id)) kept.set(keyOf(table, collection, id), null)
        }
        // A row of a partition the attempt does not hold may change before it is read: read it then.
        else if ((all || exclusive(row.partition)) && !pendingChange(table, collection, id)) kept.set(keyOf(table, collection, id), row)
      }
      for (const { table, collection, partition, key, rows } of prefetched.lists) {
        if ((!all && !exclusive(partition)) || touching(table, collection)) continue
        lists.set(key, { table, collection, docs: rows.map((r) => ({ id: r.id, partition: r.partition, sortKey: r.sortKey, body: decodeJson(r.body) })) })
      }
    },
    remember: (table, collection, id, row) => {
      if (!eager && exclusive(row.partition)) kept.set(keyOf(table, collection, id), { partition: row.partition, sortKey: row.sort_key, body: row.body })
    },
    listed: (key) => lists.get(key)?.docs,
    forgetRows: () => {
      kept.clear()
      lists.clear()
    },
    seen: (table, collection, id) => {
      // A pending drop of the table may remove the row, but cannot make a missing one appear (E-406).
      let dropped = false
      for (let i = entries.length - 1; i >= 0; i--) {
        const entry = entries[i] as Entry
        if (isMarker(entry) || entry.table !== table || (entry.collection !== undefined && entry.collection !== collection)) continue
        if (entry.put === undefined) dropped = true
        else if (entry.put.id === id) {
          if (dropped) return { _tag: "flush" }
          const { partition, sortKey, body } = entry.put
          return { _tag: "written", doc: { id, partition, sortKey, body: decodeJson(body) } }
        }
      }
      const row = kept.get(keyOf(table, collection, id))
      if (row === null) return { _tag: "absent" }
      if (row === undefined || dropped) return dropped ? { _tag: "flush" } : { _tag: "unknown" }
      return { _tag: "written", doc: { id, partition: row.partition, sortKey: row.sortKey, body: decodeJson(row.body) } }
    },
    counter: (name) => counters.get(name),
    openSavepoint: () => entries.some((e) => isMarker(e) && open.has(e.savepoint)),
    touches: (table, collection) =>
      entries.some((e) => !isMarker(e) && e.table === table && (collection === undefined || e.collection === undefined || e.collection === collection)),
    flush: Effect.suspend(() =>
      entries.every(isMarker)
        ? Effect.void
        : Effect.forEach(statements(), ([text, params]) => sql.unsafe(text, params), { discard: true }).pipe(Effect.mapError(failedWith))
    ),
    drain: () => (entries.every(isMarker) ? [] : statements()),
    failedWith,
    mark: (savepoint) => {
      open.add(savepoint)
      entries.push({ savepoint })
    },
    release: (savepoint) => void open.delete(savepoint),
    rollbackTo: (savepoint) => {
      open.delete(savepoint)
      // What was kept may be what the undone unit wrote: read again.
      kept.clear()
      lists.clear()
      counters.clear()
      const at = entries.findIndex((e) => isMarker(e) && e.savepoint === savepoint)
      // Sent already: every pending write came after the savepoint.
      entries = at === -1 ? [] : entries.slice(0, at)
      return at !== -1
    }
  }
}

/**
 * What a `get` of the attempt finds: the pending writes' version of the row, or the one the attempt kept, else what
 * `read` finds (after sending the pending writes if they may change it), kept when its partition is held.
 */
/** What the batch answers for a row without the database (`RawTx.getKnown`): undefined when it must be read (E-540). */
export const knownOf = (batch: Batch, table: string, collection: string, id: string): Option.Option<Doc> | undefined => {
  const seen = batch.seen(table, collection, id)
  return seen._tag === "written" ? Option.some(seen.doc) : seen._tag === "absent" ? Option.none() : undefined
}

export const getThrough = (
  batch: Batch | undefined,
  table: string,
  collection: string,
  id: string,
  read: Effect.Effect<DocRow | undefined, StoreError>
): Effect.Effect<Option.Option<Doc>, StoreError> => {
  const fromDatabase = Effect.map(read, (row) => {
    if (row === undefined) return Option.none()
    batch?.remember(table, collection, id, row)
    return Option.some(docOf(row))
  })
  return batch === undefined
    ? fromDatabase
    : Effect.suspend(() => {
        if (!batch.deferring) return fromDatabase
        const seen = batch.seen(table, collection, id)
        if (seen._tag === "written") return Effect.succeed(Option.some(seen.doc))
        if (seen._tag === "absent") return Effect.succeed(Option.none())
        return seen._tag === "flush" ? Effect.andThen(batch.flush, fromDatabase) : fromDatabase
      })
}

/**
 * `effect` once the pending writes touching `table` (any table when undefined) are in the database, and when `effect`
 * writes, once the savepoints still open are (a rollback to one must undo it); decided when it runs.
 */
export const after = <A>(
  batch: Batch | undefined,
  table: string | undefined,
  collection: string | undefined,
  effect: Effect.Effect<A, StoreError>,
  writes = false
): Effect.Effect<A, StoreError> =>
  batch === undefined
    ? effect
    : Effect.suspend(() => {
        if (!batch.deferring) return effect
        const needed = table === undefined || batch.touches(table, collection) || (writes && batch.openSavepoint())
        return needed ? Effect.andThen(batch.flush, effect) : effect
      })
