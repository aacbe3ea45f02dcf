/**
 * The throughput profile: the ceiling arithmetic (pure), and one short run of load/throughput.js against a real
 * engine process (skipped without k6): every operation of the mix measured, nothing failed, webhooks fired.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { findK6 } from "../../engine/load/run.ts"
import { ceilingOf, keepsUp, runThroughput, type Step } from "../../engine/load/throughput.ts"

const step = (over: Partial<Step>): Step => ({ offeredIterationsPerSecond: 100, requestsPerSecond: 110, failedRate: 0, droppedIterations: 0, p95: 5, ...over })

describe("ceiling", () => {
  it("keeps up under 1% failed, under 1% dropped and p95 under 100 ms, each bound exclusive", () => {
    expect(keepsUp(step({}), 10)).toBe(true)
    expect(keepsUp(step({ failedRate: 0.0099 }), 10)).toBe(true)
    expect(keepsUp(step({ failedRate: 0.01 }), 10)).toBe(false)
    // 1% of 100 it/s over 10 s is 10 iterations
    expect(keepsUp(step({ droppedIterations: 10 }), 10)).toBe(true)
    expect(keepsUp(step({ droppedIterations: 11 }), 10)).toBe(false)
    expect(keepsUp(step({ p95: 99.9 }), 10)).toBe(true)
    expect(keepsUp(step({ p95: 100 }), 10)).toBe(false)
    const { p95: _p95, ...unmeasured } = step({})
    expect(keepsUp(unmeasured, 10)).toBe(false)
  })
  it("is the last step kept up with, in served requests", () => {
    const steps = [
      step({ requestsPerSecond: 110 }),
      step({ offeredIterationsPerSecond: 200, requestsPerSecond: 230 }),
      step({ offeredIterationsPerSecond: 400, p95: 150 })
    ]
    expect(ceilingOf({ stepSeconds: 10, steps, operations: {} })?.requestsPerSecond).toBe(230)
    expect(ceilingOf({ stepSeconds: 10, steps: [step({ p95: 500 })], operations: {} })).toBeUndefined()
  })
})

const k6 = findK6()

describe.skipIf(k6 === undefined)(k6 === undefined ? "throughput run (skipped: k6 not found)" : "throughput run", () => {
  it("measures every operation of the mix on the memory store, with fills delivered as webhooks", { timeout: 60_000 }, async () => {
    const { summary, deliveries } = await runThroughput({
      k6: k6 as string,
      store: "memory",
      steps: [40, 80],
      stepSeconds: 2,
      out: join(import.meta.dirname, "..", "..", "out", "load-test", "throughput")
    })
    expect(summary.steps.map((s) => s.offeredIterationsPerSecond)).toEqual([40, 80])
    for (const s of summary.steps) {
      expect(s.failedRate).toBe(0)
      expect(s.requestsPerSecond).toBeGreaterThan(0)
    }
    expect(Object.keys(summary.operations).sort()).toEqual(["quote", "stocks", "trade", "wallet"])
    for (const op of Object.values(summary.operations)) expect(op?.["p(95)"]).toBeGreaterThan(0)
    expect(deliveries).toBeGreaterThan(0)
  })
})
