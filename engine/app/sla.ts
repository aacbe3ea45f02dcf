/**
 * The partner's SLA view, `GET /sla` (D-098): its tier's availability objective, every tier for comparison, the
 * current status (from the maintenance state the control API sets), the market-data and execution objectives.
 * Owns the tier mapping and the objectives. Does not own incidents (app/incidents/service.ts: the open ones are listed) nor a
 * measured availability (the engine does not measure itself: `uptimePct30d` is null, "before enough data").
 */
import type { Schemas } from "../contract/wire.ts"
import { EXECUTION_SLA_SECONDS } from "../domain/order-wire.ts"
import type { MaintenanceState } from "../http/guards/maintenance.ts"
import { isoAt } from "../sim/clock.ts"
import { DELAY_SECONDS, REFRESH_SECONDS } from "../sim/market-feed.ts"
import type { IncidentDoc } from "./docs.ts"
import { statusOfIncidents, summaryOf } from "../domain/incidents/decide-incident.ts"
import type { Principal } from "./principal.ts"

type SlaTierName = Schemas["PartnerSla"]["tier"]

/** Availability objectives per SLA tier (facts 9.7.4). */
export const SLA_TIERS: ReadonlyArray<{ readonly name: SlaTierName; readonly uptimeTargetPct: number }> = [
  { name: "Standard", uptimeTargetPct: 99.5 },
  { name: "Professional", uptimeTargetPct: 99.9 },
  { name: "Enterprise", uptimeTargetPct: 99.95 }
]

/** Production starter -> Standard, growth -> Professional, enterprise -> Enterprise; the sandbox is Standard. */
export const slaTierOf = (principal: Pick<Principal, "tier" | "environment">): SlaTierName =>
  principal.environment === "sandbox" ? "Standard" : principal.tier === "enterprise" ? "Enterprise" : principal.tier === "growth" ? "Professional" : "Standard"

/** The overall status the maintenance state implies (as `GET /api/v1/status` would say it). */
export const statusOf = (maintenance: MaintenanceState, open: ReadonlyArray<IncidentDoc> = []): Schemas["PartnerSla"]["status"] =>
  maintenance.mode === "off"
    ? statusOfIncidents(open)
    : maintenance.mode === "outage"
      ? maintenance.operations === undefined
        ? "major_outage"
        : "partial_outage"
      : maintenance.mode === "read_only"
        ? "degraded"
        : "maintenance"

export const slaView = (
  principal: Pick<Principal, "tier" | "environment">,
  maintenance: MaintenanceState,
  now: number,
  open: ReadonlyArray<IncidentDoc> = []
): Schemas["PartnerSla"] => {
  const tier = slaTierOf(principal)
  return {
    tier,
    uptimeTargetPct: SLA_TIERS.find((t) => t.name === tier)?.uptimeTargetPct ?? 99.5,
    contractual: principal.environment === "production",
    tiers: SLA_TIERS.map((t) => ({ ...t })),
    status: statusOf(maintenance, open),
    uptimePct30d: null,
    measurementWindowDays: 30,
    dataRefreshTargetSeconds: REFRESH_SECONDS,
    dataDelaySeconds: DELAY_SECONDS,
    executionTargetSeconds: EXECUTION_SLA_SECONDS,
    incidents: open.map(summaryOf),
    statusPage: maintenance.statusPage,
    asOf: isoAt(now)
  }
}
