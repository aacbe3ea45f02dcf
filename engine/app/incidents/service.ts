/**
 * IncidentService: platform incidents the operator declares and resolves through the control API (D-193), as a
 * dispatcher. Each command is one transaction that loads the partners (and the incident to resolve), asks the rule
 * (domain/incidents/decide-incident.ts) and writes its plan: the incident, then its event in every active partner's
 * partitions, so webhooks and the stream carry it like any event.
 * Owns the incidents' storage and the transactions. Does not own the rules nor maintenance modes
 * (http/guards/maintenance.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type DeclareIncident, decideDeclare, decideResolve, type IncidentPlan } from "../../domain/incidents/decide-incident.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { type IncidentDoc, Incidents, Partners, timeSortKey } from "../docs.ts"

const GLOBAL = "global"

/** Every partner, in the order a broadcast reaches them. */
const allPartners = (tx: ReadTx) => Partners.list(tx, GLOBAL, { limit: 1_000_000, order: "asc" })

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

    /** The incident (sorted by when it started), then its event partition by partition. */
    const writePlan = <A>(tx: Tx, plan: IncidentPlan<A>) =>
      Effect.gen(function* () {
        const { incident } = plan
        yield* Incidents.put(tx, incident.id, GLOBAL, timeSortKey(incident.startedAt, incident.id), incident)
        for (const e of plan.events) yield* events.append(tx, e.partition, e.name, e.payload)
        return plan.answer
      })

    const declare = Effect.fn("IncidentService.declare")(function* (input: DeclareIncident) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.nowHere()
          const incidentId = yield* entropy.idHere("inc")
          return yield* writePlan(tx, decideDeclare(yield* allPartners(tx), input, now, { incidentId }))
        })
      )
    })

    const resolve = Effect.fn("IncidentService.resolve")(function* (id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.nowHere()
          const found = Option.getOrUndefined(yield* Incidents.get(tx, id))
          const plan = yield* liftFailure(decideResolve(yield* allPartners(tx), found, id, now))
          return yield* writePlan(tx, plan)
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
