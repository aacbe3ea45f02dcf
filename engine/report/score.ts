/**
 * What the writers say about a run as a whole: totals by status, the score of graded checks, the suites in first-seen
 * order. Pure functions of a RunReport (engine/report/model.ts). Owns no formatting.
 */
import { type CheckResult, type RunReport, type Totals, totalsOf } from "./model.ts"

/** Points earned and available over the checks that carry a score; undefined when none does. */
export const scoreOf = (checks: ReadonlyArray<CheckResult>): { readonly score: number; readonly maxScore: number } | undefined => {
  const graded = checks.filter((c) => c.maxScore !== undefined)
  if (graded.length === 0) return undefined
  return {
    score: graded.reduce((sum, c) => sum + (c.score ?? 0), 0),
    maxScore: graded.reduce((sum, c) => sum + (c.maxScore ?? 0), 0)
  }
}

export interface SuiteGroup {
  readonly suite: string
  readonly checks: ReadonlyArray<CheckResult>
  readonly totals: Totals
  readonly durationMs: number
}

/** The checks grouped by suite, suites in the order they first appear (the order the run made them). */
export const suitesOf = (report: RunReport): ReadonlyArray<SuiteGroup> => {
  const order: Array<string> = []
  const bySuite = new Map<string, Array<CheckResult>>()
  for (const check of report.checks) {
    let list = bySuite.get(check.suite)
    if (list === undefined) {
      list = []
      bySuite.set(check.suite, list)
      order.push(check.suite)
    }
    list.push(check)
  }
  return order.map((suite) => {
    const checks = bySuite.get(suite) ?? []
    return { suite, checks, totals: totalsOf(checks), durationMs: checks.reduce((sum, c) => sum + c.durationMs, 0) }
  })
}

/** Milliseconds since the epoch of an ISO instant, 0 when it does not parse (a writer never throws on a bad date). */
export const epochMsOf = (iso: string): number => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? 0 : ms
}
