/**
 * A report's life cycle (domain/reports/decide-report.ts, report.ts; D-062, D-261, D-262): the period a request may
 * ask for; QUEUED at once with its first step booked; GENERATING, then READY with its rows or FAILED for PDF; a step
 * that finds the report elsewhere does nothing; the download address of a READY report and its expiry.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { decideRequest, decideStep, GENERATING_AFTER_MS, READY_AFTER_MS, REPORT_JOB, reportReady } from "../../engine/domain/reports/decide-report.ts"
import { DOWNLOAD_TTL_MS, type ReportRecord, reportPeriod, reportToWire, storedPeriod } from "../../engine/domain/reports/report.ts"
import { DAY_MS, isoDate } from "../../engine/domain/reference/seeded.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const today = isoDate(OPEN_AT)
const requested = (format: ReportRecord["format"] = "CSV") =>
  decideRequest({ partition: "ptn_a:sandbox", request: { type: "TRADES", format, from: today, to: today } }, OPEN_AT, { reportId: "rpt_1" })

describe("the period a report covers", () => {
  it("refuses unreal dates, from after to, more than 366 days, and a start in the future, naming the date", () => {
    for (const [from, to, param] of [
      ["2026-02-30", today, "from"],
      [today, "someday", "to"],
      [today, isoDate(OPEN_AT - DAY_MS), "from"],
      [isoDate(OPEN_AT - 367 * DAY_MS), today, "to"],
      [isoDate(OPEN_AT + 2 * DAY_MS), isoDate(OPEN_AT + 3 * DAY_MS), "from"]
    ] as const) {
      const refused = reportPeriod({ from, to }, OPEN_AT)
      expect(codeOf(refused)).toBe("VALIDATION_ERROR")
      expect(refused).toMatchObject({ extras: { param } })
    }
  })

  it("property: an accepted period covers whole UTC days, from the first millisecond of `from` to the last of `to`", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 366 }), (daysBack, length) => {
        const from = isoDate(OPEN_AT - daysBack * DAY_MS)
        const to = isoDate(OPEN_AT - daysBack * DAY_MS + length * DAY_MS)
        const period = accepted(reportPeriod({ from, to }, OPEN_AT))
        expect(period).toEqual(storedPeriod({ from, to }))
        expect(period.to - period.from + 1).toBe((length + 1) * DAY_MS)
        expect(isoDate(period.from)).toBe(from)
        expect(isoDate(period.to)).toBe(to)
      })
    )
  })
})

describe("from request to file", () => {
  it("a request is QUEUED now, CSV unless said, with its GENERATING step booked 5 s later", () => {
    const plan = requested(undefined)
    expect(plan.report).toMatchObject({ reportId: "rpt_1", status: "QUEUED", format: "CSV", subAccountId: null, createdAt: OPEN_AT, content: null })
    expect(plan.job).toEqual({ kind: REPORT_JOB, dueAt: OPEN_AT + GENERATING_AFTER_MS, payload: { reportId: "rpt_1", step: "GENERATING" } })
    expect(plan.answer).toMatchObject({ status: "QUEUED", downloadUrl: null, completedAt: null })
  })

  it("GENERATING books the last step 30 s after the request; the last step renders the rows READY", () => {
    const { report } = requested("JSON")
    const generating = decideStep(report, "GENERATING", OPEN_AT + GENERATING_AFTER_MS)
    if (generating.kind !== "write") throw new Error(`expected a write, got ${generating.kind}`)
    expect(generating.report.status).toBe("GENERATING")
    expect(generating.job).toEqual({ kind: REPORT_JOB, dueAt: OPEN_AT + READY_AFTER_MS, payload: { reportId: "rpt_1", step: "DONE" } })
    expect(decideStep(generating.report, "DONE", OPEN_AT + READY_AFTER_MS)).toEqual({ kind: "render" })
    const ready = reportReady(generating.report, { columns: ["a", "b"], rows: [[1, null]] }, OPEN_AT + READY_AFTER_MS)
    expect(ready).toMatchObject({ status: "READY", completedAt: OPEN_AT + READY_AFTER_MS, content: '[{"a":1,"b":null}]', rowCount: 1 })
  })

  it("a PDF report ends FAILED (not rendered), and a step finding the report in another state does nothing", () => {
    const { report } = requested("PDF")
    expect(decideStep({ ...report, status: "GENERATING" }, "DONE", OPEN_AT)).toMatchObject({
      kind: "write",
      report: { status: "FAILED", completedAt: OPEN_AT }
    })
    expect(decideStep(report, "DONE", OPEN_AT)).toEqual({ kind: "nothing" })
    expect(decideStep({ ...report, status: "GENERATING" }, "GENERATING", OPEN_AT)).toEqual({ kind: "nothing" })
  })
})

describe("downloading", () => {
  const ready = (): ReportRecord => ({ ...requested().report, status: "READY", completedAt: OPEN_AT, content: "a\r\n", rowCount: 0 })

  it("a READY report's address expires an hour after completion; read later, a new one an hour from the read", () => {
    expect(reportToWire(ready(), OPEN_AT + 60_000).downloadExpiresAt).toBe(new Date(OPEN_AT + DOWNLOAD_TTL_MS).toISOString())
    const later = OPEN_AT + 2 * DOWNLOAD_TTL_MS
    const wire = reportToWire(ready(), later)
    expect(wire.downloadExpiresAt).toBe(new Date(later + DOWNLOAD_TTL_MS).toISOString())
    expect(wire.downloadUrl).toMatch(/^https:\/\/files\.sokoni\.test\/reports\/rpt_1\.csv\?expires=\d+&sig=[0-9a-f]{32}$/)
  })

  it("the address is signed over the content: another file, another signature", () => {
    const a = reportToWire(ready(), OPEN_AT).downloadUrl
    const b = reportToWire({ ...ready(), content: "b\r\n" }, OPEN_AT).downloadUrl
    expect(a).not.toBe(b)
    expect(a).toBe(reportToWire(ready(), OPEN_AT).downloadUrl)
  })
})
