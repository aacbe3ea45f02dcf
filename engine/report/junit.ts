/**
 * JUnit XML for CI systems (GitLab, Jenkins, GitHub test reporters): one <testsuite> per suite, one <testcase> per
 * check, <failure> or <skipped> when it did not pass; message, score, reproducer, replay and timeline go into the
 * failure text and <system-out>. Owns the XML text only (engine/report/write.ts writes the file).
 */
import type { CheckResult, RunReport, TimelineEntry } from "./model.ts"
import { totalsOf } from "./model.ts"
import { scoreOf, suitesOf } from "./score.ts"

// XML 1.0 forbids most control characters even when escaped; a receiver's answer could carry any of them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: removing them is the point
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g

/** Escapes text for an XML attribute value or element content. */
export const xmlEscape = (text: string): string =>
  text.replace(NOT_XML, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;")

const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3)

const timelineText = (timeline: ReadonlyArray<TimelineEntry>) => timeline.map((t) => `${t.at} ${t.kind} ${t.text}`).join("\n")

/** Everything a reader needs beyond pass/fail, as plain lines (the failure body and system-out). */
const detailsOf = (check: CheckResult): string => {
  const lines: Array<string> = []
  if (check.message !== undefined) lines.push(check.message)
  if (check.maxScore !== undefined) lines.push(`score ${check.score ?? 0}/${check.maxScore}`)
  if (check.reproducer !== undefined) lines.push(`reproduce: ${check.reproducer}`)
  if (check.replay !== undefined) lines.push(`replay: ${check.replay}`)
  if (check.timeline !== undefined && check.timeline.length > 0) lines.push("timeline:", timelineText(check.timeline))
  return lines.join("\n")
}

const testcase = (check: CheckResult): string => {
  const attrs = `name="${xmlEscape(check.name)}" classname="${xmlEscape(check.operation ?? check.suite)}" time="${seconds(check.durationMs)}"`
  const details = detailsOf(check)
  const inner: Array<string> = []
  if (check.status === "failed") {
    inner.push(`      <failure message="${xmlEscape(check.message ?? "failed")}" type="failed">${xmlEscape(details)}</failure>`)
  } else if (check.status === "skipped") {
    inner.push(`      <skipped message="${xmlEscape(check.message ?? "skipped")}"/>`)
  }
  if (details !== "") inner.push(`      <system-out>${xmlEscape(details)}</system-out>`)
  return inner.length === 0 ? `    <testcase ${attrs}/>` : `    <testcase ${attrs}>\n${inner.join("\n")}\n    </testcase>`
}

const property = (name: string, value: string) => `      <property name="${xmlEscape(name)}" value="${xmlEscape(value)}"/>`

/** The report as a JUnit XML document. */
export const toJUnit = (report: RunReport): string => {
  const totals = totalsOf(report.checks)
  const total = report.checks.reduce((sum, c) => sum + c.durationMs, 0)
  const score = scoreOf(report.checks)
  const properties = [
    property("tool", report.tool),
    property("seed", String(report.seed)),
    property("target", report.target),
    ...(score === undefined ? [] : [property("score", `${score.score}/${score.maxScore}`)])
  ]
  const suites = suitesOf(report).map((group) =>
    [
      `  <testsuite name="${xmlEscape(group.suite)}" tests="${group.checks.length}" failures="${group.totals.failed}" errors="0" skipped="${group.totals.skipped}" time="${seconds(group.durationMs)}" timestamp="${xmlEscape(report.startedAt)}">`,
      "    <properties>",
      ...properties.map((p) => `  ${p}`),
      "    </properties>",
      ...group.checks.map(testcase),
      "  </testsuite>"
    ].join("\n")
  )
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${xmlEscape(report.tool)}" tests="${report.checks.length}" failures="${totals.failed}" errors="0" skipped="${totals.skipped}" time="${seconds(total)}">`,
    ...suites,
    "</testsuites>",
    ""
  ].join("\n")
}
