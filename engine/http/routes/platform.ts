/**
 * Platform routes (contract tag "Reports"): the audit log, usage analytics, reports and invoices (D-060, D-062..D-064,
 * D-260..). Decoding only; AuditTrail, UsageMeter, ReportService and InvoiceService do the work.
 */
import { Schema } from "effect"
import { AuditTrail } from "../../app/audit.ts"
import { InvoiceService } from "../../app/billing/invoices.ts"
import { ReportService } from "../../app/reports/service.ts"
import { UsageMeter } from "../../app/billing/usage-meter.ts"
import { bound, integer, oneOf, optional, required, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"
import { minCharacters } from "../body.ts"

const range = { from: optional(bound("from")), to: optional(bound("to")) }
const LIMIT = { limit: optional(integer({ min: 1, max: 200 })) }
const REPORT_TYPES = ["TRADES", "TRANSACTIONS", "STATEMENT", "FEES", "SUB_ACCOUNTS"] as const

/** The contract's ReportRequest; the dates' meaning (real, ordered, at most 366 days) is checked by the service. */
export const ReportRequestBody = Schema.Struct({
  type: Schema.Literals(REPORT_TYPES),
  format: Schema.optionalKey(Schema.Literals(["CSV", "JSON", "PDF"])),
  from: Schema.String,
  to: Schema.String,
  subAccountId: Schema.optionalKey(Schema.String.check(minCharacters(1)))
})

export const platformRoutes = [
  partnerRoute("listAuditRecords", 200, {
    query: { ...range, action: optional(text), resourceType: optional(text), ...LIMIT, ...PAGE },
    handle: ({ query, principal }) => AuditTrail.use((a) => a.list(principal, query))
  }),
  partnerRoute("getUsageAnalytics", 200, {
    query: { ...range, granularity: optional(oneOf(["hour", "day"])) },
    handle: ({ query, principal }) => UsageMeter.use((u) => u.report(principal, query))
  }),
  partnerRoute("requestReport", 202, {
    body: ReportRequestBody,
    handle: ({ body, principal }) => ReportService.use((r) => r.request(principal, body))
  }),
  partnerRoute("listReports", 200, {
    query: { ...LIMIT, ...PAGE },
    handle: ({ query, principal }) => ReportService.use((r) => r.list(principal, query))
  }),
  partnerRoute("getReport", 200, {
    params: { reportId: required(text) },
    handle: ({ params, principal }) => ReportService.use((r) => r.get(principal, params.reportId))
  }),
  partnerRoute("listInvoices", 200, {
    query: { ...LIMIT, ...PAGE },
    handle: ({ query, principal }) => InvoiceService.use((i) => i.list(principal, query))
  }),
  partnerRoute("getInvoice", 200, {
    params: { invoiceId: required(text) },
    handle: ({ params, principal }) => InvoiceService.use((i) => i.get(principal, params.invoiceId))
  })
]
