/**
 * EngineClock: the engine's only source of "now". Owns the three clock modes and moving simulated time.
 * Does not own running the jobs that fall due when time moves (sim/scheduler.ts `advance` does that).
 *
 * - system: Effect's Clock as it is (real time in production; TestClock in tests).
 * - follow: Effect's Clock plus an offset that only grows when advanced (the default for `serve`).
 * - manual: frozen virtual time that moves only when advanced (scenarios, conformance runs).
 */
import { Clock, Context, Effect, Layer, Ref } from "effect"
import { fail, type ApiFailure } from "../domain/errors.ts"
import { Store } from "../store/port.ts"
import { readClockMark, resumedStart, writeClockMark } from "./durable-time.ts"
import { isoOf } from "../domain/strings.ts"

export type ClockMode = "system" | "follow" | "manual"
export const CLOCK_MODES: ReadonlyArray<ClockMode> = ["system", "follow", "manual"]

export class EngineClock extends Context.Service<
  EngineClock,
  {
    readonly mode: ClockMode
    readonly now: Effect.Effect<number>
    /**
     * The clock read when called, for `yield* clock.nowHere()` in a generator's body: on the manual clock a finished
     * effect, which the generator passes without a step of the runtime (one per read, some 33 reads per order of a
     * simulated week: E-461); `now` itself on the others. Yielded where it is called, as `putHere` (the at-once guard).
     */
    readonly nowHere: () => Effect.Effect<number>
    /** Moves simulated time forward to `target` (epoch ms). Never backwards; refused in system mode. */
    readonly moveTo: (target: number) => Effect.Effect<void, ApiFailure>
  }
>()("sokoni/EngineClock") {
  static readonly make = Effect.fn("EngineClock.make")(function* (mode: ClockMode, start?: number) {
    const real = Clock.currentTimeMillis
    const initial = start ?? (yield* real)
    if (mode === "system") {
      return EngineClock.of({
        mode,
        now: real,
        nowHere: () => real,
        moveTo: () => Effect.fail(fail("CONFLICT", "the clock is in system mode and cannot be advanced"))
      })
    }
    if (mode === "follow") {
      const offset = yield* Ref.make(initial - (yield* real))
      const now = Effect.map(Effect.zip(real, Ref.get(offset)), ([r, o]) => r + o)
      return EngineClock.of({
        mode,
        now,
        nowHere: () => now,
        // Real time runs on between a caller's look at the clock and its move: a target real time has passed since is
        // already reached, not a move back, so the clock stays where it is (an advance to a job due a moment ago
        // answered 400 under load). Callers refuse a target before their own start themselves (Scheduler.advance).
        moveTo: (target) => Effect.flatMap(now, (current) => (target <= current ? Effect.void : Ref.update(offset, (o) => o + (target - current))))
      })
    }
    const virtual = yield* Ref.make(initial)
    return EngineClock.of({
      mode,
      now: Ref.get(virtual),
      nowHere: () => Effect.succeed(Ref.getUnsafe(virtual)),
      moveTo: (target) =>
        Effect.flatMap(Ref.get(virtual), (current) =>
          target < current ? Effect.fail(fail("VALIDATION_ERROR", "the clock only moves forward")) : Ref.set(virtual, target)
        )
    })
  })

  static readonly layer = (mode: ClockMode, start?: number) => Layer.effect(EngineClock, EngineClock.make(mode, start))

  /**
   * The clock of an engine on a store: a restart continues where the store's clock stood, never before it (a follow
   * clock counts the real time that passed meanwhile), and never before `start` (E-298). Marks its start.
   */
  static readonly layerDurable = (mode: ClockMode, start?: number) =>
    Layer.effect(
      EngineClock,
      Effect.gen(function* () {
        const real = yield* Clock.currentTimeMillis
        const initial = resumedStart(mode, start ?? real, real, yield* readClockMark())
        const clock = yield* EngineClock.make(mode, initial)
        if (mode !== "system") yield* writeClockMark(yield* Store, initial, real)
        return clock
      })
    )
}

/** An instant as the wire writes it (UTC, milliseconds): `toISOString`, the last text remembered (domain/strings.ts). */
export const isoAt = isoOf

/** Real wall time, for choosing a run's start instant only (the CLI); the engine itself reads `EngineClock.now`. */
export const wallClockNow = (): number => Date.now()

/**
 * Waits real time: only for harness code talking to a target that has no virtual clock (`sokoni conform` against a
 * mock or the real service, whose quote TTL and rate-limit window pass in real time). The engine never waits on it.
 */
export const wallSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A real-time deadline that does not keep the process alive: `serve`'s shutdown grace, outside the engine's clock. */
export const wallDeadline = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref())

/**
 * Milliseconds since the process started: `serve` reports how long it took to be ready, and its lanes measure a
 * turn's budget on it (http/lanes.ts). Transport pacing, never the engine's time.
 */
export const processUptimeMs = (): number => performance.now()

/** Runs `f` after node's next pass over its sockets: the HTTP transport's lane turns (http/lanes.ts), not engine work. */
export const afterIo = (f: () => void): void => void setImmediate(f)
