/**
 * The mutants a test has not killed yet, one line each, with the source line they change: the work list for writing
 * tests after a mutation batch (README, "Mutation testing").
 *
 *   node scripts/mutation-survivors.ts [--report docs/mutation/mutation.json] <file>...
 *
 * A line reads `S  12:7 ConditionalExpression | if (true) return`: S survived (covered by tests that stayed green), NC
 * no test covers it, then the source line as the mutant changes it (or the replacement and the original line, when the
 * mutant spans lines). Killed, timed-out and ignored mutants are left out.
 */
import { readFileSync } from "node:fs"

interface ReportMutant {
  readonly status: string
  readonly mutatorName: string
  readonly replacement?: string
  readonly location: {
    readonly start: { readonly line: number; readonly column: number }
    readonly end?: { readonly line: number; readonly column: number }
  }
}

export interface SurvivorReport {
  readonly files: Record<string, { readonly source: string; readonly mutants: ReadonlyArray<ReportMutant> }>
}

const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 3)}...` : text)

/** The survivors of `file` in source order, or a line saying the report does not hold it. */
export const survivorLines = (report: SurvivorReport, file: string): Array<string> => {
  const entry = report.files[file]
  if (entry === undefined) return [`${file}: not in the report`]
  const source = entry.source.split("\n")
  const open = entry.mutants
    .filter((m) => m.status === "Survived" || m.status === "NoCoverage")
    .toSorted((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column)
  return [
    `## ${file}: ${open.length} not killed`,
    ...open.map((m) => {
      const { line, column } = m.location.start
      const tag = m.status === "NoCoverage" ? "NC" : "S "
      const original = source[line - 1] ?? ""
      const end = m.location.end
      // Columns are 1-based; a mutant within one line is shown as that line mutated.
      if (end !== undefined && end.line === line && m.replacement !== undefined) {
        const mutated = original.slice(0, column - 1) + m.replacement + original.slice(end.column - 1)
        return `${tag} ${line}:${column} ${m.mutatorName} | ${clip(mutated.trim(), 160)}`
      }
      return `${tag} ${line}:${column} ${m.mutatorName} -> ${clip(JSON.stringify(m.replacement ?? ""), 80)} | ${clip(original.trim(), 110)}`
    })
  ]
}

if (import.meta.main) {
  const args = process.argv.slice(2)
  const at = args.indexOf("--report")
  const path = at >= 0 ? (args[at + 1] ?? "") : "docs/mutation/mutation.json"
  const files = args.filter((a, i) => a !== "--report" && (at < 0 || i !== at + 1))
  const report = JSON.parse(readFileSync(path, "utf8")) as SurvivorReport
  for (const file of files) console.log(survivorLines(report, file).join("\n"))
}
