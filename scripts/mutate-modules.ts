/**
 * Mutation testing in batches of modules, so a run that cannot finish in one sitting still leaves measured results
 * behind (E-270). A whole `npm run mutate` of engine/app and engine/http is thousands of mutants: hours on two cores.
 *
 *   node scripts/mutate-modules.ts [--batch 8] [--model-runs 30] [--dry] <file or glob>...
 *   node scripts/mutate-modules.ts --merge-only
 *
 * Each batch is one `stryker run --mutate <its files>` with its own incremental file under out/mutation/batches/,
 * so a rerun of the same batch reuses every result whose code and tests are unchanged, and an interrupted batch keeps
 * what it finished (Stryker saves a partial incremental report on SIGINT). After every batch the batch reports are
 * merged, newest first per file, into docs/mutation/mutation.json (the report `scripts/mutation-summary.ts` reads,
 * and the incremental file a later full `npm run mutate` starts from), and docs/mutation/summary.md lists the score of every
 * file and folder and which files of engine/app and engine/http no batch has measured yet.
 *
 * Static mutants (code run once when a module loads) are ignored: the mutation config shares one module graph
 * between test files (vitest.mutation.config.ts), so they could not be switched on per mutant.
 */
import { spawnSync } from "node:child_process"
import { copyFileSync, existsSync, globSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type FolderScore, formatScore, GATED, type MutationReport, scores } from "./mutation-summary.ts"

const BATCHES = "out/mutation/batches"
const DOCS = "docs/mutation"

/** Stryker's report (mutation-testing-report-schema): the incremental file and the JSON reporter's share it. */
type Report = MutationReport & { readonly schemaVersion?: string; readonly thresholds?: unknown; readonly testFiles?: Record<string, unknown> }

const option = (args: ReadonlyArray<string>, name: string, fallback: number) => {
  const at = args.indexOf(name)
  return at >= 0 ? Number(args[at + 1]) : fallback
}

/** Files of the gated folders, the universe a summary reports coverage against. */
const gatedFiles = () => GATED.flatMap((folder) => globSync(`${folder}/**/*.ts`)).sort()

/** Merges the batch reports: for a file in several, the most recently written batch wins. */
export const merge = (reports: ReadonlyArray<Report>): Report => {
  const files: Record<string, Report["files"][string]> = {}
  const testFiles: Record<string, unknown> = {}
  for (const r of reports) {
    Object.assign(files, r.files)
    Object.assign(testFiles, r.testFiles ?? {})
  }
  const first = reports[0]
  return { schemaVersion: first?.schemaVersion ?? "2", thresholds: first?.thresholds ?? { high: 90, low: 80 }, files, testFiles }
}

const fileScore = (file: string, report: Report): FolderScore => {
  const [s] = scores({ files: { [file]: report.files[file] ?? { mutants: [] } } })
  return { ...(s as FolderScore), folder: file }
}

export const summary = (report: Report, universe: ReadonlyArray<string>, when: string) => {
  const measured = universe.filter((f) => report.files[f] !== undefined)
  const missing = universe.filter((f) => report.files[f] === undefined)
  const lines = [
    "# Mutation score, by batch (scripts/mutate-modules.ts)",
    "",
    `Merged ${when} from the batch reports under out/mutation/batches/. Static mutants are ignored (E-270).`,
    `Measured: ${measured.length} of the ${universe.length} files of ${GATED.join(" and ")}.`,
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
  if (missing.length > 0) lines.push("## Not yet measured", "", ...missing.map((f) => `- ${f}`), "")
  return lines.join("\n")
}

const mergeAll = () => {
  if (!existsSync(BATCHES)) return
  const names = readdirSync(BATCHES)
    .filter((f) => f.endsWith(".json"))
    .map((f) => join(BATCHES, f))
    .sort((a, b) => statSync(a).mtimeMs - statSync(b).mtimeMs)
  if (names.length === 0) return
  const merged = merge(names.map((n) => JSON.parse(readFileSync(n, "utf8")) as Report))
  mkdirSync(DOCS, { recursive: true })
  const json = JSON.stringify(merged)
  writeFileSync(join(DOCS, "mutation.json"), json)
  const when = new Date(Math.max(...names.map((n) => statSync(n).mtimeMs))).toISOString()
  writeFileSync(join(DOCS, "summary.md"), summary(merged, gatedFiles(), when))
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
  const patterns = args.filter((a, i) => !a.startsWith("--") && !["--batch", "--model-runs"].includes(args[i - 1] ?? ""))
  // In the order given (each glob's matches sorted): put the modules you most want measured first.
  const files = [...new Set(patterns.flatMap((p) => globSync(p).sort()))].filter((f) => f.endsWith(".ts"))
  const batches: Array<Array<string>> = []
  for (let i = 0; i < files.length; i += batchSize) batches.push(files.slice(i, i + batchSize))
  console.log(`mutate-modules: ${files.length} files in ${batches.length} batches of at most ${batchSize}; fast-check model runs ${modelRuns}`)
  mkdirSync(BATCHES, { recursive: true })
  for (const [n, batch] of batches.entries()) {
    const name = batch[0]?.replaceAll("/", "_").replace(/\.ts$/, "") ?? `batch-${n}`
    console.log(`\n[${n + 1}/${batches.length}] ${batch.join(" ")}`)
    if (args.includes("--dry")) continue
    // A batch never run here (a new machine keeps only what is committed) starts from the merged report, so the
    // results measured elsewhere are reused wherever code and tests are unchanged.
    const batchFile = join(BATCHES, `${name}.json`)
    if (!existsSync(batchFile) && existsSync(join(DOCS, "mutation.json"))) copyFileSync(join(DOCS, "mutation.json"), batchFile)
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
        "clear-text,progress"
      ],
      { stdio: "inherit", env: { ...process.env, SOKONI_MODEL_RUNS: String(modelRuns) } }
    )
    // Below the break threshold Stryker exits 1 with its report written: that is a result, not a failure to run.
    if (run.status !== 0 && run.status !== 1) console.log(`mutate-modules: stryker exited ${run.status ?? run.signal} on batch ${n + 1}`)
    mergeAll()
  }
}
