/**
 * Control routes of the fault plan (spec/control.yaml, tag "Faults"; docs/faults.md): read, set and clear it. The
 * contract checks the body's shape first; `parsePlan` adds what JSON Schema cannot say (which fields go with which
 * fault, `every` or `probability`, known operations). The plan's state and decisions are sim/faults.ts's.
 */
import { Effect, Schema } from "effect"
import { PARTNER_OPERATIONS } from "../../contract/catalogue.gen.ts"
import { isPlanProblem, parsePlan } from "../../domain/faults.ts"
import { fail } from "../../domain/errors.ts"
import type { ControlResponseBody } from "../../contract/wire.ts"
import { Faults, type FaultsView } from "../../sim/faults.ts"
import { optional, text } from "../query.ts"
import { controlRoute } from "../route.ts"

/** Operations a rule may name: every operation of the partner contract. */
export const PARTNER_OPERATION_IDS: ReadonlySet<string> = new Set(PARTNER_OPERATIONS.map((o) => o.operationId))

const PlanBody = Schema.Struct({ seed: Schema.optionalKey(Schema.Number), rules: Schema.Array(Schema.Unknown) })

type State = ControlResponseBody<"getSimFaults", 200>

/** The contract's wire copy of the state: a rule shows only the fields it was given (no `undefined` keys). */
const wire = (v: FaultsView): State => ({
  seed: v.seed,
  setAt: v.setAt,
  rules: v.rules.map((r) => Object.fromEntries(Object.entries(r).filter(([, value]) => value !== undefined)) as State["rules"][number]),
  met: v.met.map((m) => ({ ...m }))
})

export const faultControlRoutes = [
  controlRoute("getSimFaults", 200, {
    query: { partnerId: optional(text) },
    handle: ({ query }) =>
      Faults.use((f) =>
        Effect.map(f.view, (v) => wire(query.partnerId === undefined ? v : { ...v, met: v.met.filter((m) => m.partnerId === query.partnerId) }))
      )
  }),
  controlRoute("setSimFaults", 200, {
    body: PlanBody,
    handle: ({ body }) =>
      Effect.gen(function* () {
        const plan = parsePlan(body, PARTNER_OPERATION_IDS)
        if (isPlanProblem(plan)) return yield* fail("VALIDATION_ERROR", plan.problem, { param: plan.param })
        return wire(yield* Faults.use((f) => f.set(plan)))
      })
  }),
  controlRoute("clearSimFaults", 200, { handle: () => Faults.use((f) => Effect.map(f.clear, wire)) })
]
