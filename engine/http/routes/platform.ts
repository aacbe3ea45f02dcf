/**
 * Platform routes (contract tag "Reports"): the audit log, usage analytics, reports and invoices (D-060, D-062..D-064,
 * D-260..). Decoding only; AuditTrail, UsageMeter, ReportService and InvoiceService do the work.
 */
import { AuditTrail } from "../../app/audit.ts"
import { UsageMeter } from "../../app/usage.ts"
import { bound, integer, oneOf, optional, text } from "../query.ts"
import { partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"

const range = { from: optional(bound("from")), to: optional(bound("to")) }
const LIMIT = { limit: optional(integer({ min: 1, max: 200 })) }

export const platformRoutes = [
  partnerRoute("listAuditRecords", 200, {
    query: { ...range, action: optional(text), resourceType: optional(text), ...LIMIT, ...PAGE },
    handle: ({ query, principal }) => AuditTrail.use((a) => a.list(principal, query))
  }),
  partnerRoute("getUsageAnalytics", 200, {
    query: { ...range, granularity: optional(oneOf(["hour", "day"])) },
    handle: ({ query, principal }) => UsageMeter.use((u) => u.report(principal, query))
  })
]
