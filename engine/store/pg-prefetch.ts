/**
 * What the postgres adapter reads with a partition's lock (E-318): the statement that takes a transaction's advisory
 * locks also reads, once they are held, the partition's event and journal counters and the rows the work said it
 * would read first (`Tx.prefetch`, e.g. the Idempotency-Key's receipt). One round trip instead of one per read.
 * Owns: `sokoni_lock_<hash>`, the PL/pgSQL function that does it (a function, so its reads run after its locks, each
 * statement of it with a snapshot of its own), and the shape of its answer. Does not own which locks a transaction
 * takes (pg-locking.ts), nor how the rows read are served later (pg-batch.ts).
 */
import { createHash } from "node:crypto"
import type { Effect } from "effect"
import type { SqlClient, SqlError } from "effect/sql"
import { ensureFunction } from "./pg-functions.ts"
import { DOCUMENTS, type Table, TYPED_TABLES, tableOf } from "./pg-tables.ts"
import type { Batch } from "./pg-batch.ts"
import { type Hint, isRowHint, type ListOptions } from "./port.ts"

/**
 * The counter kinds of a partner partition stepped on the money path: event positions (postgres.ts `appendEvent`) and
 * journal sequences (app/ledger.ts). Read with the partition's lock, as the trade steps both.
 */
const PREFETCHED_COUNTER_KINDS = ["log", "journal"] as const

const ALL_TABLES: ReadonlyArray<Table> = [...TYPED_TABLES, DOCUMENTS]

/**
 * A list hint's read (E-405), `r` = ['@list', table, collection, partition, order, limit]: the rows `listStatement`
 * (pg-tables.ts) answers without an `after` bound, in its order, as one JSON array.
 */
const listBranches = (): string =>
  ALL_TABLES.flatMap((table) => {
    const collection = table.collection === undefined ? "collection = r->>2 AND " : ""
    return (["asc", "desc"] as const).map((order) => {
      const rows = `SELECT id, partition, sort_key, body, sort_order, insert_seq FROM ${table.name} WHERE ${collection}partition = r->>3
            ORDER BY sort_order ${order}, insert_seq ${order} LIMIT (r->>5)::bigint`
      const agg = `COALESCE(json_agg(json_build_array(id, partition, sort_key, body) ORDER BY sort_order ${order}, insert_seq ${order}), '[]'::json)`
      return `WHEN '${table.name}|${order}' THEN SELECT ${agg} INTO found FROM (${rows}) AS listed;`
    })
  }).join("\n            ")

const lockBody = (): string => {
  const branches = ALL_TABLES.map((table) => {
    const collection = table.collection === undefined ? "collection = r->>1 AND " : ""
    return `WHEN '${table.name}' THEN SELECT json_build_array(id, partition, sort_key, body) INTO found FROM ${table.name} WHERE ${collection}id = r->>2;`
  })
  branches.push(`WHEN '@list' THEN CASE (r->>1) || '|' || (r->>4)
            ${listBranches()}
            ELSE NULL;
          END CASE;`)
  return `DECLARE l json; r json; found json; rows json[] := '{}';
    BEGIN
      FOR l IN SELECT value FROM json_array_elements(locks) LOOP
        IF l->>1 = 'shared' THEN PERFORM pg_advisory_xact_lock_shared(hashtextextended(l->>0, 0));
        ELSE PERFORM pg_advisory_xact_lock(hashtextextended(l->>0, 0)); END IF;
      END LOOP;
      FOR r IN SELECT value FROM json_array_elements(reads) LOOP
        found := NULL;
        CASE r->>0
          ${branches.join("\n          ")}
          ELSE NULL;
        END CASE;
        rows := rows || COALESCE(found, 'null'::json);
      END LOOP;
      RETURN json_build_object(
        'c', (SELECT json_object_agg(name, value) FROM counters WHERE name IN (SELECT json_array_elements_text(names))),
        'r', to_json(rows));
    END`
}

/**
 * The lock function of this build, named by a hash of its text. Its reads are planned once per session
 * (`force_generic_plan`, E-471): each takes its key from a JSON element, and PL/pgSQL's default planned them again
 * on most calls.
 */
export const LOCK = (() => {
  const body = `SET plan_cache_mode = force_generic_plan AS $lock$ ${lockBody()} $lock$`
  const name = `sokoni_lock_${createHash("sha256").update(body).digest("hex").slice(0, 12)}`
  const create = `CREATE OR REPLACE FUNCTION ${name}(locks json, names json, reads json) RETURNS json LANGUAGE plpgsql ${body}`
  return { name, call: `SELECT ${name}($1::json, $2::json, $3::json) AS found`, create }
})()

/** Creates the lock function unless it exists (pg-functions.ts). */
export const ensureLockFunction = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> =>
  ensureFunction(sql, "sokoni_lock", `${LOCK.name}(json,json,json)`, LOCK.create)

/** A row to read with the lock (its collection and id), or the first rows of a partition's list (E-405). */
export type Wanted = Hint

/** A row read with the lock, its body still JSON text. */
export interface Row {
  readonly partition: string
  readonly sortKey: string
  readonly body: string | null
}

/** A list read with the lock: its key (`listKey`) and its rows, in order. */
export interface Listed {
  readonly table: string
  readonly collection: string
  readonly partition: string
  readonly key: string
  readonly rows: ReadonlyArray<Row & { readonly id: string }>
}

/** What the lock statement read: counters by name (absent: 0), each wanted row (none: not there), each wanted list. */
export interface Prefetched {
  readonly counters: ReadonlyMap<string, number>
  readonly rows: ReadonlyArray<{ readonly table: string; readonly collection: string; readonly id: string; readonly row: Row | undefined }>
  readonly lists: ReadonlyArray<Listed>
}

/** The key a list read is kept by: a later `list` with the same options, no `after`, is answered from it. */
export const listKey = (collection: string, options: Omit<ListOptions, "after">) =>
  `${collection}\u0000${options.partition}\u0000${options.order}\u0000${options.limit}`

/** The largest list limit read ahead (a larger or unbounded one is left to `list` itself). */
const MAX_LIST_LIMIT = 10_000

/** The hints the lock statement can read: rows, and lists with a limit it can bind. */
export const readable = (hint: Hint): boolean =>
  isRowHint(hint) || (Number.isSafeInteger(hint.list.limit) && hint.list.limit > 0 && hint.list.limit <= MAX_LIST_LIMIT && hint.list.after === undefined)

/**
 * True when the attempt already knows what `hint` names (a row read or written, known missing, or a list kept): a
 * command whose reads were named before its lock names them again after it (E-472), and they are not read twice.
 */
export const answered = (batch: Batch, hint: Hint): boolean => {
  if (!isRowHint(hint)) return batch.listed(listKey(hint.collection, hint.list)) !== undefined
  const seen = batch.seen(tableOf(hint[0]).name, hint[0], hint[1])._tag
  return seen === "written" || seen === "absent"
}

/** The lock statement's parameters for `locks` (already in lock order) and the rows `wanted`. */
export const lockParams = (locks: ReadonlyArray<readonly [string, string]>, wanted: ReadonlyArray<Wanted>) => {
  const names = locks
    .filter(([key, mode]) => mode === "exclusive" && key !== "global")
    .flatMap(([key]) => PREFETCHED_COUNTER_KINDS.map((kind) => `${kind}:${key}`))
  const reads = wanted.map((hint) => {
    if (isRowHint(hint)) return [tableOf(hint[0]).name, hint[0], hint[1]]
    const { partition, order, limit } = hint.list
    return ["@list", tableOf(hint.collection).name, hint.collection, partition, order, limit]
  })
  return { names, params: [JSON.stringify(locks), JSON.stringify(names), JSON.stringify(reads)] }
}

/** The lock statement's answer, for the counters `names` and the rows `wanted`. */
export const prefetchedOf = (found: unknown, names: ReadonlyArray<string>, wanted: ReadonlyArray<Wanted>): Prefetched => {
  type Found = readonly [string, string, string, string | null]
  const value = (typeof found === "string" ? JSON.parse(found) : found) as {
    readonly c: Record<string, number | string> | null
    readonly r: ReadonlyArray<Found | ReadonlyArray<Found> | null>
  }
  const counters = new Map(names.map((name) => [name, Number(value.c?.[name] ?? 0)]))
  const rows: Array<Prefetched["rows"][number]> = []
  const lists: Array<Listed> = []
  const rowOf = (row: Found) => ({ id: row[0], partition: row[1], sortKey: row[2], body: row[3] })
  wanted.forEach((hint, i) => {
    const answer = value.r[i]
    if (isRowHint(hint)) {
      const [collection, id] = hint
      const row = answer === null || answer === undefined ? undefined : rowOf(answer as Found)
      rows.push({ table: tableOf(collection).name, collection, id, row })
    } else if (Array.isArray(answer)) {
      const listed = (answer as ReadonlyArray<Found>).map(rowOf)
      const { collection, list } = hint
      lists.push({ table: tableOf(collection).name, collection, partition: list.partition, key: listKey(collection, list), rows: listed })
    }
  })
  return { counters, rows, lists }
}
