/**
 * CI's closing line cannot lie: scripts/ci-summary.ts fed fake vitest reports, scenario logs and step statuses.
 */
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { finalLine, orderedNotes, parseScenarioLog, summarise } from "../../scripts/ci-summary.ts"

const dir = mkdtempSync(join(tmpdir(), "sokoni-ci-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const file = (name: string, text: string) => {
  const path = join(dir, `${++n}-${name}`)
  writeFileSync(path, text)
  return path
}
const report = (passed: number, failed: number, skipped = 0, failedSuites = 0) =>
  file(
    "vitest.json",
    JSON.stringify({
      numPassedTests: passed,
      numFailedTests: failed,
      numPendingTests: skipped,
      numTodoTests: 0,
      numFailedTestSuites: failedSuites,
      success: failed === 0
    })
  )
const HASH_A = "a".repeat(64)
const HASH_B = "b".repeat(64)
const log = (steps: number, failed: number, hash?: string) =>
  file("scenario.log", `seed 7\n  ok    1 step\n${steps - failed} passed, ${failed} failed\n${hash ? `trace hash ${hash}\n` : ""}`)
const tsv = (rows: ReadonlyArray<[string, string, number, string]>) => file("results.tsv", `${rows.map((r) => r.join("\t")).join("\n")}\n`)
const line = (args: ReadonlyArray<string>) => finalLine(summarise(args))
const goodScenarios = () =>
  tsv([
    ["scenarios/a.yaml", "memory", 0, log(5, 0, HASH_A)],
    ["scenarios/a.yaml", "postgres", 0, log(5, 0, HASH_A)]
  ])

describe("ci-summary", () => {
  it("adds up reports, scenario runs and checks", () => {
    expect(line(["--vitest", `${report(10, 0, 2)}=0`, "--vitest", `${report(12, 0)}=0`, "--scenarios", goodScenarios(), "--check", "spec:gen:check=0"])).toBe(
      "26 passed, 0 failed, 2 skipped"
    )
  })

  it("omits skipped when nothing was skipped", () => {
    expect(line(["--vitest", `${report(3, 0)}=0`])).toBe("3 passed, 0 failed")
  })

  it("counts a vitest run that exited non-zero with a clean report as one failure", () => {
    expect(line(["--vitest", `${report(10, 0)}=1`])).toBe("10 passed, 1 failed")
  })

  it("does not count a failing run twice when its report has the failures", () => {
    expect(line(["--vitest", `${report(10, 2)}=1`])).toBe("10 passed, 2 failed")
  })

  it("counts failed suites (a file that did not load) when no test failed", () => {
    expect(line(["--vitest", `${report(10, 0, 0, 1)}=1`])).toBe("10 passed, 1 failed")
  })

  it("names each failed test with the first line of its error, and a file that did not load", () => {
    const path = file(
      "vitest.json",
      JSON.stringify({
        numPassedTests: 1,
        numFailedTests: 1,
        numPendingTests: 0,
        numTodoTests: 0,
        numFailedTestSuites: 1,
        testResults: [
          {
            name: join(process.cwd(), "test/http/a.test.ts"),
            status: "failed",
            assertionResults: [
              { fullName: "a passes", status: "passed" },
              { fullName: "orders fill", status: "failed", failureMessages: ["\nAssertionError: expected 1 to be 2\n    at x.ts:1"] }
            ]
          },
          { name: join(process.cwd(), "test/http/b.test.ts"), status: "failed", message: "SyntaxError: bad import", assertionResults: [] },
          { name: join(process.cwd(), "test/http/c.test.ts"), status: "passed", assertionResults: [{ fullName: "c", status: "passed" }] }
        ]
      })
    )
    const notes = summarise(["--vitest", `${path}=1`]).notes
    expect(notes.filter((n) => n.startsWith("FAIL   "))).toEqual([
      "FAIL   test/http/a.test.ts > orders fill: AssertionError: expected 1 to be 2",
      "FAIL   test/http/b.test.ts: SyntaxError: bad import"
    ])
  })

  it("prints passes first and failures last, each group in its own order", () => {
    expect(orderedNotes(["FAIL a", "ok   b", "skip c", "FAIL d", "ok   e"])).toEqual(["ok   b", "skip c", "ok   e", "FAIL a", "FAIL d"])
  })

  it("counts a missing or unreadable report as a failure", () => {
    expect(line(["--vitest", `${join(dir, "nope.json")}=1`])).toBe("0 passed, 1 failed")
    expect(line(["--vitest", `${file("bad.json", "{")}=0`])).toBe("0 passed, 1 failed")
  })

  it("passes two clean scenario runs with one hash: a check per run and one for the hash", () => {
    expect(line(["--scenarios", goodScenarios()])).toBe("3 passed, 0 failed")
  })

  it("fails a scenario with a failed step even when the hashes agree", () => {
    const runs = tsv([
      ["scenarios/a.yaml", "memory", 1, log(5, 1, HASH_A)],
      ["scenarios/a.yaml", "postgres", 1, log(5, 1, HASH_A)]
    ])
    expect(line(["--scenarios", runs])).toBe("1 passed, 2 failed")
  })

  it("fails a run that printed a failed step but exited 0", () => {
    const runs = tsv([
      ["scenarios/a.yaml", "memory", 0, log(5, 1, HASH_A)],
      ["scenarios/a.yaml", "postgres", 0, log(5, 0, HASH_A)]
    ])
    expect(line(["--scenarios", runs])).toBe("2 passed, 1 failed")
  })

  it("fails when the stores disagree on the hash", () => {
    const runs = tsv([
      ["scenarios/a.yaml", "memory", 0, log(5, 0, HASH_A)],
      ["scenarios/a.yaml", "postgres", 0, log(5, 0, HASH_B)]
    ])
    const t = summarise(["--scenarios", runs])
    expect(finalLine(t)).toBe("2 passed, 1 failed")
    expect(t.notes.join("\n")).toContain("trace hashes differ")
  })

  it("fails a run that crashed before printing (no counts, no hash, missing log)", () => {
    const runs = tsv([
      ["scenarios/a.yaml", "memory", 0, log(5, 0, HASH_A)],
      ["scenarios/a.yaml", "postgres", 1, join(dir, "missing.log")]
    ])
    expect(line(["--scenarios", runs])).toBe("1 passed, 2 failed")
  })

  it("fails a run with no trace hash, and a file run on one store only", () => {
    expect(line(["--scenarios", tsv([["scenarios/a.yaml", "memory", 0, log(5, 0)]])])).toBe("0 passed, 2 failed")
    expect(line(["--scenarios", tsv([["scenarios/a.yaml", "memory", 0, log(5, 0, HASH_A)]])])).toBe("1 passed, 1 failed")
  })

  it("checks every scenario file on its own", () => {
    const runs = tsv([
      ["scenarios/a.yaml", "memory", 0, log(5, 0, HASH_A)],
      ["scenarios/a.yaml", "postgres", 0, log(5, 0, HASH_A)],
      ["scenarios/b.yaml", "memory", 0, log(3, 0, HASH_B)],
      ["scenarios/b.yaml", "postgres", 0, log(3, 0, HASH_A)]
    ])
    expect(line(["--scenarios", runs])).toBe("5 passed, 1 failed")
  })

  it("fails when no scenario ran (empty or missing results)", () => {
    expect(line(["--scenarios", file("empty.tsv", "")])).toBe("0 passed, 1 failed")
    expect(line(["--scenarios", join(dir, "none.tsv")])).toBe("0 passed, 1 failed")
  })

  it("counts checks and skips", () => {
    expect(line(["--check", "spec:gen:check=0", "--check", "mutation=1", "--skip", "mutation"])).toBe("1 passed, 1 failed, 1 skipped")
  })

  it("reads the CLI's output", () => {
    expect(parseScenarioLog(`  ok  1 a\n  FAIL  2 b\n1 passed, 1 failed\nreplay: npx sokoni …\ntrace hash ${HASH_A}\n`)).toEqual({
      passed: 1,
      failed: 1,
      hash: HASH_A
    })
    expect(parseScenarioLog("sokoni: boom\n")).toEqual({ passed: undefined, failed: undefined, hash: undefined })
  })

  it("as a command: prints the line last and exits 1 on a failure, 0 otherwise", () => {
    const script = join(import.meta.dirname, "..", "..", "scripts", "ci-summary.ts")
    const run = (args: ReadonlyArray<string>) => {
      try {
        return { out: execFileSync(process.execPath, [script, ...args], { encoding: "utf8" }), code: 0 }
      } catch (error) {
        const e = error as { stdout: string; status: number }
        return { out: e.stdout, code: e.status }
      }
    }
    const ok = run(["--vitest", `${report(4, 0)}=0`, "--scenarios", goodScenarios()])
    expect(ok.code).toBe(0)
    expect(ok.out.trim().split("\n").at(-1)).toBe("7 passed, 0 failed")
    const bad = run(["--vitest", `${report(4, 0)}=1`])
    expect(bad.code).toBe(1)
    expect(bad.out.trim().split("\n").at(-1)).toBe("4 passed, 1 failed")
    const unknown = run(["--bogus", "x"])
    expect(unknown.code).toBe(1)
    expect(unknown.out.trim().split("\n").at(-1)).toBe("0 passed, 1 failed")
  })
})

/** A vitest JSON report with named tests in one file: [full name, status]. */
const namedReport = (tests: ReadonlyArray<readonly [string, string]>) => {
  const count = (status: string) => tests.filter(([, s]) => s === status).length
  return file(
    "named.json",
    JSON.stringify({
      numPassedTests: count("passed"),
      numFailedTests: count("failed"),
      numPendingTests: count("skipped"),
      numTodoTests: 0,
      numFailedTestSuites: 0,
      testResults: [
        { name: join(process.cwd(), "test/x.test.ts"), status: "passed", assertionResults: tests.map(([fullName, status]) => ({ fullName, status })) }
      ]
    })
  )
}

describe("ci-summary: the PostgreSQL pass runs what the memory pass skipped", () => {
  const memoryPass = () =>
    namedReport([
      ["rules on memory", "passed"],
      ["postgres store (skipped: set DATABASE_URL to run) reads back", "skipped"],
      ["rules on postgres", "skipped"]
    ])

  it("counts a test skipped on memory and run on postgres once, as run, and leaves nothing skipped", () => {
    const postgresPass = namedReport([
      ["rules on memory", "skipped"],
      ["postgres store reads back", "passed"],
      ["rules on postgres", "passed"]
    ])
    expect(line(["--vitest", `${memoryPass()}=0`, "--vitest-subset", `${postgresPass}=0`])).toBe("3 passed, 0 failed")
  })

  it("still counts as skipped a test the subset did not run either", () => {
    const postgresPass = namedReport([
      ["postgres store reads back", "passed"],
      ["rules on postgres", "skipped"]
    ])
    expect(line(["--vitest", `${memoryPass()}=0`, "--vitest-subset", `${postgresPass}=0`])).toBe("2 passed, 0 failed, 1 skipped")
  })

  it("fails a subset that ran no test (a tag filter that matches nothing)", () => {
    const empty = namedReport([["rules on memory", "skipped"]])
    const t = summarise(["--vitest", `${memoryPass()}=0`, "--vitest-subset", `${empty}=0`])
    expect(t.failed).toBe(1)
    expect(t.notes).toContain(`FAIL ${empty}: the subset ran no test`)
  })

  it("counts the subset's failures and a crash with a clean report", () => {
    const failing = namedReport([["rules on postgres", "failed"]])
    expect(line(["--vitest", `${memoryPass()}=0`, "--vitest-subset", `${failing}=1`])).toBe("1 passed, 1 failed, 1 skipped")
    const clean = namedReport([["rules on postgres", "passed"]])
    expect(line(["--vitest", `${memoryPass()}=0`, "--vitest-subset", `${clean}=1`])).toBe("2 passed, 1 failed, 1 skipped")
  })
})

describe("ci-summary: phase times", () => {
  it("prints each phase's seconds and their total, before the closing line", () => {
    const phases = file("phases.tsv", "install\t41.2\nnpm test\t120.6\n")
    const t = summarise(["--vitest", `${report(1, 0)}=0`, "--phases", phases])
    expect(t.notes.filter((n) => n.startsWith("time "))).toEqual(["time install     41 s", "time npm test   121 s", "time total      162 s"])
    expect(finalLine(t)).toBe("1 passed, 0 failed")
  })
})
