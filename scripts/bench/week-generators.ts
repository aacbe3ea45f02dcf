/**
 * Generator runs of a simulated week by generator function, in process: each `Iterator` step of the effect runtime
 * holds a generator object, counted by its prototype (one per generator function), and named at exit by the
 * inspector's `[[GeneratorLocation]]` and `[[GeneratorFunction]]` of one of them. Deterministic, as week-steps.ts; a
 * generator costs the week three steps at least (its suspend, its first step, its answer), so this says which paths
 * to write otherwise (docs/performance.md, session 7). A tool, not a test.
 *   node scripts/bench/week-generators.ts [orders, default 2000] [sub-accounts, default 200] [at least, default 1000]
 * Locations are `scriptId:line`: a script's id is the order it was loaded in, so read the source text shown beside it.
 */
import { Session } from "node:inspector"
import { installStepHook } from "./step-hook.ts"

const ORDERS = process.argv[2] ?? "2000"
const SUBS = process.argv[3] ?? "200"
const AT_LEAST = Number(process.argv[4] ?? 1000)

const counts = new Map<object, { runs: number; sample: object }>()
installStepHook((step) => {
  // An Iterator step's first evaluation carries `initial`; its later resumptions run as continuations, not steps.
  const iterator = (step as { readonly iterator?: unknown }).iterator
  if (typeof iterator !== "object" || iterator === null || !("initial" in step)) return
  const prototype = Object.getPrototypeOf(iterator) as object
  const known = counts.get(prototype)
  if (known === undefined) counts.set(prototype, { runs: 1, sample: iterator })
  else known.runs++
})

/** Where the generator function of `sample` is, and the start of its source (the inspector answers synchronously). */
const describe = (session: Session, sample: object): string => {
  let where = "?"
  const scratch = globalThis as { weekGeneratorSample?: object }
  scratch.weekGeneratorSample = sample
  session.post("Runtime.evaluate", { expression: "globalThis.weekGeneratorSample" }, (error, found) => {
    if (error !== null || found.result.objectId === undefined) return
    session.post("Runtime.getProperties", { objectId: found.result.objectId, ownProperties: false }, (_e, properties) => {
      const internal = properties?.internalProperties ?? []
      const location = internal.find((p) => p.name === "[[GeneratorLocation]]")?.value?.value as { scriptId: string; lineNumber: number } | undefined
      const source = internal.find((p) => p.name === "[[GeneratorFunction]]")?.value?.description ?? ""
      if (location !== undefined) where = `${location.scriptId}:${location.lineNumber + 1} ${source.replace(/\s+/g, " ").slice(0, 110)}`
    })
  })
  return where
}

process.on("exit", () => {
  const session = new Session()
  session.connect()
  const rows = [...counts.values()].filter((c) => c.runs >= AT_LEAST).sort((a, b) => b.runs - a.runs)
  const total = [...counts.values()].reduce((sum, c) => sum + c.runs, 0)
  console.log(`generator runs: ${total} (week of ${ORDERS} orders, ${SUBS} sub-accounts); those run ${AT_LEAST} times or more:`)
  for (const { runs, sample } of rows) console.log(`${String(runs).padStart(8)} ${describe(session, sample)}`)
  session.disconnect()
})
process.argv.splice(2, process.argv.length, "simulate", "--seed", "1", "--orders", ORDERS, "--sub-accounts", SUBS)
await import("../../engine/cli/main.ts")
