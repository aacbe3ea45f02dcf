/**
 * The memory adapter of the store port: the embedded default, no server needed. Owns: in-process state and its
 * copy-on-commit transactions. Does not own: durability (a restart loses everything, by design of this adapter).
 *
 * A transaction writes into an overlay; commit folds the overlay into the base maps. Transactions run one at a time
 * (a turn, memory-turn.ts; a one-permit semaphore when commit faults are injected): the postgres adapter runs
 * transactions of different partitions at the same time (E-320), which one event loop could not make faster here,
 * and one at a time is one of the orders it may give. So `lockPartition` has nothing to do. Id sequences (`nextId`,
 * job seqs) are not rolled back, as PG sequences are not (E-321). A `transact` or `read` inside an open transaction
 * of the same fiber joins it (E-289): nested work is a savepoint, undone alone when it fails, so a request's handler,
 * its Idempotency-Key receipt and its audit record commit as one.
 */
import { Context, Effect, Fiber, Layer, Option, Semaphore } from "effect"
import { type CommitFaults, noCommitFaults, type ReadTx, Store, type StoreError, type Tx } from "./port.ts"
import { type Overlay, openOverlay } from "./memory-overlay.ts"
import { makeTurn } from "./memory-turn.ts"
import { bucketAt, docAt, eventsAfter, type MemoryState, makeMemoryState, sortAndPage } from "./memory-state.ts"

export { type MemoryState, makeMemoryState, sortAndPage } from "./memory-state.ts"

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
    const turn = makeTurn()

    /** The transaction open in this fiber on THIS store, if any: a `transact` inside it joins it (E-289). */
    const open = Context.Reference<Overlay | undefined>(`sokoni/store/memory/open/${instances++}`, { defaultValue: () => undefined })

    /** The after-commit hooks one after another: a chain, one step each, where a forEach took four more (issue 25). */
    const runHooks = (overlay: Overlay) => {
      const { hooks } = overlay
      let all: Effect.Effect<void> = Effect.void
      for (let i = hooks.length - 1; i >= 0; i--) {
        const hook = hooks[i] as Effect.Effect<void>
        all = all === Effect.void ? hook : Effect.andThen(hook, all)
      }
      return all
    }
    /** The commit and what follows it, in order: the injected faults around the fold, then the after-commit hooks. */
    const settle = (overlay: Overlay): Effect.Effect<void, StoreError> =>
      faults.beforeCommit.pipe(Effect.andThen(overlay.commit), Effect.andThen(faults.afterCommit), Effect.andThen(runHooks(overlay)))

    /**
     * A transaction of its own. Without faults it takes its turn (memory-turn.ts) inside the one frame that settles
     * it: at once, with no step, when no other transaction holds or waits for it, as in every transaction of a
     * simulated week. The frame is an exit hook (an interruption skips a recovery frame, not an exit hook): on
     * success it commits, runs the hooks and gives the turn back; on any failure it gives the turn back, if taken
     * (E-460). Like any exit hook it runs uninterruptibly, so a committed transaction's hooks always run.
     */
    const fresh = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> => {
      if (faults !== noCommitFaults) return freshWithFaults(work)
      const overlay = openOverlay(state)
      // Already inside a suspend: `work` is called here, not in a suspend of its own (one step less per command).
      const run = () => Effect.provideService(work(overlay.tx), open, overlay)
      return Effect.onExitPrimitive(
        Effect.suspend(() => (turn.tryTake(overlay) ? run() : Effect.flatMap(turn.wait(overlay), run))),
        (exit) => {
          if (exit._tag === "Failure") return void turn.release(overlay)
          try {
            overlay.commitNow()
          } catch (defect) {
            turn.release(overlay)
            throw defect
          }
          if (overlay.hooks.length === 0) return void turn.release(overlay)
          // The hooks run within the turn, as they did under the semaphore: the next transaction comes after them.
          return Effect.ensuring(
            runHooks(overlay),
            Effect.sync(() => turn.release(overlay))
          )
        }
      )
    }

    const freshWithFaults = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) =>
      lock.withPermit(
        Effect.suspend(() => {
          const overlay = openOverlay(state)
          return Effect.flatMap(Effect.provideService(work(overlay.tx), open, overlay), (result) => Effect.as(settle(overlay), result))
        })
      )

    /** Nested work is a savepoint: its writes and hooks are undone when it fails, the outer transaction goes on. */
    // Called when the nested unit starts (inside `transact`'s withFiber), so the mark is taken then, not when built.
    const nested = <A, E, R>(overlay: Overlay, work: (tx: Tx) => Effect.Effect<A, E, R>) => {
      const undo = overlay.mark()
      let unit: Effect.Effect<A, E, R>
      try {
        unit = work(overlay.tx)
      } catch (defect) {
        // A `work` that throws as it is called is undone too, as it was when a suspend of its own ran it.
        undo()
        throw defect
      }
      return Effect.onError(unit, () => Effect.sync(undo))
    }

    // The open overlay is looked up in the running fiber's context: one step, where a service look-up, a flatMap and
    // a suspend took four (issue 25: a command runs three transactions, nested ones included).
    const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>) =>
      Effect.withFiber<A, E | StoreError, R>((fiber) => {
        const overlay = fiber.getRef(open)
        return overlay === undefined ? fresh(work) : nested(overlay, work)
      })

    // Reads go straight to the committed maps: commits fold their overlay in synchronously, so a read never sees half
    // of one. Inside an open transaction a read sees that transaction's own writes.
    const committed: ReadTx = {
      get: (collection, id) => Effect.sync(() => Option.fromUndefinedOr(docAt(state.byId, collection, id))),
      getNow: (collection, id) => docAt(state.byId, collection, id),
      list: (collection, options) => Effect.sync(() => sortAndPage((bucketAt(state, collection, options.partition) ?? new Map()).values(), options)),
      readEvents: (partition, afterPosition, limit) => Effect.sync(() => eventsAfter(state.events.get(partition), afterPosition, limit)),
      nextJob: Effect.sync(() => Option.fromUndefinedOr(state.jobs.first()))
    }
    const read = <A, E, R>(work: (tx: ReadTx) => Effect.Effect<A, E, R>) =>
      Effect.withFiber<A, E | StoreError, R>((fiber) => {
        const overlay = fiber.getRef(open)
        return work(overlay === undefined ? committed : overlay.tx)
      })

    // `read((tx) => tx.nextJob)` at once: the fiber running the caller is the one whose open transaction counts.
    const nextJobNow = () => {
      const overlay = Fiber.getCurrent()?.getRef(open)
      return overlay === undefined ? state.jobs.first() : overlay.firstJob()
    }

    return Store.of({ kind: "memory", transact, read, nextJobNow })
  })

export const makeMemoryStore = makeMemoryStoreWith({})

export const memoryStoreLayer = (options: MemoryStoreOptions = {}) => Layer.effect(Store, makeMemoryStoreWith(options))

export const MemoryStoreLayer = memoryStoreLayer()
