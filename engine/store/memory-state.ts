/**
 * The memory adapter's committed state (what survives a simulated crash, E-290) and the reads on it that a transaction
 * and the committed view share (memory.ts, memory-overlay.ts).
 */
import type { Doc, ListOptions, LoggedEvent } from "./port.ts"
import { type JobQueue, makeJobQueue } from "./job-queue.ts"
import type { KeepQueue } from "./keep-queue.ts"

export const partitionKey = (collection: string, partition: string) => `${collection}\u0000${partition}`

export const sortAndPage = (docs: Iterable<Doc>, options: ListOptions): ReadonlyArray<Doc> => {
  const sorted = [...docs].sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0))
  if (options.order === "desc") sorted.reverse()
  const after = options.after
  const filtered = after === undefined ? sorted : sorted.filter((d) => (options.order === "asc" ? d.sortKey > after : d.sortKey < after))
  return filtered.slice(0, options.limit)
}

/** The committed state of a memory store: what survives a simulated crash and restart (E-290). */
export interface MemoryState {
  /**
   * collection -> partition -> id -> doc, for lists: nested, so a commit finds a document's bucket without building a
   * `collection\u0000partition` key (a new string to flatten and hash per document written: E-462).
   */
  readonly docs: Map<string, Map<string, Map<string, Doc>>>
  readonly counters: Map<string, number>
  readonly events: Map<string, Array<LoggedEvent>>
  readonly jobs: JobQueue
  /** collection -> id -> doc, for get: two levels, so a look-up builds no key and the index keeps none per document. */
  readonly byId: Map<string, Map<string, Doc>>
  /** Id sequences: taken at once, kept whatever becomes of the transaction (a rolled-back one leaves a gap). */
  readonly sequences: Map<string, number>
  /** `${collection}\u0000${partition}` -> its documents that carry a `keepUntil`, in drop order (E-400). */
  readonly keeps: Map<string, KeepQueue>
  /** eventId -> the partition whose log holds it: an id is in the log once (E-342). */
  readonly eventIds: Map<string, string>
}

export const makeMemoryState = (): MemoryState => ({
  docs: new Map(),
  counters: new Map(),
  events: new Map(),
  jobs: makeJobQueue(),
  byId: new Map(),
  sequences: new Map(),
  keeps: new Map(),
  eventIds: new Map()
})

/** The committed documents of `partition` in `collection`, if any. */
export const bucketAt = (state: MemoryState, collection: string, partition: string): Map<string, Doc> | undefined => state.docs.get(collection)?.get(partition)

export const docAt = (byId: MemoryState["byId"], collection: string, id: string): Doc | undefined => byId.get(collection)?.get(id)

export const nextIdOf = (state: MemoryState, name: string) => {
  const next = (state.sequences.get(name) ?? 0) + 1
  state.sequences.set(name, next)
  return next
}

/**
 * Up to `limit` events of a partition's log after `afterPosition`. Positions grow along the array, so the first one is
 * found by bisection: a webhook attempt reads its one event without walking the partner's whole log (issue 25).
 */
export const eventsAfter = (log: ReadonlyArray<LoggedEvent> | undefined, afterPosition: number, limit: number): Array<LoggedEvent> => {
  if (log === undefined) return []
  // A negative or odd limit keeps `Array.prototype.slice`'s meaning, as the postgres adapter does.
  if (!Number.isSafeInteger(limit) || limit < 0) return log.filter((e) => e.position > afterPosition).slice(0, limit)
  let low = 0
  let high = log.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if ((log[mid]?.position ?? 0) <= afterPosition) low = mid + 1
    else high = mid
  }
  return log.slice(low, low + limit)
}
