/**
 * One scenario suite's determinism tests: same seed + same scenario = same trace, byte for byte, twice on each
 * store and across stores; another seed, another trace. The postgres runs need DATABASE_URL (an admin URL; each run
 * creates and drops its own database).
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadScenario, runScenario } from "../../scenarios/runner.ts"

const DATABASE_URL = process.env.DATABASE_URL

export const describeSuite = (suite: string) => {
  const DIR = join(import.meta.dirname, "..", "..", "scenarios", suite)
  const FILES = readdirSync(DIR).filter((f) => f.endsWith(".yaml"))

  const run = async (file: string, store: "memory" | "postgres", seed = 7) => {
    const result = await runScenario(await loadScenario(join(DIR, file)), { seed, store, databaseUrl: DATABASE_URL })
    expect(result.steps.filter((s) => !s.ok)).toEqual([])
    return result
  }

  describe.each(FILES)(`${suite} scenario %s`, (file) => {
    it("passes and replays to the same trace hash on memory", async () => {
      const [a, b] = [await run(file, "memory"), await run(file, "memory")]
      expect(a.passed).toBe(true)
      expect(a.hash).toMatch(/^[0-9a-f]{64}$/)
      expect(b.hash).toBe(a.hash)
      expect(b.trace).toEqual(a.trace)
    })

    it("gives a different trace for a different seed (the hash is not a constant)", async () => {
      expect((await run(file, "memory", 8)).hash).not.toBe((await run(file, "memory", 7)).hash)
    })

    describe.skipIf(DATABASE_URL === undefined)("on postgres (skipped: set DATABASE_URL to run)", () => {
      it("replays to the same trace hash twice on postgres, equal to memory's", async () => {
        const memory = await run(file, "memory")
        const [p1, p2] = [await run(file, "postgres"), await run(file, "postgres")]
        expect(p1.hash).toBe(p2.hash)
        expect(p1.trace).toEqual(memory.trace)
        expect(p1.hash).toBe(memory.hash)
      })
    })
  })
}
