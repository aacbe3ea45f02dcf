/**
 * Crashes drawn from the seed (issue 22 item 6, E-290): commit faults that make a write transaction fail just before
 * its COMMIT (nothing of it stays) or just after it (everything stays, nobody hears of it), as a process killed at
 * that instant would. Owns the draw; the store adapters own where the faults run (engine/store/port.ts
 * `CommitFaults`). Disarmed until `arm`, so an engine starts (its own startup transactions) before the first crash.
 */
import { Effect } from "effect"
import { type CommitFaults, StoreError } from "../store/port.ts"
import { makeGenerator } from "./random.ts"

export type CrashPoint = "before-commit" | "after-commit"

export interface SeededCrashes extends CommitFaults {
  /** Starts drawing: every later write transaction may crash. */
  readonly arm: () => void
  readonly disarm: () => void
  /** Every crash so far, in order. */
  readonly crashes: ReadonlyArray<CrashPoint>
}

/** Each armed commit crashes before it with probability `before`, else after it with probability `after`. */
export const seededCrashes = (seed: number, probability: { readonly before: number; readonly after: number }): SeededCrashes => {
  const next = makeGenerator(seed)
  const crashes: Array<CrashPoint> = []
  let armed = false
  const draw = (point: CrashPoint, p: number) =>
    Effect.suspend(() => {
      if (!armed || p <= 0 || next() / 2 ** 32 >= p) return Effect.void
      crashes.push(point)
      return Effect.fail(new StoreError({ message: `simulated crash ${point} (seed ${seed}, crash ${crashes.length})` }))
    })
  return {
    beforeCommit: draw("before-commit", probability.before),
    afterCommit: draw("after-commit", probability.after),
    arm: () => {
      armed = true
    },
    disarm: () => {
      armed = false
    },
    crashes
  }
}
