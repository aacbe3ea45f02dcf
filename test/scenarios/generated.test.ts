/**
 * The generated long scenarios (scenarios/generate.ts): a file of n orders through quotes, a random desk and a flaky
 * receiver is valid YAML the runner accepts, passes every step, and replays to the same trace hash. The 1,000-order
 * file is the bench's (`npm run bench -- --only week`); a short one proves the generator here.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ordersScenario } from "../../scenarios/generate.ts"
import { loadScenario, runScenario } from "../../scenarios/runner.ts"

describe("a generated scenario of n orders", () => {
  it("passes every step and replays to the same trace hash", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sokoni-generated-"))
    try {
      const file = join(dir, "orders.yaml")
      await writeFile(file, ordersScenario(30))
      const scenario = await loadScenario(file)
      expect(scenario.steps.filter((s) => s.request?.startsWith("POST /api/sandbox/v1/partner/trade"))).toHaveLength(30)
      const run = await runScenario(scenario, { seed: 3, store: "memory" })
      expect(run.steps.filter((s) => !s.ok).map((s) => `${s.label}: ${s.problems.join("; ")}`)).toEqual([])
      // The flaky receiver made the engine retry: some step saw a 500 or 503 answered.
      expect(run.steps.some((s) => s.received?.some((r) => / 50[03]$/.test(r)))).toBe(true)
      expect((await runScenario(scenario, { seed: 3, store: "memory" })).hash).toBe(run.hash)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
