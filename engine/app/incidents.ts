/**
 * IncidentService: platform incidents the operator declares and resolves through the control API (D-193), each
 * broadcast to every active partner in both environments (`incident.declared`, `incident.resolved`) in the same
 * transaction as the incident, so webhooks and the stream carry them like any event. Owns the incident records, the
 * broadcast and the overall status they imply. Does not own maintenance modes (http/guards/maintenance.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import { type IncidentDoc, Incidents, Partners, timeSortKey } from "./docs.ts"
import { partitionOf } from "./principal.ts"

export const ALL_SERVICES = ["api", "trading", "market-data", "webhooks", "stream"] as const
const GLOBAL = "global"

export interface DeclareIncident {
  readonly title: string
  readonly severity?: IncidentDoc["severity"] | undefined
  readonly affectedServices?: ReadonlyArray<string> | undefined
}

/** "45m 0s", "2h 5m 30s", "12s": the spec's human-readable duration. Pure. */
export const durationText = (ms: number): string => {
  const total = Math.max(0, Math.floor(ms / 1000))
  const [h, m, s] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60]
  return h > 0 ? `${h}h ${m}m ${s}s` : m > 0 ? `${m}m ${s}s` : `${s}s`
}

/** The overall status open incidents imply: the worst severity wins (P0 major outage, P1 partial, else degraded). */
export const statusOfIncidents = (open: ReadonlyArray<Pick<IncidentDoc, "severity">>): "operational" | "degraded" | "partial_outage" | "major_outage" =>
  open.some((i) => i.severity === "P0")
    ? "major_outage"
    : open.some((i) => i.severity === "P1")
      ? "partial_outage"
      : open.length > 0
        ? "degraded"
        : "operational"

export const summaryOf = (i: IncidentDoc): Schemas["IncidentSummary"] => ({
  id: i.id,
  title: i.title,
  severity: i.severity,
  status: i.status,
  startedAt: isoAt(i.startedAt)
})

export class IncidentService extends Context.Service<
  IncidentService,
  {
    readonly declare: (input: DeclareIncident) => Effect.Effect<Schemas["IncidentDeclaredData"], StoreError>
    readonly resolve: (id: string) => Effect.Effect<Schemas["IncidentResolvedData"], ApiFailure | StoreError>
    readonly open: Effect.Effect<ReadonlyArray<IncidentDoc>, StoreError>
  }
>()("sokoni/IncidentService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog

    /** Every partition of every active partner: where a broadcast goes. */
    const activePartitions = (tx: ReadTx) =>
      Effect.map(Partners.list(tx, GLOBAL, { limit: 1_000_000, order: "asc" }), (partners) =>
        partners.filter((p) => p.status !== "suspended").flatMap((p) => [partitionOf(p.partnerId, "sandbox"), partitionOf(p.partnerId, "production")])
      )

    const declare = Effect.fn("IncidentService.declare")(function* (input: DeclareIncident) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const incident: IncidentDoc = {
            id: yield* entropy.id("inc"),
            title: input.title,
            severity: input.severity ?? "P2",
            affectedServices: [...(input.affectedServices ?? ALL_SERVICES)],
            status: "investigating",
            startedAt: now,
            resolvedAt: null
          }
          yield* Incidents.put(tx, incident.id, GLOBAL, timeSortKey(now, incident.id), incident)
          const payload: Schemas["IncidentDeclaredData"] = { ...summaryOf(incident), affectedServices: [...incident.affectedServices] }
          for (const partition of yield* activePartitions(tx)) yield* events.append(tx, partition, "incident.declared", payload)
          return payload
        })
      )
    })

    const resolve = Effect.fn("IncidentService.resolve")(function* (id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const found = yield* Incidents.get(tx, id)
          if (Option.isNone(found)) return yield* Effect.fail(fail("NOT_FOUND", `incident ${id} was not found`))
          if (found.value.status === "resolved") return yield* Effect.fail(fail("CONFLICT", `incident ${id} is already resolved`))
          const resolved: IncidentDoc = { ...found.value, status: "resolved", resolvedAt: now }
          yield* Incidents.put(tx, id, GLOBAL, timeSortKey(resolved.startedAt, id), resolved)
          const payload: Schemas["IncidentResolvedData"] = {
            id,
            title: resolved.title,
            severity: resolved.severity,
            status: "resolved",
            resolvedAt: isoAt(now),
            duration: durationText(now - resolved.startedAt)
          }
          for (const partition of yield* activePartitions(tx)) yield* events.append(tx, partition, "incident.resolved", payload)
          return payload
        })
      )
    })

    const open = store.read((tx) =>
      Effect.map(Incidents.list(tx, GLOBAL, { limit: 10_000, order: "asc" }), (all) => all.filter((i) => i.status !== "resolved"))
    )

    return IncidentService.of({ declare, resolve, open })
  })

  static readonly layer = Layer.effect(IncidentService, IncidentService.make)
}
