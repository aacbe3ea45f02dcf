/**
 * Group commit on PostgreSQL (E-406): units of work queued for the same partition in this process run in the
 * transaction of the one that holds it, one after another, and commit once. Each unit's result is released only
 * after that COMMIT; a unit that cannot share the transaction (its SQL failed, a busy lock, a failed batch, the
 * COMMIT itself) sends every unit of the group to run alone, as they would have without grouping.
 * Owns: the per-partition queues, the leader's loop, who runs what again. Does not own attempts, savepoints or
 * COMMIT (pg-locking.ts).
 *
 * Why it helps: one partner's commands are serial under its partition's lock, and each paid BEGIN, the lock and
 * COMMIT with its WAL flush (about 2 ms of wall time here, docs/performance.md). A group pays them once.
 */
import { Cause, type Context, Deferred, Effect, Exit } from "effect"
import type { StoreError, Tx } from "./port.ts"

/** The most units one transaction runs: a group holds its partition, and its first answer waits for its last unit. */
export const MAX_GROUP = 16

/** How a queued unit ends: run in a group that committed, or to run alone, or to queue again (the group ended first). */
type Outcome = { readonly _tag: "Done"; readonly exit: Exit.Exit<unknown, unknown> } | { readonly _tag: "Alone" } | { readonly _tag: "Again" }

interface Unit {
  /** The unit's work in the leader's open transaction (its own services provided). */
  readonly run: (tx: Tx) => Effect.Effect<unknown, unknown>
  readonly outcome: Deferred.Deferred<Outcome>
  exit: Exit.Exit<unknown, unknown> | undefined
}

interface Group {
  readonly queue: Array<Unit>
  /** Units the current attempt ran; released once it commits, or sent to run alone. */
  readonly taken: Array<Unit>
  closed: boolean
}

/** A unit failed in a way that must not commit with the others: roll back, run each alone. */
class GroupBroken {
  readonly _tag = "GroupBroken"
}

export interface GroupParts<Open> {
  /** The attempt open in this fiber, if any. */
  readonly current: Effect.Effect<Open | undefined>
  /** A transaction of its own (pg-locking.ts `fresh`). */
  readonly fresh: <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /** Work as a savepoint unit of the open attempt (pg-locking.ts `nested`). */
  readonly nested: <A, E, R>(current: Open, work: (tx: Tx) => Effect.Effect<A, E, R>) => Effect.Effect<A, E | StoreError, R>
  /** `effect` seeing `current` as its open attempt (so its own `transact` calls join it). */
  readonly within: <A, E, R>(effect: Effect.Effect<A, E, R>, current: Open) => Effect.Effect<A, E, R>
  /** True once the open attempt must not commit (a busy lock, a failed batch). */
  readonly spoiled: (current: Open) => boolean
  /** True for a failure that means the unit's SQL failed (a StoreError). */
  readonly isStoreFailure: (error: unknown) => boolean
}

const release = (units: ReadonlyArray<Unit>, outcome: (unit: Unit) => Outcome) => {
  for (const unit of units) Deferred.doneUnsafe(unit.outcome, Exit.succeed(outcome(unit)))
}

const ALONE: Outcome = { _tag: "Alone" }
const AGAIN: Outcome = { _tag: "Again" }

export const makeGroupCommit = <Open>(parts: GroupParts<Open>) => {
  const groups = new Map<string, Group>()

  /** A unit's failure it would also have alone, with nothing to undo beyond its savepoint: an answer, not an error. */
  const ownFailure = (exit: Exit.Exit<unknown, unknown>) =>
    Exit.isFailure(exit) &&
    !Cause.hasDies(exit.cause) &&
    !Cause.hasInterrupts(exit.cause) &&
    exit.cause.reasons.every((reason) => reason._tag === "Fail" && !parts.isStoreFailure(reason.error))

  /** The leader's loop: its own work, then queued units as savepoints of the same transaction, up to MAX_GROUP. */
  const leaderWork =
    <A, E, R>(group: Group, work: (tx: Tx) => Effect.Effect<A, E, R>, state: { leaderDone: boolean }) =>
    (tx: Tx): Effect.Effect<A, E | StoreError | GroupBroken, R> =>
      Effect.gen(function* () {
        // Units an earlier attempt ran (it runs again, holding the locks it missed): first in line again.
        group.queue.unshift(...group.taken.splice(0))
        state.leaderDone = false
        const value = yield* work(tx)
        state.leaderDone = true
        const current = yield* parts.current
        while (current !== undefined && group.queue.length > 0 && group.taken.length < MAX_GROUP - 1) {
          const unit = group.queue.shift() as Unit
          group.taken.push(unit)
          const exit = yield* Effect.exit(parts.nested(current, unit.run))
          if (parts.spoiled(current) || (Exit.isFailure(exit) && !ownFailure(exit))) return yield* Effect.fail(new GroupBroken())
          unit.exit = exit
        }
        group.closed = true
        return value
      })

  const lead = <A, E, R>(key: string, work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.suspend(() => {
      const group: Group = { queue: [], taken: [], closed: false }
      groups.set(key, group)
      const state = { leaderDone: false }
      /** Units to send on once the leader knows its own fate: alone if they ran with it, to queue again if not. */
      const waiting: Array<[Unit, Outcome]> = []
      const sendOn = Effect.sync(() => {
        for (const [unit, outcome] of waiting.splice(0)) release([unit], () => outcome)
      })
      /** A unit broke the group, or the COMMIT failed with others in it: the leader runs alone, first, as they do after. */
      const rerun = (cause: Cause.Cause<unknown>) =>
        !Cause.hasInterrupts(cause) &&
        (cause.reasons.some((r) => r._tag === "Fail" && r.error instanceof GroupBroken) || (state.leaderDone && waiting.some(([, o]) => o === ALONE)))
      // Run however the attempt ends (an interrupted leader too): no unit is left waiting.
      const end = (exit: Exit.Exit<unknown, unknown>) =>
        Effect.suspend(() => {
          group.closed = true
          if (groups.get(key) === group) groups.delete(key)
          const taken = group.taken.splice(0)
          if (Exit.isSuccess(exit)) release(taken, (unit) => ({ _tag: "Done", exit: unit.exit ?? Exit.void }))
          else waiting.push(...taken.map((unit): [Unit, Outcome] => [unit, ALONE]))
          waiting.push(...group.queue.splice(0).map((unit): [Unit, Outcome] => [unit, AGAIN]))
          return Exit.isSuccess(exit) || !rerun(exit.cause) ? sendOn : Effect.void
        })
      return parts.fresh(leaderWork(group, work, state)).pipe(
        Effect.onExit((exit) => end(exit)),
        Effect.catchCause(
          (cause): Effect.Effect<A, E | StoreError, R> =>
            rerun(cause) ? Effect.ensuring(parts.fresh(work), sendOn) : Effect.failCause(cause as Cause.Cause<E | StoreError>)
        )
      )
    })

  const join = <A, E, R>(group: Group, key: string, work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.gen(function* () {
      const context: Context.Context<R> = yield* Effect.context<R>()
      const unit: Unit = {
        run: (tx) => Effect.flatMap(parts.current, (current) => Effect.provideContext(parts.within(work(tx), current as Open), context)),
        outcome: Deferred.makeUnsafe<Outcome>(),
        exit: undefined
      }
      group.queue.push(unit)
      const outcome = yield* Deferred.await(unit.outcome).pipe(
        // Interrupted while queued: nothing of it ran. Once taken it runs and commits with the group.
        Effect.onInterrupt(() =>
          Effect.sync(() => {
            const at = group.queue.indexOf(unit)
            if (at !== -1) group.queue.splice(at, 1)
          })
        )
      )
      if (outcome._tag === "Done") return yield* outcome.exit as Exit.Exit<A, E>
      if (outcome._tag === "Alone") return yield* parts.fresh(work)
      return yield* grouped(key, work)
    })

  /** `work` in a transaction of its own, or in the one of a unit holding `key` (a partition) if it still takes units. */
  const grouped = <A, E, R>(key: string, work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(parts.current, (current) => {
      if (current !== undefined) return parts.nested(current, work)
      const group = groups.get(key)
      return group !== undefined && !group.closed && group.queue.length + group.taken.length < MAX_GROUP - 1 ? join(group, key, work) : lead(key, work)
    })

  return grouped
}
