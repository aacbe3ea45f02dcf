/**
 * A memory store write transaction's overlay on the committed state (memory.ts runs it): what the transaction wrote,
 * held until its commit folds it into the state's maps, and savepoints for nested units (E-289, E-348, E-410).
 */
import { Effect, Option } from "effect"
import { type Doc, isIdSequence, type Job, type ListOptions, type LoggedEvent, StoreError, type Tx, withinPartition } from "./port.ts"
import { getOrCreate } from "../domain/maps.ts"
import { compareJobs } from "./job-queue.ts"
import { makeKeepQueue } from "./keep-queue.ts"
import { bucketAt, docAt, eventsAfter, type MemoryState, nextIdOf, partitionKey, sortAndPage } from "./memory-state.ts"

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
const newBuckets = () => new Map<string, Map<string, Doc>>()
const newLog = (): Array<LoggedEvent> => []

/** A write transaction's own changes, on top of the committed state until its commit folds them in. */
export interface Overlay {
  readonly tx: Tx
  readonly hooks: Array<Effect.Effect<void>>
  readonly commit: Effect.Effect<void>
  /** `commit` made at once: folds the overlay into the committed state. */
  readonly commitNow: () => void
  /** The first job in run order as this transaction sees it (`nextJob`'s answer, at once). */
  readonly firstJob: () => Job | undefined
  /** Where a nested unit starts, and how to undo what it did (a savepoint). */
  readonly mark: () => () => void
}

/**
 * The overlay is one object whose methods are the transaction's `Tx`, not a closure per method: a transaction made
 * about twenty closures and their context, 1.7 KB, and a quote->trade pair opens two (E-410). Its methods are only
 * ever called on it (`tx.get(...)`), as every `Tx` is used.
 */
class MemoryOverlay implements Overlay, Tx {
  readonly hooks: Array<Effect.Effect<void>> = []
  readonly commit: Effect.Effect<void>
  private readonly state: MemoryState
  private putDocs = NO_PUTS
  /** Partitions this transaction wiped: their committed documents and events are hidden, then deleted at commit. */
  private wiped = NO_STRINGS
  private counters = NO_COUNTERS
  private newEvents = NO_EVENTS
  private newJobs = NO_JOBS
  private deletedJobs = NO_SEQS
  /** Documents `dropExpired` removed (`collection\u0000id` -> partition), and how far it read each keep queue. */
  private dropped = NO_DROPPED
  private consumed = NO_CONSUMED
  /**
   * Which of the structures above this transaction may change in place: none that a savepoint still holds, nor the
   * shared empty ones it starts with. `mark` clears every bit but PUTS and the first write after it copies that one
   * structure, so a nested unit pays only for what it writes, not a copy of the whole overlay (E-348).
   */
  private owned = 0
  /**
   * `putDocs` is not copied at a savepoint (it is the structure every unit writes, and the largest): once a mark is
   * made, each write notes the key and its previous entry here (`WHOLE` and the previous map for a wipe), and an undo
   * puts them back, last first, which leaves the map as it was, in the same order (E-410).
   */
  private journal: Array<string | typeof WHOLE | PutEntry | Map<string, PutEntry> | undefined> | undefined

  constructor(state: MemoryState) {
    this.state = state
    this.commit = Effect.sync(() => this.fold())
  }

  get tx(): Tx {
    return this
  }

  private isWiped(partition: string) {
    return this.wiped.length > 0 && this.wiped.some((parent) => withinPartition(parent, partition))
  }

  private own(bit: number) {
    if ((this.owned & bit) !== 0) return
    this.owned |= bit
    // The shared empty structures are replaced by new empty ones, not copied (a copy walks an iterator).
    if (bit === PUTS) this.putDocs = this.putDocs === NO_PUTS ? new Map() : new Map(this.putDocs)
    else if (bit === WIPED) this.wiped = [...this.wiped]
    else if (bit === COUNTERS) this.counters = this.counters === NO_COUNTERS ? new Map() : new Map(this.counters)
    else if (bit === EVENTS) this.newEvents = this.newEvents === NO_EVENTS ? [] : [...this.newEvents]
    else if (bit === JOBS) this.newJobs = this.newJobs === NO_JOBS ? new Map() : new Map(this.newJobs)
    else if (bit === DELETED_JOBS) this.deletedJobs = new Set(this.deletedJobs)
    else if (bit === DROPPED) this.dropped = new Map(this.dropped)
    else this.consumed = new Map(this.consumed)
  }

  private nextSeqSync(name: string) {
    const next = (this.counters.get(name) ?? this.state.counters.get(name) ?? 0) + 1
    this.own(COUNTERS)
    this.counters.set(name, next)
    return next
  }

  /** The first job in run order: the committed queue's and this transaction's own, less what it deleted. */
  firstJob() {
    const { deletedJobs } = this
    let first = this.state.jobs.first(deletedJobs.size === 0 ? undefined : (j) => deletedJobs.has(j.seq))
    for (const job of this.newJobs.values()) {
      if (!deletedJobs.has(job.seq) && (first === undefined || compareJobs(job, first) < 0)) first = job
    }
    return first
  }

  getNow(collection: string, id: string): Doc | undefined {
    // Most reads come before a transaction's first write: no key to build then.
    if (this.putDocs.size === 0 && this.dropped.size === 0) {
      const base = docAt(this.state.byId, collection, id)
      return base === undefined || this.isWiped(base.partition) ? undefined : base
    }
    const key = `${collection}\u0000${id}`
    const put = this.putDocs.get(key)
    if (put !== undefined) return put.doc
    const base = docAt(this.state.byId, collection, id)
    return base === undefined || this.isWiped(base.partition) || this.dropped.has(key) ? undefined : base
  }

  get(collection: string, id: string) {
    return Effect.sync(() => Option.fromUndefinedOr(this.getNow(collection, id)))
  }

  putNow(collection: string, doc: Doc) {
    this.own(PUTS)
    const key = `${collection}\u0000${doc.id}`
    if (this.journal !== undefined) this.journal.push(key, this.putDocs.get(key))
    this.putDocs.set(key, { collection, doc })
  }

  put(collection: string, doc: Doc) {
    return Effect.sync(() => this.putNow(collection, doc))
  }

  list(collection: string, options: ListOptions) {
    return Effect.sync(() => {
      const committed = this.isWiped(options.partition) ? undefined : bucketAt(this.state, collection, options.partition)
      // Nothing committed in the list (an event's webhooks, most often none): its own writes alone, no map to merge in.
      if ((committed === undefined || committed.size === 0) && this.dropped.size === 0) return sortAndPage(this.ownIn(collection, options.partition), options)
      const merged = new Map(committed ?? [])
      if (this.dropped.size > 0) for (const [key, d] of this.dropped) if (d.collection === collection) merged.delete(key.slice(collection.length + 1))
      for (const { collection: c, doc } of this.putDocs.values()) {
        if (c === collection && doc.partition === options.partition) merged.set(doc.id, doc)
      }
      return sortAndPage(merged.values(), options)
    })
  }

  /** This transaction's writes to `partition` of `collection`. */
  private ownIn(collection: string, partition: string) {
    const docs: Array<Doc> = []
    for (const { collection: c, doc } of this.putDocs.values()) if (c === collection && doc.partition === partition) docs.push(doc)
    return docs
  }

  deletePartition(partition: string) {
    return Effect.sync(() => {
      this.own(WIPED)
      this.own(PUTS)
      this.own(EVENTS)
      if (this.journal !== undefined) this.journal.push(WHOLE, new Map(this.putDocs))
      this.wiped.push(partition)
      for (const [key, { doc }] of this.putDocs) if (withinPartition(partition, doc.partition)) this.putDocs.delete(key)
      const events = this.newEvents
      for (let i = events.length - 1; i >= 0; i--) if (withinPartition(partition, events[i]?.partition ?? "")) events.splice(i, 1)
    })
  }

  dropExpired(collection: string, partition: string, upTo: number, limit: number) {
    return Effect.sync(() => {
      const queueKey = partitionKey(collection, partition)
      const queue = this.state.keeps.get(queueKey)
      if (queue === undefined || this.isWiped(partition)) return 0
      let read = this.consumed.get(queueKey) ?? 0
      let removed = 0
      for (let entry = queue.due(read, upTo); entry !== undefined && removed < limit; entry = queue.due(read, upTo)) {
        const key = `${collection}\u0000${entry.id}`
        // Rewritten by this transaction: its entry stays for the commit to judge against the new version.
        if (this.putDocs.has(key)) break
        read++
        const doc = docAt(this.state.byId, collection, entry.id)
        // A stale entry (the document is gone, moved, or was rewritten with another keepUntil) is only passed over.
        if (doc === undefined || doc.partition !== partition || doc.keepUntil !== entry.keepUntil) continue
        this.own(DROPPED)
        this.dropped.set(key, { collection, partition })
        removed++
      }
      this.own(CONSUMED)
      this.consumed.set(queueKey, read)
      return removed
    })
  }

  nextSeq(name: string) {
    return Effect.sync(() => (isIdSequence(name) ? nextIdOf(this.state, name) : this.nextSeqSync(name)))
  }

  nextId(name: string) {
    return Effect.sync(() => nextIdOf(this.state, name))
  }

  lockPartition() {
    return Effect.void
  }

  appendEvent(partition: string, event: Omit<LoggedEvent, "position" | "partition">) {
    return Effect.suspend(() => {
      const loggedIn = this.state.eventIds.get(event.eventId)
      if ((loggedIn !== undefined && !this.isWiped(loggedIn)) || this.newEvents.some((e) => e.eventId === event.eventId)) {
        return Effect.fail(new StoreError({ message: `memory store: appendEvent: eventId ${JSON.stringify(event.eventId)} is already in the log` }))
      }
      // Its fields named, not spread: a spread left four of six in a property array of their own, 40 bytes and an
      // object more for every event the log keeps (E-483). Same fields, same order.
      const logged: LoggedEvent = {
        position: this.nextSeqSync(`log:${partition}`),
        partition,
        eventId: event.eventId,
        name: event.name,
        timestamp: event.timestamp,
        payload: event.payload
      }
      this.own(EVENTS)
      this.newEvents.push(logged)
      return Effect.succeed(logged)
    })
  }

  readEvents(partition: string, afterPosition: number, limit: number) {
    return Effect.sync(() => {
      const committed = this.isWiped(partition) ? undefined : this.state.events.get(partition)
      const events = this.newEvents
      const own = events.length === 0 ? events : events.filter((e) => e.partition === partition && e.position > afterPosition)
      if (own.length === 0) return eventsAfter(committed, afterPosition, limit)
      // Rare: a transaction reading events it appended itself.
      return [...(committed ?? []).filter((e) => e.position > afterPosition), ...own].slice(0, limit)
    })
  }

  scheduleJobNow(job: Omit<Job, "seq">) {
    const scheduled: Job = { seq: nextIdOf(this.state, "jobs"), ...job }
    this.own(JOBS)
    this.newJobs.set(scheduled.seq, scheduled)
    return scheduled
  }

  scheduleJob(job: Omit<Job, "seq">) {
    return Effect.sync(() => this.scheduleJobNow(job))
  }

  get nextJob() {
    return Effect.sync(() => Option.fromUndefinedOr(this.firstJob()))
  }

  claimJob(upTo: number) {
    return Effect.sync(() => {
      // Under the store's lock, so no other transaction sees the job between this look and the claim.
      const first = this.firstJob()
      if (first === undefined || first.dueAt > upTo) return Option.none()
      this.own(DELETED_JOBS)
      this.deletedJobs.add(first.seq)
      return Option.some(first)
    })
  }

  deleteJob(seq: number) {
    return Effect.sync(() => {
      const present = !this.deletedJobs.has(seq) && (this.newJobs.has(seq) || this.state.jobs.get(seq) !== undefined)
      this.own(DELETED_JOBS)
      this.deletedJobs.add(seq)
      return present
    })
  }

  afterCommit(effect: Effect.Effect<void>) {
    return Effect.sync(() => void this.hooks.push(effect))
  }

  commitNow() {
    this.fold()
  }

  /** Folds the overlay into the committed state (the `commit` effect). */
  private fold() {
    const { state } = this
    const { byId } = state
    if (this.wiped.length > 0) {
      for (const [collection, buckets] of state.docs) {
        for (const [partition, bucket] of [...buckets]) {
          if (!this.isWiped(partition)) continue
          for (const id of bucket.keys()) byId.get(collection)?.delete(id)
          buckets.delete(partition)
        }
      }
      for (const [partition, log] of [...state.events]) {
        if (!this.isWiped(partition)) continue
        for (const e of log) state.eventIds.delete(e.eventId)
        state.events.delete(partition)
      }
      for (const key of [...state.keeps.keys()]) if (this.isWiped(key.slice(key.indexOf("\u0000") + 1))) state.keeps.delete(key)
    }
    // `forEach`, not `for...of` over entries: no [key, value] array per entry on the path every command commits by.
    this.dropped.forEach(({ collection, partition }, key) => {
      const id = key.slice(collection.length + 1)
      byId.get(collection)?.delete(id)
      bucketAt(state, collection, partition)?.delete(id)
    })
    this.consumed.forEach((count, queueKey) => void state.keeps.get(queueKey)?.removeFirst(count))
    this.putDocs.forEach(({ collection, doc }) => {
      const ids = getOrCreate(byId, collection, newDocMap)
      const previous = ids.get(doc.id)
      ids.set(doc.id, doc)
      // A new keepUntil joins its partition's queue; an unchanged one is already there.
      if (doc.keepUntil !== undefined && (previous === undefined || previous.keepUntil !== doc.keepUntil || previous.partition !== doc.partition))
        getOrCreate(state.keeps, partitionKey(collection, doc.partition), makeKeepQueue).add({ keepUntil: doc.keepUntil, id: doc.id })
      const buckets = getOrCreate(state.docs, collection, newBuckets)
      // A document that changes partition leaves its old bucket (as a postgres row would).
      if (previous !== undefined && previous.partition !== doc.partition) buckets.get(previous.partition)?.delete(doc.id)
      getOrCreate(buckets, doc.partition, newDocMap).set(doc.id, doc)
    })
    this.counters.forEach((value, name) => void state.counters.set(name, value))
    for (const e of this.newEvents) {
      getOrCreate(state.events, e.partition, newLog).push(e)
      state.eventIds.set(e.eventId, e.partition)
    }
    for (const job of this.newJobs.values()) state.jobs.insert(job)
    for (const seq of this.deletedJobs) state.jobs.delete(seq)
  }

  // The overlay's structures as they are at the mark, kept as they are: the next write to each copies it first (`own`).
  // `putDocs` is journaled instead: the mark keeps where the journal stands.
  mark() {
    if (this.journal === undefined) this.journal = []
    const saved = {
      at: this.journal.length,
      wiped: this.wiped,
      counters: this.counters,
      newEvents: this.newEvents,
      newJobs: this.newJobs,
      deletedJobs: this.deletedJobs,
      dropped: this.dropped,
      consumed: this.consumed,
      hooks: this.hooks.length
    }
    this.owned &= PUTS
    return () => {
      const log = this.journal ?? []
      for (let i = log.length - 2; i >= saved.at; i -= 2) {
        const key = log[i]
        const previous = log[i + 1]
        if (key === WHOLE) this.putDocs = previous as Map<string, PutEntry>
        else if (previous === undefined) this.putDocs.delete(key as string)
        else this.putDocs.set(key as string, previous as PutEntry)
      }
      log.length = saved.at
      // What is put back may still be held by an outer mark: it is copied again before it is written. The map a wipe's
      // entry gives back is the journal's own copy, held by nothing else now.
      this.owned &= PUTS
      this.wiped = saved.wiped
      this.counters = saved.counters
      this.newEvents = saved.newEvents
      this.newJobs = saved.newJobs
      this.deletedJobs = saved.deletedJobs
      this.dropped = saved.dropped
      this.consumed = saved.consumed
      this.hooks.length = saved.hooks
    }
  }
}

export const openOverlay = (state: MemoryState): Overlay => new MemoryOverlay(state)
