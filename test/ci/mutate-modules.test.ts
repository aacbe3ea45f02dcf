/**
 * scripts/mutate-modules.ts: batch reports merged newest first per file, and the summary's scores and list of files
 * no batch has measured.
 */
import { describe, expect, it } from "vitest"
import { merge, summary } from "../../scripts/mutate-modules.ts"

const mutants = (counts: Record<string, number>) => Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status }))) as never

describe("mutate-modules", () => {
  const older = {
    files: { "engine/app/a.ts": { mutants: mutants({ Killed: 1, Survived: 9 }) }, "engine/app/b.ts": { mutants: mutants({ Killed: 4 }) } },
    testFiles: { "test/a.test.ts": { tests: [] } }
  }
  const newer = { files: { "engine/app/a.ts": { mutants: mutants({ Killed: 9, Survived: 1 }) } }, testFiles: { "test/b.test.ts": { tests: [] } } }

  it("keeps every file and test file of every batch, the later batch winning for a file in both", () => {
    const merged = merge([older, newer])
    expect(Object.keys(merged.files).sort()).toEqual(["engine/app/a.ts", "engine/app/b.ts"])
    expect(merged.files["engine/app/a.ts"]?.mutants.filter((m) => m.status === "Killed")).toHaveLength(9)
    expect(Object.keys(merged.testFiles ?? {}).sort()).toEqual(["test/a.test.ts", "test/b.test.ts"])
    expect(merge([newer, older]).files["engine/app/a.ts"]?.mutants.filter((m) => m.status === "Killed")).toHaveLength(1)
  })

  it("scores the measured files and names the ones not measured yet", () => {
    const text = summary(merge([older, newer]), ["engine/app/a.ts", "engine/app/b.ts", "engine/http/c.ts"], "2026-11-25T00:00:00.000Z")
    expect(text).toContain("Measured: 2 of the 3 files")
    expect(text).toMatch(/engine\/app\s+92\.86%\s+killed 13, timeout 0, survived 1/)
    expect(text).toMatch(/engine\/app\/a\.ts\s+90\.00%/)
    expect(text).toContain("## Not yet measured\n\n- engine/http/c.ts")
  })
})
