/**
 * Writes a run's reports into one directory, creating it: `report.xml` (JUnit), `report.ctrf.json` (CTRF) and
 * `report.html`. Owns the file names; the formats are junit.ts, ctrf.ts and html.ts.
 */
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { toCtrf } from "./ctrf.ts"
import { toHtml } from "./html.ts"
import { toJUnit } from "./junit.ts"
import type { RunReport } from "./model.ts"

export const REPORT_FILES = { junit: "report.xml", ctrf: "report.ctrf.json", html: "report.html" } as const

/** Writes the three reports into `dir` (created with its parents) and returns their paths. */
export const writeReports = async (report: RunReport, dir: string): Promise<ReadonlyArray<string>> => {
  await mkdir(dir, { recursive: true })
  const files: ReadonlyArray<readonly [string, string]> = [
    [join(dir, REPORT_FILES.junit), toJUnit(report)],
    [join(dir, REPORT_FILES.ctrf), `${JSON.stringify(toCtrf(report), null, 2)}\n`],
    [join(dir, REPORT_FILES.html), toHtml(report)]
  ]
  for (const [path, text] of files) await writeFile(path, text, "utf8")
  return files.map(([path]) => path)
}
