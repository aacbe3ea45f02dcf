/**
 * Engine code reaches time and randomness only through its seams (EngineClock, Entropy, Scheduler). This test
 * fails when a file outside the allowlist (test/support/determinism.ts, ALLOW) uses a forbidden global, timer or
 * entropy source, directly or through an alias. The scanner's own fixtures are in determinism-scanner.test.ts.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ALLOW, engineFiles, ROOT, violations } from "../support/determinism.ts"

describe("determinism guard", () => {
  it("finds no direct use of time, timers or randomness in engine code outside the seams", () => {
    const files = engineFiles()
    expect(files.length).toBeGreaterThan(10)
    expect(violations(files)).toEqual([])
  })

  it("allowlists the seams themselves", () => {
    for (const seam of ["engine/sim/clock.ts", "engine/sim/random.ts", "engine/sim/scheduler.ts"]) {
      expect(existsSync(join(ROOT, seam)), seam).toBe(true)
      expect(ALLOW.find((a) => a.path === seam)?.kinds).toEqual(["time", "timer", "random", "dynamic"])
    }
  })
})
