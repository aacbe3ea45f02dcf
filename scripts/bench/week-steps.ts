/**
 * Effect steps of a simulated week, in process (the hook of effect-steps.ts): deterministic, so a change to the
 * week's paths is judged by it on a busy machine. A tool, not a test.
 *   node scripts/bench/week-steps.ts [orders, default 2000] [sub-accounts, default 200]
 *   STEPS_TOP=40 [STEPS_LABEL=desk.step] ...      and the most frequent steps by kind (of one label's steps)
 */
import { describeStep, installStepHook } from "./step-hook.ts"

const ORDERS = process.argv[2] ?? "2000"
const SUBS = process.argv[3] ?? "200"

const TOP = Number(process.env.STEPS_TOP ?? 0)
const kinds = new Map<string, number>()
// Steps by what ran them, when an instrumented engine sets `globalThis.stepLabel` (not in the engine: a local patch).
const byLabel = new Map<string, number>()
let steps = 0
installStepHook((step) => {
  steps++
  const label = (globalThis as { stepLabel?: string }).stepLabel
  if (label !== undefined) byLabel.set(label, (byLabel.get(label) ?? 0) + 1)
  if (TOP > 0 && (process.env.STEPS_LABEL === undefined || process.env.STEPS_LABEL === label)) {
    const kind = describeStep(step, 90)
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
  }
})
process.on("exit", () => {
  console.log(`effect steps: ${steps} (week of ${ORDERS} orders, ${SUBS} sub-accounts)`)
  for (const [label, count] of byLabel) console.log(`${String(count).padStart(8)} ${label}`)
  for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`${String(count).padStart(8)} ${kind}`)
})
process.argv.splice(2, process.argv.length, "simulate", "--seed", "1", "--orders", ORDERS, "--sub-accounts", SUBS)
await import("../../engine/cli/main.ts")
