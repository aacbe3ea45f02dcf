/**
 * Mutation testing in batches of modules, so a run that cannot finish in one sitting still leaves measured results
 * behind (E-270). A whole `npm run mutate` of engine/app and engine/http is thousands of mutants: hours on two cores.
 *
 *   node scripts/mutate-modules.ts [--batch 8] [--model-runs 30] [--concurrency N] [--dry] [--fresh] <file or glob>...
 *   node scripts/mutate-modules.ts --merge-only
 *
 * Interrupted (Ctrl-C, or SIGINT/SIGTERM to Stryker), a batch keeps the mutants it tested in docs/mutation/partial/
 * (committed) and the same command resumes it there, on this machine or another; a part is never scored.
 *
 * Each batch is one `stryker run --mutate <its files>` with its own incremental file under out/mutation/batches/,
 * so a rerun of the same batch reuses every result whose code and tests are unchanged (an interrupted batch: see
 * above; Stryker saves a partial incremental report on the signal). After every batch the batch reports are
 * merged over the committed report, the newest batch winning per file, into docs/mutation/mutation.json (the report `scripts/mutation-summary.ts` reads,
 * and the incremental file a later full `npm run mutate` starts from), and docs/mutation/summary.md lists the score of every
 * file and folder and which files of engine/app and engine/http no batch has measured yet.
 *
 * Static mutants (code run once when a module loads) are ignored: the mutation config shares one module graph
 * between test files (vitest.mutation.config.ts), so they could not be switched on per mutant.
 */
import { spawnSync } from "node:child_process"
import { existsSync, globSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type FolderScore, formatScore, GATED, type MutationReport, scores } from "./mutation-summary.ts"

const BATCHES = "out/mutation/batches"
const DOCS = "docs/mutation"
/**
 * Batches interrupted before every mutant was tested: committed, so the same command on any machine (a session's
 * clean checkout included) resumes where the interrupt left off instead of starting again. Never merged: a part of a
 * file's mutants is not that file's score.
 */
const PARTIAL = "docs/mutation/partial"

/** Stryker's report (mutation-testing-report-schema): the incremental file and the JSON reporter's share it. */
type Report = MutationReport & { readonly schemaVersion?: string; readonly thresholds?: unknown; readonly testFiles?: Record<string, unknown> }

const option = (args: ReadonlyArray<string>, name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}

/** Files of the gated folders, the universe a summary reports coverage against. */
const gatedFiles = () => GATED.flatMap((folder) => globSync(`${folder}/**/*.ts`)).sort()

interface TestDefinition {
  readonly id: string
  readonly name: string
}
interface TestFile {
  readonly tests: ReadonlyArray<TestDefinition>
}
type Mutant = Report["files"][string]["mutants"][number] & { readonly coveredBy?: ReadonlyArray<string>; readonly killedBy?: ReadonlyArray<string> }

/**
 * Merges the batch reports: for a file in several, the most recently written batch wins. Test ids are numbered by each
 * Stryker run on its own (the "12" of one batch is another test in the next), so every report's ids are renumbered
 * into one numbering keyed by test file and name, and each mutant's `coveredBy`/`killedBy` follows its own report's
 * numbering. Without that, a batch seeded from the merged report read other tests as a mutant's killers and covering
 * tests, and Stryker's incremental diff reused results on that word.
 */
export const merge = (reports: ReadonlyArray<Report>): Report => {
  const files: Record<string, Report["files"][string]> = {}
  const testFiles: Record<string, TestFile> = {}
  const ids = new Map<string, string>()
  const idOf = (file: string, name: string) => {
    const key = `${file}\u0000${name}`
    let id = ids.get(key)
    if (id === undefined) {
      id = String(ids.size)
      ids.set(key, id)
    }
    return id
  }
  for (const r of reports) {
    const local = new Map<string, string>()
    for (const [file, def] of Object.entries((r.testFiles ?? {}) as Record<string, TestFile>)) {
      const tests = new Map((testFiles[file]?.tests ?? []).map((t) => [t.name, t]))
      for (const t of def.tests) {
        const id = idOf(file, t.name)
        local.set(t.id, id)
        tests.set(t.name, { ...t, id })
      }
      testFiles[file] = { ...def, tests: [...tests.values()] }
    }
    // An id its own report does not define names no test: dropped rather than guessed.
    const renumber = (list: ReadonlyArray<string> | undefined) =>
      list?.flatMap((id) => {
        const mapped = local.get(id)
        return mapped === undefined ? [] : [mapped]
      })
    for (const [file, entry] of Object.entries(r.files)) {
      files[file] = {
        ...entry,
        mutants: (entry.mutants as ReadonlyArray<Mutant>).map((m) => ({
          ...m,
          ...(m.coveredBy === undefined ? {} : { coveredBy: renumber(m.coveredBy) }),
          ...(m.killedBy === undefined ? {} : { killedBy: renumber(m.killedBy) })
        }))
      }
    }
  }
  const first = reports[0]
  return { schemaVersion: first?.schemaVersion ?? "2", thresholds: first?.thresholds ?? { high: 90, low: 80 }, files, testFiles }
}

/**
 * The report narrowed to `files`. Stryker's incremental report keeps every file of the incremental file it started
 * from, mutated in that run or not; a batch keeps only its own files, so that merging batches (the newest wins per
 * file) never lets a batch's stale copy of another batch's file overwrite that file's newer result.
 */
export const only = (report: Report, files: ReadonlyArray<string>): Report => ({
  ...report,
  files: Object.fromEntries(Object.entries(report.files).filter(([file]) => files.includes(file)))
})

const fileScore = (file: string, report: Report): FolderScore => {
  const [s] = scores({ files: { [file]: report.files[file] ?? { mutants: [] } } })
  return { ...(s as FolderScore), folder: file }
}

/**
 * Stryker stopped by a signal: it exits 128 + the signal's number once it has saved its partial report (or dies of a
 * second signal). 0 and 1 are results (1: below the break threshold); other codes are failures to run.
 */
export const wasInterrupted = (run: { readonly status: number | null; readonly signal: string | null }) =>
  run.signal !== null || (run.status !== null && run.status > 128)

/** Mutants tested so far, per file, in an interrupted batch's report. */
export const partlyMeasured = (report: Report): Record<string, number> =>
  Object.fromEntries(Object.entries(report.files).map(([file, entry]) => [file, entry.mutants.filter((m) => m.status !== "Ignored").length]))

/**
 * Whether an interrupted batch's report holds tested mutants. Stopped in its dry run, Stryker writes a report with no
 * file: keeping that would overwrite the part an earlier interruption kept, and lose it.
 */
export const worthKeeping = (part: Report): boolean => Object.values(partlyMeasured(part)).some((n) => n > 0)

/** What an interruption kept, for the log: the mutants tested per file, or that nothing new was tested. */
/**
 * The report without the files that are no longer in the tree: a file moved or removed since it was measured would
 * otherwise keep counting in its folder's score, for code that is not there any more.
 */
export const withoutGone = (report: Report, exists: (file: string) => boolean): { readonly report: Report; readonly gone: Array<string> } => {
  const gone = Object.keys(report.files).filter((file) => !exists(file))
  return { report: { ...report, files: Object.fromEntries(Object.entries(report.files).filter(([file]) => exists(file))) }, gone: gone.sort() }
}

export const interruptionNote = (counts: Record<string, number>, partialFile: string, partialExists: boolean): string => {
  const tested = Object.entries(counts).filter(([, n]) => n > 0)
  if (tested.length === 0) {
    return `interrupted before a mutant was tested; ${partialExists ? `${partialFile} stays as it was` : "nothing to keep"}`
  }
  return `interrupted; mutants tested: ${tested.map(([file, n]) => `${file} ${n}`).join(", ")}; kept in ${partialFile}: the same command resumes`
}

export const summary = (
  report: Report,
  universe: ReadonlyArray<string>,
  when: string,
  partial: Record<string, number> = {},
  gone: ReadonlyArray<string> = []
) => {
  const measured = universe.filter((f) => report.files[f] !== undefined)
  const missing = universe.filter((f) => report.files[f] === undefined)
  const lines = [
    "# Mutation score, by batch (scripts/mutate-modules.ts)",
    "",
    `Merged ${when}: the batch reports under out/mutation/batches/ over the report committed before them. Static mutants and Effect.fn span names are ignored (E-270, E-273).`,
    `Measured: ${measured.length} of the ${universe.length} files of ${GATED.join(" and ")}.`,
    ...(gone.length === 0 ? [] : [`Left out: ${gone.length} files measured before that are no longer in the tree (moved or removed): ${gone.join(", ")}.`]),
    "",
    "## By folder (measured files only)",
    "",
    "```",
    ...scores(report).map(formatScore),
    "```",
    "",
    "## By file",
    "",
    "```",
    ...Object.keys(report.files)
      .sort()
      .map((f) => formatScore(fileScore(f, report))),
    "```",
    ""
  ]
  if (missing.length > 0)
    lines.push(
      "## Not yet measured",
      "",
      ...missing.map((f) => (partial[f] === undefined ? `- ${f}` : `- ${f} (interrupted after ${partial[f]} mutants; the batch resumes from ${PARTIAL}/)`)),
      ""
    )
  return lines.join("\n")
}

const readReport = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Report

const jsonFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith(".json"))
        .map((f) => join(dir, f))
    : []

const partialCounts = () => Object.assign({}, ...jsonFiles(PARTIAL).map((f) => partlyMeasured(readReport(f)))) as Record<string, number>

const mergeAll = () => {
  const names = jsonFiles(BATCHES).sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
  // The committed report is the base: it holds what batches run on other machines measured (batch files stay local).
  const committed = join(DOCS, "mutation.json")
  // With no batch here, the summary is still rewritten when a batch was interrupted (it lists how far each got).
  if (names.length === 0 && (jsonFiles(PARTIAL).length === 0 || !existsSync(committed))) return
  const base = existsSync(committed) ? [committed] : []
  const when = new Date(Math.max(...[...names, ...base].map((n) => statSync(n).mtimeMs))).toISOString()
  const { report: merged, gone } = withoutGone(merge([...base, ...names].map(readReport)), existsSync)
  mkdirSync(DOCS, { recursive: true })
  const json = JSON.stringify(merged)
  writeFileSync(join(DOCS, "mutation.json"), json)
  writeFileSync(join(DOCS, "summary.md"), summary(merged, gatedFiles(), when, partialCounts(), gone))
  for (const s of scores(merged)) console.log(formatScore(s))
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  if (args.includes("--merge-only")) {
    mergeAll()
    process.exit(0)
  }
  const batchSize = option(args, "--batch", 8)
  const modelRuns = option(args, "--model-runs", 30)
  // Stryker's test processes (the config's 2 by default): 1 on a machine shared with other work.
  const concurrency = option(args, "--concurrency", 0)
  const patterns = args.filter((a, i) => !a.startsWith("--") && !["--batch", "--model-runs", "--concurrency"].includes(args[i - 1] ?? ""))
  // In the order given (each glob's matches sorted): put the modules you most want measured first.
  const files = [...new Set(patterns.flatMap((p) => globSync(p).sort()))].filter((f) => f.endsWith(".ts"))
  const batches: Array<Array<string>> = []
  for (let i = 0; i < files.length; i += batchSize) batches.push(files.slice(i, i + batchSize))
  console.log(`mutate-modules: ${files.length} files in ${batches.length} batches of at most ${batchSize}; fast-check model runs ${modelRuns}`)
  mkdirSync(BATCHES, { recursive: true })
  // Ctrl-C reaches Stryker as well (one process group): this process outlives it, to keep the part it saved.
  process.on("SIGINT", () => console.log("mutate-modules: waiting for Stryker to save what it has tested"))
  for (const [n, batch] of batches.entries()) {
    const name = batch[0]?.replaceAll("/", "_").replace(/\.ts$/, "") ?? `batch-${n}`
    console.log(`\n[${n + 1}/${batches.length}] ${batch.join(" ")}`)
    if (args.includes("--dry")) continue
    // A batch never run here (a new machine keeps only what is committed) starts from the merged report, so the
    // results measured elsewhere are reused wherever code and tests are unchanged.
    const batchFile = join(BATCHES, `${name}.json`)
    const partialFile = join(PARTIAL, `${name}.json`)
    // --fresh measures every mutant again: for files whose committed results predate the test-id renumbering of
    // merge() (their killers and covering tests may name other tests, so an incremental reuse could be wrong).
    if (args.includes("--fresh")) rmSync(batchFile, { force: true })
    else if (existsSync(partialFile)) writeFileSync(batchFile, readFileSync(partialFile))
    else if (!existsSync(batchFile) && existsSync(join(DOCS, "mutation.json")))
      writeFileSync(batchFile, JSON.stringify(only(readReport(join(DOCS, "mutation.json")), batch)))
    const run = spawnSync(
      "npx",
      [
        "stryker",
        "run",
        "--mutate",
        batch.join(","),
        "--incrementalFile",
        batchFile,
        "--ignoreStatic",
        "--dryRunTimeoutMinutes",
        "40",
        "--reporters",
        "clear-text,progress",
        ...(concurrency > 0 ? ["--concurrency", String(concurrency)] : [])
      ],
      { stdio: "inherit", env: { ...process.env, SOKONI_MODEL_RUNS: String(modelRuns) } }
    )
    // Below the break threshold Stryker exits 1 with its report written: that is a result, not a failure to run.
    if (run.status !== 0 && run.status !== 1) console.log(`mutate-modules: stryker exited ${run.status ?? run.signal} on batch ${n + 1}`)
    // Interrupted (128 + SIGINT/SIGTERM/SIGHUP, or the signal itself): Stryker saved what it had tested. That part is
    // kept for the next run of this batch and stays out of the scores.
    if (wasInterrupted(run)) {
      if (existsSync(batchFile)) {
        const part = only(readReport(batchFile), batch)
        rmSync(batchFile)
        if (worthKeeping(part)) {
          mkdirSync(PARTIAL, { recursive: true })
          writeFileSync(partialFile, JSON.stringify(part))
        }
        console.log(`mutate-modules: ${interruptionNote(partlyMeasured(part), partialFile, existsSync(partialFile))}`)
      }
      mergeAll()
      process.exit(130)
    }
    rmSync(partialFile, { force: true })
    if (existsSync(batchFile)) writeFileSync(batchFile, JSON.stringify(only(readReport(batchFile), batch)))
    mergeAll()
  }
}
