/**
 * The webhook-retries suite: every scenario passes (its receiver expectations included), replays to the same trace
 * (which records every delivery attempt) on memory, and (DATABASE_URL set) to the same hash on postgres.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadScenario, runScenario } from "../../scenarios/runner.ts"
import { onPostgres } from "../support/stores.ts"
import { memoryRunOf, scenarioRun } from "./suite.ts"

const DIR = join(import.meta.dirname, "..", "..", "scenarios", "webhook-retries")
const FILES = readdirSync(DIR).filter((f) => f.endsWith(".yaml"))
const DATABASE_URL = process.env.DATABASE_URL

const run = (file: string, store: "memory" | "postgres", seed = 7) => scenarioRun(DIR, file, store, seed)

describe.each(FILES)("webhook-retries scenario %s", (file) => {
  const memory = memoryRunOf(DIR, file)

  it("passes and replays to the same trace on memory; the trace records the attempts", async () => {
    const [a, b] = [await memory(), await run(file, "memory")]
    expect(a.passed).toBe(true)
    expect(b.hash).toBe(a.hash)
    expect(b.trace).toEqual(a.trace)
    expect(a.trace.some((line) => JSON.parse(line).kind === "webhook")).toBe(true)
  })

  describe.skipIf(DATABASE_URL === undefined)("on postgres (skipped: set DATABASE_URL to run)", onPostgres, () => {
    it("gives memory's trace hash on postgres", async () => {
      const postgres = await run(file, "postgres")
      expect(postgres.trace).toEqual((await memory()).trace)
      expect(postgres.hash).toBe((await memory()).hash)
    })
  })
})

it("a failing receiver expectation fails the step (the runner checks what receivers got)", async () => {
  const scenario = await loadScenario(join(DIR, "retry-0-then-delivered.yaml"))
  const broken = {
    ...scenario,
    steps: scenario.steps.map((s) => (s.name === "attempt 1 at +0 s" ? { ...s, expect: { received: [{ status: 500 }] } } : s))
  }
  const result = await runScenario(broken, { seed: 7, store: "memory" })
  expect(result.passed).toBe(false)
  expect(result.steps.find((s) => !s.ok)?.problems.join()).toContain("received[0].status")
})
