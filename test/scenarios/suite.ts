/**
 * One scenario suite's determinism tests: same seed + same scenario = same trace, byte for byte, twice on memory and
 * on postgres equal to memory's; another seed, another trace. The postgres runs need DATABASE_URL (an admin URL; each
 * run creates and drops its own database) and carry the `postgres` tag, so CI's PostgreSQL pass runs only them.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadScenario, type RunResult, runScenario } from "../../scenarios/runner.ts"
import { onPostgres } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL

/** Runs `file` of `dir` and expects every step to pass. */
export const scenarioRun = async (dir: string, file: string, store: "memory" | "postgres", seed = 7) => {
  const result = await runScenario(await loadScenario(join(dir, file)), { seed, store, databaseUrl: DATABASE_URL })
  expect(result.steps.filter((s) => !s.ok)).toEqual([])
  return result
}

/**
 * The memory run with seed 7 of one file, made once per pass and shared by the file's tests: the determinism test
 * makes it (and a second run to compare), the other-seed and postgres tests compare against it. In CI's PostgreSQL
 * pass only the postgres test runs, and it makes the memory run itself.
 */
export const memoryRunOf = (dir: string, file: string) => {
  let first: Promise<RunResult> | undefined
  return () => {
    first ??= scenarioRun(dir, file, "memory")
    return first
  }
}

export const describeSuite = (suite: string) => {
  const DIR = join(import.meta.dirname, "..", "..", "scenarios", suite)
  const FILES = readdirSync(DIR).filter((f) => f.endsWith(".yaml"))

  describe.each(FILES)(`${suite} scenario %s`, (file) => {
    const memory = memoryRunOf(DIR, file)

    it("passes and replays to the same trace hash on memory", async () => {
      const [a, b] = [await memory(), await scenarioRun(DIR, file, "memory")]
      expect(a.passed).toBe(true)
      expect(a.hash).toMatch(/^[0-9a-f]{64}$/)
      expect(b.hash).toBe(a.hash)
      expect(b.trace).toEqual(a.trace)
    })

    it("gives a different trace for a different seed (the hash is not a constant)", async () => {
      expect((await scenarioRun(DIR, file, "memory", 8)).hash).not.toBe((await memory()).hash)
    })

    describe.skipIf(DATABASE_URL === undefined)("on postgres (skipped: set DATABASE_URL to run)", onPostgres, () => {
      // One postgres run: memory's trace is shown deterministic above, so a postgres run equal to it byte for byte
      // is too (a nondeterministic adapter would differ from it now and then, in this pass or the next).
      it("replays to memory's trace and trace hash on postgres", async () => {
        const postgres = await scenarioRun(DIR, file, "postgres")
        expect(postgres.trace).toEqual((await memory()).trace)
        expect(postgres.hash).toBe((await memory()).hash)
      })
    })
  })
}
