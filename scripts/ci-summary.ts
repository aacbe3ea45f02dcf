/**
 * Adds up everything CI checked into the one closing line CI reads: "N passed, N failed[, N skipped]". Exits 1 when
 * anything failed, a report is missing, or a command exited non-zero without a failure in its report.
 *
 *   node scripts/ci-summary.ts \
 *     --vitest out/vitest-memory.json=EXIT --vitest out/vitest-postgres.json=EXIT \
 *     --scenarios out/scenarios/results.tsv \
 *     --check spec:gen:check=EXIT --check mutation=EXIT --skip "mutation (SOKONI_CI_MUTATION=0)"
 *
 * --vitest FILE=EXIT  a vitest JSON report and the exit status of the run that wrote it. Its tests count one each; a
 *                     missing report, or a non-zero exit with no failure in the report (a crash, an unhandled error),
 *                     counts one failure.
 * --vitest-subset FILE=EXIT
 *                     a run of a subset (CI's PostgreSQL pass, `--tags-filter=postgres`): its passed and failed tests
 *                     count, the tests it filtered out do not, and a test an earlier --vitest report skipped that this
 *                     one ran counts once, as run. A subset that ran no test is a failure.
 * --phases TSV        one line per CI phase: name and seconds (tab-separated); printed as a table before the total.
 * --scenarios TSV     one line per scenario run: file, store, exit status, log path (tab-separated). The log is the
 *                     CLI's output ("N passed, N failed" and "trace hash <hex>" last). Each run counts one (passes when
 *                     it exited 0 with no failed step and printed a hash); each scenario file counts one more for
 *                     "every store gave the same trace hash". No scenario at all is a failure.
 * --check NAME=EXIT   any other step: passes when EXIT is 0.
 * --skip NAME         a step that was deliberately not run: counted as skipped.
 */
import { existsSync, readFileSync } from "node:fs"
import { relative } from "node:path"

export interface Tally {
  passed: number
  failed: number
  skipped: number
  readonly notes: Array<string>
  /** Tests skipped by the --vitest reports so far, by file and name: a later subset run may run them. */
  readonly skippedTests?: Set<string>
}

interface VitestReport {
  readonly numPassedTests: number
  readonly numFailedTests: number
  readonly numPendingTests: number
  readonly numTodoTests: number
  readonly numFailedTestSuites: number
  readonly testResults?: ReadonlyArray<{
    readonly name: string
    readonly status?: string
    readonly message?: string
    readonly assertionResults?: ReadonlyArray<{
      readonly fullName: string
      readonly status: string
      readonly failureMessages?: ReadonlyArray<string>
    }>
  }>
}

/** The first non-empty line of a failure message, short enough for one line of CI output. */
const firstLine = (message: string | undefined): string => {
  const line =
    (message ?? "")
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "(no message)"
  return line.length > 200 ? `${line.slice(0, 197)}...` : line
}

/** Names every failed test (file > test: first line of its error) and every file that failed to load, so a failure
 * that does not happen again on a rerun can still be read in CI's tail. */
const failedTestNotes = (r: VitestReport): Array<string> =>
  (r.testResults ?? []).flatMap((suite) => {
    const where = relative(process.cwd(), suite.name)
    const tests = (suite.assertionResults ?? []).filter((a) => a.status === "failed")
    if (tests.length === 0 && suite.status === "failed") return [`FAIL   ${where}: ${firstLine(suite.message)}`]
    return tests.map((a) => `FAIL   ${where} > ${a.fullName}: ${firstLine(a.failureMessages?.[0])}`)
  })

/** Splits "left=right" at the last "=" (paths may hold "="; exit codes do not). */
const pair = (arg: string): [string, number] => {
  const at = arg.lastIndexOf("=")
  const code = at < 0 ? Number.NaN : Number(arg.slice(at + 1))
  return [at < 0 ? arg : arg.slice(0, at), code]
}

const exitOk = (code: number) => code === 0

export const addVitest = (t: Tally, file: string, exit: number): void => {
  if (!existsSync(file)) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: missing test report (the run crashed; exit ${exit})`)
    return
  }
  let r: VitestReport
  try {
    r = JSON.parse(readFileSync(file, "utf8")) as VitestReport
  } catch (error) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: unreadable test report (${(error as Error).message})`)
    return
  }
  const failedHere = r.numFailedTests + (r.numFailedTests === 0 ? r.numFailedTestSuites : 0)
  for (const key of testKeys(r, isSkipped)) t.skippedTests?.add(key)
  t.passed += r.numPassedTests
  t.failed += failedHere
  t.skipped += r.numPendingTests + r.numTodoTests
  t.notes.push(
    `${failedHere > 0 ? "FAIL" : "ok  "} ${file}: ${r.numPassedTests} passed, ${failedHere} failed, ${r.numPendingTests + r.numTodoTests} skipped (exit ${exit})`
  )
  t.notes.push(...failedTestNotes(r))
  if (!exitOk(exit) && failedHere === 0) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: vitest exited ${exit} but its report counts no failure (unhandled error or crash; see its output above)`)
  }
}

const isSkipped = (status: string) => status === "skipped" || status === "pending" || status === "todo"
const ran = (status: string) => status === "passed" || status === "failed"

/**
 * "file > full name" of the tests of `r` whose status matches. A suite skipped for want of DATABASE_URL says so in its
 * name ("postgres store (skipped: set DATABASE_URL to run)"), which the run that has it does not: that note is dropped.
 */
export const testKeys = (r: VitestReport, status: (s: string) => boolean): Array<string> =>
  (r.testResults ?? []).flatMap((suite) =>
    (suite.assertionResults ?? [])
      .filter((a) => status(a.status))
      .map((a) => `${relative(process.cwd(), suite.name)} > ${a.fullName.replace(/ \((?:skipped:[^)]*|seed \d+)\)/g, "")}`)
  )

/** A subset run (see --vitest-subset): counts what it ran; what it ran of the earlier skips is no longer skipped. */
export const addVitestSubset = (t: Tally, file: string, exit: number): void => {
  if (!existsSync(file)) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: missing test report (the run crashed; exit ${exit})`)
    return
  }
  const r = JSON.parse(readFileSync(file, "utf8")) as VitestReport
  const failedHere = r.numFailedTests + (r.numFailedTests === 0 ? r.numFailedTestSuites : 0)
  const ranHere = testKeys(r, ran)
  const nowRun = ranHere.filter((key) => t.skippedTests?.delete(key) === true).length
  t.passed += r.numPassedTests
  t.failed += failedHere
  t.skipped -= Math.min(t.skipped, nowRun)
  t.notes.push(
    `${failedHere > 0 ? "FAIL" : "ok  "} ${file}: ${r.numPassedTests} passed, ${failedHere} failed (exit ${exit}); ${nowRun} of them skipped by the earlier pass`
  )
  t.notes.push(...failedTestNotes(r))
  if (ranHere.length === 0) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: the subset ran no test`)
  } else if (!exitOk(exit) && failedHere === 0) {
    t.failed += 1
    t.notes.push(`FAIL ${file}: vitest exited ${exit} but its report counts no failure (unhandled error or crash; see its output above)`)
  }
}

/** The phase table: each phase's seconds, and the total. */
export const phaseTable = (tsv: string): Array<string> => {
  const rows = readFileSync(tsv, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [name = "", seconds = "0"] = line.split("\t")
      return [name, Number(seconds)] as const
    })
  const width = Math.max(5, ...rows.map(([name]) => name.length))
  const total = rows.reduce((sum, [, seconds]) => sum + seconds, 0)
  return [...rows, ["total", total] as const].map(([name, seconds]) => `${name.padEnd(width)} ${String(Math.round(seconds)).padStart(5)} s`)
}

export interface ScenarioRun {
  readonly file: string
  readonly store: string
  readonly exit: number
  readonly passed: number | undefined
  readonly failed: number | undefined
  readonly hash: string | undefined
}

/** Reads the CLI's output: the last "N passed, N failed" and the last "trace hash <hex>". */
export const parseScenarioLog = (text: string): Pick<ScenarioRun, "passed" | "failed" | "hash"> => {
  const counts = [...text.matchAll(/^(\d+) passed, (\d+) failed\s*$/gm)].at(-1)
  const hash = [...text.matchAll(/^trace hash ([0-9a-f]{64})\s*$/gm)].at(-1)?.[1]
  return { passed: counts ? Number(counts[1]) : undefined, failed: counts ? Number(counts[2]) : undefined, hash }
}

export const readScenarioRuns = (tsv: string): Array<ScenarioRun> =>
  readFileSync(tsv, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      const [file = "", store = "", exit = "", log = ""] = line.split("\t")
      const parsed = existsSync(log) ? parseScenarioLog(readFileSync(log, "utf8")) : { passed: undefined, failed: undefined, hash: undefined }
      return { file, store, exit: Number(exit), ...parsed }
    })

export const addScenarios = (t: Tally, runs: ReadonlyArray<ScenarioRun>): void => {
  if (runs.length === 0) {
    t.failed += 1
    t.notes.push("FAIL scenarios: none ran")
    return
  }
  const byFile = new Map<string, Array<ScenarioRun>>()
  for (const run of runs) byFile.set(run.file, [...(byFile.get(run.file) ?? []), run])
  for (const [file, fileRuns] of byFile) {
    for (const run of fileRuns) {
      const problem = !exitOk(run.exit)
        ? `exited ${run.exit}`
        : run.failed === undefined
          ? 'no "N passed, N failed" line'
          : run.failed > 0
            ? `${run.failed} step(s) failed`
            : run.passed === 0
              ? "no step ran"
              : run.hash === undefined
                ? "no trace hash"
                : undefined
      if (problem === undefined) t.passed += 1
      else t.failed += 1
      t.notes.push(`${problem ? "FAIL" : "ok  "} scenario ${file} on ${run.store}: ${problem ?? `${run.passed} steps, trace hash ${run.hash}`}`)
    }
    const hashes = new Set(fileRuns.map((r) => r.hash ?? "(none)"))
    const same = fileRuns.length >= 2 && hashes.size === 1 && !hashes.has("(none)")
    if (same) t.passed += 1
    else t.failed += 1
    t.notes.push(
      `${same ? "ok  " : "FAIL"} scenario ${file}: ${fileRuns.length < 2 ? "ran on fewer than two stores" : same ? "one trace hash on every store" : `trace hashes differ (${fileRuns.map((r) => `${r.store} ${r.hash ?? "(none)"}`).join(", ")})`}`
    )
  }
}

export const addCheck = (t: Tally, name: string, exit: number): void => {
  if (exitOk(exit)) t.passed += 1
  else t.failed += 1
  t.notes.push(`${exitOk(exit) ? "ok  " : "FAIL"} ${name}${exitOk(exit) ? "" : ` (exit ${exit})`}`)
}

export const addSkip = (t: Tally, name: string): void => {
  t.skipped += 1
  t.notes.push(`skip ${name}`)
}

/** Passes first, failures last: the end of CI's output is what gets read, and it should name what failed. */
export const orderedNotes = (notes: ReadonlyArray<string>): Array<string> => [
  ...notes.filter((n) => !n.startsWith("FAIL")),
  ...notes.filter((n) => n.startsWith("FAIL"))
]

export const finalLine = (t: Tally) => `${t.passed} passed, ${t.failed} failed${t.skipped > 0 ? `, ${t.skipped} skipped` : ""}`

/** Runs the command line; returns the tally (the caller prints and exits). */
export const summarise = (args: ReadonlyArray<string>): Tally => {
  const t: Tally = { passed: 0, failed: 0, skipped: 0, notes: [], skippedTests: new Set() }
  for (let i = 0; i < args.length; i++) {
    const flag = args[i]
    const value = args[i + 1]
    if (value === undefined) throw new Error(`ci-summary: ${flag} needs a value`)
    i++
    if (flag === "--vitest") addVitest(t, ...pair(value))
    else if (flag === "--vitest-subset") addVitestSubset(t, ...pair(value))
    else if (flag === "--phases") {
      if (existsSync(value)) t.notes.push(...phaseTable(value).map((line) => `time ${line}`))
    } else if (flag === "--scenarios") {
      if (existsSync(value)) addScenarios(t, readScenarioRuns(value))
      else addScenarios(t, [])
    } else if (flag === "--check") addCheck(t, ...pair(value))
    else if (flag === "--skip") addSkip(t, value)
    else throw new Error(`ci-summary: unknown argument ${flag}`)
  }
  return t
}

if (import.meta.main) {
  let t: Tally
  try {
    t = summarise(process.argv.slice(2))
  } catch (error) {
    console.log((error as Error).message)
    t = { passed: 0, failed: 1, skipped: 0, notes: [] }
  }
  console.log("\n== summary")
  for (const note of orderedNotes(t.notes)) console.log(note)
  const neverRun = [...(t.skippedTests ?? [])]
  if (neverRun.length > 0 && neverRun.length <= 20) for (const key of neverRun) console.log(`skip   ${key}`)
  console.log(finalLine(t))
  process.exit(t.failed > 0 ? 1 : 0)
}
