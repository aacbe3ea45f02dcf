/**
 * Partition locks: what lets write transactions of different partners run at the same time (E-320). Owns: the lock
 * roots of partitions, the in-process table of shared/exclusive locks keyed by root, and the set of locks one
 * transaction attempt holds. Does not own: the database's own locks (postgres.ts takes the matching advisory locks),
 * nor when a transaction asks for a lock (pg-locking.ts, and the callers that know their partition up front).
 *
 * A partner environment's partition `partnerId:environment` is a lock root; its child partitions (`root/child`, a
 * sub-account's rows) and its side partitions (`root|deleted`, `root|webhookId`) belong to it. "global" is the world
 * lock: a partition lock also holds "global" shared, and a global step (market refresh, partner creation, a corporate
 * action) holds it exclusive, so it waits for every partition transaction in flight and keeps new ones out.
 *
 * Why a lock is never waited for inside a transaction in this process: a transaction holds a pooled connection from
 * its BEGIN, so waiting there for a partition that a flooding partner keeps busy would hold connections that another
 * partner's transaction needs. `tryAcquire` never waits; the transaction is run again from the start once `acquire`
 * has got every lock the failed attempt wanted, with no connection held (pg-locking.ts).
 */
import { Deferred, Effect } from "effect"

export type LockMode = "shared" | "exclusive"

export const GLOBAL_ROOT = "global"

/** The lock root of a partition: the part before the first `/` or `|`. */
export const lockRootOf = (partition: string): string => {
  const cut = partition.search(/[/|]/)
  return cut === -1 ? partition : partition.slice(0, cut)
}

const stronger = (a: LockMode | undefined, b: LockMode): LockMode => (a === "exclusive" || b === "exclusive" ? "exclusive" : "shared")

/** The locks a partition lock means: the world shared, then the root exclusive ("global" itself: exclusive). */
export const locksFor = (root: string): ReadonlyArray<readonly [string, LockMode]> =>
  root === GLOBAL_ROOT
    ? [[GLOBAL_ROOT, "exclusive"]]
    : [
        [GLOBAL_ROOT, "shared"],
        [root, "exclusive"]
      ]

/** The order every blocking acquisition follows, so waiters never wait on each other in a cycle: "global" first. */
export const lockOrder = (a: string, b: string): number => (a === b ? 0 : a === GLOBAL_ROOT ? -1 : b === GLOBAL_ROOT ? 1 : a < b ? -1 : 1)

interface Waiter {
  readonly mode: LockMode
  readonly granted: Deferred.Deferred<void>
}

interface Entry {
  shared: number
  exclusive: boolean
  readonly queue: Array<Waiter>
}

export interface LockTable {
  /** Takes the lock now if it is free (or upgrades the caller's own shared lock to exclusive); never waits. */
  readonly tryAcquire: (key: string, mode: LockMode, holding: LockMode | undefined) => boolean
  /** Waits for the lock, first come first served; the caller holds nothing on `key`. Interruption gives it back. */
  readonly acquire: (key: string, mode: LockMode) => Effect.Effect<void>
  readonly release: (key: string, mode: LockMode) => void
}

export const makeLockTable = (): LockTable => {
  const entries = new Map<string, Entry>()
  const entryOf = (key: string) => {
    let entry = entries.get(key)
    if (entry === undefined) {
      entry = { shared: 0, exclusive: false, queue: [] }
      entries.set(key, entry)
    }
    return entry
  }
  const compatible = (entry: Entry, mode: LockMode, ownShared: number) => !entry.exclusive && (mode === "shared" || entry.shared === ownShared)
  const take = (entry: Entry, mode: LockMode) => {
    if (mode === "exclusive") entry.exclusive = true
    else entry.shared++
  }
  const release = (key: string, mode: LockMode) => {
    const entry = entries.get(key)
    if (entry === undefined) return
    if (mode === "exclusive") entry.exclusive = false
    else entry.shared = Math.max(0, entry.shared - 1)
    // Wake waiters in order while they fit: a run of shared ones, or one exclusive.
    while (entry.queue.length > 0 && compatible(entry, entry.queue[0]!.mode, 0)) {
      const next = entry.queue.shift()!
      take(entry, next.mode)
      Deferred.doneUnsafe(next.granted, Effect.void)
    }
    if (entry.shared === 0 && !entry.exclusive && entry.queue.length === 0) entries.delete(key)
  }
  const tryAcquire = (key: string, mode: LockMode, holding: LockMode | undefined) => {
    if (holding === "exclusive" || holding === mode) return true
    const entry = entryOf(key)
    if (holding === "shared") {
      // An upgrade: granted when the caller is the only holder; it does not queue behind waiters that wait for it.
      if (!compatible(entry, "exclusive", 1)) return false
      entry.shared--
      entry.exclusive = true
      return true
    }
    // No barging past a waiter: an exclusive waiter (a global step) would otherwise wait for ever under a flood.
    if (entry.queue.length > 0 || !compatible(entry, mode, 0)) {
      if (entry.shared === 0 && !entry.exclusive && entry.queue.length === 0) entries.delete(key)
      return false
    }
    take(entry, mode)
    return true
  }
  const acquire = (key: string, mode: LockMode): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (tryAcquire(key, mode, undefined)) return Effect.void
      const waiter: Waiter = { mode, granted: Deferred.makeUnsafe<void>() }
      entryOf(key).queue.push(waiter)
      return Deferred.await(waiter.granted).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            const entry = entries.get(key)
            const index = entry?.queue.indexOf(waiter) ?? -1
            if (index >= 0) entry?.queue.splice(index, 1)
            else release(key, mode) // granted just before the interruption: give it back
          })
        )
      )
    })
  return { tryAcquire, acquire, release }
}

/** The locks one attempt of a transaction holds in this process, by key. */
export interface HeldLocks {
  readonly modeOf: (key: string) => LockMode | undefined
  /** The locks held now, by key. */
  readonly heldNow: () => ReadonlyMap<string, LockMode>
  /** Every lock the attempt holds or wanted, for the next attempt to take before it starts. */
  readonly wanted: () => ReadonlyMap<string, LockMode>
  readonly want: (key: string, mode: LockMode) => void
  readonly tryTake: (key: string, mode: LockMode) => boolean
  /** Takes `locks` in lock order, waiting as long as it takes; no connection may be held meanwhile. */
  readonly takeAll: (locks: ReadonlyMap<string, LockMode>) => Effect.Effect<void>
  readonly releaseAll: () => void
}

export const makeHeldLocks = (table: LockTable): HeldLocks => {
  const held = new Map<string, LockMode>()
  const wanted = new Map<string, LockMode>()
  const want = (key: string, mode: LockMode) => void wanted.set(key, stronger(wanted.get(key), mode))
  const tryTake = (key: string, mode: LockMode) => {
    want(key, mode)
    const holding = held.get(key)
    if (!table.tryAcquire(key, mode, holding)) return false
    held.set(key, stronger(holding, mode))
    return true
  }
  const takeOne = (key: string, mode: LockMode) => {
    want(key, mode)
    // Free, the usual case: taken and noted in one step, with nothing to interrupt between (E-541); busy, waited for.
    return Effect.suspend(() => {
      if (!table.tryAcquire(key, mode, undefined)) {
        return Effect.uninterruptibleMask((restore) => restore(table.acquire(key, mode)).pipe(Effect.andThen(Effect.sync(() => void held.set(key, mode)))))
      }
      held.set(key, mode)
      return Effect.void
    })
  }
  // Chained one after another in lock order, not by `forEach`, whose set-up is about five steps of the effect runtime:
  // an attempt takes none (a first attempt) or two (a partition and "global" shared) (E-541).
  const takeAll = (locks: ReadonlyMap<string, LockMode>): Effect.Effect<void> => {
    let chain: Effect.Effect<void> | undefined
    for (const key of [...locks.keys()].sort(lockOrder)) {
      const mode = locks.get(key) as LockMode
      chain = chain === undefined ? takeOne(key, mode) : Effect.andThen(chain, () => takeOne(key, mode))
    }
    return chain ?? Effect.void
  }
  const releaseAll = () => {
    for (const [key, mode] of held) table.release(key, mode)
    held.clear()
  }
  return { modeOf: (key) => held.get(key), heldNow: () => held, wanted: () => wanted, want, tryTake, takeAll, releaseAll }
}
