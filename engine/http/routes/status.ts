/**
 * The public status document, `GET /api/v1/status` (contract ServiceStatus, D-014): no key, not rate-limited per
 * partner. Incidents and maintenance windows arrive with the guards issue.
 */
import { Effect } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { EngineClock, isoAt } from "../../sim/clock.ts"
import { publicRoute } from "../route.ts"

const SERVICES = ["api", "trading", "market-data", "webhooks", "stream"] as const

export const statusBody = (now: number): Schemas["ServiceStatus"] => ({
  status: "operational",
  version: "1",
  timestamp: isoAt(now),
  maintenance: null,
  services: SERVICES.map((name) => ({ name, status: "operational" as const })),
  incidents: []
})

export const statusRoutes = [publicRoute("getServiceStatus", 200, { handle: () => EngineClock.use((clock) => Effect.map(clock.now, statusBody)) })]
