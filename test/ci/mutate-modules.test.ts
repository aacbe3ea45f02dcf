/**
 * scripts/mutate-modules.ts: batch reports merged newest first per file, and the summary's scores and list of files
 * no batch has measured.
 */
import { describe, expect, it } from "vitest"
import { interruptionNote, merge, only, partlyMeasured, summary, wasInterrupted, withoutGone, worthKeeping } from "../../scripts/mutate-modules.ts"

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

  it("renumbers every batch's test ids into one numbering, so each mutant still names the tests that covered and killed it", () => {
    // Each Stryker run numbers its tests from 0: id "0" is a.test's first test in one batch, b.test's in the other.
    const first = {
      files: { "engine/app/a.ts": { mutants: [{ status: "Killed", coveredBy: ["0", "1"], killedBy: ["1"] }] as never } },
      testFiles: {
        "test/a.test.ts": {
          tests: [
            { id: "0", name: "a one" },
            { id: "1", name: "a two" }
          ]
        }
      }
    }
    const second = {
      files: { "engine/app/b.ts": { mutants: [{ status: "Survived", coveredBy: ["0", "7"] }] as never } },
      testFiles: { "test/b.test.ts": { tests: [{ id: "0", name: "b one" }] }, "test/a.test.ts": { tests: [{ id: "1", name: "a two" }] } }
    }
    const merged = merge([first, second])
    const names = new Map(
      Object.entries(merged.testFiles as Record<string, { tests: Array<{ id: string; name: string }> }>).flatMap(([file, def]) =>
        def.tests.map((t) => [t.id, `${file} ${t.name}`] as const)
      )
    )
    const nameOf = (ids: ReadonlyArray<string> | undefined) => (ids ?? []).map((id) => names.get(id))
    const [a] = (merged.files["engine/app/a.ts"]?.mutants ?? []) as unknown as Array<{ coveredBy: Array<string>; killedBy: Array<string> }>
    const [b] = (merged.files["engine/app/b.ts"]?.mutants ?? []) as unknown as Array<{ coveredBy: Array<string> }>
    expect(nameOf(a?.coveredBy)).toEqual(["test/a.test.ts a one", "test/a.test.ts a two"])
    expect(nameOf(a?.killedBy)).toEqual(["test/a.test.ts a two"])
    // "7" is defined by no test of its report: dropped, not read as whatever test holds 7 elsewhere.
    expect(nameOf(b?.coveredBy)).toEqual(["test/b.test.ts b one"])
    // One test, one id, whichever batch named it; a test file keeps the tests of earlier batches.
    expect(names.size).toBe(3)
    expect((merged.testFiles as Record<string, { tests: Array<unknown> }>)["test/a.test.ts"]?.tests).toHaveLength(2)
  })

  it("a batch keeps only its own files, so its stale copy of another batch's file cannot win the merge", () => {
    // Stryker's report carries every file of the incremental file it started from, mutated or not.
    const stale = { files: { ...older.files, "engine/app/c.ts": { mutants: mutants({ Killed: 2 }) } } }
    const batch = only(stale, ["engine/app/c.ts"])
    expect(Object.keys(batch.files)).toEqual(["engine/app/c.ts"])
    expect(merge([newer, batch]).files["engine/app/a.ts"]?.mutants.filter((m) => m.status === "Killed")).toHaveLength(9)
  })

  it("scores the measured files and names the ones not measured yet", () => {
    const text = summary(merge([older, newer]), ["engine/app/a.ts", "engine/app/b.ts", "engine/http/c.ts"], "2026-11-25T00:00:00.000Z")
    expect(text).toContain("Measured: 2 of the 3 files")
    expect(text).toMatch(/engine\/app\s+92\.86%\s+killed 13, timeout 0, survived 1/)
    expect(text).toMatch(/engine\/app\/a\.ts\s+90\.00%/)
    expect(text).toContain("## Not yet measured\n\n- engine/http/c.ts")
  })

  it("leaves out a file no longer in the tree, so a moved or removed file's old score stops counting in its folder", () => {
    const { report, gone } = withoutGone(merge([older, newer]), (file) => file !== "engine/app/a.ts")
    expect([Object.keys(report.files), gone]).toEqual([["engine/app/b.ts"], ["engine/app/a.ts"]])
    const text = summary(report, ["engine/app/b.ts"], "2026-11-28T00:00:00.000Z", {}, gone)
    expect(text).toMatch(/engine\/app\s+100\.00%\s+killed 4, timeout 0, survived 0/)
    expect(text).toContain("Left out: 1 files measured before that are no longer in the tree (moved or removed): engine/app/a.ts.")
  })

  it("names how far an interrupted batch got, counting tested mutants and not the ignored ones, and never scores that part", () => {
    const interrupted = { files: { "engine/http/c.ts": { mutants: mutants({ Killed: 3, Survived: 2, Ignored: 4 }) } } }
    expect(partlyMeasured(interrupted)).toEqual({ "engine/http/c.ts": 5 })
    const text = summary(
      merge([older, newer]),
      ["engine/app/a.ts", "engine/app/b.ts", "engine/http/c.ts"],
      "2026-11-25T00:00:00.000Z",
      partlyMeasured(interrupted)
    )
    expect(text).toContain("- engine/http/c.ts (interrupted after 5 mutants; the batch resumes from docs/mutation/partial/)")
    expect(text).not.toMatch(/^engine\/http /m)
  })

  it("keeps an interrupted part only when it tested a mutant, so a stop in the dry run cannot wipe an earlier part", () => {
    const dryRunStop = { files: {} }
    const tested = { files: { "engine/app/c.ts": { mutants: mutants({ Killed: 2, Ignored: 1 }) } } }
    expect(worthKeeping(dryRunStop)).toBe(false)
    expect(worthKeeping({ files: { "engine/app/c.ts": { mutants: mutants({ Ignored: 3 }) } } })).toBe(false)
    expect(worthKeeping(tested)).toBe(true)
    const file = "docs/mutation/partial/engine_app_c.json"
    expect(interruptionNote(partlyMeasured(dryRunStop), file, true)).toBe(`interrupted before a mutant was tested; ${file} stays as it was`)
    expect(interruptionNote(partlyMeasured(dryRunStop), file, false)).toBe("interrupted before a mutant was tested; nothing to keep")
    expect(interruptionNote(partlyMeasured(tested), file, true)).toBe(
      `interrupted; mutants tested: engine/app/c.ts 2; kept in ${file}: the same command resumes`
    )
  })

  it("tells an interrupted Stryker (128 + signal, or killed by one) from a finished run, whatever its score", () => {
    expect(wasInterrupted({ status: 130, signal: null })).toBe(true)
    expect(wasInterrupted({ status: 143, signal: null })).toBe(true)
    expect(wasInterrupted({ status: null, signal: "SIGKILL" })).toBe(true)
    expect(wasInterrupted({ status: 0, signal: null })).toBe(false)
    expect(wasInterrupted({ status: 1, signal: null })).toBe(false)
    expect(wasInterrupted({ status: 128, signal: null })).toBe(false)
  })
})
