/**
 * The memory adapter's committed state and a write transaction's overlay on it (memory.ts runs them): the overlay
 * holds what a transaction wrote until its commit folds it into the state's maps, and marks savepoints for nested
 * units (E-289, E-348, E-410).
 */
import { Effect, Option } from "effect"
import { type Doc, isIdSequence, type Job, type ListOptions, type LoggedEvent, StoreError, type Tx, withinPartition } from "./port.ts"
import { getOrCreate } from "../domain/maps.ts"
import { compareJobs, type JobQueue, makeJobQueue } from "./job-queue.ts"
import { type KeepQueue, makeKeepQueue } from "./keep-queue.ts"
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
  readonly docs: Map<string, Map<string, Doc>>
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

export const docAt = (byId: MemoryState["byId"], collection: string, id: string): Doc | undefined => byId.get(collection)?.get(id)

const nextIdOf = (state: MemoryState, name: string) => {
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

/** The bits of `owned` in an overlay, one per structure it writes. */
const PUTS = 1
const WIPED = 2
const COUNTERS = 4
const EVENTS = 8
const JOBS = 16
const DELETED_JOBS = 32
const DROPPED = 64
const CONSUMED = 128

/**
 * The structures an overlay starts with: shared, empty, never written (a transaction owns none of its structures until
 * it first writes one, and `own` copies before that write). Most transactions write few of them: a read-mostly quote
 * allocates one Map, not eight (issue 25: allocation per command).
 */
const NO_PUTS: Map<string, { collection: string; doc: Doc }> = new Map()
const NO_STRINGS: Array<string> = []
const NO_COUNTERS: Map<string, number> = new Map()
const NO_EVENTS: Array<LoggedEvent> = []
const NO_JOBS: Map<number, Job> = new Map()
const NO_SEQS: Set<number> = new Set()
const NO_DROPPED: Map<string, { collection: string; partition: string }> = new Map()
const NO_CONSUMED: Map<string, number> = new Map()
/** A savepoint journal entry that restores the whole of `putDocs` (a wipe), not one key. */
const WHOLE = Symbol("whole")
type PutEntry = { collection: string; doc: Doc }
const newDocMap = () => new Map<string, Doc>()
const newLog = (): Array<LoggedEvent> => []

/** A write transaction's own changes, on top of the committed state until its commit folds them in. */
export interface Overlay {
  readonly tx: Tx
  readonly hooks: Array<Effect.Effect<void>>
  readonly commit: Effect.Effect<void>
  /** Where a nested unit starts, and how to undo what it did (a savepoint). */
  readonly mark: () => () => void
}

export const openOverlay = (state: MemoryState): Overlay => {
  const { byId } = state
  let putDocs = NO_PUTS
  /** Partitions this transaction wiped: their committed documents and events are hidden, then deleted at commit. */
  let wiped = NO_STRINGS
  const isWiped = (partition: string) => wiped.length > 0 && wiped.some((parent) => withinPartition(parent, partition))
  let counters = NO_COUNTERS
  let newEvents = NO_EVENTS
  let newJobs = NO_JOBS
  let deletedJobs = NO_SEQS
  /** Documents `dropExpired` removed (`collection\u0000id` -> partition), and how far it read each keep queue. */
  let dropped = NO_DROPPED
  let consumed = NO_CONSUMED
  const hooks: Array<Effect.Effect<void>> = []
  /**
   * Which of the structures above this transaction may change in place: none that a savepoint still holds, nor the
   * shared empty ones it starts with. `mark` clears every bit but PUTS and the first write after it copies that one
   * structure, so a nested unit pays only for what it writes, not a copy of the whole overlay (E-348).
   */
  let owned = 0
  /**
   * `putDocs` is not copied at a savepoint (it is the structure every unit writes, and the largest): once a mark is
   * made, each write notes the key and its previous entry here (`WHOLE` and the previous map for a wipe), and an undo
   * puts them back, last first, which leaves the map as it was, in the same order (E-410).
   */
  let journal: Array<string | typeof WHOLE | PutEntry | Map<string, PutEntry> | undefined> | undefined
  const own = (bit: number) => {
    if ((owned & bit) !== 0) return
    owned |= bit
    if (bit === PUTS) putDocs = new Map(putDocs)
    else if (bit === WIPED) wiped = [...wiped]
    else if (bit === COUNTERS) counters = new Map(counters)
    else if (bit === EVENTS) newEvents = [...newEvents]
    else if (bit === JOBS) newJobs = new Map(newJobs)
    else if (bit === DELETED_JOBS) deletedJobs = new Set(deletedJobs)
    else if (bit === DROPPED) dropped = new Map(dropped)
    else consumed = new Map(consumed)
  }

  const counterValue = (name: string) => counters.get(name) ?? state.counters.get(name) ?? 0
  const nextSeqSync = (name: string) => {
    const next = counterValue(name) + 1
    own(COUNTERS)
    counters.set(name, next)
    return next
  }
  /** The first job in run order: the committed queue's and this transaction's own, less what it deleted. */
  const firstJob = () => {
    let first = state.jobs.first(deletedJobs.size === 0 ? undefined : (j) => deletedJobs.has(j.seq))
    for (const job of newJobs.values()) {
      if (!deletedJobs.has(job.seq) && (first === undefined || compareJobs(job, first) < 0)) first = job
    }
    return first
  }

  const tx: Tx = {
    get: (collection, id) =>
      Effect.sync(() => {
        // Most reads come before a transaction's first write: no key to build then.
        if (putDocs.size === 0 && dropped.size === 0) {
          const base = docAt(byId, collection, id)
          return base === undefined || isWiped(base.partition) ? Option.none() : Option.some(base)
        }
        const key = `${collection}\u0000${id}`
        const put = putDocs.get(key)
        if (put !== undefined) return Option.some(put.doc)
        const base = docAt(byId, collection, id)
        return base === undefined || isWiped(base.partition) || dropped.has(key) ? Option.none() : Option.some(base)
      }),
    put: (collection, doc) =>
      Effect.sync(() => {
        own(PUTS)
        const key = `${collection}\u0000${doc.id}`
        if (journal !== undefined) journal.push(key, putDocs.get(key))
        putDocs.set(key, { collection, doc })
      }),
    list: (collection, options) =>
      Effect.sync(() => {
        const merged = new Map(isWiped(options.partition) ? [] : (state.docs.get(partitionKey(collection, options.partition)) ?? []))
        if (dropped.size > 0) for (const [key, d] of dropped) if (d.collection === collection) merged.delete(key.slice(collection.length + 1))
        for (const { collection: c, doc } of putDocs.values()) {
          if (c === collection && doc.partition === options.partition) merged.set(doc.id, doc)
        }
        return sortAndPage(merged.values(), options)
      }),
    deletePartition: (partition) =>
      Effect.sync(() => {
        own(WIPED)
        own(PUTS)
        own(EVENTS)
        if (journal !== undefined) journal.push(WHOLE, new Map(putDocs))
        wiped.push(partition)
        for (const [key, { doc }] of putDocs) if (withinPartition(partition, doc.partition)) putDocs.delete(key)
        for (let i = newEvents.length - 1; i >= 0; i--) if (withinPartition(partition, newEvents[i]?.partition ?? "")) newEvents.splice(i, 1)
      }),
    dropExpired: (collection, partition, upTo, limit) =>
      Effect.sync(() => {
        const queueKey = partitionKey(collection, partition)
        const queue = state.keeps.get(queueKey)
        if (queue === undefined || isWiped(partition)) return 0
        let read = consumed.get(queueKey) ?? 0
        let removed = 0
        for (let entry = queue.due(read, upTo); entry !== undefined && removed < limit; entry = queue.due(read, upTo)) {
          const key = `${collection}\u0000${entry.id}`
          // Rewritten by this transaction: its entry stays for the commit to judge against the new version.
          if (putDocs.has(key)) break
          read++
          const doc = docAt(byId, collection, entry.id)
          // A stale entry (the document is gone, moved, or was rewritten with another keepUntil) is only passed over.
          if (doc === undefined || doc.partition !== partition || doc.keepUntil !== entry.keepUntil) continue
          own(DROPPED)
          dropped.set(key, { collection, partition })
          removed++
        }
        own(CONSUMED)
        consumed.set(queueKey, read)
        return removed
      }),
    nextSeq: (name) => Effect.sync(() => (isIdSequence(name) ? nextIdOf(state, name) : nextSeqSync(name))),
    nextId: (name) => Effect.sync(() => nextIdOf(state, name)),
    lockPartition: () => Effect.void,
    appendEvent: (partition, event) =>
      Effect.suspend(() => {
        const loggedIn = state.eventIds.get(event.eventId)
        if ((loggedIn !== undefined && !isWiped(loggedIn)) || newEvents.some((e) => e.eventId === event.eventId)) {
          return Effect.fail(new StoreError({ message: `memory store: appendEvent: eventId ${JSON.stringify(event.eventId)} is already in the log` }))
        }
        const logged: LoggedEvent = { position: nextSeqSync(`log:${partition}`), partition, ...event }
        own(EVENTS)
        newEvents.push(logged)
        return Effect.succeed(logged)
      }),
    readEvents: (partition, afterPosition, limit) =>
      Effect.sync(() => {
        const committed = isWiped(partition) ? undefined : state.events.get(partition)
        const own = newEvents.length === 0 ? newEvents : newEvents.filter((e) => e.partition === partition && e.position > afterPosition)
        if (own.length === 0) return eventsAfter(committed, afterPosition, limit)
        // Rare: a transaction reading events it appended itself.
        return [...(committed ?? []).filter((e) => e.position > afterPosition), ...own].slice(0, limit)
      }),
    scheduleJob: (job) =>
      Effect.sync(() => {
        const scheduled: Job = { seq: nextIdOf(state, "jobs"), ...job }
        own(JOBS)
        newJobs.set(scheduled.seq, scheduled)
        return scheduled
      }),
    nextJob: Effect.sync(() => Option.fromUndefinedOr(firstJob())),
    claimJob: (upTo) =>
      Effect.sync(() => {
        // Under the store's lock, so no other transaction sees the job between this look and the claim.
        const first = firstJob()
        if (first === undefined || first.dueAt > upTo) return Option.none()
        own(DELETED_JOBS)
        deletedJobs.add(first.seq)
        return Option.some(first)
      }),
    deleteJob: (seq) =>
      Effect.sync(() => {
        const present = !deletedJobs.has(seq) && (newJobs.has(seq) || state.jobs.get(seq) !== undefined)
        own(DELETED_JOBS)
        deletedJobs.add(seq)
        return present
      }),
    afterCommit: (effect) => Effect.sync(() => void hooks.push(effect))
  }

  const commit = Effect.sync(() => {
    if (wiped.length > 0) {
      for (const [key, bucket] of state.docs) {
        const [collection = "", partition = ""] = key.split("\u0000")
        if (!isWiped(partition)) continue
        for (const id of bucket.keys()) byId.get(collection)?.delete(id)
        state.docs.delete(key)
      }
      for (const [partition, log] of [...state.events]) {
        if (!isWiped(partition)) continue
        for (const e of log) state.eventIds.delete(e.eventId)
        state.events.delete(partition)
      }
      for (const key of [...state.keeps.keys()]) if (isWiped(key.slice(key.indexOf("\u0000") + 1))) state.keeps.delete(key)
    }
    // `forEach`, not `for...of` over entries: no [key, value] array per entry on the path every command commits by.
    dropped.forEach(({ collection, partition }, key) => {
      const id = key.slice(collection.length + 1)
      byId.get(collection)?.delete(id)
      state.docs.get(partitionKey(collection, partition))?.delete(id)
    })
    consumed.forEach((count, queueKey) => void state.keeps.get(queueKey)?.removeFirst(count))
    putDocs.forEach(({ collection, doc }) => {
      const ids = getOrCreate(byId, collection, newDocMap)
      const previous = ids.get(doc.id)
      ids.set(doc.id, doc)
      const bucketKey = partitionKey(collection, doc.partition)
      // A new keepUntil joins its partition's queue; an unchanged one is already there.
      if (doc.keepUntil !== undefined && (previous === undefined || previous.keepUntil !== doc.keepUntil || previous.partition !== doc.partition))
        getOrCreate(state.keeps, bucketKey, makeKeepQueue).add({ keepUntil: doc.keepUntil, id: doc.id })
      // A document that changes partition leaves its old bucket (as a postgres row would).
      if (previous !== undefined && previous.partition !== doc.partition) state.docs.get(partitionKey(collection, previous.partition))?.delete(doc.id)
      getOrCreate(state.docs, bucketKey, newDocMap).set(doc.id, doc)
    })
    counters.forEach((value, name) => void state.counters.set(name, value))
    for (const e of newEvents) {
      getOrCreate(state.events, e.partition, newLog).push(e)
      state.eventIds.set(e.eventId, e.partition)
    }
    for (const job of newJobs.values()) state.jobs.insert(job)
    for (const seq of deletedJobs) state.jobs.delete(seq)
  })

  // The overlay's structures as they are at the mark, kept as they are: the next write to each copies it first (`own`).
  // `putDocs` is journaled instead: the mark keeps where the journal stands.
  const mark = () => {
    if (journal === undefined) journal = []
    const saved = { at: journal.length, wiped, counters, newEvents, newJobs, deletedJobs, dropped, consumed, hooks: hooks.length }
    owned &= PUTS
    return () => {
      const log = journal ?? []
      for (let i = log.length - 2; i >= saved.at; i -= 2) {
        const key = log[i]
        const previous = log[i + 1]
        if (key === WHOLE) putDocs = previous as Map<string, PutEntry>
        else if (previous === undefined) putDocs.delete(key as string)
        else putDocs.set(key as string, previous as PutEntry)
      }
      log.length = saved.at
      // What is put back may still be held by an outer mark: it is copied again before it is written. The map a wipe's
      // entry gives back is the journal's own copy, held by nothing else now.
      owned &= PUTS
      wiped = saved.wiped
      counters = saved.counters
      newEvents = saved.newEvents
      newJobs = saved.newJobs
      deletedJobs = saved.deletedJobs
      dropped = saved.dropped
      consumed = saved.consumed
      hooks.length = saved.hooks
    }
  }

  return { tx, hooks, commit, mark }
}
