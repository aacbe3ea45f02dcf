/**
 * A report (D-062, D-261, D-262): the stored record, the request's period checked, and its wire shape with the signed
 * download address of a READY report (valid an hour after completion; once that passed, each read signs a new one
 * valid an hour from then). Pure: the address is a digest of the id, the expiry and the content, no secret drawn.
 * Owns: those shapes and rules. Does not own the report's life cycle (decide-report.ts) nor its rows (tables.ts).
 */
import { createHash } from "node:crypto"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { calendarDateMs, DAY_MS } from "../reference/seeded.ts"

export type ReportType = Schemas["Report"]["type"]
export type ReportFormat = Schemas["Report"]["format"]

export const DOWNLOAD_TTL_MS = 3_600_000
/** Longest period of one report (contract: `to` at most 366 days after `from`). */
export const MAX_REPORT_DAYS = 366

/** A stored report, in its partner environment's partition, sorted by creation. */
export interface ReportRecord {
  readonly reportId: string
  readonly partition: string
  readonly type: ReportType
  readonly format: ReportFormat
  readonly from: string
  readonly to: string
  readonly subAccountId: string | null
  readonly status: Schemas["Report"]["status"]
  readonly createdAt: number
  readonly completedAt: number | null
  /** The rendered file (CSV or JSON text) once READY. */
  readonly content: string | null
  readonly rowCount: number | null
  readonly failureReason: string | null
}

export interface ReportRequest {
  readonly type: ReportType
  readonly format?: ReportFormat | undefined
  readonly from: string
  readonly to: string
  readonly subAccountId?: string | undefined
}

/** A report's UTC days as epoch millis, first and last included. */
export interface Period {
  readonly from: number
  readonly to: number
}

/** The period of a request, checked (D-261): real dates, `from` not after `to` nor after today, at most 366 days. */
export const reportPeriod = (request: Pick<ReportRequest, "from" | "to">, now: number): Period | ApiFailure => {
  const from = calendarDateMs(request.from)
  if (from === undefined) return fail("VALIDATION_ERROR", "from must be a real date (YYYY-MM-DD)", { param: "from" })
  const toStart = calendarDateMs(request.to)
  if (toStart === undefined) return fail("VALIDATION_ERROR", "to must be a real date (YYYY-MM-DD)", { param: "to" })
  if (from > toStart) return fail("VALIDATION_ERROR", "from must not be after to", { param: "from" })
  if (toStart - from > MAX_REPORT_DAYS * DAY_MS) return fail("VALIDATION_ERROR", `to must be at most ${MAX_REPORT_DAYS} days after from`, { param: "to" })
  if (from > now) return fail("VALIDATION_ERROR", "from must not be in the future", { param: "from" })
  return { from, to: toStart + DAY_MS - 1 }
}

/** The period of a stored report (its dates were checked when it was requested). */
export const storedPeriod = (r: Pick<ReportRecord, "from" | "to">): Period => ({
  from: calendarDateMs(r.from) ?? 0,
  to: (calendarDateMs(r.to) ?? 0) + DAY_MS - 1
})

const isoAt = (ms: number): string => new Date(ms).toISOString()

/** The address a READY report is fetched from until `expiresAt`: signed over the id, expiry and content digest. */
export const downloadUrlOf = (r: ReportRecord, expiresAt: number) => {
  const digest = createHash("sha256")
    .update(r.content ?? "")
    .digest("hex")
  const expires = Math.floor(expiresAt / 1000)
  const sig = createHash("sha256").update(`${r.reportId}|${expires}|${digest}`).digest("hex").slice(0, 32)
  return `https://files.sokoni.test/reports/${r.reportId}.${r.format.toLowerCase()}?expires=${expires}&sig=${sig}`
}

export const reportToWire = (r: ReportRecord, now: number): Schemas["Report"] => {
  let expiresAt: number | null = null
  if (r.status === "READY" && r.completedAt !== null) {
    // Valid an hour after completion; once that passed, each read signs a new address valid an hour from then.
    expiresAt = now < r.completedAt + DOWNLOAD_TTL_MS ? r.completedAt + DOWNLOAD_TTL_MS : now + DOWNLOAD_TTL_MS
  }
  return {
    reportId: r.reportId,
    type: r.type,
    format: r.format,
    from: r.from,
    to: r.to,
    subAccountId: r.subAccountId,
    status: r.status,
    downloadUrl: expiresAt === null ? null : downloadUrlOf(r, expiresAt),
    downloadExpiresAt: expiresAt === null ? null : isoAt(expiresAt),
    createdAt: isoAt(r.createdAt),
    completedAt: r.completedAt === null ? null : isoAt(r.completedAt)
  }
}
