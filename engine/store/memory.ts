/**
 * The memory adapter of the store port: the embedded default, no server needed. Owns: in-process state and its
 * copy-on-commit transactions. Does not own: durability (a restart loses everything, by design of this adapter).
 *
 * A transaction writes into an overlay; commit folds the overlay into the base maps. Transactions are serialised
 * by a one-permit semaphore: the postgres adapter runs transactions of different partitions at the same time
 * (E-320), which one event loop could not make faster here, and one at a time is one of the orders it may give.
 * So `lockPartition` has nothing to do. Id sequences (`nextId`, job seqs) are not rolled back, as PG sequences are not.
 */
import { Effect, Layer, Option, Semaphore } from "effect"
import { type Doc, isIdSequence, type Job, type ListOptions, type LoggedEvent, type ReadTx, Store, type Tx, withinPartition } from "./port.ts"
import { getOrCreate } from "../domain/maps.ts"
import { compareJobs, type JobQueue, makeJobQueue } from "./job-queue.ts"

interface State {
  readonly docs: Map<string, Map<string, Doc>>
  readonly counters: Map<string, number>
  readonly events: Map<string, Array<LoggedEvent>>
  readonly jobs: JobQueue
}

const partitionKey = (collection: string, partition: string) => `${collection}\u0000${partition}`

export const sortAndPage = (docs: Iterable<Doc>, options: ListOptions): ReadonlyArray<Doc> => {
  const sorted = [...docs].sort((a, b) => (a.sortKey < b.sortKey ? -1 : a.sortKey > b.sortKey ? 1 : 0))
  if (options.order === "desc") sorted.reverse()
  const after = options.after
  const filtered = after === undefined ? sorted : sorted.filter((d) => (options.order === "asc" ? d.sortKey > after : d.sortKey < after))
  return filtered.slice(0, options.limit)
}

export const makeMemoryStore = Effect.gen(function* () {
  const state: State = { docs: new Map(), counters: new Map(), events: new Map(), jobs: makeJobQueue() }
  const byId = new Map<string, Doc>() // `${collection}\u0000${id}` -> doc, for get
  const lock = yield* Semaphore.make(1)
  /** Id sequences: taken at once, kept whatever becomes of the transaction (a rolled-back one leaves a gap). */
  const sequences = new Map<string, number>()
  const nextIdSync = (name: string) => {
    const next = (sequences.get(name) ?? 0) + 1
    sequences.set(name, next)
    return next
  }

  const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) =>
    lock.withPermits(1)(
      Effect.suspend(() => {
        const putDocs = new Map<string, { collection: string; doc: Doc }>()
        /** Partitions this transaction wiped: their committed documents and events are hidden, then deleted at commit. */
        const wiped: Array<string> = []
        const isWiped = (partition: string) => wiped.some((parent) => withinPartition(parent, partition))
        const counters = new Map<string, number>()
        const newEvents: Array<LoggedEvent> = []
        const newJobs = new Map<number, Job>()
        const deletedJobs = new Set<number>()
        const hooks: Array<Effect.Effect<void>> = []

        const counterValue = (name: string) => counters.get(name) ?? state.counters.get(name) ?? 0
        const nextSeqSync = (name: string) => {
          const next = counterValue(name) + 1
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
              const base = byId.get(key)
              return base === undefined || isWiped(base.partition) ? Option.none() : Option.some(base)
            }),
          put: (collection, doc) =>
            Effect.sync(() => {
              putDocs.set(`${collection}\u0000${doc.id}`, { collection, doc })
            }),
          list: (collection, options) =>
            Effect.sync(() => {
              const merged = new Map(isWiped(options.partition) ? [] : (state.docs.get(partitionKey(collection, options.partition)) ?? []))
              for (const { collection: c, doc } of putDocs.values()) {
                if (c === collection && doc.partition === options.partition) merged.set(doc.id, doc)
              }
              return sortAndPage(merged.values(), options)
            }),
          deletePartition: (partition) =>
            Effect.sync(() => {
              wiped.push(partition)
              for (const [key, { doc }] of putDocs) if (withinPartition(partition, doc.partition)) putDocs.delete(key)
              for (let i = newEvents.length - 1; i >= 0; i--) if (withinPartition(partition, newEvents[i]?.partition ?? "")) newEvents.splice(i, 1)
            }),
          nextSeq: (name) => Effect.sync(() => (isIdSequence(name) ? nextIdSync(name) : nextSeqSync(name))),
          nextId: (name) => Effect.sync(() => nextIdSync(name)),
          lockPartition: () => Effect.void,
          appendEvent: (partition, event) =>
            Effect.sync(() => {
              const logged: LoggedEvent = { position: nextSeqSync(`log:${partition}`), partition, ...event }
              newEvents.push(logged)
              return logged
            }),
          readEvents: (partition, afterPosition, limit) =>
            Effect.sync(() =>
              [...(isWiped(partition) ? [] : (state.events.get(partition) ?? [])), ...newEvents.filter((e) => e.partition === partition)]
                .filter((e) => e.position > afterPosition)
                .slice(0, limit)
            ),
          scheduleJob: (job) =>
            Effect.sync(() => {
              const scheduled: Job = { seq: nextIdSync("jobs"), ...job }
              newJobs.set(scheduled.seq, scheduled)
              return scheduled
            }),
          nextJob: Effect.sync(() => Option.fromUndefinedOr(firstJob())),
          claimJob: (upTo) =>
            Effect.sync(() => {
              // Under the store's lock, so no other transaction sees the job between this look and the claim.
              const first = firstJob()
              if (first === undefined || first.dueAt > upTo) return Option.none()
              deletedJobs.add(first.seq)
              return Option.some(first)
            }),
          deleteJob: (seq) =>
            Effect.sync(() => {
              const present = !deletedJobs.has(seq) && (newJobs.has(seq) || state.jobs.get(seq) !== undefined)
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
              for (const id of bucket.keys()) byId.delete(`${collection}\u0000${id}`)
              state.docs.delete(key)
            }
            for (const partition of [...state.events.keys()]) if (isWiped(partition)) state.events.delete(partition)
          }
          for (const { collection, doc } of putDocs.values()) {
            const previous = byId.get(`${collection}\u0000${doc.id}`)
            byId.set(`${collection}\u0000${doc.id}`, doc)
            // A document that changes partition leaves its old bucket (as a postgres row would).
            if (previous !== undefined && previous.partition !== doc.partition) state.docs.get(partitionKey(collection, previous.partition))?.delete(doc.id)
            getOrCreate(state.docs, partitionKey(collection, doc.partition), () => new Map<string, Doc>()).set(doc.id, doc)
          }
          for (const [name, value] of counters) state.counters.set(name, value)
          for (const e of newEvents) {
            getOrCreate(state.events, e.partition, (): Array<LoggedEvent> => []).push(e)
          }
          for (const job of newJobs.values()) state.jobs.insert(job)
          for (const seq of deletedJobs) state.jobs.delete(seq)
        })

        return work(tx).pipe(
          Effect.tap(() => commit),
          Effect.tap(() => Effect.forEach(hooks, (hook) => hook, { discard: true }))
        )
      })
    )

  // Reads go straight to the committed maps: commits fold their overlay in synchronously, so a read never sees half
  // of one.
  const committed: ReadTx = {
    get: (collection, id) => Effect.sync(() => Option.fromUndefinedOr(byId.get(`${collection}\u0000${id}`))),
    list: (collection, options) => Effect.sync(() => sortAndPage((state.docs.get(partitionKey(collection, options.partition)) ?? new Map()).values(), options)),
    readEvents: (partition, afterPosition, limit) =>
      Effect.sync(() => (state.events.get(partition) ?? []).filter((e) => e.position > afterPosition).slice(0, limit)),
    nextJob: Effect.sync(() => Option.fromUndefinedOr(state.jobs.first()))
  }
  const read = <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>) => Effect.suspend(() => work(committed))

  return Store.of({ kind: "memory", transact, read })
})

export const MemoryStoreLayer = Layer.effect(Store, makeMemoryStore)
