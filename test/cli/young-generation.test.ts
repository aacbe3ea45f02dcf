/**
 * serve's cap on V8's young generation (E-358): when growth stops and resumes, the cap a command line asks for, and
 * the observer that applies them after this process's own young collections (V8's answers and flags given by the
 * test, so the test process's V8 is left alone). The cap kept in a real process: young-generation.process.test.ts.
 */
import { constants, PerformanceObserver } from "node:perf_hooks"
import { getHeapSpaceStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import {
  capYoungGeneration,
  DEFAULT_YOUNG_GENERATION_MB,
  growthFactorFor,
  youngGenerationBytes,
  youngGenerationCapOf
} from "../../engine/cli/young-generation.js"

const MB = 1024 * 1024

describe("the young generation's growth", () => {
  it("stops growth once one more (a doubling) would pass the cap, and allows it again when it would not", () => {
    expect(growthFactorFor(8 * MB, 16 * MB, false)).toBeUndefined()
    expect(growthFactorFor(8 * MB + 1, 16 * MB, false)).toBe(1)
    expect(growthFactorFor(16 * MB, 16 * MB, true)).toBeUndefined()
    expect(growthFactorFor(8 * MB, 16 * MB, true)).toBe(2)
  })
})

describe("the size the cap is kept by", () => {
  it("is V8's new space, both semi-spaces", () => {
    const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size
    expect(youngGenerationBytes()).toBe(newSpace)
    expect(youngGenerationBytes()).toBeGreaterThan(0)
  })
})

describe("the cap a command line asks for", () => {
  it("is serve's flag, or serve's default, and none for other commands", () => {
    expect(youngGenerationCapOf(["serve", "--port", "4010"])).toBe(DEFAULT_YOUNG_GENERATION_MB)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "32"])).toBe(32)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb=32"])).toBe(32)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb=0"])).toBe(0)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "-4"])).toBe(0)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "2.5"])).toBe(0)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "lots"])).toBe(0)
    expect(youngGenerationCapOf(["conform", "--young-generation-mb", "32"])).toBe(0)
  })
})

/** The young collections this process has had, counted from this process's own notices of them. */
const youngCollections = (() => {
  let count = 0
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) count++
  }).observe({ entryTypes: ["gc"] })
  return () => count
})()

/**
 * Allocates short-lived objects, a macrotask between batches, until `done`, then until `more` further young collections
 * have been noticed (so an observer that would act on them has had the chance). Driven by allocation, not time.
 */
const churn = async (done: () => boolean, more = 0): Promise<void> => {
  const step = async () => {
    let last: unknown
    for (let i = 0; i < 100_000; i++) last = { i, list: [i] }
    expect(last).toBeDefined()
    await new Promise((resolve) => setImmediate(resolve))
  }
  for (let batch = 0; batch < 400 && !done(); batch++) await step()
  const until = youngCollections() + more
  for (let batch = 0; batch < 400 && youngCollections() < until; batch++) await step()
  expect(done()).toBe(true)
  expect(youngCollections()).toBeGreaterThanOrEqual(until)
}

/** A few macrotasks: notices of collections already made are delivered by then. */
const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** A full (major) collection now: `gc`, exposed to this test process only. */
const fullCollection = (): void => {
  setFlagsFromString("--expose-gc")
  ;(runInNewContext("gc") as () => void)()
}

describe("the cap kept after this process's young collections", () => {
  const factors = (flags: ReadonlyArray<string>) => flags.map((f) => f.replace("--semi-space-growth-factor=", ""))

  it("starts with growth stopped, allows it below the cap, stops it above, and gives it back when stopped", async () => {
    const flags: Array<string> = []
    let size = 1 * MB
    const stop = capYoungGeneration(16, { youngBytes: () => size, setFlags: (f) => void flags.push(f) })
    expect(factors(flags)).toEqual(["1"])
    // Once allowed, growth is not set again while the size stays below the cap.
    await churn(() => flags.length >= 2, 3)
    expect(factors(flags)).toEqual(["1", "2"])
    size = 9 * MB
    await churn(() => flags.length >= 3, 3)
    expect(factors(flags)).toEqual(["1", "2", "1"])
    // A full collection is not a young one: the size has fallen, and growth stays stopped until a young collection.
    await settle()
    size = 1 * MB
    const young = youngCollections()
    fullCollection()
    await settle()
    expect(youngCollections()).toBe(young)
    expect(factors(flags)).toEqual(["1", "2", "1"])
    stop()
    expect(factors(flags)).toEqual(["1", "2", "1", "2"])
    // Stopped, the observer no longer acts on the young collections that would allow growth.
    await churn(() => true, 3)
    expect(flags).toHaveLength(4)
  })

  it("leaves the flag as it is when stopped while growth is allowed", async () => {
    const flags: Array<string> = []
    const stop = capYoungGeneration(16, { youngBytes: () => 1 * MB, setFlags: (f) => void flags.push(f) })
    await churn(() => flags.length >= 2)
    stop()
    expect(factors(flags)).toEqual(["1", "2"])
  })

  it("tells V8 nothing for a cap of 0 (V8's own sizing)", () => {
    const flags: Array<string> = []
    capYoungGeneration(0, { youngBytes: () => 1 * MB, setFlags: (f) => void flags.push(f) })()
    expect(flags).toEqual([])
  })
})
