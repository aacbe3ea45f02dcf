/**
 * The throughput profile: the ceiling arithmetic (pure), and one short run against a real engine process: every
 * operation of the mix measured, nothing failed, webhooks fired.
 */
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { ceilingOf, keepsUp, runThroughput, type Step, summarizeThroughput } from "../../engine/load/throughput.ts"

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

describe("throughput run", () => {
  it("measures every operation of the mix on the memory store, with fills delivered as webhooks", { timeout: 60_000 }, async () => {
    const { summary, deliveries } = await runThroughput({
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

describe("a throughput summary", () => {
  const answer = (status: number, ms: number) => ({ status, headers: {}, body: "", ms })
  it("counts per step requests served per second, failures (no answer or 400 and above) and drops, and latency per operation", () => {
    const summary = summarizeThroughput(
      [10, 20],
      2,
      [0, 3],
      [
        { operation: "stocks", step: 0, answer: answer(200, 1) },
        { operation: "quote", step: 0, answer: answer(399, 3) },
        { operation: "trade", step: 1, answer: answer(400, 5) },
        { operation: "stocks", step: 1, answer: answer(0, 7) }
      ]
    )
    expect(summary.steps).toEqual([
      { offeredIterationsPerSecond: 10, requestsPerSecond: 1, failedRate: 0, droppedIterations: 0, p50: 1, p95: 3, p99: 3 },
      { offeredIterationsPerSecond: 20, requestsPerSecond: 1, failedRate: 1, droppedIterations: 3, p50: 5, p95: 7, p99: 7 }
    ])
    expect(summary.operations.stocks).toEqual({ avg: 4, "p(50)": 1, "p(95)": 7, "p(99)": 7, max: 7 })
    expect(summary.operations.wallet).toBeNull()
  })
})
