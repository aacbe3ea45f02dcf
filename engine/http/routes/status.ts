/**
 * The public status document, `GET /api/v1/status` (contract ServiceStatus, D-014): no key, not rate-limited per
 * partner; and the partner's SLA view, `GET /sla` (D-098, app/sla.ts). Open incidents (app/incidents/service.ts, D-193) show in both.
 */
import { Effect } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { EngineClock, isoAt } from "../../sim/clock.ts"
import type { IncidentDoc } from "../../app/docs.ts"
import { IncidentService } from "../../app/incidents/service.ts"
import { statusOfIncidents, summaryOf } from "../../domain/incidents/decide-incident.ts"
import { slaView } from "../../app/sla.ts"
import { Maintenance } from "../guards/maintenance.ts"
import { partnerRoute, publicRoute } from "../route.ts"

const SERVICES = ["api", "trading", "market-data", "webhooks", "stream"] as const

/** The public status at `now` with the open incidents: each affected service degraded, the worst severity overall. */
export const statusBody = (now: number, open: ReadonlyArray<IncidentDoc> = []): Schemas["ServiceStatus"] => ({
  status: statusOfIncidents(open),
  version: "1",
  timestamp: isoAt(now),
  maintenance: null,
  services: SERVICES.map((name) => ({
    name,
    status: open.some((i) => i.affectedServices.includes(name)) ? ("degraded" as const) : ("operational" as const)
  })),
  incidents: open.map(summaryOf)
})

export const statusRoutes = [
  publicRoute("getServiceStatus", 200, {
    handle: () =>
      Effect.gen(function* () {
        const now = yield* EngineClock.use((clock) => clock.now)
        return statusBody(now, yield* IncidentService.use((i) => i.open))
      })
  }),
  partnerRoute("getPartnerSla", 200, {
    handle: ({ principal }) =>
      Effect.gen(function* () {
        const now = yield* EngineClock.use((clock) => clock.now)
        const maintenance = yield* Maintenance.use((m) => m.current)
        return slaView(principal, maintenance, now, yield* IncidentService.use((i) => i.open))
      })
  })
]
