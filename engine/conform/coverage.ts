/**
 * What a conform run covered, said in its report: the mode's coverage notes (what ran, what was skipped and why), the
 * operations by the status of their checks, the state transitions whose events some check saw, and how far the
 * target's clock is from conform's. Pure functions of the results; conform.ts runs the checks.
 */
import { PARTNER_OPERATIONS } from "../contract/catalogue.gen.ts"
import type { CheckResult, Coverage } from "../report/model.ts"

const HOW_TO_RUN_IT = " (--admin-token; or run it in-process with `sokoni scenario run`)"

/** A scenario's skip says `<scenario name>: <reason>`: the reason alone, so one reason groups every scenario it skips. */
const reasonOf = (r: CheckResult) => {
  const message = r.message ?? "no reason given"
  return (r.suite.startsWith("scenario") ? message.slice(message.indexOf(": ") + 2) : message).replace(HOW_TO_RUN_IT, "")
}

/** The check as a reader finds it in the report: a scenario by its file, a contract check with its operation. */
const shortName = (r: CheckResult) => {
  if (r.suite.startsWith("scenario")) return r.name.replace(/^scenario: /, "")
  const id = r.name.split(":")[0] ?? r.name
  return r.suite.startsWith("contract") && r.operation !== undefined ? `${id} ${r.operation}` : id
}

const listed = (names: ReadonlyArray<string>) => `${names.slice(0, 3).join(", ")}${names.length > 3 ? ` and ${names.length - 3} more` : ""}`

/**
 * What this mode could and could not check on this target, and why (issue 23, item 5): how many checks ran, the
 * skipped ones grouped by reason (a line each), and those that passed only in part (a trade checked up to
 * acceptance, a scenario's control steps skipped). Said once at the top of the report, so a green run without a
 * control API is not read as the full verdict.
 */
export const modeCoverage = (results: ReadonlyArray<CheckResult>, hasControl: boolean): ReadonlyArray<string> => {
  const mode = hasControl ? "control mode (admin token, the control API)" : "staging mode (keys only, no control API)"
  const skipped = results.filter((r) => r.status === "skipped")
  const partly = results.filter((r) => r.status === "passed" && /\bskipped\b|\bneeds\b/.test(r.message ?? ""))
  const partlyScenarios = partly.filter((r) => r.suite.startsWith("scenario"))
  const byReason = new Map<string, Array<string>>()
  for (const r of skipped) byReason.set(reasonOf(r), [...(byReason.get(reasonOf(r)) ?? []), shortName(r)])
  const ran = results.length - skipped.length
  return [
    `coverage in ${mode}: ${ran} of ${results.length} checks ran${partly.length === 0 ? "" : `, ${partly.length} of them in part`}`,
    ...[...byReason].map(([reason, names]) => `  not checked (${names.length}): ${reason}: ${listed(names)}`),
    ...(skipped.some((r) => (r.message ?? "").includes(HOW_TO_RUN_IT))
      ? ["  (what needs the control API runs with --admin-token; a scenario also in-process with `sokoni scenario run`)"]
      : []),
    ...partly.filter((r) => !r.suite.startsWith("scenario")).map((r) => `  checked in part: ${shortName(r)}: ${reasonOf(r)}`),
    ...(partlyScenarios.length === 0
      ? []
      : [`  checked in part (${partlyScenarios.length}): scenarios run without their control steps: ${listed(partlyScenarios.map(shortName))}`])
  ]
}

/** "2 d 0 h 0 min 3 s ahead of", "1.2 s behind", "level with". */
export const describeSkew = (ms: number): string => {
  if (Math.abs(ms) < 1_000) return `level with (${ms} ms)`
  const total = Math.round(Math.abs(ms) / 1000)
  const parts = [
    [Math.floor(total / 86_400), "d"],
    [Math.floor((total % 86_400) / 3600), "h"],
    [Math.floor((total % 3600) / 60), "min"],
    [total % 60, "s"]
  ] as const
  const first = parts.findIndex(([n]) => n > 0)
  return `${parts
    .slice(first)
    .map(([n, unit]) => `${n} ${unit}`)
    .join(" ")} ${ms > 0 ? "ahead of" : "behind"}`
}

/** The state transitions the coverage table lists, each known by the event it emits (spec "Events"). */
export const TRANSITIONS: ReadonlyArray<{ readonly machine: string; readonly transition: string; readonly event: string }> = [
  { machine: "order", transition: "placed: PENDING", event: "order.pending" },
  { machine: "order", transition: "PENDING -> FILLED", event: "order.filled" },
  { machine: "order", transition: "FILLED -> SETTLED", event: "trade.settled" },
  { machine: "order", transition: "PENDING -> REJECTED", event: "order.rejected" },
  { machine: "order", transition: "PENDING -> CANCELLED", event: "order.cancelled" },
  { machine: "order", transition: "WORKING -> replaced (stays WORKING)", event: "order.replaced" },
  { machine: "quote", transition: "OPEN -> EXPIRED", event: "quote.expired" },
  { machine: "KYC", transition: "status asserted (NONE/PENDING/APPROVED/REJECTED)", event: "kyc.updated" },
  { machine: "wallet", transition: "deposit confirmed", event: "deposit.confirmed" },
  { machine: "wallet", transition: "withdrawal confirmed", event: "withdraw.confirmed" },
  { machine: "wallet", transition: "credited", event: "wallet.credited" },
  { machine: "account", transition: "active -> frozen", event: "account.frozen" },
  { machine: "account", transition: "-> closed", event: "account.closed" }
]

/** Operations by the status of their checks, and which transitions' events some check's timeline saw. */
export const coverageOf = (results: ReadonlyArray<CheckResult>): Coverage => {
  const seen = new Set(results.flatMap((r) => (r.timeline ?? []).filter((t) => t.kind === "event").map((t) => t.text)))
  return {
    operations: [...PARTNER_OPERATIONS]
      .map((op) => op.operationId as string)
      .sort()
      .map((operation) => {
        const mine = results.filter((r) => r.operation === operation)
        return {
          operation,
          passed: mine.filter((r) => r.status === "passed").length,
          failed: mine.filter((r) => r.status === "failed").length,
          skipped: mine.filter((r) => r.status === "skipped").length
        }
      }),
    transitions: TRANSITIONS.map((t) => ({ ...t, seen: seen.has(t.event) }))
  }
}
