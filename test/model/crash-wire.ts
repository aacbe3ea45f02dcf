/**
 * Crashes inside the API model (issue 22 item 6): the model's `crash` command arms one crash for the partner's next
 * mutation, just before or just after its COMMIT (E-290's commit faults, chosen by the command sequence rather than a
 * probability, so fast-check can shrink to it). The crashed request is answered 500; the engine is restarted on the
 * committed memory state (a new engine, its caches gone: E-298 keeps its clock and market) and the request is resent
 * with its Idempotency-Key, as the spec tells a client to. The command that made the request then checks the final
 * answer against the model, which knows nothing of the crash: so a crash that ran something twice, committed
 * something then refused it, or lost a write shows as the model's disagreement.
 */
import { Effect } from "effect"
import { expect } from "vitest"
import type { CrashPoint } from "../../engine/sim/crashes.ts"
import { type CommitFaults, StoreError } from "../../engine/store/port.ts"
import { makeMemoryState } from "../../engine/store/memory.ts"
import { engineLog } from "../support/engine-log.ts"

export const CRASH_POINTS: ReadonlyArray<CrashPoint> = ["before-commit", "after-commit"]

export const makeCrashSwitch = () => {
  const log = engineLog()
  let pending: CrashPoint | undefined
  let armed: CrashPoint | undefined
  let fired: CrashPoint | undefined
  const at = (point: CrashPoint) =>
    Effect.suspend(() => {
      if (armed !== point) return Effect.void
      armed = undefined
      fired = point
      return Effect.fail(new StoreError({ message: `simulated crash ${point} (model)` }))
    })
  const faults: CommitFaults = { beforeCommit: at("before-commit"), afterCommit: at("after-commit") }
  return {
    /** What the engine is started with: the state every restart continues, the faults, the log the crash goes to. */
    memory: { state: makeMemoryState(), faults },
    logger: log.logger,
    /** The partner's next mutation crashes at `point`. */
    crashNext: (point: CrashPoint) => {
      pending = point
    },
    pending: () => pending !== undefined,
    /**
     * Sends the request once under the pending crash (`first`, whose answer may break the contract: a crash answers
     * 500); if the crash fired, restarts the engine and resends (`again`, same Idempotency-Key). Answers the reply the
     * client ends with and the crash that fired, if one did (a request refused before any commit fires none).
     */
    through: async <R extends { readonly status: number }>(first: () => Promise<R>, again: () => Promise<R>, restart: () => Promise<void>) => {
      armed = pending
      pending = undefined
      fired = undefined
      // The crash is logged by the engine on purpose (a store failure in the gateway): kept out of the run's output.
      const { value: cut } = await log.during(first)
      armed = undefined
      const point = fired
      if (point === undefined) return { reply: cut, fired: undefined }
      expect(cut.status, `the crashed request (${point}) is answered as a failure`).toBe(500)
      fired = undefined
      await restart()
      return { reply: await again(), fired: point }
    }
  }
}

export type CrashSwitch = ReturnType<typeof makeCrashSwitch>
