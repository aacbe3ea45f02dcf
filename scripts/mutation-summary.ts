/**
 * Mutation score per folder from StrykerJS's JSON report (mutation-testing-report-schema), one line each, and the
 * gate: exits 1 when engine/app or engine/http is below 80 % or missing from the report, unless --report-only.
 *
 *   node scripts/mutation-summary.ts [docs/mutation/mutation.json] [--report-only] [--threshold 80]
 *
 * Score as Stryker computes it: detected (killed + timeout) / valid (detected + survived + no coverage); compile
 * and runtime errors and ignored mutants are not valid mutants.
 */
import { existsSync, readFileSync } from "node:fs"

export const GATED = ["engine/app", "engine/http"] as const

type Status = "Killed" | "Timeout" | "Survived" | "NoCoverage" | "CompileError" | "RuntimeError" | "Ignored" | "Pending"

export interface MutationReport {
  readonly files: Record<string, { readonly mutants: ReadonlyArray<{ readonly status: Status }> }>
}

export interface FolderScore {
  readonly folder: string
  readonly killed: number
  readonly timeout: number
  readonly survived: number
  readonly noCoverage: number
  readonly errors: number
  /** Percent, or undefined when the folder has no valid mutant. */
  readonly score: number | undefined
}

/** engine/app/x.ts → engine/app; engine/http/routes/x.ts → engine/http; scripts/x.ts → scripts. */
export const folderOf = (file: string) => {
  const parts = file.replaceAll("\\", "/").replace(/^\.\//, "").split("/")
  return parts.length <= 2 ? parts.slice(0, -1).join("/") || "." : parts.slice(0, 2).join("/")
}

export const scores = (report: MutationReport): Array<FolderScore> => {
  const folders = new Map<string, { killed: number; timeout: number; survived: number; noCoverage: number; errors: number }>()
  for (const [file, { mutants }] of Object.entries(report.files)) {
    const folder = folderOf(file)
    const f = folders.get(folder) ?? { killed: 0, timeout: 0, survived: 0, noCoverage: 0, errors: 0 }
    for (const { status } of mutants) {
      if (status === "Killed") f.killed++
      else if (status === "Timeout") f.timeout++
      else if (status === "Survived") f.survived++
      else if (status === "NoCoverage") f.noCoverage++
      else if (status === "CompileError" || status === "RuntimeError") f.errors++
    }
    folders.set(folder, f)
  }
  return [...folders]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([folder, f]) => {
      const detected = f.killed + f.timeout
      const valid = detected + f.survived + f.noCoverage
      return { folder, ...f, score: valid === 0 ? undefined : (100 * detected) / valid }
    })
}

export const formatScore = (s: FolderScore) =>
  `${s.folder.padEnd(14)} ${s.score === undefined ? "   n/a" : `${s.score.toFixed(2).padStart(6)}%`}  killed ${s.killed}, timeout ${s.timeout}, survived ${s.survived}, no coverage ${s.noCoverage}${s.errors > 0 ? `, errors ${s.errors}` : ""}`

/** The gate's verdict: the failures (empty when it passes). */
export const gate = (all: ReadonlyArray<FolderScore>, threshold: number): Array<string> =>
  GATED.flatMap((folder) => {
    const s = all.find((x) => x.folder === folder)
    if (s === undefined) return [`${folder}: not in the report`]
    if (s.score !== undefined && s.score < threshold) return [`${folder}: ${s.score.toFixed(2)}% is below ${threshold}%`]
    return []
  })

if (import.meta.main) {
  const args = process.argv.slice(2)
  const reportOnly = args.includes("--report-only")
  const at = args.indexOf("--threshold")
  const threshold = at >= 0 ? Number(args[at + 1]) : 80
  const file = args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--threshold") ?? "docs/mutation/mutation.json"
  if (!existsSync(file)) {
    console.log(`mutation-summary: no report at ${file} (run npm run mutate first)`)
    process.exit(reportOnly ? 0 : 1)
  }
  const all = scores(JSON.parse(readFileSync(file, "utf8")) as MutationReport)
  console.log(`mutation score by folder (${file})`)
  for (const s of all) console.log(formatScore(s))
  const failures = gate(all, threshold)
  for (const f of failures) console.log(`${reportOnly ? "below threshold (report only)" : "FAIL"}: ${f}`)
  process.exit(failures.length > 0 && !reportOnly ? 1 : 0)
}
