/**
 * The control API (spec/control.yaml, `/_sim/...`, simulation only, admin bearer token): bootstrap partners and
 * top up wallets, read and advance the clock, drive the desk, read the trace. Declared like the partner API: typed
 * by the control contract, bodies decoded, every failure in the envelope. The work is the services'.
 */
import { Effect, Schema } from "effect"
import { IncidentService } from "../../app/incidents/service.ts"
import { ALL_SERVICES } from "../../domain/incidents/decide-incident.ts"
import { PartnerService } from "../../app/partners/service.ts"
import { TradingService } from "../../app/trading/service.ts"
import { PARTNER_OPERATIONS } from "../../contract/catalogue.gen.ts"
import { fail } from "../../domain/errors.ts"
import { EngineClock, isoAt } from "../../sim/clock.ts"
import { type DeskPolicy, ExecutionDesk, MAX_DELAY_SECONDS, SETTLEMENT_FAILED_REASON } from "../../sim/desk.ts"
import { EngineReset } from "../../sim/reset.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { Trace } from "../../sim/trace.ts"
import { DEFAULT_STATUS_PAGE, Maintenance, type MaintenanceState } from "../guards/maintenance.ts"
import { integer, optional, required, text } from "../query.ts"
import { controlRoute, RawBody } from "../route.ts"
import { maxCharacters, minCharacters } from "../body.ts"

/** Longest move of the clock in one call (366 days): time moves job by job and the feed extends its paths step by step. */
const MAX_ADVANCE_SECONDS = 366 * 86_400

const PartnerBody = Schema.Struct({
  businessName: Schema.String.check(minCharacters(2)),
  email: Schema.String.check(Schema.isPattern(/^[^@\s]+@[^@\s]+\.[^@\s]+$/)),
  tier: Schema.optionalKey(Schema.Literals(["starter", "growth", "enterprise"])),
  markupBps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 })))
})
const CreditBody = Schema.Struct({ environment: Schema.Literals(["sandbox", "production"]), amount: Schema.Number })
const AdvanceBody = Schema.Struct({
  seconds: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(MAX_ADVANCE_SECONDS))),
  to: Schema.optionalKey(Schema.String)
})
const FillBody = Schema.Struct({
  price: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))),
  quantity: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0)))
})
const RejectBody = Schema.Struct({
  rejectionCode: Schema.String.check(minCharacters(1)),
  rejectionReason: Schema.String.check(minCharacters(1))
})

const Rate = Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 1 }))
const Delay = Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: MAX_DELAY_SECONDS }))
const Code = Schema.String.check(minCharacters(1), maxCharacters(64))
const Reason = Schema.String.check(minCharacters(1), maxCharacters(500))
const DeskStepBody = Schema.Struct({
  afterSeconds: Delay,
  action: Schema.Literals(["fill", "reject", "failSettlement"]),
  percent: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 }))),
  quantity: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThan(0))),
  price: Schema.optionalKey(Schema.Literals(["quote", "market"])),
  rejectionCode: Schema.optionalKey(Code),
  rejectionReason: Schema.optionalKey(Reason)
})
const DeskPolicyBody = Schema.Struct({
  mode: Schema.Literals(["manual", "auto", "random", "scripted"]),
  delaySeconds: Schema.optionalKey(Delay),
  price: Schema.optionalKey(Schema.Literals(["quote", "market"])),
  seed: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4_294_967_295 }))),
  rejectionRate: Schema.optionalKey(Rate),
  rejectionCodes: Schema.optionalKey(Schema.Array(Code).check(Schema.isMinLength(1), Schema.isMaxLength(20))),
  partialFillRate: Schema.optionalKey(Rate),
  settlementFailureRate: Schema.optionalKey(Rate),
  scripts: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        orderId: Schema.optionalKey(Schema.NullOr(Schema.String.check(minCharacters(1)))),
        steps: Schema.Array(DeskStepBody).check(Schema.isMinLength(1), Schema.isMaxLength(20))
      })
    ).check(Schema.isMinLength(1), Schema.isMaxLength(100))
  )
})
const ResetBody = Schema.Struct({
  at: Schema.optionalKey(Schema.String),
  seed: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 4_294_967_295 })))
})
const FailSettlementBody = Schema.Struct({ rejectionReason: Schema.optionalKey(Reason) })

const MaintenanceBody = Schema.Struct({
  mode: Schema.Literals(["off", "full", "read_only", "outage"]),
  endsAt: Schema.optionalKey(Schema.String),
  statusPage: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/))),
  operations: Schema.optionalKey(Schema.Array(Schema.String))
})

/** Operations a partial outage may name: every operation of the partner contract (D-320). */
const PARTNER_OPERATION_IDS: ReadonlySet<string> = new Set(PARTNER_OPERATIONS.map((o) => o.operationId))
const MAX_OUTAGE_OPERATIONS = 200

/** The operations of a partial outage, checked: only with `outage`, 1-200 known partner operations, no repeats. */
const outageOperations = (mode: string, operations: ReadonlyArray<string> | undefined) => {
  if (operations === undefined) return Effect.succeed(undefined)
  if (mode !== "outage") return Effect.fail(fail("VALIDATION_ERROR", "`operations` scopes an outage: send it with mode outage only", { param: "operations" }))
  if (operations.length === 0 || operations.length > MAX_OUTAGE_OPERATIONS)
    return Effect.fail(
      fail("VALIDATION_ERROR", `\`operations\` names 1 to ${MAX_OUTAGE_OPERATIONS} operations`, { param: "operations", max: MAX_OUTAGE_OPERATIONS })
    )
  const unknown = operations.filter((o) => !PARTNER_OPERATION_IDS.has(o))
  if (unknown.length > 0)
    return Effect.fail(fail("VALIDATION_ERROR", `not operations of the partner contract: ${unknown.join(", ")}`, { param: "operations", invalid: unknown }))
  if (new Set(operations).size !== operations.length)
    return Effect.fail(fail("VALIDATION_ERROR", "`operations` names an operation twice", { param: "operations" }))
  return Effect.succeed(new Set(operations) as ReadonlySet<string>)
}

const IncidentBody = Schema.Struct({
  title: Schema.String.check(minCharacters(1), maxCharacters(200)),
  severity: Schema.optionalKey(Schema.Literals(["P0", "P1", "P2", "P3"])),
  affectedServices: Schema.optionalKey(Schema.Array(Schema.Literals(ALL_SERVICES)))
})

/** The policy as the contract shows it (mutable copies of its lists). */
export const policyWire = (p: DeskPolicy) => {
  switch (p.mode) {
    case "random":
      return { ...p, rejectionCodes: [...p.rejectionCodes] }
    case "scripted":
      return { mode: p.mode, scripts: p.scripts.map((s) => ({ orderId: s.orderId, steps: s.steps.map((step) => ({ ...step })) })) }
    default:
      return p
  }
}

const orderParam = { orderId: required(text) }

const maintenanceWire = (s: MaintenanceState) => ({
  mode: s.mode,
  endsAt: s.endsAt === null ? null : isoAt(s.endsAt),
  statusPage: s.statusPage,
  ...(s.operations === undefined ? {} : { operations: [...s.operations] })
})

export const controlRoutes = [
  controlRoute("createSimPartner", 201, {
    body: PartnerBody,
    handle: ({ body }) => PartnerService.use((p) => p.bootstrap({ ...body, tier: body.tier ?? "starter" }))
  }),
  controlRoute("creditSimMasterWallet", 200, {
    params: { partnerId: required(text) },
    body: CreditBody,
    handle: ({ params, body }) => PartnerService.use((p) => p.creditMaster(params.partnerId, body.environment, body.amount))
  }),
  controlRoute("getSimClock", 200, {
    handle: () => EngineClock.use((clock) => Effect.map(clock.now, (now) => ({ now: isoAt(now), mode: clock.mode })))
  }),
  controlRoute("advanceSimClock", 200, {
    body: AdvanceBody,
    handle: ({ body }) =>
      Effect.gen(function* () {
        if ((body.seconds === undefined) === (body.to === undefined))
          return yield* fail("VALIDATION_ERROR", "give exactly one of seconds or to", { params: ["seconds", "to"] })
        const to = body.to === undefined ? undefined : Date.parse(body.to)
        if (to !== undefined && Number.isNaN(to)) return yield* fail("VALIDATION_ERROR", "`to` must be an ISO 8601 date-time", { param: "to" })
        const now = yield* EngineClock.use((clock) => clock.now)
        if (to !== undefined && to - now > MAX_ADVANCE_SECONDS * 1000)
          return yield* fail("VALIDATION_ERROR", `\`to\` may be at most ${MAX_ADVANCE_SECONDS / 86_400} days ahead`, { param: "to" })
        const result = yield* Scheduler.use((s) => s.advance({ seconds: body.seconds, to }))
        return { now: isoAt(result.now), jobsRun: result.jobsRun }
      })
  }),
  controlRoute("getSimDeskQueue", 200, {
    handle: () => TradingService.use((t) => Effect.map(t.deskQueue, (orders) => ({ orders: [...orders] })))
  }),
  controlRoute("fillSimOrder", 200, {
    params: orderParam,
    body: FillBody,
    handle: ({ params, body }) => TradingService.use((t) => t.deskFill(params.orderId, body))
  }),
  controlRoute("rejectSimOrder", 200, {
    params: orderParam,
    body: RejectBody,
    handle: ({ params, body }) => TradingService.use((t) => t.deskReject(params.orderId, body.rejectionCode, body.rejectionReason))
  }),
  controlRoute("failSimOrderSettlement", 200, {
    params: orderParam,
    body: FailSettlementBody,
    handle: ({ params, body }) => TradingService.use((t) => t.deskFailSettlement(params.orderId, body.rejectionReason ?? SETTLEMENT_FAILED_REASON))
  }),
  controlRoute("getSimDeskPolicy", 200, {
    handle: () => ExecutionDesk.use((d) => Effect.map(d.policy, policyWire))
  }),
  controlRoute("setSimDeskPolicy", 200, {
    body: DeskPolicyBody,
    handle: ({ body }) =>
      Effect.gen(function* () {
        // orders awaiting the desk now: a script naming one of them is scheduled for it at once
        const queued = yield* TradingService.use((t) => t.deskQueue)
        return policyWire(yield* ExecutionDesk.use((d) => d.setPolicy(body, queued)))
      })
  }),
  controlRoute("getSimMaintenance", 200, {
    handle: () => Maintenance.use((m) => Effect.map(m.current, maintenanceWire))
  }),
  controlRoute("setSimMaintenance", 200, {
    body: MaintenanceBody,
    handle: ({ body }) =>
      Effect.gen(function* () {
        const endsAt = body.endsAt === undefined ? null : Date.parse(body.endsAt)
        if (endsAt !== null && Number.isNaN(endsAt)) return yield* fail("VALIDATION_ERROR", "`endsAt` must be an ISO 8601 date-time", { param: "endsAt" })
        const now = yield* EngineClock.use((clock) => clock.now)
        if (endsAt !== null && endsAt <= now) return yield* fail("VALIDATION_ERROR", "`endsAt` must be after the engine's current time", { param: "endsAt" })
        const operations = yield* outageOperations(body.mode, body.operations)
        const next: MaintenanceState = {
          mode: body.mode,
          endsAt: body.mode === "off" ? null : endsAt,
          statusPage: body.statusPage ?? DEFAULT_STATUS_PAGE,
          operations
        }
        return maintenanceWire(yield* Maintenance.use((m) => m.set(next)))
      })
  }),
  controlRoute("resetSimEngine", 200, {
    body: ResetBody,
    handle: ({ body }) =>
      Effect.gen(function* () {
        const at = body.at === undefined ? undefined : Date.parse(body.at)
        if (at !== undefined && Number.isNaN(at)) return yield* fail("VALIDATION_ERROR", "`at` must be an ISO 8601 date-time", { param: "at" })
        const clock = yield* EngineClock
        if (at !== undefined && clock.mode === "system")
          return yield* fail("CONFLICT", "the clock is in system mode: a new world starts at the real time, without `at`")
        const now = yield* clock.nowHere()
        const plan = yield* EngineReset.use((r) => r.schedule({ at, seed: body.seed, now }))
        return { now: isoAt(plan.at), seed: plan.seed, mode: clock.mode }
      })
  }),
  controlRoute("getSimTrace", 200, {
    query: { from: optional(integer({ min: 0 })) },
    handle: ({ query }) =>
      Trace.use((trace) =>
        Effect.map(
          query.from === undefined ? trace.lines : trace.linesFrom(query.from),
          (lines) => new RawBody("application/x-ndjson", lines.map((l) => `${l}\n`).join(""))
        )
      )
  }),
  controlRoute("getSimTraceHash", 200, {
    handle: () => Trace.use((trace) => trace.hash)
  }),
  controlRoute("declareSimIncident", 201, { body: IncidentBody, handle: ({ body }) => IncidentService.use((i) => i.declare(body)) }),
  controlRoute("resolveSimIncident", 200, {
    params: { incidentId: required(text) },
    handle: ({ params }) => IncidentService.use((i) => i.resolve(params.incidentId))
  })
]
