/**
 * Adds up vitest JSON reports (and extra CI checks) into the one closing line CI reads:
 * "N passed, N failed[, N skipped]". Exits non-zero when anything failed or a report is missing.
 */
import { existsSync, readFileSync } from "node:fs"

const args = process.argv.slice(2)
const extraFailures = Number(args.at(-1) ?? "0")
const reports = args.slice(0, -1)
let passed = 0
let failed = extraFailures > 0 ? 1 : 0
let skipped = 0
for (const file of reports) {
  if (!existsSync(file)) {
    console.log(`missing test report ${file} (the test run crashed)`)
    failed += 1
    continue
  }
  const r = JSON.parse(readFileSync(file, "utf8")) as {
    numPassedTests: number
    numFailedTests: number
    numPendingTests: number
    numTodoTests: number
    numFailedTestSuites: number
  }
  passed += r.numPassedTests
  failed += r.numFailedTests + (r.numFailedTests === 0 ? r.numFailedTestSuites : 0)
  skipped += r.numPendingTests + r.numTodoTests
  console.log(`${file}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`)
}
if (extraFailures > 0) console.log("scenario replay: memory and postgres trace hashes differ (counted as 1 failure)")
console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`)
process.exit(failed > 0 ? 1 : 0)
