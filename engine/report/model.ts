/**
 * What a checking run found, in one shape for every report writer (JUnit XML, CTRF JSON, the HTML page) and for every
 * tool that checks something over the wire (`sokoni conform`, `sokoni webhooks check`). Pure data.
 * Owns: the shape. Does not own: running checks, nor writing files (engine/report/write.ts).
 */

export type CheckStatus = "passed" | "failed" | "skipped"

/** One thing that happened during a check, on the clock the target runs on (a timeline row in the HTML report). */
export interface TimelineEntry {
  /** ISO instant on the target's clock (virtual when it has one). */
  readonly at: string
  readonly kind: "request" | "response" | "event" | "delivery" | "clock" | "note"
  readonly text: string
}

export interface CheckResult {
  /** The group it belongs to: a contract operation family, a scenario suite, a receiver grade... */
  readonly suite: string
  /** What was checked, as a sentence ("POST /trade refuses a reused quote with 409 STALE_QUOTE"). */
  readonly name: string
  /** The contract operationId it exercises, when there is one (for coverage by operation). */
  readonly operation?: string
  readonly status: CheckStatus
  readonly durationMs: number
  /** Why it failed or was skipped, in one or two lines. */
  readonly message?: string
  /** A one-line `curl` that reproduces the failing request. */
  readonly reproducer?: string
  /** The command that replays the whole check with the same seed. */
  readonly replay?: string
  /** Points earned out of `maxScore` (graded checks such as a receiver's). */
  readonly score?: number
  readonly maxScore?: number
  readonly timeline?: ReadonlyArray<TimelineEntry>
}

export interface RunReport {
  /** The tool and its arguments as run, e.g. `sokoni conform --base http://127.0.0.1:4010 --seed 7`. */
  readonly tool: string
  readonly seed: number
  /** The base URL or receiver URL checked. */
  readonly target: string
  readonly startedAt: string
  readonly finishedAt: string
  readonly checks: ReadonlyArray<CheckResult>
  /** What the run covered, when the tool knows its universe (`sokoni conform`: the contract's operations). */
  readonly coverage?: Coverage | undefined
  /** What the run says once at the top (a target's clock skew, what it could not check and why). */
  readonly notes?: ReadonlyArray<string> | undefined
}

/** Coverage of a run: the contract's operations by check status, and the state transitions seen happen. */
export interface Coverage {
  readonly operations: ReadonlyArray<{ readonly operation: string; readonly passed: number; readonly failed: number; readonly skipped: number }>
  readonly transitions: ReadonlyArray<{ readonly machine: string; readonly transition: string; readonly event: string; readonly seen: boolean }>
}

export interface Totals {
  readonly passed: number
  readonly failed: number
  readonly skipped: number
}

export const totalsOf = (checks: ReadonlyArray<CheckResult>): Totals => ({
  passed: checks.filter((c) => c.status === "passed").length,
  failed: checks.filter((c) => c.status === "failed").length,
  skipped: checks.filter((c) => c.status === "skipped").length
})
