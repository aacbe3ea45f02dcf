/**
 * The store port: the one interface both adapters (memory, postgres) implement, and what the store contract tests
 * exercise. Owns: transactions, documents by collection, gapless counters, the event log rows and due jobs.
 * Does not own: what the documents mean (app/), the ordering policy of jobs beyond (dueAt, seq), nor publishing
 * committed events (events/event-log.ts registers that through `afterCommit`).
 *
 * Documents are JSON bodies with an id, a partition (`partnerId:environment`, or "global") and a sort key chosen by
 * the caller, so lists have one stable order on every adapter (creation time then id, never insertion luck).
 * A partition may have child partitions named `parent/child` (rows listed per sub-account); `deletePartition` of the
 * parent removes them too.
 */
import { Context, Data, Effect, type Option } from "effect"

export class StoreError extends Data.TaggedError("StoreError")<{ readonly message: string; readonly cause?: unknown }> {}

export interface Doc<A = unknown> {
  readonly id: string
  readonly partition: string
  readonly sortKey: string
  readonly body: A
  /**
   * The engine-clock instant (ms) from which the API can no longer return this document (a quote past its TTL, an
   * Idempotency-Key answer past its 24 h): `dropExpired` may remove it from then on (retention, E-400). Absent: kept.
   */
  readonly keepUntil?: number | undefined
}

/** True when `partition` is `parent` or one of its child partitions (`parent/...`). */
export const withinPartition = (parent: string, partition: string): boolean => partition === parent || partition.startsWith(`${parent}/`)

export interface ListOptions {
  readonly partition: string
  /** Exclusive bound on the sort key in the direction of travel. */
  readonly after?: string | undefined
  readonly limit: number
  readonly order: "asc" | "desc"
}

export interface LoggedEvent {
  /** Position in the partition's log: 1, 2, 3... in commit order, with no gaps. */
  readonly position: number
  readonly partition: string
  readonly eventId: string
  readonly name: string
  readonly timestamp: number
  readonly payload: unknown
}

export interface NewEvent {
  readonly eventId: string
  readonly name: string
  readonly timestamp: number
  readonly payload: unknown
}

export interface Job {
  /** Global sequence, unique and increasing in scheduling order (a rolled-back scheduling leaves a gap); ties on dueAt run in seq order. */
  readonly seq: number
  readonly kind: string
  readonly dueAt: number
  readonly payload: unknown
}

export interface NewJob {
  readonly kind: string
  readonly dueAt: number
  readonly payload: unknown
}

/**
 * The id sequences (`Tx.nextId`): values handed out on the request path of every partner, where a counter row would
 * make all of them wait on one another. Job seqs use one of their own.
 */
export const ID_SEQUENCES = ["auditRecords", "unitChanges"] as const
export type IdSequence = (typeof ID_SEQUENCES)[number]

/** True for a counter name that is an id sequence: `nextSeq` of it is `nextId` (E-321). */
export const isIdSequence = (name: string): name is IdSequence => (ID_SEQUENCES as ReadonlyArray<string>).includes(name)

/** What a unit of work can do. Reads see the transaction's own writes. */
export interface Tx {
  readonly get: (collection: string, id: string) => Effect.Effect<Option.Option<Doc>, StoreError>
  readonly put: (collection: string, doc: Doc) => Effect.Effect<void, StoreError>
  readonly list: (collection: string, options: ListOptions) => Effect.Effect<ReadonlyArray<Doc>, StoreError>
  /**
   * Deletes every document of `partition` and of its child partitions (`partition/...`, e.g. one sub-account's
   * rows), in every collection, and the partition's events. Counters are kept, so event positions and sequences keep
   * growing after a wipe (a resumed stream never sees a position twice); jobs are global and kept (their handlers
   * find nothing). Later writes of the same transaction survive; earlier ones are wiped too.
   */
  readonly deletePartition: (partition: string) => Effect.Effect<void, StoreError>
  /**
   * Next value of a named gapless counter, starting at 1. Rolled back with the transaction. A counter named
   * `<kind>:<partition>` (event positions `log:<partition>`, `journal:<partition>`) belongs to that partition and
   * locks it; any other name is one row for every partition, which concurrent transactions take in turn until they
   * commit: for a hot value that must never repeat but may skip, use `nextId`. A name listed in `ID_SEQUENCES`
   * (the idempotency guard's claim numbers) is an id sequence: `nextSeq` of it is `nextId`.
   */
  readonly nextSeq: (counter: string) => Effect.Effect<number, StoreError>
  /**
   * Next value of a named id sequence, starting at 1: unique across transactions and processes, increasing in the
   * order one process's transactions ask for them, and never waited for. Not rolled back: a rolled-back (or retried)
   * transaction leaves a gap (E-321). On PostgreSQL a process draws them a block at a time, so two processes' values
   * interleave by block and a stopped process leaves the rest of its block unused (E-435).
   */
  readonly nextId: (sequence: IdSequence) => Effect.Effect<number, StoreError>
  /**
   * Locks `partition`'s root (`partnerId:environment` for its children `root/child` and side partitions `root|x`) until
   * the transaction ends: transactions that lock the same root run one at a time, others run at the same time.
   * "global" is the world lock: every partition lock holds it shared, locking "global" holds it exclusive (a global
   * step: market refresh, partner creation, a corporate action waits for every transaction in flight). Reading or
   * writing a partner partition locks it too (postgres: pg-locking.ts); calling this first, when the partition is
   * known, spares the adapter a lock taken late, which may make it run the transaction again (E-320).
   */
  readonly lockPartition: (partition: string) => Effect.Effect<void, StoreError>
  /**
   * Removes up to `limit` documents of `collection` in `partition` (that partition only, not its children) whose
   * `keepUntil` is at or before `upTo`, earliest first; returns how many it removed. A few on each write of a
   * collection keep it at what its window holds, without a sweep of its own (E-400).
   */
  readonly dropExpired: (collection: string, partition: string, upTo: number, limit: number) => Effect.Effect<number, StoreError>
  /**
   * Appends to `partition`'s log. An eventId is in the log once, whatever the partition (the engine draws them from its
   * generator, E-291): appending one the log holds fails with StoreError (E-342); a wiped partition's ids are free.
   */
  readonly appendEvent: (partition: string, event: NewEvent) => Effect.Effect<LoggedEvent, StoreError>
  readonly readEvents: (partition: string, afterPosition: number, limit: number) => Effect.Effect<ReadonlyArray<LoggedEvent>, StoreError>
  readonly scheduleJob: (job: NewJob) => Effect.Effect<Job, StoreError>
  /** `scheduleJob` made at once by an adapter that holds the jobs in memory (the memory store); see `scheduleHere`. Optional. */
  readonly scheduleJobNow?: (job: NewJob) => Job
  /** The earliest job (by dueAt, then seq), if any. */
  readonly nextJob: Effect.Effect<Option.Option<Job>, StoreError>
  /**
   * Removes and returns the earliest job (by dueAt, then seq) due at or before `upTo`, if any. The claim is part of
   * the transaction: once it commits no other transaction (another driver of the clock, another process) can claim
   * the job; if it rolls back the job is back in the queue. Running a job in the transaction that claims it is what
   * makes it run exactly once (E-277).
   */
  readonly claimJob: (upTo: number) => Effect.Effect<Option.Option<Job>, StoreError>
  /** Deletes the job `seq`; true when this transaction removed it, false when it was gone already (claimed, run). */
  readonly deleteJob: (seq: number) => Effect.Effect<boolean, StoreError>
  /** Runs after a successful commit, in registration order; never after a rollback. */
  readonly afterCommit: (effect: Effect.Effect<void>) => Effect.Effect<void>
  /**
   * `dropExpired` without the count, for a caller that does not want it: an adapter may send it with the
   * transaction's later writes (postgres: in the one statement that sends them at commit, E-317). Optional: absent,
   * `pruneExpired` runs `dropExpired`.
   */
  readonly dropExpiredLater?: (collection: string, partition: string, upTo: number, limit: number) => Effect.Effect<void, StoreError>
  /** `deleteJob` without the answer, for a caller that does not want it; optional as `dropExpiredLater` (`discardJob`). */
  readonly deleteJobLater?: (seq: number) => Effect.Effect<void, StoreError>
  /**
   * A hint: the work will `get` these documents (or `list` these lists, without `after`) soon. An adapter may read
   * them with a statement it sends anyway (postgres: with the partition's lock, E-318), or all in one statement
   * before the first read after the hint (E-405); what `get` and `list` answer is the same either way. Optional.
   */
  readonly prefetch?: (keys: ReadonlyArray<Hint>) => Effect.Effect<void>
  /**
   * What `get` answers (the document, or undefined for none), given at once by an adapter that holds it in memory (the
   * memory store): a read through it costs the caller no step of the effect runtime (issue 25). Optional: an adapter
   * that must ask its database leaves it out, and callers use `get`. Called only where `get` would run.
   */
  readonly getNow?: (collection: string, id: string) => Doc | undefined
  /** `put` made at once by an adapter that writes in memory (the memory store); see `putHere`. Optional. */
  readonly putNow?: (collection: string, doc: Doc) => void
}

/**
 * `tx.put` for a caller that runs it where it calls it (`yield* putHere(...)` in a generator's body): an adapter that
 * writes in memory (`Tx.putNow`) writes now and answers a finished effect, which the generator passes without a step
 * (issue 25); any other answers `tx.put`. The write is made when this is called, not when the effect runs: an effect
 * built to run later, or maybe not at all (an `andThen` after a check, a `forEach`), uses `tx.put`.
 */
export const putHere = (tx: Tx, collection: string, doc: Doc): Effect.Effect<void, StoreError> => {
  if (tx.putNow === undefined) return tx.put(collection, doc)
  tx.putNow(collection, doc)
  return Effect.void
}

/** A document the work will `get` (its collection and id), or a list it will `list` (`Tx.prefetch`). */
export type Hint = readonly [collection: string, id: string] | { readonly collection: string; readonly list: ListOptions }

export const isRowHint = (hint: Hint): hint is readonly [string, string] => Array.isArray(hint)

/**
 * Tells the adapter the work will read these documents soon (`Tx.prefetch`); nothing when it does not use hints. Given
 * as a function, the hints are built only for an adapter that uses them (the memory store does not: issue 25).
 */
export const prefetch = (tx: Tx, keys: ReadonlyArray<Hint> | (() => ReadonlyArray<Hint>)): Effect.Effect<void> =>
  tx.prefetch === undefined ? Effect.void : tx.prefetch(typeof keys === "function" ? keys() : keys)

/** Drops up to `limit` expired documents (`Tx.dropExpired`), the count unwanted: the adapter may send it later. */
export const pruneExpired = (tx: Tx, collection: string, partition: string, upTo: number, limit: number): Effect.Effect<void, StoreError> =>
  tx.dropExpiredLater === undefined
    ? Effect.asVoid(tx.dropExpired(collection, partition, upTo, limit))
    : tx.dropExpiredLater(collection, partition, upTo, limit)

/** Deletes the job `seq` (`Tx.deleteJob`), whether it was still there unwanted: the adapter may send it later. */
export const discardJob = (tx: Tx, seq: number): Effect.Effect<void, StoreError> =>
  tx.deleteJobLater === undefined ? Effect.asVoid(tx.deleteJob(seq)) : tx.deleteJobLater(seq)

/**
 * Where the simulator injects crashes around a commit (issue 22 item 6, E-290). `beforeCommit` failing rolls the
 * transaction back, as a crash or an abort before COMMIT would; `afterCommit` failing comes after the writes are in,
 * before anything learns of them (hooks, the caller's answer), as a crash right after COMMIT would.
 */
export interface CommitFaults {
  readonly beforeCommit: Effect.Effect<void, StoreError>
  readonly afterCommit: Effect.Effect<void, StoreError>
}

export const noCommitFaults: CommitFaults = { beforeCommit: Effect.void, afterCommit: Effect.void }

/** What a read-only unit can do: see committed documents, events and jobs. */
export type ReadTx = Pick<Tx, "get" | "list" | "readEvents" | "nextJob" | "getNow">

export class Store extends Context.Service<
  Store,
  {
    readonly kind: "memory" | "postgres"
    /**
     * Runs `work` as one serialisable unit: all of its writes commit together or none do. Write transactions that
     * touch the same partition run one at a time (`Tx.lockPartition`), which is what makes a partition's event
     * positions and counters follow commit order; transactions of different partitions run at the same time. `work`
     * may run more than once (postgres: after a deadlock, or to take a lock from the start); only the last run
     * commits, and only its afterCommit hooks run.
     * Called inside an open transaction of the same fiber, `work` joins it as a savepoint (E-289): its writes commit
     * with the outer transaction, and are undone alone if `work` fails.
     */
    readonly transact: <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
    /**
     * Runs read-only `work` on committed state without waiting for writers: authentication and listings must not
     * queue behind every write transaction. Each read sees what was committed when it ran; inside an open transaction
     * of the same fiber, it reads through that transaction (its own writes included).
     */
    readonly read: <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
    /**
     * `transact` for work that will lock `partition` first, which an adapter may run in the same transaction as other
     * such work of the partition queued in this process, committed once (postgres: group commit, E-406). Each unit
     * sees what the units before it wrote, its result comes only after the COMMIT, and a unit that fails is undone
     * alone as it would be alone; what it answers is what `transact` would. Optional (`transactIn`).
     */
    readonly transactGrouped?: <A, E, R>(partition: string, work: (tx: Tx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
    /**
     * What `read((tx) => tx.nextJob)` answers, given at once by an adapter that holds the jobs in memory (the memory
     * store: the calling fiber's open transaction's view, or the committed queue): the scheduler's look at the next
     * job costs no step then (E-463). Optional; called only where that read would run.
     */
    readonly nextJobNow?: () => Job | undefined
  }
>()("sokoni/Store") {}

/** `work` through `store.transactGrouped` for `partition` when the adapter groups, else `store.transact`. */
export const transactIn = <A, E, R>(
  store: Store["Service"],
  partition: string,
  work: (tx: Tx) => Effect.Effect<A, E, R>
): Effect.Effect<A, E | StoreError, R> => (store.transactGrouped === undefined ? store.transact(work) : store.transactGrouped(partition, work))
