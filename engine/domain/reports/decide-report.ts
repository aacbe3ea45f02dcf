/**
 * A report's life cycle (D-062, D-261, D-262): requested, it is QUEUED at once (202) and a job GENERATING_AFTER_MS
 * later moves it to GENERATING and books the last step READY_AFTER_MS after the request, which renders it READY (the
 * rows of the period, as CSV or JSON) or, for PDF (not rendered by the simulator), FAILED. A step finds the report in
 * the state it expects or does nothing (a report wiped by the sandbox reset is simply gone). Pure: the dispatcher
 * (app/reports/service.ts) checks the sub-account, draws the id once the request is accepted (E-350), reads the rows
 * when the plan asks for them and writes the plan.
 * Owns: those transitions and the jobs. Does not own the rows (tables.ts) nor the wire shape (report.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { render, type Table } from "./tables.ts"
import { type ReportRecord, type ReportRequest, reportToWire } from "./report.ts"

export const GENERATING_AFTER_MS = 5_000
export const READY_AFTER_MS = 30_000
export const REPORT_JOB = "report.generate"

export type ReportStep = "GENERATING" | "DONE"

export interface ReportJob {
  readonly kind: typeof REPORT_JOB
  readonly dueAt: number
  readonly payload: { readonly reportId: string; readonly step: ReportStep }
}

const jobOf = (reportId: string, step: ReportStep, dueAt: number): ReportJob => ({ kind: REPORT_JOB, dueAt, payload: { reportId, step } })

/** A request whose period was checked (report.ts reportPeriod) and whose sub-account exists: QUEUED, its first step booked. */
export const decideRequest = (
  command: { readonly partition: string; readonly request: ReportRequest },
  now: number,
  ids: { readonly reportId: string }
): { readonly report: ReportRecord; readonly job: ReportJob; readonly answer: Schemas["Report"] } => {
  const { request } = command
  const report: ReportRecord = {
    reportId: ids.reportId,
    partition: command.partition,
    type: request.type,
    format: request.format ?? "CSV",
    from: request.from,
    to: request.to,
    subAccountId: request.subAccountId ?? null,
    status: "QUEUED",
    createdAt: now,
    completedAt: null,
    content: null,
    rowCount: null,
    failureReason: null
  }
  return { report, job: jobOf(report.reportId, "GENERATING", now + GENERATING_AFTER_MS), answer: reportToWire(report, now) }
}

/** What a step does: nothing, write the report (and book the next step), or read the rows and render them (`reportReady`). */
export type StepPlan =
  | { readonly kind: "nothing" }
  | { readonly kind: "write"; readonly report: ReportRecord; readonly job?: ReportJob | undefined }
  | { readonly kind: "render" }

const NOTHING: StepPlan = { kind: "nothing" }

export const decideStep = (report: ReportRecord, step: ReportStep, now: number): StepPlan => {
  if (step === "GENERATING") {
    if (report.status !== "QUEUED") return NOTHING
    return { kind: "write", report: { ...report, status: "GENERATING" }, job: jobOf(report.reportId, "DONE", report.createdAt + READY_AFTER_MS) }
  }
  if (report.status !== "GENERATING") return NOTHING
  if (report.format === "PDF") {
    return { kind: "write", report: { ...report, status: "FAILED", completedAt: now, failureReason: "PDF rendering is not simulated (D-262)" } }
  }
  return { kind: "render" }
}

/** The report READY with its rows rendered in its format. */
export const reportReady = (report: ReportRecord, table: Table, now: number): ReportRecord => ({
  ...report,
  status: "READY",
  completedAt: now,
  content: render(report.format === "JSON" ? "JSON" : "CSV", table.columns, table.rows),
  rowCount: table.rows.length
})
