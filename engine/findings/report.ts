/**
 * The findings as a person reads them: `sokoni findings` prints this, and `serve` prints it when it stops. Pure text
 * from the `GET /_sim/findings` answer; the order is the answer's (oldest first seen first).
 */
import type { Finding } from "./findings.ts"

export interface FindingsAnswer {
  readonly dialect: string
  readonly findings: ReadonlyArray<Finding>
  readonly dropped: number
}

/** Lines to print: a heading, then per finding its partner, operation, count and kind, and its sentence below. */
export const findingsReport = (answer: FindingsAnswer): ReadonlyArray<string> => {
  const { dialect, findings, dropped } = answer
  if (findings.length === 0) return [`findings (dialect ${dialect}): none`]
  const lines = [`findings (dialect ${dialect}): ${findings.length}, what clients relied on or would meet under the other dialect (GET /_sim/findings)`]
  for (const f of findings) {
    lines.push(`  ${f.partner ?? "(no partner)"}  ${f.operation}  x${f.count}  ${f.kind}  (first ${f.firstAt}, last ${f.lastAt})`)
    lines.push(`      ${f.message}`)
  }
  if (dropped > 0) lines.push(`  (${dropped} older findings were let go to keep the list bounded)`)
  return lines
}
