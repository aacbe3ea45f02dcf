/**
 * `sokoni simulate` as a user runs it: a process that prints the seed first, the summary and the trace hash, the same
 * for the same seed, and exits 0 when the week holds. Spawns processes (skipped by mutation testing); the week itself
 * is tested in-process in simulate-week.test.ts.
 */
import { describe, expect, it } from "vitest"
import { sokoni } from "../support/sokoni-cli.ts"

describe("sokoni simulate", () => {
  it("as a command: the seed first, the summary, the trace hash; exit 0", async () => {
    const args = ["simulate", "--seed", "5", "--partners", "2", "--sub-accounts", "4", "--orders", "20", "--days", "1"]
    const [run, again] = await Promise.all([sokoni(args), sokoni(args)])
    expect(run.stdout.split("\n")[0]).toBe("seed 5")
    expect(run.stdout).toMatch(/simulated seconds per wall second/)
    expect(run.stdout).toMatch(/^orders: \d+ placed, \d+ refused/m)
    expect(run.stdout).toMatch(/every rule holds; money: 4 ledgers conserved$/m)
    const hash = /^trace hash ([0-9a-f]{64})/m.exec(run.stdout)?.[1]
    expect(hash).toBeDefined()
    expect(/^trace hash ([0-9a-f]{64})/m.exec(again.stdout)?.[1]).toBe(hash)
    expect(run.code).toBe(0)
  })
})
