/**
 * CTRF JSON (Common Test Report Format, https://ctrf.io): `reportFormat`, `specVersion` and `results` with the tool,
 * a summary (counts, start and stop in epoch milliseconds) and one test per check. What CTRF has no field for
 * (operation, score, reproducer, replay) goes into each test's `extra`; the timeline into `stdout`, one line each.
 * Owns the object only (engine/report/write.ts writes the file).
 */
import type { CheckResult, RunReport } from "./model.ts"
import { totalsOf } from "./model.ts"
import { epochMsOf, scoreOf, suitesOf } from "./score.ts"

export const CTRF_SPEC_VERSION = "0.0.0"

export interface CtrfTest {
  readonly name: string
  readonly status: "passed" | "failed" | "skipped" | "pending" | "other"
  readonly duration: number
  readonly suite: ReadonlyArray<string>
  readonly message?: string
  readonly trace?: string
  readonly stdout?: ReadonlyArray<string>
  readonly extra?: Readonly<Record<string, unknown>>
}

export interface CtrfReport {
  readonly reportFormat: "CTRF"
  readonly specVersion: string
  readonly timestamp: string
  readonly generatedBy: string
  readonly results: {
    readonly tool: { readonly name: string; readonly extra: Readonly<Record<string, unknown>> }
    readonly summary: {
      readonly tests: number
      readonly passed: number
      readonly failed: number
      readonly skipped: number
      readonly pending: number
      readonly other: number
      readonly suites: number
      readonly start: number
      readonly stop: number
      readonly duration: number
      readonly extra?: Readonly<Record<string, unknown>>
    }
    readonly tests: ReadonlyArray<CtrfTest>
    readonly extra: Readonly<Record<string, unknown>>
  }
}

const testOf = (check: CheckResult): CtrfTest => {
  const extra: Record<string, unknown> = {}
  if (check.operation !== undefined) extra.operation = check.operation
  if (check.maxScore !== undefined) {
    extra.score = check.score ?? 0
    extra.maxScore = check.maxScore
  }
  if (check.reproducer !== undefined) extra.reproducer = check.reproducer
  if (check.replay !== undefined) extra.replay = check.replay
  return {
    name: check.name,
    status: check.status,
    duration: Math.max(0, Math.round(check.durationMs)),
    suite: [check.suite],
    ...(check.message === undefined ? {} : { message: check.message }),
    ...(check.reproducer === undefined ? {} : { trace: check.reproducer }),
    ...(check.timeline === undefined || check.timeline.length === 0 ? {} : { stdout: check.timeline.map((t) => `${t.at} ${t.kind} ${t.text}`) }),
    ...(Object.keys(extra).length === 0 ? {} : { extra })
  }
}

/** The report as a CTRF document (serialise with JSON.stringify). */
export const toCtrf = (report: RunReport): CtrfReport => {
  const totals = totalsOf(report.checks)
  const start = epochMsOf(report.startedAt)
  const stop = Math.max(start, epochMsOf(report.finishedAt))
  const score = scoreOf(report.checks)
  const words = report.tool.split(" ").filter((w) => w !== "")
  const firstFlag = words.findIndex((w) => w.startsWith("-"))
  const toolName = (firstFlag < 0 ? words : words.slice(0, firstFlag)).join(" ") || "sokoni"
  return {
    reportFormat: "CTRF",
    specVersion: CTRF_SPEC_VERSION,
    timestamp: report.finishedAt,
    generatedBy: "sokoni",
    results: {
      tool: { name: toolName, extra: { command: report.tool } },
      summary: {
        tests: report.checks.length,
        passed: totals.passed,
        failed: totals.failed,
        skipped: totals.skipped,
        pending: 0,
        other: 0,
        suites: suitesOf(report).length,
        start,
        stop,
        duration: stop - start,
        ...(score === undefined ? {} : { extra: score })
      },
      tests: report.checks.map(testOf),
      extra: { seed: report.seed, target: report.target }
    }
  }
}
