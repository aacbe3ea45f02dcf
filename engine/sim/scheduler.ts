/**
 * Scheduler: durable due-jobs (quote expiry, desk auto-fill; later webhook retries, order expiry, price refresh),
 * stored through the Store so they survive a restart on postgres, and run in (dueAt, seq) order.
 * Owns: scheduling, the handler registry, running what is due, and advancing simulated time through due jobs.
 * Does not own what a job does: each service registers the handler for its own job kinds.
 *
 * A job runs in the same transaction that claims it (E-277), so it runs exactly once whoever drives the clock (the
 * background loop, an advance, another process on the same database) or, on failure, not at all; its successor is
 * booked in that transaction too. A job whose handler fails, or whose stored payload does not have the shape its
 * handler takes (checked first: app/job-payloads.ts), is moved to the `deadJobs` collection and logged, never retried
 * forever.
 *
 * Timers (E-130) are the process-local kind of delayed work: work bound to something only this process holds (an
 * open stream's socket), which a durable job could not reach from another process and which must not outlive the
 * process. They are kept in memory, run on the same clock and in the same walk as jobs (a job first when both fall
 * at one instant), and are not counted in `jobsRun`.
 */
import { Clock, Context, Effect, Layer, Option, type Schema, Semaphore } from "effect"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { type Job, Store, StoreError, type Tx } from "../store/port.ts"
import { shapeVerdict } from "../store/shape-check.ts"
import { EngineClock, isoAt } from "./clock.ts"
import { writeClockMark } from "./durable-time.ts"

/**
 * Runs a job inside its transaction. It may return a follow-up effect, run once that transaction has committed and
 * released the store (network calls belong there: never inside a write transaction), before the next job.
 */
export type JobHandler<A = unknown> = (tx: Tx, payload: A) => Effect.Effect<void | Effect.Effect<void>, unknown>

/** What a handler answers: nothing, or its follow-up. */
type HandlerResult = void | Effect.Effect<void>
/** A registered handler, behind the check of its payload. */
type CheckedHandler = (tx: Tx, job: Job) => Effect.Effect<HandlerResult, unknown>
/** What a claim answers when no job was there to claim (another driver ran it). */
const NO_JOB: unique symbol = Symbol("sokoni/Scheduler/noJob")
const noJob: Effect.Effect<typeof NO_JOB> = Effect.succeed(NO_JOB)

export interface AdvanceTarget {
  readonly seconds?: number | undefined
  readonly to?: number | undefined
}

export class Scheduler extends Context.Service<
  Scheduler,
  {
    readonly schedule: (tx: Tx, kind: string, dueAt: number, payload: unknown) => Effect.Effect<Job, StoreError>
    /**
     * `schedule` made when called where the store can (`Tx.scheduleJobNow`): a finished effect then, which a generator
     * passes without a step (E-463). Yielded where it is called, as `putHere` (the at-once guard).
     */
    readonly scheduleHere: (tx: Tx, kind: string, dueAt: number, payload: unknown) => Effect.Effect<Job, StoreError>
    /**
     * Registers the handler of `kind`. Each job's stored payload is checked against `payload` (app/job-payloads.ts)
     * before the handler sees it: one that does not fit fails as a StoreError naming the job, which goes to deadJobs.
     */
    readonly register: <A>(kind: string, payload: Schema.Codec<A>, handler: JobHandler<A>) => Effect.Effect<void>
    /** Runs every job due at or before the clock's now; returns how many ran. */
    readonly runDue: Effect.Effect<number, StoreError>
    /** Moves the clock to the target, stopping at each due job on the way to run it at its own due time. */
    readonly advance: (target: AdvanceTarget) => Effect.Effect<{ readonly now: number; readonly jobsRun: number }, ApiFailure | StoreError>
    /** Polls for due jobs forever (system and follow modes); fork it for the life of the server. */
    readonly loop: (pollMillis: number) => Effect.Effect<never, StoreError>
    /** Runs `run` once at `dueAt` on the engine clock, in this process only (E-130); the result cancels it. */
    readonly timer: (dueAt: number, run: Effect.Effect<void>) => Effect.Effect<Effect.Effect<void>>
  }
>()("sokoni/Scheduler") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const handlers = new Map<string, CheckedHandler>()
    const register = <A>(kind: string, payload: Schema.Codec<A>, handler: JobHandler<A>) => {
      const check = shapeVerdict(payload, (seq) => `job ${seq} (${kind}) does not have the payload its handler takes`)
      const checked: CheckedHandler = (tx, job) => {
        const p = check(String(job.seq), job.payload)
        return p instanceof StoreError ? Effect.fail(p) : handler(tx, p)
      }
      return Effect.sync(() => void handlers.set(kind, checked))
    }
    const timers = new Map<number, { readonly dueAt: number; readonly seq: number; readonly run: Effect.Effect<void> }>()
    let timerSeq = 0
    const nextTimer = () => {
      let first: { readonly dueAt: number; readonly seq: number; readonly run: Effect.Effect<void> } | undefined
      for (const t of timers.values()) if (first === undefined || t.dueAt < first.dueAt || (t.dueAt === first.dueAt && t.seq < first.seq)) first = t
      return first
    }
    /** Runs the earliest timer (removed first, so a timer that sets the next one is not run twice). */
    const runTimer = (t: { readonly seq: number; readonly run: Effect.Effect<void> }) =>
      Effect.suspend(() => {
        timers.delete(t.seq)
        return t.run.pipe(Effect.catchCause((cause) => Effect.logWarning(`timer ${t.seq} failed`, cause)))
      })

    // A hint only, read without the write lock: which job (or timer) comes next. Whether a job runs is decided by
    // its claim inside the transaction that runs it (`runNext`).
    const peek = store.read((tx) => tx.nextJob)
    /** `peek` read when called, without a step where the store can (`Store.nextJobNow`); yielded where it is called. */
    const nextJobNow = store.nextJobNow
    const peekHere = (): Effect.Effect<Option.Option<Job>, StoreError> =>
      nextJobNow === undefined ? peek : Effect.succeed(Option.fromUndefinedOr(nextJobNow()))
    // One driver of this process at a time (the background loop's pass or an advance): an advance then reports every
    // job of its span, and the loop does not run ahead of the clock the advance is moving. Other processes are kept
    // off by the claim alone.
    const driving = yield* Semaphore.make(1)
    /** Moves a job whose handler failed to deadJobs, unless another driver already did (false then). */
    const deadLetter = (job: Job, error: unknown) =>
      store.transact((tx) =>
        Effect.gen(function* () {
          if (!(yield* tx.deleteJob(job.seq))) return false
          yield* tx.put("deadJobs", {
            id: String(job.seq),
            partition: "global",
            sortKey: String(job.seq).padStart(12, "0"),
            body: { job, error: String(error) }
          })
          return true
        })
      )

    /**
     * Claims the earliest job due at or before `upTo` in `tx` and runs its handler: its follow-up, or NO_JOB when none
     * was there to claim; what it claimed goes to `claimed`. A flatMap, not a generator: a step and an Option less per
     * job (E-452).
     */
    const claimAndRun = (tx: Tx, upTo: number, claimed: { job?: Job }): Effect.Effect<HandlerResult | typeof NO_JOB, unknown> =>
      Effect.flatMap(tx.claimJob(upTo), (job): Effect.Effect<HandlerResult | typeof NO_JOB, unknown> => {
        if (Option.isNone(job)) return noJob
        claimed.job = job.value
        const handler = handlers.get(job.value.kind)
        if (handler === undefined) return Effect.fail(`no handler registered for job kind ${job.value.kind}`)
        return handler(tx, job.value)
      })

    /**
     * Claims the earliest job due at or before `upTo` and runs it, in one transaction, then its follow-up. False when
     * no job was there to claim (another driver ran it). A failed handler rolls the claim back; the job goes to
     * deadJobs, never retried forever.
     */
    // The generators below are made once, not per job (Effect.fnUntraced): a generator function created per call
    // costs V8 a new prototype and hidden class on its first call, a microsecond or more each time.
    const runNext: (upTo: number) => Effect.Effect<boolean, StoreError> = Effect.fnUntraced(function* (upTo: number) {
      const claimed: { job?: Job } = {}
      const outcome = yield* store.transact((tx) => claimAndRun(tx, upTo, claimed)).pipe(Effect.result)
      if (outcome._tag === "Success") {
        const followUp = outcome.success
        if (followUp === NO_JOB) return false
        if (Effect.isEffect(followUp)) yield* followUp
        return true
      }
      const error = outcome.failure
      const job = claimed.job
      if (job === undefined) return yield* Effect.fail(error as StoreError)
      yield* Effect.logWarning(`job ${job.seq} (${job.kind}) failed; moved to deadJobs`, error)
      return yield* deadLetter(job, error)
    })

    /** Runs jobs due at or before `upTo`, one transaction each, in order; returns the count. */
    const runUpTo: (upTo: number) => Effect.Effect<number, StoreError> = Effect.fnUntraced(function* (upTo: number) {
      let ran = 0
      while (true) {
        const next = yield* peekHere()
        const timer = nextTimer()
        const jobDue = Option.isSome(next) ? next.value.dueAt : Number.POSITIVE_INFINITY
        if (timer !== undefined && timer.dueAt < jobDue && timer.dueAt <= upTo) {
          yield* runTimer(timer)
          continue
        }
        if (Option.isNone(next) || next.value.dueAt > upTo) return ran
        if (yield* runNext(upTo)) ran++
        else yield* Effect.yieldNow
      }
    })

    const targetOf = (start: number, target: AdvanceTarget) =>
      target.to !== undefined
        ? Effect.succeed(target.to)
        : target.seconds !== undefined && Number.isFinite(target.seconds) && target.seconds >= 0
          ? Effect.succeed(start + Math.round(target.seconds * 1000))
          : Effect.fail(fail("VALIDATION_ERROR", "advance needs `seconds` (>= 0) or `to` (date-time)"))

    // Untraced like the steps above: a traced Effect.fn captures a stack and opens a span on every call, and a
    // simulated week advances once per action (some 12,000 times).
    const advance = Effect.fnUntraced(function* (target: AdvanceTarget) {
      const start = yield* clock.nowHere()
      const to = yield* targetOf(start, target)
      if (to < start) return yield* Effect.fail(fail("VALIDATION_ERROR", `cannot move the clock back from ${isoAt(start)} to ${isoAt(to)}`))
      let jobsRun = 0
      while (true) {
        const next = yield* peekHere()
        const timer = nextTimer()
        const jobDue = Option.isSome(next) ? next.value.dueAt : Number.POSITIVE_INFINITY
        const useTimer = timer !== undefined && timer.dueAt < jobDue
        const due = useTimer ? timer.dueAt : jobDue
        if (due > to) break
        const now = yield* clock.nowHere()
        if (due > now) yield* clock.moveTo(due)
        if (useTimer) yield* runTimer(timer)
        else if (yield* runNext(due)) jobsRun++
        else yield* Effect.yieldNow
      }
      yield* clock.moveTo(to)
      const now = yield* clock.nowHere()
      // A restart continues from here, not from where this process started (E-298).
      yield* writeClockMark(store, now, yield* Clock.currentTimeMillis)
      return { now, jobsRun }
    })

    return Scheduler.of({
      schedule: (tx, kind, dueAt, payload) => tx.scheduleJob({ kind, dueAt, payload }),
      scheduleHere: (tx, kind, dueAt, payload) =>
        tx.scheduleJobNow === undefined ? tx.scheduleJob({ kind, dueAt, payload }) : Effect.succeed(tx.scheduleJobNow({ kind, dueAt, payload })),
      register,
      runDue: driving.withPermits(1)(Effect.flatMap(clock.now, runUpTo)),
      advance: (target) => driving.withPermits(1)(advance(target)),
      loop: (pollMillis) =>
        driving
          .withPermits(1)(Effect.flatMap(clock.now, runUpTo))
          .pipe(Effect.andThen(Effect.sleep(pollMillis)), Effect.forever),
      timer: (dueAt, run) =>
        Effect.sync(() => {
          const seq = ++timerSeq
          timers.set(seq, { dueAt, seq, run })
          return Effect.sync(() => void timers.delete(seq))
        })
    })
  })

  static readonly layer = Layer.effect(Scheduler, Scheduler.make)
}
