/**
 * Platform incidents' rules (D-193) as pure functions: what declaring one records (severity P2 and every service
 * unless given, `investigating`), that only an open incident can be resolved (404 unknown, 409 already resolved),
 * who hears of it (both environments of every partner not suspended, in the partners' order), the events' payloads
 * (`incident.declared`, `incident.resolved` with its human-readable duration), and the overall status open incidents
 * imply. The dispatcher (app/incidents/service.ts) draws the incident's id, loads the partners and the incident, and
 * writes the plan: the incident, then one event per partition.
 * Owns these rules. Does not own storing incidents, the event log nor maintenance modes (http/guards/maintenance.ts).
 */
import { type Environment, partitionOf } from "../../app/principal.ts"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"

export const ALL_SERVICES = ["api", "trading", "market-data", "webhooks", "stream"] as const

/** An incident as stored (app/docs.ts Incidents, in "global"). */
export interface IncidentRecord {
  readonly id: string
  readonly title: string
  readonly severity: "P0" | "P1" | "P2" | "P3"
  readonly affectedServices: ReadonlyArray<string>
  readonly status: "investigating" | "resolved"
  readonly startedAt: number
  readonly resolvedAt: number | null
}

export interface DeclareIncident {
  readonly title: string
  readonly severity?: IncidentRecord["severity"] | undefined
  readonly affectedServices?: ReadonlyArray<string> | undefined
}

/** A partner as a broadcast needs it: its id, and whether it is suspended (absent: active). */
export interface BroadcastPartner {
  readonly partnerId: string
  readonly status?: "active" | "suspended" | undefined
}

/** What an incident's write leaves: the incident, the event each partition hears, and the answer. */
export interface IncidentPlan<A> {
  readonly incident: IncidentRecord
  readonly events: ReadonlyArray<{ readonly partition: string; readonly name: string; readonly payload: A }>
  readonly answer: A
}

const isoAt = (ms: number) => new Date(ms).toISOString()
const ENVIRONMENTS: ReadonlyArray<Environment> = ["sandbox", "production"]

/** "45m 0s", "2h 5m 30s", "12s": the spec's human-readable duration. */
export const durationText = (ms: number): string => {
  const total = Math.max(0, Math.floor(ms / 1000))
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60]
  return h > 0 ? `${h}h ${m}m ${s}s` : m > 0 ? `${m}m ${s}s` : `${s}s`
}

/** The overall status open incidents imply: the worst severity wins (P0 major outage, P1 partial, else degraded). */
export const statusOfIncidents = (open: ReadonlyArray<Pick<IncidentRecord, "severity">>): "operational" | "degraded" | "partial_outage" | "major_outage" =>
  open.some((i) => i.severity === "P0")
    ? "major_outage"
    : open.some((i) => i.severity === "P1")
      ? "partial_outage"
      : open.length > 0
        ? "degraded"
        : "operational"

export const summaryOf = (i: IncidentRecord): Schemas["IncidentSummary"] => ({
  id: i.id,
  title: i.title,
  severity: i.severity,
  status: i.status,
  startedAt: isoAt(i.startedAt)
})

/** Where a broadcast goes: both environments of every partner that is not suspended, partner by partner. */
export const broadcastPartitions = (partners: ReadonlyArray<BroadcastPartner>): ReadonlyArray<string> =>
  partners.filter((p) => p.status !== "suspended").flatMap((p) => ENVIRONMENTS.map((e) => partitionOf(p.partnerId, e)))

const broadcast = <A>(partners: ReadonlyArray<BroadcastPartner>, name: string, payload: A) =>
  broadcastPartitions(partners).map((partition) => ({ partition, name, payload }))

/** Declaring an incident: `investigating` from now, P2 and every service unless the operator says otherwise. */
export const decideDeclare = (
  partners: ReadonlyArray<BroadcastPartner>,
  input: DeclareIncident,
  now: number,
  ids: { readonly incidentId: string }
): IncidentPlan<Schemas["IncidentDeclaredData"]> => {
  const incident: IncidentRecord = {
    id: ids.incidentId,
    title: input.title,
    severity: input.severity ?? "P2",
    affectedServices: [...(input.affectedServices ?? ALL_SERVICES)],
    status: "investigating",
    startedAt: now,
    resolvedAt: null
  }
  const payload: Schemas["IncidentDeclaredData"] = { ...summaryOf(incident), affectedServices: [...incident.affectedServices] }
  return { incident, events: broadcast(partners, "incident.declared", payload), answer: payload }
}

/** Resolving incident `id` (as found, if at all): only an open one, resolved now, its duration since it started. */
export const decideResolve = (
  partners: ReadonlyArray<BroadcastPartner>,
  found: IncidentRecord | undefined,
  id: string,
  now: number
): IncidentPlan<Schemas["IncidentResolvedData"]> | ApiFailure => {
  if (found === undefined) return fail("NOT_FOUND", `incident ${id} was not found`)
  if (found.status === "resolved") return fail("CONFLICT", `incident ${id} is already resolved`)
  const incident: IncidentRecord = { ...found, status: "resolved", resolvedAt: now }
  const payload: Schemas["IncidentResolvedData"] = {
    id,
    title: incident.title,
    severity: incident.severity,
    status: "resolved",
    resolvedAt: isoAt(now),
    duration: durationText(now - incident.startedAt)
  }
  return { incident, events: broadcast(partners, "incident.resolved", payload), answer: payload }
}
