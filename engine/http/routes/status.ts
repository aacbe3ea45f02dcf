/**
 * The public status document, `GET /api/v1/status` (contract ServiceStatus, D-014): no key, not rate-limited per
 * partner; and the partner's SLA view, `GET /sla` (D-098, app/sla.ts). Incidents arrive with the platform work.
 */
import { Effect } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { EngineClock, isoAt } from "../../sim/clock.ts"
import { slaView } from "../../app/sla.ts"
import { Maintenance } from "../guards/maintenance.ts"
import { partnerRoute, publicRoute } from "../route.ts"

const SERVICES = ["api", "trading", "market-data", "webhooks", "stream"] as const

export const statusBody = (now: number): Schemas["ServiceStatus"] => ({
  status: "operational",
  version: "1",
  timestamp: isoAt(now),
  maintenance: null,
  services: SERVICES.map((name) => ({ name, status: "operational" as const })),
  incidents: []
})

export const statusRoutes = [
  publicRoute("getServiceStatus", 200, { handle: () => EngineClock.use((clock) => Effect.map(clock.now, statusBody)) }),
  partnerRoute("getPartnerSla", 200, {
    handle: ({ principal }) =>
      Effect.gen(function* () {
        const now = yield* EngineClock.use((clock) => clock.now)
        const maintenance = yield* Maintenance.use((m) => m.current)
        return slaView(principal, maintenance, now)
      })
  })
]
