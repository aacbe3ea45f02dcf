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

/**
 * The counter kinds of a partner partition stepped on the money path: event positions (postgres.ts `appendEvent`) and
 * journal sequences (app/ledger.ts). Read with the partition's lock, as the trade steps both.
 */
const PREFETCHED_COUNTER_KINDS = ["log", "journal"] as const

const ALL_TABLES: ReadonlyArray<Table> = [...TYPED_TABLES, DOCUMENTS]

const lockBody = (): string => {
  const branches = ALL_TABLES.map((table) => {
    const collection = table.collection === undefined ? "collection = r->>1 AND " : ""
    return `WHEN '${table.name}' THEN SELECT json_build_array(id, partition, sort_key, body) INTO found FROM ${table.name} WHERE ${collection}id = r->>2;`
  })
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

export const LOCK = (() => {
  const body = lockBody()
  const name = `sokoni_lock_${createHash("sha256").update(body).digest("hex").slice(0, 12)}`
  const create = `CREATE OR REPLACE FUNCTION ${name}(locks json, names json, reads json) RETURNS json LANGUAGE plpgsql AS $lock$ ${body} $lock$`
  return { name, call: `SELECT ${name}($1::json, $2::json, $3::json) AS found`, create }
})()

/** Creates the lock function unless it exists (pg-functions.ts). */
export const ensureLockFunction = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError.SqlError> =>
  ensureFunction(sql, "sokoni_lock", `${LOCK.name}(json,json,json)`, LOCK.create)

/** A row to read with the lock: its table, collection and id. */
export type Wanted = readonly [collection: string, id: string]

/** A row read with the lock, its body still JSON text. */
export interface Row {
  readonly partition: string
  readonly sortKey: string
  readonly body: string | null
}

/** What the lock statement read: counters by name (absent: 0), and each wanted row (none: not there). */
export interface Prefetched {
  readonly counters: ReadonlyMap<string, number>
  readonly rows: ReadonlyArray<{ readonly table: string; readonly collection: string; readonly id: string; readonly row: Row | undefined }>
}

/** The lock statement's parameters for `locks` (already in lock order) and the rows `wanted`. */
export const lockParams = (locks: ReadonlyArray<readonly [string, string]>, wanted: ReadonlyArray<Wanted>) => {
  const names = locks
    .filter(([key, mode]) => mode === "exclusive" && key !== "global")
    .flatMap(([key]) => PREFETCHED_COUNTER_KINDS.map((kind) => `${kind}:${key}`))
  const reads = wanted.map(([collection, id]) => [tableOf(collection).name, collection, id])
  return { names, params: [JSON.stringify(locks), JSON.stringify(names), JSON.stringify(reads)] }
}

/** The lock statement's answer, for the counters `names` and the rows `wanted`. */
export const prefetchedOf = (found: unknown, names: ReadonlyArray<string>, wanted: ReadonlyArray<Wanted>): Prefetched => {
  const value = (typeof found === "string" ? JSON.parse(found) : found) as {
    readonly c: Record<string, number | string> | null
    readonly r: ReadonlyArray<readonly [string, string, string, string | null] | null>
  }
  const counters = new Map(names.map((name) => [name, Number(value.c?.[name] ?? 0)]))
  const rows = wanted.map(([collection, id], i) => {
    const row = value.r[i]
    const found = row === null || row === undefined ? undefined : { partition: row[1], sortKey: row[2], body: row[3] }
    return { table: tableOf(collection).name, collection, id, row: found }
  })
  return { counters, rows }
}
