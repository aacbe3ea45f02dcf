/**
 * One self-contained HTML page a person reads: inline CSS, no script, no external asset. Totals (and the score of
 * graded checks), a table of checks by suite and operation, then per check that did not simply pass (and every
 * check with details) its message, reproducer, replay command and timeline. Every interpolated string is escaped.
 * Owns the page's text only (engine/report/write.ts writes the file).
 */
import type { CheckResult, Coverage, RunReport } from "./model.ts"
import { totalsOf } from "./model.ts"
import { scoreOf, suitesOf } from "./score.ts"

/** Escapes text for HTML element content and double- or single-quoted attribute values. */
export const htmlEscape = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const e = htmlEscape

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1d2330;background:#fff}
h1{font-size:1.4rem;margin:0 0 .3rem}h2{font-size:1.1rem;margin:2rem 0 .5rem}h3{font-size:1rem;margin:1.2rem 0 .3rem}
.meta{color:#5b6475;margin:.1rem 0}.totals span{display:inline-block;margin:.6rem .8rem .6rem 0;padding:.25rem .6rem;border-radius:4px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}th,td{text-align:left;padding:.3rem .5rem;border-bottom:1px solid #e3e6ec;vertical-align:top}
th{background:#f4f6f9}.passed{background:#e5f6ea;color:#145a2a}.failed{background:#fde8e8;color:#8a1c1c}.skipped{background:#f1f1f1;color:#555}
td.status{font-weight:600;white-space:nowrap}pre{background:#f6f8fa;padding:.5rem;overflow-x:auto;white-space:pre-wrap;word-break:break-all;margin:.3rem 0}
.detail{border-left:4px solid #e3e6ec;padding:.1rem 0 .1rem .8rem;margin:1rem 0}.detail.failed{border-color:#d64545;background:none;color:inherit}
.detail.skipped{border-color:#aaa;background:none;color:inherit}.detail.passed{border-color:#3aa55d;background:none;color:inherit}
`.trim()

const anchorOf = (index: number) => `check-${index + 1}`

const hasDetails = (check: CheckResult) =>
  check.message !== undefined || check.reproducer !== undefined || check.replay !== undefined || (check.timeline?.length ?? 0) > 0

const scoreCell = (check: CheckResult) => (check.maxScore === undefined ? "" : `${check.score ?? 0}/${check.maxScore}`)

const detailOf = (check: CheckResult, index: number): string => {
  const parts = [`<div class="detail ${e(check.status)}" id="${anchorOf(index)}">`, `<h3>${e(check.suite)}: ${e(check.name)} (${e(check.status)})</h3>`]
  if (check.operation !== undefined) parts.push(`<p class="meta">operation ${e(check.operation)}</p>`)
  if (check.maxScore !== undefined) parts.push(`<p class="meta">score ${e(scoreCell(check))}</p>`)
  if (check.message !== undefined) parts.push(`<p>${e(check.message)}</p>`)
  if (check.reproducer !== undefined) parts.push(`<p class="meta">Reproduce</p><pre>${e(check.reproducer)}</pre>`)
  if (check.replay !== undefined) parts.push(`<p class="meta">Replay</p><pre>${e(check.replay)}</pre>`)
  if (check.timeline !== undefined && check.timeline.length > 0) {
    parts.push(
      `<table><thead><tr><th>at</th><th>kind</th><th>what</th></tr></thead><tbody>`,
      ...check.timeline.map((t) => `<tr><td>${e(t.at)}</td><td>${e(t.kind)}</td><td>${e(t.text)}</td></tr>`),
      `</tbody></table>`
    )
  }
  parts.push(`</div>`)
  return parts.join("\n")
}

/** The coverage section: operations checked (and how), then the order, KYC and wallet transitions seen. */
const coverageOf = (coverage: Coverage): string => {
  const ops = coverage.operations
  const checked = ops.filter((o) => o.passed + o.failed + o.skipped > 0).length
  const green = ops.filter((o) => o.passed > 0 && o.failed === 0).length
  const seen = coverage.transitions.filter((t) => t.seen).length
  const opRows = ops.map((o) => {
    const status = o.failed > 0 ? "failed" : o.passed > 0 ? "passed" : "skipped"
    return `<tr><td>${e(o.operation)}</td><td class="status ${status}">${o.passed}</td><td>${o.failed}</td><td>${o.skipped}</td></tr>`
  })
  const trRows = coverage.transitions.map(
    (t) =>
      `<tr><td>${e(t.machine)}</td><td>${e(t.transition)}</td><td>${e(t.event)}</td><td class="status ${t.seen ? "passed" : "skipped"}">${t.seen ? "seen" : "not seen"}</td></tr>`
  )
  return [
    `<h2>Coverage</h2>`,
    `<p class="meta">${checked} of ${ops.length} operations checked, ${green} with every check passed; ${seen} of ${coverage.transitions.length} order, KYC and wallet transitions seen</p>`,
    `<h3>State transitions</h3>`,
    `<table><thead><tr><th>machine</th><th>transition</th><th>event</th><th>seen</th></tr></thead><tbody>`,
    ...trRows,
    `</tbody></table>`,
    `<h3>Operations</h3>`,
    `<table><thead><tr><th>operation</th><th>passed</th><th>failed</th><th>skipped</th></tr></thead><tbody>`,
    ...opRows,
    `</tbody></table>`
  ].join("\n")
}

/** The report as one HTML page. */
export const toHtml = (report: RunReport): string => {
  const totals = totalsOf(report.checks)
  const score = scoreOf(report.checks)
  const graded = score !== undefined
  const indexOf = new Map(report.checks.map((c, i) => [c, i] as const))
  const rows = suitesOf(report).flatMap((group) =>
    group.checks.map((check) => {
      const index = indexOf.get(check) ?? 0
      const name = hasDetails(check) ? `<a href="#${anchorOf(index)}">${e(check.name)}</a>` : e(check.name)
      return `<tr><td>${e(check.suite)}</td><td>${e(check.operation ?? "")}</td><td>${name}</td><td class="status ${e(check.status)}">${e(check.status)}</td>${graded ? `<td>${e(scoreCell(check))}</td>` : ""}<td>${Math.round(check.durationMs)} ms</td></tr>`
    })
  )
  const details = report.checks.map((check, index) => (hasDetails(check) ? detailOf(check, index) : "")).filter((d) => d !== "")
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(report.tool)}: ${totals.failed === 0 ? "passed" : `${totals.failed} failed`}</title>
<style>${STYLE}</style>
</head>
<body>
<h1>${e(report.tool)}</h1>
<p class="meta">target ${e(report.target)} · seed ${e(String(report.seed))} · ${e(report.startedAt)} to ${e(report.finishedAt)}</p>
${(report.notes ?? []).map((n) => `<p class="note">${e(n)}</p>`).join("\n")}
<p class="totals"><span class="passed">${totals.passed} passed</span><span class="failed">${totals.failed} failed</span><span class="skipped">${totals.skipped} skipped</span>${graded ? `<span>score ${score.score}/${score.maxScore}</span>` : ""}</p>
${report.coverage === undefined ? "" : coverageOf(report.coverage)}
<h2>Checks</h2>
<table>
<thead><tr><th>suite</th><th>operation</th><th>check</th><th>status</th>${graded ? "<th>score</th>" : ""}<th>time</th></tr></thead>
<tbody>
${rows.join("\n")}
</tbody>
</table>
${details.length === 0 ? "" : `<h2>Details</h2>\n${details.join("\n")}`}
</body>
</html>
`
}
