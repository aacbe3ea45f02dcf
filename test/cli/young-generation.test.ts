/**
 * serve's cap on V8's young generation (E-358), its rules without a process: when growth stops and resumes, and the
 * cap a command line asks for. The cap kept in a running process: young-generation.process.test.ts.
 */
import { describe, expect, it } from "vitest"
import { DEFAULT_YOUNG_GENERATION_MB, growthFactorFor, youngGenerationCapOf } from "../../engine/cli/young-generation.ts"

const MB = 1024 * 1024

describe("the young generation's growth", () => {
  it("stops growth once one more (a doubling) would pass the cap, and allows it again when it would not", () => {
    expect(growthFactorFor(8 * MB, 16 * MB, false)).toBeUndefined()
    expect(growthFactorFor(8 * MB + 1, 16 * MB, false)).toBe(1)
    expect(growthFactorFor(16 * MB, 16 * MB, true)).toBeUndefined()
    expect(growthFactorFor(8 * MB, 16 * MB, true)).toBe(2)
  })
})

describe("the cap a command line asks for", () => {
  it("is serve's flag, or serve's default, and none for other commands", () => {
    expect(youngGenerationCapOf(["serve", "--port", "4010"])).toBe(DEFAULT_YOUNG_GENERATION_MB)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "32"])).toBe(32)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb=0"])).toBe(0)
    expect(youngGenerationCapOf(["serve", "--young-generation-mb", "lots"])).toBe(0)
    expect(youngGenerationCapOf(["conform", "--young-generation-mb", "32"])).toBe(0)
  })
})
