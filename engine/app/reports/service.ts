/**
 * ReportService: asynchronous reports (`POST /reports`, `GET /reports`, `GET /reports/{reportId}`; D-062, D-261,
 * D-262). A request is QUEUED at once (202); Scheduler jobs on the engine clock move it to GENERATING and then READY
 * (or FAILED for PDF), the rows of the partner's orders, wallet transactions, fees or sub-accounts in the requested UTC
 * days kept with the report.
 * Wiring, reads and dispatch: the rules are pure in domain/reports/ (the life cycle in decide-report.ts, the rows in
 * tables.ts, the record and wire shape in report.ts). Owns the report documents. Does not own the data it reads
 * (orders, ledger, sub-accounts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { decideRequest, decideStep, REPORT_JOB, type ReportJob, reportReady } from "../../domain/reports/decide-report.ts"
import { type Period, type ReportRecord, type ReportRequest, reportPeriod, reportToWire, storedPeriod } from "../../domain/reports/report.ts"
import { feeTable, orderTable, subAccountTable, type Table, walletOwners, walletTable } from "../../domain/reports/tables.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { checkLimit } from "../cursor.ts"
import { ReportShape } from "../doc-shapes.ts"
import { accountPartition, collection, Orders, SubAccounts, timeSortKey, WalletTxns } from "../docs.ts"
import { ReportPayload } from "../job-payloads.ts"
import { pageMeta, pageOf, scopeOf } from "../pages.ts"
import type { Principal } from "../principal.ts"

export type { ReportRequest }

const Reports = collection<ReportRecord>("reports", ReportShape)
const ReportDocs = {
  get: (tx: ReadTx, id: string) => Reports.get(tx, id),
  put: (tx: Tx, r: ReportRecord) => Reports.put(tx, r.reportId, r.partition, timeSortKey(r.createdAt, r.reportId), r),
  list: (tx: ReadTx, partition: string) => Reports.list(tx, partition, { limit: 100_000, order: "desc" })
}

const ALL = { limit: 1_000_000, order: "asc" } as const

/** The report's rows: the records its type lists, read in the generating job's transaction. */
const tableOf = (tx: Tx, r: ReportRecord, period: Period) =>
  Effect.gen(function* (): Effect.fn.Return<Table, StoreError> {
    switch (r.type) {
      case "SUB_ACCOUNTS":
        return subAccountTable(r, yield* SubAccounts.list(tx, r.partition, ALL), period)
      case "TRANSACTIONS":
      case "STATEMENT": {
        const owners = walletOwners(r, r.subAccountId === null ? yield* SubAccounts.list(tx, r.partition, ALL) : [])
        const owned = []
        for (const owner of owners) owned.push({ owner, rows: yield* WalletTxns.list(tx, accountPartition(r.partition, owner), ALL) })
        return walletTable(owned, period)
      }
      case "FEES":
        return feeTable(r, yield* Orders.list(tx, r.partition, ALL), period)
      default:
        return orderTable(r, yield* Orders.list(tx, r.partition, ALL), period)
    }
  })

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

    const book = (tx: Tx, job: ReportJob) => scheduler.schedule(tx, job.kind, job.dueAt, job.payload)

    const request = Effect.fn("ReportService.request")(function* (principal: Principal, body: ReportRequest) {
      const now = yield* clock.nowHere()
      yield* liftFailure(reportPeriod(body, now))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (body.subAccountId !== undefined) yield* findSubAccount(tx, principal.partition, body.subAccountId)
          const plan = decideRequest({ partition: principal.partition, request: body }, now, { reportId: yield* entropy.idHere("rpt") })
          yield* ReportDocs.put(tx, plan.report)
          yield* book(tx, plan.job)
          return plan.answer
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
      return reportToWire(report, yield* clock.nowHere())
    })

    const list = Effect.fn("ReportService.list")(function* (
      principal: Principal,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined }
    ) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const now = yield* clock.nowHere()
      const reports = yield* store.read((tx) => ReportDocs.list(tx, principal.partition))
      const scope = scopeOf("reports", principal.partition, [])
      const page = yield* liftFailure(pageOf(reports, (r) => timeSortKey(r.createdAt, r.reportId), "desc", { scope, cursor: query.cursor, limit }))
      const answer: Schemas["ReportList"] = { reports: page.items.map((r) => reportToWire(r, now)), ...pageMeta(page) }
      return answer
    })

    // QUEUED -> GENERATING -> READY (or FAILED for PDF), each step a job on the engine clock.
    yield* scheduler.register(REPORT_JOB, ReportPayload, (tx, { reportId, step }) =>
      Effect.gen(function* () {
        const found = yield* ReportDocs.get(tx, reportId)
        if (Option.isNone(found)) return
        const report = found.value
        const now = yield* clock.nowHere()
        const plan = decideStep(report, step, now)
        if (plan.kind === "write") {
          yield* ReportDocs.put(tx, plan.report)
          if (plan.job !== undefined) yield* book(tx, plan.job)
        } else if (plan.kind === "render") {
          yield* ReportDocs.put(tx, reportReady(report, yield* tableOf(tx, report, storedPeriod(report)), now))
        }
      })
    )

    return ReportService.of({ request, list, get })
  })

  static readonly layer = Layer.effect(ReportService, ReportService.make)
}
