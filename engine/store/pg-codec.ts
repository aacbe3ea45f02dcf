/**
 * How the postgres adapter turns port values into SQL values and back. Owns: JSON text of bodies and payloads, the
 * sort order of sort keys, the names of the PG sequences behind id sequences, the checks that refuse what PostgreSQL
 * text cannot hold, and rows -> port values. Does not own any SQL statement.
 */
import { Effect } from "effect"
import type { SqlError } from "effect/sql"
import { type Doc, type IdSequence, ID_SEQUENCES, type Job, type LoggedEvent, StoreError } from "./port.ts"

const sequenceName = (name: string): string => `ids_${name.toLowerCase().replace(/[^a-z0-9]/g, "_")}`
/** Made once: every id drawn asks for its sequence's name (a regular expression per call was 0.4% of a pair's CPU). */
const SEQUENCE_NAMES: ReadonlyMap<string, string> = new Map(["jobs", ...ID_SEQUENCES].map((name) => [name, sequenceName(name)]))

/** The PG sequence behind a `nextId` sequence or the job seqs. */
export const sequenceOf = (name: IdSequence | "jobs"): string => SEQUENCE_NAMES.get(name) ?? sequenceName(name)
export const ALL_SEQUENCES = ["jobs" as const, ...ID_SEQUENCES].map(sequenceOf)

export const toStoreError = (operation: string) => (cause: SqlError.SqlError) =>
  new StoreError({ message: `postgres store: ${operation} failed: ${cause.message}`, cause })

/** JSON text of a value; `undefined` (what JSON.stringify gives for undefined) is stored as SQL NULL. */
export const encodeJson = (operation: string, value: unknown): Effect.Effect<string | null, StoreError> =>
  Effect.try({
    try: () => JSON.stringify(value) ?? null,
    catch: (cause) => new StoreError({ message: `postgres store: ${operation}: value is not JSON: ${String(cause)}`, cause })
  })

export const decodeJson = (text: string | null): unknown => (text === null ? undefined : JSON.parse(text))

/** The 4 hex digits of each code unit below 128, made once: sort keys are mostly ASCII (ids, times). */
const ASCII_HEX = Array.from({ length: 128 }, (_, c) => c.toString(16).padStart(4, "0"))

/** The string's UTF-16 code units as 4 hex digits each: "C"-collation order on it is JavaScript's `<` order. */
export const sortOrderOf = (sortKey: string): string => {
  let out = ""
  for (let i = 0; i < sortKey.length; i++) {
    const c = sortKey.charCodeAt(i)
    out += c < 128 ? (ASCII_HEX[c] as string) : c.toString(16).padStart(4, "0")
  }
  return out
}

export const requireSafeInteger = (operation: string, field: string, value: number): Effect.Effect<number, StoreError> =>
  Number.isSafeInteger(value)
    ? Effect.succeed(value)
    : Effect.fail(new StoreError({ message: `postgres store: ${operation}: ${field} must be a safe integer, got ${value}` }))

/** LIMIT in SQL when it means the same as `Array.prototype.slice(0, limit)`, otherwise slice in JavaScript. */
export const sqlLimit = (limit: number): number | undefined => (Number.isSafeInteger(limit) && limit >= 0 ? limit : undefined)

/**
 * PostgreSQL text holds neither NUL nor lone surrogates (the driver would turn those into U+FFFD). Writes of such
 * strings fail with StoreError before reaching the server (so the transaction stays usable); reads of them find nothing,
 * as nothing can have been stored under them.
 */
export const representable = (value: string): boolean => value.isWellFormed() && !value.includes("\u0000")

/** The StoreError `requireText` fails with for a put's strings, or undefined: no object or Effect made when all are fine. */
export const putTextProblem = (collection: string, id: string, partition: string, sortKey: string): StoreError | undefined => {
  if (representable(collection) && representable(id) && representable(partition) && representable(sortKey)) return undefined
  const fields: Record<string, string> = { collection, id, partition, sortKey }
  const field = Object.keys(fields).find((name) => !representable(fields[name] as string)) as string
  return new StoreError({ message: `postgres store: put: ${field} ${JSON.stringify(fields[field])} contains NUL or a lone surrogate` })
}

/** JSON text of a put's body, or the StoreError `encodeJson` fails with: no Effect made on the way. */
export const bodyText = (operation: string, value: unknown): string | null | StoreError => {
  try {
    return JSON.stringify(value) ?? null
  } catch (cause) {
    return new StoreError({ message: `postgres store: ${operation}: value is not JSON: ${String(cause)}`, cause })
  }
}

export const requireText = (operation: string, fields: Record<string, string>): Effect.Effect<void, StoreError> => {
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

export const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value))

export interface DocRow {
  readonly id: string
  readonly partition: string
  readonly sort_key: string
  readonly body: string | null
}

export interface EventRow {
  readonly partition: string
  readonly position: bigint | number | string
  readonly event_id: string
  readonly name: string
  readonly timestamp: bigint | number | string
  readonly payload: string | null
}

export interface JobRow {
  readonly seq: bigint | number | string
  readonly kind: string
  readonly due_at: bigint | number | string
  readonly payload: string | null
}

export const docOf = (row: DocRow): Doc => ({
  id: row.id,
  partition: row.partition,
  sortKey: row.sort_key,
  body: decodeJson(row.body)
})

export const eventOf = (row: EventRow): LoggedEvent => ({
  position: toNumber(row.position),
  partition: row.partition,
  eventId: row.event_id,
  name: row.name,
  timestamp: toNumber(row.timestamp),
  payload: decodeJson(row.payload)
})

export const jobOf = (row: JobRow): Job => ({
  seq: toNumber(row.seq),
  kind: row.kind,
  dueAt: toNumber(row.due_at),
  payload: decodeJson(row.payload)
})
