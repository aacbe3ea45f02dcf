/**
 * The memory adapter of the store port: the embedded default, no server needed. Owns: in-process state and its
 * copy-on-commit transactions. Does not own: durability (a restart loses everything, by design of this adapter).
 *
 * A transaction writes into an overlay; commit folds the overlay into the base maps. Transactions are serialised
 * by a one-permit semaphore: the postgres adapter runs transactions of different partitions at the same time
 * (E-320), which one event loop could not make faster here, and one at a time is one of the orders it may give.
 * So `lockPartition` has nothing to do. Id sequences (`nextId`, job seqs) are not rolled back, as PG sequences are
 * not (E-321). A `transact` or
 * `read` inside an open transaction of the same fiber joins it (E-289): nested work is a savepoint, undone alone when
 * it fails, so a request's handler, its Idempotency-Key receipt and its audit record commit as one.
 */
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import {
  type CommitFaults,
  type Doc,
  isIdSequence,
  type Job,
  type ListOptions,
  type LoggedEvent,
  noCommitFaults,
  type ReadTx,
  Store,
  StoreError,
  type Tx,
  withinPartition
} from "./port.ts"
import { getOrCreate } from "../domain/maps.ts"
import { compareJobs, type JobQueue, makeJobQueue } from "./job-queue.ts"
import { type KeepQueue, makeKeepQueue } from "./keep-queue.ts"

const partitionKey = (collection: string, partition: string) => `${collection}\u0000${partition}`

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

const docAt = (byId: MemoryState["byId"], collection: string, id: string): Doc | undefined => byId.get(collection)?.get(id)

const nextIdOf = (state: MemoryState, name: string) => {
  const next = (state.sequences.get(name) ?? 0) + 1
  state.sequences.set(name, next)
  return next
}

/**
 * Up to `limit` events of a partition's log after `afterPosition`. Positions grow along the array, so the first one is
 * found by bisection: a webhook attempt reads its one event without walking the partner's whole log (issue 25).
 */
const eventsAfter = (log: ReadonlyArray<LoggedEvent> | undefined, afterPosition: number, limit: number): Array<LoggedEvent> => {
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
const ALL_OWNED = 255

/** A write transaction's own changes, on top of the committed state until its commit folds them in. */
interface Overlay {
  readonly tx: Tx
  readonly hooks: Array<Effect.Effect<void>>
  readonly commit: Effect.Effect<void>
  /** Where a nested unit starts, and how to undo what it did (a savepoint). */
  readonly mark: () => () => void
}

const openOverlay = (state: MemoryState): Overlay => {
  const { byId } = state
  let putDocs = new Map<string, { collection: string; doc: Doc }>()
  /** Partitions this transaction wiped: their committed documents and events are hidden, then deleted at commit. */
  let wiped: Array<string> = []
  const isWiped = (partition: string) => wiped.some((parent) => withinPartition(parent, partition))
  let counters = new Map<string, number>()
  let newEvents: Array<LoggedEvent> = []
  let newJobs = new Map<number, Job>()
  let deletedJobs = new Set<number>()
  /** Documents `dropExpired` removed (`collection\u0000id` -> partition), and how far it read each keep queue. */
  let dropped = new Map<string, { collection: string; partition: string }>()
  let consumed = new Map<string, number>()
  const hooks: Array<Effect.Effect<void>> = []
  /**
   * Which of the structures above this transaction may change in place: none that a savepoint still holds. `mark`
   * clears every bit and the first write after it copies that one structure, so a nested unit pays only for what it
   * writes, not a copy of the whole overlay (E-348).
   */
  let owned = ALL_OWNED
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
        const key = `${collection}\u0000${id}`
        const put = putDocs.get(key)
        if (put !== undefined) return Option.some(put.doc)
        const base = docAt(byId, collection, id)
        return base === undefined || isWiped(base.partition) || dropped.has(key) ? Option.none() : Option.some(base)
      }),
    put: (collection, doc) =>
      Effect.sync(() => {
        own(PUTS)
        putDocs.set(`${collection}\u0000${doc.id}`, { collection, doc })
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
        const own = newEvents.filter((e) => e.partition === partition && e.position > afterPosition)
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
    for (const [key, { collection, partition }] of dropped) {
      const id = key.slice(collection.length + 1)
      byId.get(collection)?.delete(id)
      state.docs.get(partitionKey(collection, partition))?.delete(id)
    }
    for (const [queueKey, count] of consumed) state.keeps.get(queueKey)?.removeFirst(count)
    for (const { collection, doc } of putDocs.values()) {
      const ids = getOrCreate(byId, collection, () => new Map<string, Doc>())
      const previous = ids.get(doc.id)
      ids.set(doc.id, doc)
      // A new keepUntil joins its partition's queue; an unchanged one is already there.
      if (doc.keepUntil !== undefined && (previous === undefined || previous.keepUntil !== doc.keepUntil || previous.partition !== doc.partition))
        getOrCreate(state.keeps, partitionKey(collection, doc.partition), makeKeepQueue).add({ keepUntil: doc.keepUntil, id: doc.id })
      // A document that changes partition leaves its old bucket (as a postgres row would).
      if (previous !== undefined && previous.partition !== doc.partition) state.docs.get(partitionKey(collection, previous.partition))?.delete(doc.id)
      getOrCreate(state.docs, partitionKey(collection, doc.partition), () => new Map<string, Doc>()).set(doc.id, doc)
    }
    for (const [name, value] of counters) state.counters.set(name, value)
    for (const e of newEvents) {
      getOrCreate(state.events, e.partition, (): Array<LoggedEvent> => []).push(e)
      state.eventIds.set(e.eventId, e.partition)
    }
    for (const job of newJobs.values()) state.jobs.insert(job)
    for (const seq of deletedJobs) state.jobs.delete(seq)
  })

  // The overlay's structures as they are at the mark, kept as they are: the next write to each copies it first (`own`).
  const mark = () => {
    const saved = { putDocs, wiped, counters, newEvents, newJobs, deletedJobs, dropped, consumed, hooks: hooks.length }
    owned = 0
    return () => {
      // What is put back may still be held by an outer mark: it is copied again before it is written.
      owned = 0
      putDocs = saved.putDocs
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

let instances = 0

export interface MemoryStoreOptions {
  /** The committed state to start from: a restart after a simulated crash keeps it (E-290). Fresh by default. */
  readonly state?: MemoryState | undefined
  /** Where crashes and aborts are injected around commits (E-290); none by default. */
  readonly faults?: CommitFaults | undefined
}

export const makeMemoryStoreWith = (options: MemoryStoreOptions) =>
  Effect.gen(function* () {
    const state = options.state ?? makeMemoryState()
    const faults = options.faults ?? noCommitFaults
    const lock = yield* Semaphore.make(1)

    /** The transaction open in this fiber on THIS store, if any: a `transact` inside it joins it (E-289). */
    const open = Context.Reference<Overlay | undefined>(`sokoni/store/memory/open/${instances++}`, { defaultValue: () => undefined })

    const runHooks = (overlay: Overlay) => (overlay.hooks.length === 0 ? Effect.void : Effect.forEach(overlay.hooks, (hook) => hook, { discard: true }))
    /**
     * The commit and what follows it, in order: the injected faults around the fold, then the after-commit hooks.
     * Without faults (every run but the crash tests) it is one step, not four: a command's transaction pays it (E-348).
     */
    const settle: (overlay: Overlay) => Effect.Effect<void, StoreError> =
      faults === noCommitFaults
        ? (overlay) => Effect.andThen(overlay.commit, runHooks(overlay))
        : (overlay) => faults.beforeCommit.pipe(Effect.andThen(overlay.commit), Effect.andThen(faults.afterCommit), Effect.andThen(runHooks(overlay)))

    const fresh = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          const overlay = openOverlay(state)
          return Effect.flatMap(
            Effect.provideService(
              Effect.suspend(() => work(overlay.tx)),
              open,
              overlay
            ),
            (result) => Effect.as(settle(overlay), result)
          )
        })
      )

    /** Nested work is a savepoint: its writes and hooks are undone when it fails, the outer transaction goes on. */
    const nested = <A, E, R>(overlay: Overlay, work: (tx: Tx) => Effect.Effect<A, E, R>) =>
      Effect.suspend(() => {
        const undo = overlay.mark()
        return Effect.onError(
          Effect.suspend(() => work(overlay.tx)),
          () => Effect.sync(undo)
        )
      })

    const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.service(open), (overlay) => (overlay === undefined ? fresh(work) : nested(overlay, work)))

    // Reads go straight to the committed maps: commits fold their overlay in synchronously, so a read never sees half
    // of one. Inside an open transaction a read sees that transaction's own writes.
    const committed: ReadTx = {
      get: (collection, id) => Effect.sync(() => Option.fromUndefinedOr(docAt(state.byId, collection, id))),
      list: (collection, options) =>
        Effect.sync(() => sortAndPage((state.docs.get(partitionKey(collection, options.partition)) ?? new Map()).values(), options)),
      readEvents: (partition, afterPosition, limit) => Effect.sync(() => eventsAfter(state.events.get(partition), afterPosition, limit)),
      nextJob: Effect.sync(() => Option.fromUndefinedOr(state.jobs.first()))
    }
    const read = <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>) =>
      Effect.flatMap(Effect.service(open), (overlay) => work(overlay === undefined ? committed : overlay.tx))

    return Store.of({ kind: "memory", transact, read })
  })

export const makeMemoryStore = makeMemoryStoreWith({})

export const memoryStoreLayer = (options: MemoryStoreOptions = {}) => Layer.effect(Store, makeMemoryStoreWith(options))

export const MemoryStoreLayer = memoryStoreLayer()
