/**
 * `sokoni scenario run` as a user runs it, one process per run: the seed printed first, every step listed, the
 * closing count and the trace hash; the same hash on both stores; a failing step exits 1. (The in-process suites in
 * test/scenarios/ replay every scenario file on both stores; this file covers the command around the runner.)
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { adminUrl } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"
import { ROOT, sokoni } from "../support/sokoni-cli.ts"

const FILE = join(ROOT, "scenarios", "stream", "keep-alive-on-the-clock.yaml")

const hashOf = (stdout: string) => /^trace hash ([0-9a-f]{64})$/m.exec(stdout)?.[1]

describe("sokoni scenario run (process)", () => {
  it("prints the seed first, each step, the count and the trace hash, and exits 0", async () => {
    const run = await sokoni(["scenario", "run", FILE, "--seed", "7", "--store", "memory"])
    expect(run.stdout.split("\n")[0]).toBe("seed 7")
    expect(run.stdout).toMatch(/^ {2}ok {4}9 stream \{"read":"s"\}$/m)
    expect(run.stdout).toContain("9 passed, 0 failed")
    expect(hashOf(run.stdout)).toMatch(/^[0-9a-f]{64}$/)
    expect(run.code).toBe(0)
  })

  it("exits 1 and names the step when an expectation fails", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sokoni-scenario-run-"))
    try {
      const broken = join(dir, "broken.yaml")
      // The last read expects a comment the engine never sends (a wrong count would wait out the read's failure bound).
      const text = await readFile(FILE, "utf8")
      await writeFile(broken, text.replace("[{ comment: keep-alive }, { comment: keep-alive }]", "[{ comment: keep-alive }, { comment: still-here }]"))
      const run = await sokoni(["scenario", "run", broken, "--seed", "7", "--store", "memory"])
      expect(run.stdout).toContain("8 passed, 1 failed")
      expect(run.stdout).toMatch(/^ {2}FAIL +9 /m)
      expect(run.code).toBe(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it.skipIf(adminUrl === undefined)("prints memory's trace hash on postgres", onPostgres, async () => {
    const [memory, postgres] = await Promise.all([
      sokoni(["scenario", "run", FILE, "--seed", "7", "--store", "memory"]),
      sokoni(["scenario", "run", FILE, "--seed", "7", "--store", "postgres", "--database-url", adminUrl ?? ""])
    ])
    expect(postgres.code).toBe(0)
    expect(hashOf(postgres.stdout)).toBe(hashOf(memory.stdout))
  })
})
