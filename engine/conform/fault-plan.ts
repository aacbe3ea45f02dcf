/**
 * `sokoni conform --faults FILE` (docs/faults.md): the run happens under a fault plan the target injects. Owns putting
 * the plan on the target before the checks (`PUT /_sim/faults`) and, after them, the report's notes of what each rule
 * injected and how conform's client answered the faults it met, then clearing the plan. A check that meets a fault
 * reports what it got, as a client of the target would; with `--history`, the history rules judge the faulted
 * answers too (a 503 carries Retry-After, a retried key never runs twice). Needs the target's control API.
 */
import type { FaultPlan } from "../domain/faults.ts"
import type { Target } from "./target.ts"

/** Puts `plan` on the target; throws when the target refuses it (the run would not be the one asked for). */
export const installFaults = async (target: Target, plan: FaultPlan): Promise<void> => {
  const r = await target.admin("PUT", "/_sim/faults", plan)
  if (r.status !== 200) throw new Error(`the target refused the fault plan: ${r.status} ${r.text.slice(0, 200)}`)
}

interface FaultState {
  readonly rules: ReadonlyArray<{ readonly fault: string; readonly matched: number; readonly injected: number; readonly healed: boolean }>
  readonly met: ReadonlyArray<{ readonly answer: { readonly sameKey: boolean; readonly honouredRetryAfter: boolean | null } | null }>
}

/** The report's notes on the faults injected and answered, read off the target, which then drops the plan. */
export const faultNotes = async (target: Target): Promise<ReadonlyArray<string>> => {
  const r = await target.admin("GET", "/_sim/faults")
  await target.admin("DELETE", "/_sim/faults")
  if (r.status !== 200) return [`fault plan: the target did not say what it injected (${r.status})`]
  const state = r.json as FaultState
  const retried = state.met.filter((m) => m.answer !== null)
  return [
    ...state.rules.map((rule, i) => `fault plan rule ${i} (${rule.fault}): matched ${rule.matched}, injected ${rule.injected}${rule.healed ? ", healed" : ""}`),
    `faults met: ${state.met.length}; retried ${retried.length}, ${retried.filter((m) => m.answer?.sameKey === true).length} with the same Idempotency-Key, ${retried.filter((m) => m.answer?.honouredRetryAfter === false).length} before Retry-After`
  ]
}
