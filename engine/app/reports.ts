/**
 * ReportService: asynchronous reports (`POST /reports`, `GET /reports`, `GET /reports/{reportId}`; D-062, D-261,
 * D-262). A request is QUEUED at once (202); a Scheduler job on the engine clock moves it to GENERATING after
 * GENERATING_AFTER_MS and a second one renders it READY after READY_AFTER_MS: the rows of the partner's orders,
 * wallet transactions, fees or sub-accounts in the requested UTC days, as CSV or JSON, kept with the report, and a
 * download address valid for an hour (signed again on each read once expired). PDF is not rendered: such a report
 * ends FAILED. Owns the report records and their jobs. Does not own the data it reads (orders, ledger, sub-accounts).
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { centsToWire, price4ToWire } from "../domain/money.ts"
import { calendarDateMs, DAY_MS } from "../domain/reference/seeded.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { findSubAccount } from "./accounts.ts"
import { checkLimit } from "./cursor.ts"
import { ReportShape } from "./doc-shapes.ts"
import { accountPartition, collection, Orders, SubAccounts, timeSortKey, type WalletTxnDoc, WalletTxns } from "./docs.ts"
import { ReportPayload } from "./job-payloads.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import type { Principal } from "./principal.ts"

export type ReportType = Schemas["Report"]["type"]
export type ReportFormat = Schemas["Report"]["format"]

export const GENERATING_AFTER_MS = 5_000
export const READY_AFTER_MS = 30_000
export const DOWNLOAD_TTL_MS = 3_600_000
/** Longest period of one report (contract: `to` at most 366 days after `from`). */
export const MAX_REPORT_DAYS = 366
export const REPORT_JOB = "report.generate"

export interface ReportDoc {
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

const Reports = collection<ReportDoc>("reports", ReportShape)
const ReportDocs = {
  get: (tx: ReadTx, id: string) => Reports.get(tx, id),
  put: (tx: Tx, r: ReportDoc) => Reports.put(tx, r.reportId, r.partition, timeSortKey(r.createdAt, r.reportId), r),
  list: (tx: ReadTx, partition: string) => Reports.list(tx, partition, { limit: 100_000, order: "desc" })
}

export interface ReportRequest {
  readonly type: ReportType
  readonly format?: ReportFormat | undefined
  readonly from: string
  readonly to: string
  readonly subAccountId?: string | undefined
}

/** The period of a request, checked (D-261): real dates, `from` not after `to` nor after today, at most 366 days. */
export const reportPeriod = (request: ReportRequest, now: number): { from: number; to: number } | ApiFailure => {
  const from = calendarDateMs(request.from)
  if (from === undefined) return fail("VALIDATION_ERROR", "from must be a real date (YYYY-MM-DD)", { param: "from" })
  const toStart = calendarDateMs(request.to)
  if (toStart === undefined) return fail("VALIDATION_ERROR", "to must be a real date (YYYY-MM-DD)", { param: "to" })
  if (from > toStart) return fail("VALIDATION_ERROR", "from must not be after to", { param: "from" })
  if (toStart - from > MAX_REPORT_DAYS * DAY_MS) return fail("VALIDATION_ERROR", `to must be at most ${MAX_REPORT_DAYS} days after from`, { param: "to" })
  if (from > now) return fail("VALIDATION_ERROR", "from must not be in the future", { param: "from" })
  return { from, to: toStart + DAY_MS - 1 }
}

const csvCell = (value: unknown) => {
  const text = value === null || value === undefined ? "" : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A table as CSV (header line, CRLF line ends) or JSON (an array of row objects). Pure. */
export const render = (format: "CSV" | "JSON", columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<unknown>>): string =>
  format === "JSON"
    ? JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i] ?? null]))))
    : `${[columns, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n")}\r\n`

/** The address a READY report is fetched from until `expiresAt`: signed over the id, expiry and content digest. */
export const downloadUrlOf = (r: ReportDoc, expiresAt: number) => {
  const digest = createHash("sha256")
    .update(r.content ?? "")
    .digest("hex")
  const expires = Math.floor(expiresAt / 1000)
  const sig = createHash("sha256").update(`${r.reportId}|${expires}|${digest}`).digest("hex").slice(0, 32)
  return `https://files.sokoni.test/reports/${r.reportId}.${r.format.toLowerCase()}?expires=${expires}&sig=${sig}`
}

export const reportToWire = (r: ReportDoc, now: number): Schemas["Report"] => {
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

export class ReportService extends Context.Service<
  ReportService,
  {
    readonly request: (principal: Principal, body: ReportRequest) => Effect.Effect<Schemas["Report"], ApiFailure | StoreError>
    readonly list: (
      principal: Principal,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) => Effect.Effect<Schemas["ReportList"], ApiFailure | StoreError>
    readonly get: (principal: Principal, reportId: string) => Effect.Effect<Schemas["Report"], ApiFailure | StoreError>
  }
>()("sokoni/ReportService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const scheduler = yield* Scheduler

    /** The report's rows, read in the generating job's transaction. */
    const table = (tx: Tx, r: ReportDoc, from: number, to: number) =>
      Effect.gen(function* () {
        const within = (at: number) => at >= from && at <= to
        if (r.type === "SUB_ACCOUNTS") {
          const accounts = (yield* SubAccounts.list(tx, r.partition, { limit: 1_000_000, order: "asc" })).filter(
            (s) => s.createdAt <= to && (r.subAccountId === null || s.subAccountId === r.subAccountId)
          )
          return {
            columns: ["subAccountId", "externalId", "status", "kycStatus", "kycLevel", "createdAt"],
            rows: accounts.map((s) => [s.subAccountId, s.externalId, s.status, s.kycStatus, s.kycLevel, isoAt(s.createdAt)])
          }
        }
        if (r.type === "TRANSACTIONS" || r.type === "STATEMENT") {
          const owners =
            r.subAccountId !== null
              ? [r.subAccountId]
              : ["master", ...(yield* SubAccounts.list(tx, r.partition, { limit: 1_000_000, order: "asc" })).map((s) => s.subAccountId)]
          const found: Array<{ readonly t: WalletTxnDoc; readonly owner: string }> = []
          for (const owner of owners) {
            const txns = yield* WalletTxns.list(tx, accountPartition(r.partition, owner), { limit: 1_000_000, order: "asc" })
            for (const t of txns) if (within(t.at)) found.push({ t, owner })
          }
          // By time, then in the order the ledger posted them, so balances read in sequence within one millisecond; the
          // two rows of one transfer keep the master's first (the sort is stable). Rows of an earlier version without a
          // position fall back to the transaction id.
          found.sort((a, b) => a.t.at - b.t.at || (a.t.seq ?? 0) - (b.t.seq ?? 0) || a.t.transactionId.localeCompare(b.t.transactionId))
          const rows = found.map(({ t, owner }) => [
            isoAt(t.at),
            owner,
            t.transactionId,
            t.type,
            centsToWire(t.cents),
            centsToWire(t.balanceAfter),
            t.orderId,
            t.description
          ])
          return { columns: ["at", "account", "transactionId", "type", "amount", "balanceAfter", "orderId", "description"], rows }
        }
        const orders = (yield* Orders.list(tx, r.partition, { limit: 1_000_000, order: "asc" })).filter(
          (o) => within(o.createdAt) && (r.subAccountId === null || o.account === r.subAccountId)
        )
        if (r.type === "FEES") {
          return {
            columns: ["orderId", "account", "createdAt", "status", "baseFee", "partnerMarkupFee", "fee"],
            rows: orders.map((o) => [
              o.orderId,
              o.account,
              isoAt(o.createdAt),
              o.status,
              centsToWire(o.baseFee),
              centsToWire(o.partnerMarkupFee),
              centsToWire(o.fee)
            ])
          }
        }
        return {
          columns: ["orderId", "account", "createdAt", "side", "symbol", "exchange", "quantity", "priceAtOrder", "gross", "fee", "totalAmount", "status"],
          rows: orders.map((o) => [
            o.orderId,
            o.account,
            isoAt(o.createdAt),
            o.side,
            o.symbol,
            o.exchange,
            o.quantity,
            price4ToWire(o.priceAtOrder),
            centsToWire(o.gross),
            centsToWire(o.fee),
            centsToWire(o.totalAmount),
            o.status
          ])
        }
      })

    const request = Effect.fn("ReportService.request")(function* (principal: Principal, body: ReportRequest) {
      const now = yield* clock.now
      yield* liftFailure(reportPeriod(body, now))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (body.subAccountId !== undefined) yield* findSubAccount(tx, principal.partition, body.subAccountId)
          const report: ReportDoc = {
            reportId: yield* entropy.id("rpt"),
            partition: principal.partition,
            type: body.type,
            format: body.format ?? "CSV",
            from: body.from,
            to: body.to,
            subAccountId: body.subAccountId ?? null,
            status: "QUEUED",
            createdAt: now,
            completedAt: null,
            content: null,
            rowCount: null,
            failureReason: null
          }
          yield* ReportDocs.put(tx, report)
          yield* scheduler.schedule(tx, REPORT_JOB, now + GENERATING_AFTER_MS, { reportId: report.reportId, step: "GENERATING" })
          return reportToWire(report, now)
        })
      )
    })

    const find = (principal: Principal, reportId: string) =>
      store.read((tx) =>
        Effect.flatMap(ReportDocs.get(tx, reportId), (found) =>
          Option.isSome(found) && found.value.partition === principal.partition
            ? Effect.succeed(found.value)
            : Effect.fail(fail("NOT_FOUND", `report ${reportId} was not found`))
        )
      )

    const get = Effect.fn("ReportService.get")(function* (principal: Principal, reportId: string) {
      const report = yield* find(principal, reportId)
      return reportToWire(report, yield* clock.now)
    })

    const list = Effect.fn("ReportService.list")(function* (
      principal: Principal,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const now = yield* clock.now
      const reports = yield* store.read((tx) => ReportDocs.list(tx, principal.partition))
      const scope = scopeOf("reports", principal.partition, [])
      const page = yield* liftFailure(pageOf(reports, (r) => timeSortKey(r.createdAt, r.reportId), "desc", { scope, cursor: query.cursor, limit }))
      const answer: Schemas["ReportList"] = { reports: page.items.map((r) => reportToWire(r, now)), ...pageMeta(page) }
      return answer
    })

    // QUEUED -> GENERATING -> READY (or FAILED for PDF), each step a job on the engine clock. A report wiped by the
    // sandbox reset is simply gone when its job falls due.
    yield* scheduler.register(REPORT_JOB, ReportPayload, (tx, { reportId, step }) =>
      Effect.gen(function* () {
        const found = yield* ReportDocs.get(tx, reportId)
        if (Option.isNone(found)) return
        const report = found.value
        const now = yield* clock.now
        if (step === "GENERATING") {
          if (report.status !== "QUEUED") return
          yield* ReportDocs.put(tx, { ...report, status: "GENERATING" })
          yield* scheduler.schedule(tx, REPORT_JOB, report.createdAt + READY_AFTER_MS, { reportId, step: "DONE" })
          return
        }
        if (report.status !== "GENERATING") return
        if (report.format === "PDF") {
          yield* ReportDocs.put(tx, { ...report, status: "FAILED", completedAt: now, failureReason: "PDF rendering is not simulated (D-262)" })
          return
        }
        const from = calendarDateMs(report.from) ?? 0
        const to = (calendarDateMs(report.to) ?? 0) + DAY_MS - 1
        const { columns, rows } = yield* table(tx, report, from, to)
        yield* ReportDocs.put(tx, { ...report, status: "READY", completedAt: now, content: render(report.format, columns, rows), rowCount: rows.length })
      })
    )

    return ReportService.of({ request, list, get })
  })

  static readonly layer = Layer.effect(ReportService, ReportService.make)
}
