/**
 * Reads a fault plan file (`serve --faults FILE`, `conform --faults FILE`; docs/faults.md): JSON, or YAML for any
 * other extension, checked by the same rules as `PUT /_sim/faults`. Owns reading and naming the problem; the rules
 * are engine/domain/faults.ts's.
 */
import { readFile } from "node:fs/promises"
import { parse } from "yaml"
import { PARTNER_OPERATIONS } from "../contract/catalogue.gen.ts"
import { type FaultPlan, isPlanProblem, parsePlan } from "../domain/faults.ts"

/** The plan in `file`, or an Error saying what is wrong and where (one line). */
export const loadFaultPlan = async (file: string): Promise<FaultPlan> => {
  const text = await readFile(file, "utf8").catch((error: Error) => {
    throw new Error(`--faults ${file}: ${error.message}`)
  })
  let raw: unknown
  try {
    // A static import: serve's bundle holds every module it runs (scripts/build-serve.ts refuses a lazy chunk).
    raw = file.endsWith(".json") ? JSON.parse(text) : parse(text)
  } catch (error) {
    throw new Error(`--faults ${file}: not ${file.endsWith(".json") ? "JSON" : "YAML"}: ${String((error as Error).message).split("\n")[0]}`)
  }
  const plan = parsePlan(raw, new Set(PARTNER_OPERATIONS.map((o) => o.operationId)))
  if (isPlanProblem(plan)) throw new Error(`--faults ${file}: ${plan.param}: ${plan.problem}`)
  return plan
}
