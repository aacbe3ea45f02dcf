/**
 * The postgres adapter's write transactions under partition locks (E-320..E-322). Owns: `transact` (attempts, the
 * retry of a deadlocked or restarted attempt, afterCommit hooks), the advisory locks that mirror the in-process ones
 * (partition-locks.ts) across processes, and the Tx decorator that locks a partition before the transaction reads or
 * writes it. Does not own the SQL of the port's operations (postgres.ts `makeTx`).
 *
 * The rule the decorator keeps: a transaction sees a partner partition's rows only while it holds that partition's
 * lock, so what it read cannot change before it commits.
 * - `list`, `readEvents`, `put`, `appendEvent`, `deletePartition` and `nextSeq("<kind>:<partition>")` lock the
 *   partition first (its root: partition-locks.ts).
 * - `get` finds the partition only in the row: when the row lies in a partition not yet locked, it locks it and reads
 *   the row again.
 * - A `get` that found nothing cannot say which partition it looked into; when a lock is taken after such a miss, the
 *   missed ids are read again, and if one now exists the attempt is run again from the start, holding its locks from
 *   the start.
 * - "global" rows (keys, partners, the desk queue) lock no partition: a global step locks "global" itself. A global
 *   row the transaction read and then writes is locked by itself when written, and read again (`writeGlobalRow`).
 *
 * The SQL transaction begins lazily, at the attempt's first lock or write: reads before it run on pooled connections
 * (each sees what was committed, as a read inside a READ COMMITTED transaction would), and the first lock is waited
 * for in this process before any connection is taken. So a transaction that knows its partition, or whose first
 * write names it, waits for a busy partition holding nothing; only a lock taken once the transaction has begun is
 * tried without waiting, and when it is busy the attempt rolls back and runs again (E-320).
 */
import { Context, Effect, Exit, Option, Scope } from "effect"
import type { SqlClient } from "effect/sql"
import { type CommitFaults, type Doc, isIdSequence, isRowHint, noCommitFaults, StoreError, type Tx } from "./port.ts"
import { type Batch, makeBatch } from "./pg-batch.ts"
import { makeGroupCommit } from "./pg-group.ts"
import { makeAttemptConnection } from "./pg-attempt-connection.ts"
import { makeChainedConnections } from "./pg-chained.ts"
import { type Attempt, covers, putAtOnce, type RawTx, representable, restore, RUN_AGAIN, RunAgain, retryable, runAgainError, seenOf } from "./pg-attempt.ts"
import { answered, readable } from "./pg-prefetch.ts"
import { GLOBAL_ROOT, type LockMode, type LockTable, lockRootOf, locksFor, makeHeldLocks } from "./partition-locks.ts"

/** Attempts of one transaction before it fails: restarts converge in two or three (each adds the lock it missed). */
export const MAX_ATTEMPTS = 12

/** The transaction open in a fiber: a `transact` inside it joins it as a savepoint (E-289). */
interface OpenAttempt {
  readonly attempt: Attempt
  readonly tx: Tx
  readonly hooks: Array<Effect.Effect<void>>
}

let instances = 0
let savepoints = 0

export const makeLockingTransact = (
  sql: SqlClient.SqlClient,
  table: LockTable,
  makeTx: (hooks: Array<Effect.Effect<void>>, batch?: Batch) => RawTx,
  faults: CommitFaults = noCommitFaults
) => {
  const chained = makeChainedConnections(sql)
  const open = Context.Reference<OpenAttempt | undefined>(`sokoni/store/postgres/open/${instances++}`, { defaultValue: () => undefined })

  const { storeError, inTx, inTxNow, lockInDatabase, readWanted, begin, commit } = makeAttemptConnection(sql, chained)

  /** Locks `root` for the attempt (and "global" shared with it); true when it was not held already. */
  const ensure = (attempt: Attempt, raw: Tx, root: string): Effect.Effect<boolean, StoreError> => takeLocks(attempt, raw, locksFor(root))

  /**
   * Takes `locks`: before the transaction has begun and while the attempt holds nothing, by waiting here (no
   * connection held) and then beginning; otherwise without waiting (busy: the attempt must run again). Then in the
   * database. True when one was not held already.
   */
  const takeLocks = (attempt: Attempt, raw: Tx, locks: ReadonlyArray<readonly [string, LockMode]>): Effect.Effect<boolean, StoreError> =>
    Effect.suspend(() => {
      if (attempt.runAgain) return Effect.fail(runAgainError("an earlier lock was busy"))
      const fresh = locks.filter(([key, mode]) => !covers(attempt.held.modeOf(key), mode))
      if (fresh.length === 0) return Effect.succeed(false)
      // A row kept as missing may be created in the partition about to be locked: read rows again from now on.
      attempt.batch.forgetRows()
      if (attempt.conn === undefined && attempt.held.heldNow().size === 0) {
        return Effect.as(Effect.andThen(Effect.andThen(attempt.held.takeAll(new Map(fresh)), begin(attempt)), revalidate(attempt, raw)), true)
      }
      for (const [key, mode] of fresh) {
        if (!attempt.held.tryTake(key, mode)) {
          attempt.runAgain = true
          return Effect.fail(runAgainError(`lock ${key} is busy`))
        }
      }
      const inDatabase = attempt.conn === undefined ? begin(attempt) : lockInDatabase(attempt, fresh)
      return Effect.as(Effect.andThen(inDatabase, revalidate(attempt, raw)), true)
    })

  /** Reads again what earlier `get`s did not find: if one exists now, what the attempt decided on is stale. */
  const revalidate = (attempt: Attempt, raw: Tx): Effect.Effect<void, StoreError> =>
    // The misses as they are when it is built, as the forEach took them; none, the usual case, takes no forEach (E-541).
    attempt.misses.size === 0
      ? Effect.void
      : Effect.forEach(
          [...attempt.misses.values()],
          ([collection, id]) =>
            Effect.flatMap(inTx(attempt, raw.get(collection, id)), (found) => {
              if (Option.isNone(found)) return Effect.void
              attempt.runAgain = true
              return Effect.fail(runAgainError(`${collection}/${id} appeared once its partition was locked`))
            }),
          { discard: true }
        )

  /**
   * A "global" row this attempt read and now writes: its writers take turns on a lock of the row, and what was read
   * is read again under it; changed (or created) meanwhile, the attempt runs again. Blind writes of global rows (a new
   * desk-queue entry, a new key) take no lock: PostgreSQL's row lock orders them, the last one wins, as in turn.
   */
  const writeGlobalRow = (attempt: Attempt, raw: Tx, collection: string, id: string): Effect.Effect<void, StoreError> => {
    const key = `${collection}\u0000${id}`
    const seen = attempt.globalSeen.get(key)
    if (seen === undefined || !representable(collection) || !representable(id)) return Effect.void
    return Effect.andThen(
      takeLocks(attempt, raw, [[`row:${collection}/${id}`, "exclusive"]]),
      Effect.flatMap(inTx(attempt, raw.get(collection, id)), (now) => {
        attempt.globalSeen.delete(key)
        if (seenOf(now) === seen) return Effect.void
        attempt.runAgain = true
        return Effect.fail(runAgainError(`${collection}/${id} changed before its writer locked it`))
      })
    )
  }

  const lockingTx = (attempt: Attempt, raw: RawTx): Tx => {
    /**
     * True when locking `root` takes nothing (`takeLocks` would answer false at once): held already, nothing to run
     * again. The checks below use it to run an operation in one step, not through the lock's chain (E-542).
     */
    const rootHeld = (root: string) =>
      !attempt.runAgain && attempt.held.modeOf(root) === "exclusive" && (root === GLOBAL_ROOT || covers(attempt.held.modeOf(GLOBAL_ROOT), "shared"))
    const lockPartition = (partition: string) =>
      representable(partition)
        ? Effect.suspend(() => {
            const root = lockRootOf(partition)
            return rootHeld(root) ? Effect.void : Effect.asVoid(ensure(attempt, raw, root))
          })
        : Effect.fail(new StoreError({ message: `postgres store: lockPartition: ${JSON.stringify(partition)} contains NUL or a lone surrogate` }))
    /** True when `touch` takes nothing. */
    const touchFree = (partition: string) => {
      const root = lockRootOf(partition)
      return root === GLOBAL_ROOT || !representable(partition) || rootHeld(root)
    }
    /**
     * Partner partitions are locked before they are touched; "global" rows only by a global step (above). A name
     * PostgreSQL cannot hold is left to the operation, which refuses it without aborting the transaction.
     */
    const touch = (partition: string) => (lockRootOf(partition) === GLOBAL_ROOT || !representable(partition) ? Effect.void : lockPartition(partition))
    const read = <A>(effect: Effect.Effect<A, StoreError>) => inTx(attempt, effect)
    const write = <A>(effect: Effect.Effect<A, StoreError>) =>
      Effect.suspend(() => (attempt.conn === undefined ? Effect.andThen(begin(attempt), inTx(attempt, effect)) : inTxNow(attempt, effect)))
    /** `effect` as a write after touching `partition`: decided when it runs, one step once the lock is held (E-542). */
    const touchWrite = <A>(partition: string, effect: Effect.Effect<A, StoreError>) =>
      Effect.suspend(() => (attempt.conn !== undefined && touchFree(partition) ? inTxNow(attempt, effect) : Effect.andThen(touch(partition), write(effect))))
    /** What a read found, noted (a miss, a global row seen); read again under its partition's lock if not held yet. */
    const settle = (collection: string, id: string, doc: Option.Option<Doc>, reads: number): ReturnType<Tx["get"]> => {
      const key = `${collection}\u0000${id}`
      if (Option.isNone(doc)) {
        attempt.misses.set(key, [collection, id])
        if (!attempt.globalSeen.has(key)) attempt.globalSeen.set(key, seenOf(doc))
        return Effect.succeed(doc)
      }
      const root = lockRootOf(doc.value.partition)
      if (root === GLOBAL_ROOT && !attempt.globalSeen.has(key)) attempt.globalSeen.set(key, seenOf(doc))
      if (root === GLOBAL_ROOT || covers(attempt.held.modeOf(root), "exclusive") || reads >= 3) return Effect.succeed(doc)
      // Read before its partition was locked: read it again under the lock (it may have changed or moved).
      return Effect.andThen(ensure(attempt, raw, root), lockedGet(collection, id, reads + 1))
    }
    const lockedGet = (collection: string, id: string, reads: number): ReturnType<Tx["get"]> =>
      Effect.flatMap(Effect.andThen(readWanted(attempt), read(raw.get(collection, id))), (doc) => settle(collection, id, doc, reads))
    /**
     * A get the batch answers alone (E-540: a row the lock's statement read, a write still pending): when `readWanted`
     * has nothing to send, it is the same answer with one step, not the chain of the read, its connection and its
     * continuation. Decided when it runs, as `get` is lazy.
     */
    const getNowOr = (collection: string, id: string): ReturnType<Tx["get"]> =>
      Effect.suspend(() => {
        const known = attempt.wanted.length > 0 && attempt.conn !== undefined ? undefined : raw.getKnown(collection, id)
        return known === undefined ? lockedGet(collection, id, 0) : settle(collection, id, known, 0)
      })
    const putLocked = (collection: string, doc: Doc) =>
      Effect.andThen(
        lockRootOf(doc.partition) === GLOBAL_ROOT ? writeGlobalRow(attempt, raw, collection, doc.id) : touch(doc.partition),
        write(raw.put(collection, doc))
      ).pipe(
        // Its own write is no sign that someone else's appeared: found again, it is no longer a miss to check.
        Effect.tap(() => Effect.sync(() => void attempt.misses.delete(`${collection}\u0000${doc.id}`)))
      )
    /** Checked when the put runs, as `put` is lazy: the lock may be gone by then (a rollback to run again). */
    const putNowOr = (collection: string, doc: Doc) =>
      Effect.suspend(() => {
        if (!putAtOnce(attempt, doc.partition)) return putLocked(collection, doc)
        const outcome = raw.putDeferred(collection, doc)
        if (outcome === "not deferring") return putLocked(collection, doc)
        if (outcome !== undefined) return Effect.fail(outcome)
        attempt.misses.delete(`${collection}\u0000${doc.id}`)
        return Effect.void
      })
    const counterPartition = (name: string) => {
      const colon = name.indexOf(":")
      return colon === -1 ? undefined : name.slice(colon + 1)
    }
    return {
      ...raw,
      lockPartition,
      get: getNowOr,
      put: putNowOr,
      list: (collection, options) => {
        const listed = Effect.andThen(readWanted(attempt), read(raw.list(collection, options)))
        return Effect.suspend(() => (touchFree(options.partition) ? listed : Effect.andThen(touch(options.partition), listed)))
      },

      deletePartition: (partition) => Effect.andThen(lockPartition(partition), write(raw.deletePartition(partition))),
      dropExpired: (collection, partition, upTo, limit) => touchWrite(partition, raw.dropExpired(collection, partition, upTo, limit)),
      nextSeq: (name) => {
        if (isIdSequence(name)) return read(raw.nextSeq(name)) // a PG sequence: no transaction needed
        const partition = counterPartition(name)
        return partition === undefined ? write(raw.nextSeq(name)) : touchWrite(partition, raw.nextSeq(name))
      },
      nextId: (name) => read(raw.nextId(name)),
      appendEvent: (partition, event) => touchWrite(partition, raw.appendEvent(partition, event)),
      readEvents: (partition, after, limit) => Effect.andThen(touch(partition), read(raw.readEvents(partition, after, limit))),
      scheduleJob: (job) => write(raw.scheduleJob(job)),
      nextJob: read(raw.nextJob),
      claimJob: (upTo) => write(raw.claimJob(upTo)),
      deleteJob: (seq) => write(raw.deleteJob(seq)),
      dropExpiredLater: (collection, partition, upTo, limit) =>
        touchWrite(partition, raw.dropExpiredLater?.(collection, partition, upTo, limit) ?? Effect.asVoid(raw.dropExpired(collection, partition, upTo, limit))),
      deleteJobLater: (seq) => write(raw.deleteJobLater?.(seq) ?? Effect.asVoid(raw.deleteJob(seq))),
      prefetch: (keys) =>
        Effect.sync(() => {
          if (!attempt.batch.deferring) return
          for (const hint of keys) {
            const texts = isRowHint(hint) ? hint : [hint.collection, hint.list.partition]
            if (texts.every(representable) && readable(hint) && !answered(attempt.batch, hint)) attempt.wanted.push(hint)
          }
        })
    }
  }

  /** The attempt's work, then COMMIT when it began a transaction; RUN_AGAIN when it must not commit. */
  const runWork = <A, E, R>(attempt: Attempt, work: (tx: Tx) => Effect.Effect<A, E, R>, hooks: Array<Effect.Effect<void>>) =>
    Effect.gen(function* () {
      const tx = lockingTx(attempt, makeTx(hooks, attempt.batch))
      const exit = yield* Effect.exit(
        Effect.provideService(
          Effect.suspend(() => work(tx)),
          open,
          { attempt, tx, hooks }
        )
      )
      // Whatever the work made of a busy lock or a failed batch (it may have caught the failure): never commit.
      if (attempt.runAgain || attempt.batch.failed()) return yield* Effect.fail(RUN_AGAIN)
      const value = yield* exit
      yield* faults.beforeCommit
      yield* commit(attempt)
      return value
    })

  /**
   * Work inside an open transaction: a SAVEPOINT on the attempt's connection (begun first: a savepoint needs one), so
   * a failure undoes its writes, hooks and what the attempt learnt from them, and the outer work goes on (E-289).
   */
  const nested = <A, E, R>(current: OpenAttempt, work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> => {
    const { attempt, hooks } = current
    const statement = (text: string) =>
      Effect.suspend(() => (attempt.conn === undefined ? Effect.void : Effect.asVoid(attempt.conn.executeUnprepared(text, [], undefined)))).pipe(
        Effect.mapError(storeError("savepoint"))
      )
    const unit = (name: string) => {
      const mark = { hooks: hooks.length, misses: new Map(attempt.misses), globalSeen: new Map(attempt.globalSeen) }
      return Effect.flatMap(Effect.exit(Effect.suspend(() => work(current.tx))), (exit): Effect.Effect<A, E | StoreError, R> => {
        // Not released: COMMIT releases every savepoint, and a RELEASE is one more round trip per nested unit (three
        // on a trade's path). Left open it is only a name ROLLBACK TO could still reach, and names never repeat.
        if (Exit.isSuccess(exit)) {
          attempt.batch.release(name)
          return exit
        }
        hooks.length = mark.hooks
        restore(attempt.misses, mark.misses)
        restore(attempt.globalSeen, mark.globalSeen)
        // An attempt that must run again is rolled back whole; its connection may be past the savepoint's use.
        if (attempt.runAgain || attempt.batch.failed() || (attempt.batch.deferring && attempt.batch.rollbackTo(name))) return exit
        return Effect.andThen(statement(`ROLLBACK TO SAVEPOINT ${name}`), exit)
      })
    }
    // Deferring, the savepoint is taken only if writes of the unit reach the database while it is open (pg-batch.ts).
    const savepoint = () => {
      const name = `sokoni_nested_${++savepoints}`
      if (!attempt.batch.deferring)
        return Effect.andThen(
          statement(`SAVEPOINT ${name}`),
          Effect.suspend(() => unit(name))
        )
      attempt.batch.mark(name)
      return unit(name)
    }
    // Not a generator: a trade runs two units, and on a begun attempt (the usual case) this is one step before the work.
    return Effect.suspend(() => (attempt.conn === undefined ? Effect.andThen(begin(attempt), Effect.suspend(savepoint)) : savepoint()))
  }

  /** One attempt: the locks a previous one wanted, taken first (waiting, no connection held), then the work. */
  const attemptOnce = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>, prelocks: ReadonlyMap<string, LockMode>, eager: boolean) =>
    Effect.acquireUseRelease(
      Effect.map(Scope.make(), (scope): Attempt => {
        const held = makeHeldLocks(table)
        const exclusive = (partition: string) => held.modeOf(lockRootOf(partition)) === "exclusive"
        return {
          held,
          misses: new Map(),
          globalSeen: new Map(),
          scope,
          wanted: [],
          batch: makeBatch(sql, eager, exclusive),
          conn: undefined,
          tx: undefined,
          open: false,
          chained: false,
          closed: false,
          runAgain: false
        }
      }),
      (attempt) => {
        const hooks: Array<Effect.Effect<void>> = []
        return Effect.andThen(attempt.held.takeAll(prelocks), runWork(attempt, work, hooks)).pipe(
          Effect.catch((failure): Effect.Effect<never, E | StoreError | RunAgain> => {
            // A failed batch: its write fails where the work made it when the attempt runs again writing at once.
            const eagerNext = eager || attempt.batch.failed()
            if (failure === RUN_AGAIN || attempt.batch.failed() || retryable(failure)) return Effect.fail(new RunAgain(attempt.held.wanted(), eagerNext))
            return Effect.fail(failure as E | StoreError)
          }),
          // Committed: the connection goes back, then the hooks run before the locks go (one partition's hooks keep
          // commit order).
          Effect.tap(() =>
            Effect.andThen(
              closeAttempt(attempt, Exit.void),
              // A crash just after COMMIT (E-290): the writes are in, nothing learns of them.
              Effect.andThen(
                faults.afterCommit,
                // Built once the work is done, its hooks all here: none or one, the usual cases, without a forEach (E-541).
                hooks.length === 0
                  ? Effect.void
                  : hooks.length === 1
                    ? (hooks[0] as Effect.Effect<void>)
                    : Effect.forEach(hooks, (hook) => hook, { discard: true })
              )
            )
          )
        )
      },
      // Closed already (the usual case: closed once committed), the locks go in the same step.
      (attempt, exit) =>
        Effect.suspend(() => {
          if (!attempt.closed)
            return Effect.andThen(
              closeAttempt(attempt, exit),
              Effect.sync(() => attempt.held.releaseAll())
            )
          attempt.held.releaseAll()
          return Effect.void
        })
    )

  /** Rolls back what is still open and gives the connection back, once. */
  const closeAttempt = (attempt: Attempt, exit: Exit.Exit<unknown, unknown>) =>
    Effect.suspend(() => {
      if (attempt.closed) return Effect.void
      attempt.closed = true
      return Scope.close(attempt.scope, exit)
    })

  const fresh = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> => {
    const run = (prelocks: ReadonlyMap<string, LockMode>, attempts: number, eager: boolean): Effect.Effect<A, E | StoreError, R> =>
      attemptOnce(work, prelocks, eager).pipe(
        Effect.catch((error) => {
          if (!(error instanceof RunAgain)) return Effect.fail(error)
          if (attempts >= MAX_ATTEMPTS) {
            return Effect.fail(new StoreError({ message: `postgres store: transaction gave up after ${attempts} attempts (deadlocks or busy locks)` }))
          }
          return run(error.locks, attempts + 1, error.eager)
        })
      )
    return run(new Map(), 1, false)
  }

  const transact = <A, E, R>(work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    Effect.flatMap(Effect.service(open), (current) => (current === undefined ? fresh(work) : nested(current, work)))

  /** The transaction open in this fiber, for reads that must go through it. */
  const openTx: Effect.Effect<Tx | undefined> = Effect.map(Effect.service(open), (current) => current?.tx)

  const grouped = makeGroupCommit<OpenAttempt>({
    current: Effect.service(open),
    fresh,
    nested,
    within: (effect, current) => Effect.provideService(effect, open, current),
    spoiled: (current) => current.attempt.runAgain || current.attempt.batch.failed(),
    isStoreFailure: (error) => error instanceof StoreError || error === RUN_AGAIN
  })
  /**
   * Group commit (E-406), keyed by the partition's lock root. Not with injected commit faults: a simulated crash is
   * drawn per commit, and grouping would change which commit draws it (and the seeded runs' traces).
   */
  const transactGrouped = <A, E, R>(partition: string, work: (tx: Tx) => Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> =>
    faults !== noCommitFaults || !representable(partition) ? transact(work) : grouped(lockRootOf(partition), work)

  /** When the store closes: the connections kept open go back to the pool (pg-chained.ts). */
  return { transact, openTx, transactGrouped, close: chained.close }
}
