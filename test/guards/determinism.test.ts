/**
 * Engine code reaches time and randomness only through its seams (EngineClock, Entropy, Scheduler). This test
 * fails when a file outside the seam implementations calls a forbidden global directly.
 */
import { describe, expect, it } from "vitest"
import { engineFiles, violations } from "../support/determinism.ts"

describe("determinism guard", () => {
  it("finds no direct use of time or randomness in engine code outside the seams", () => {
    const files = engineFiles()
    expect(files.length).toBeGreaterThan(10)
    expect(violations(files)).toEqual([])
  })

  it("catches each forbidden call (the guard itself can fail)", () => {
    const samples = ["Date.now()", "new Date()", "Math.random()", "setTimeout(f, 1)", "setInterval(f, 1)", "performance.now()", "crypto.randomUUID()"]
    for (const sample of samples) {
      expect(violations([{ path: "engine/app/x.ts", text: `const x = ${sample}` }])).toHaveLength(1)
    }
    expect(violations([{ path: "engine/app/x.ts", text: "const d = new Date(ms) // Date.now() in a comment" }])).toEqual([])
    expect(violations([{ path: "engine/sim/clock.ts", text: "Date.now()" }])).toEqual([])
  })
})
