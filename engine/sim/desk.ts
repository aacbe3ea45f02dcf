/**
 * ExecutionDesk: the simulated dealing desk's policy, i.e. when and how PENDING orders get a decision.
 * Owns the policy in force (held by this process, set with `PUT /_sim/desk/policy` or by `serve` flags, E-170) and
 * the plan it makes for each order handed to it: `manual` (orders wait for the control API or a scenario step),
 * `auto` (one fill after a delay at the quote or the market price), `random` (seeded: rejections with a code, partial
 * fills, settlement failures) and `scripted` (steps per order: fill 40% at +2 s, reject the rest...). The plan is made
 * when the order is queued and scheduled as `desk.step` jobs, so a policy applies to orders queued after it is set
 * (a script naming an order already queued is scheduled when the policy is set).
 * Does not own applying a decision (app/trading/desk.ts and jobs.ts do, for every policy and for the control API alike, so a manual
 * fill and an automatic one go through exactly the same code).
 */
import { Context, Effect, Layer, Ref } from "effect"
import { ApiFailure, fail } from "../domain/errors.ts"
import type { Instrument } from "../domain/instruments.ts"
import type { Price4 } from "../domain/money.ts"
import type { OrderRecord } from "../domain/order.ts"
import { Store, type StoreError, type Tx } from "../store/port.ts"
import { EngineClock } from "./clock.ts"
import { MarketFeed } from "./market-feed.ts"
import { Entropy, makeGenerator } from "./random.ts"
import { Scheduler } from "./scheduler.ts"

export type DeskMode = "manual" | "auto"
export const DESK_MODES: ReadonlyArray<DeskMode> = ["manual", "auto"]
/** Job of the desk before policies (a full fill at the quote price); still run if one is stored. */
export const DESK_FILL_JOB = "desk.fill"
/** One planned step of one order. */
export const DESK_STEP_JOB = "desk.step"

export interface DeskFillJob {
  readonly orderId: string
}

export type DeskPrice = "quote" | "market"
export type DeskAction = "fill" | "reject" | "failSettlement"

/** A step as the control API takes it (spec/control.yaml DeskStep). */
export interface DeskStepInput {
  readonly afterSeconds: number
  readonly action: DeskAction
  readonly percent?: number
  readonly quantity?: number
  readonly price?: DeskPrice
  readonly rejectionCode?: string
  readonly rejectionReason?: string
}

export interface DeskScript {
  readonly orderId: string | null
  readonly steps: ReadonlyArray<DeskStepInput>
}

/** The policy in force, every default filled in (spec/control.yaml DeskPolicy). */
export type DeskPolicy =
  | { readonly mode: "manual" }
  | { readonly mode: "auto"; readonly delaySeconds: number; readonly price: DeskPrice }
  | {
      readonly mode: "random"
      readonly seed: number
      readonly delaySeconds: number
      readonly price: DeskPrice
      readonly rejectionRate: number
      readonly rejectionCodes: ReadonlyArray<string>
      readonly partialFillRate: number
      readonly settlementFailureRate: number
    }
  | { readonly mode: "scripted"; readonly scripts: ReadonlyArray<DeskScript> }

/** What the control API may send: the mode and any of its fields. */
export interface DeskPolicyInput {
  readonly mode: "manual" | "auto" | "random" | "scripted"
  readonly delaySeconds?: number
  readonly price?: DeskPrice
  readonly seed?: number
  readonly rejectionRate?: number
  readonly rejectionCodes?: ReadonlyArray<string>
  readonly partialFillRate?: number
  readonly settlementFailureRate?: number
  readonly scripts?: ReadonlyArray<{ readonly orderId?: string | null; readonly steps: ReadonlyArray<DeskStepInput> }>
}

/** A step resolved for one order: what the `desk.step` job carries. `quantity` null = whatever remains. */
export type PlannedStep =
  | { readonly action: "fill"; readonly quantity: number | null; readonly price: DeskPrice }
  | { readonly action: "reject"; readonly rejectionCode: string; readonly rejectionReason: string }
  | { readonly action: "failSettlement"; readonly reason: string }

export interface DeskStepJob {
  readonly orderId: string
  readonly step: PlannedStep
}

/** Default delay of `auto` and `random` (the `serve` default too). */
export const DEFAULT_DELAY_SECONDS = 5
/** Longest delay of a policy or step: one day (a desk that waits longer is a manual desk). */
export const MAX_DELAY_SECONDS = 86_400
/** Rates are fractions with at most 4 decimals: whole basis points of a basis point grid of 10,000. */
const RATE_SCALE = 10_000
export const DEFAULT_REJECTION_CODE = "LIQUIDITY_UNAVAILABLE"
export const SETTLEMENT_FAILED_CODE = "SETTLEMENT_FAILED"
const RANDOM_REJECTION_REASON = "Declined by the simulated desk (random policy)"
const SCRIPTED_REJECTION_REASON = "Declined by the simulated desk (scripted policy)"
export const SETTLEMENT_FAILED_REASON = "Custody settlement failed; the trade was unwound"

const MANUAL: DeskPolicy = { mode: "manual" }

/** The policy, and for a scripted one how many unnamed scripts the orders queued since have taken. */
interface DeskState {
  readonly policy: DeskPolicy
  readonly unnamedUsed: number
}

/** FNV-1a of an order id: mixes the id into the policy's seed, so each order's draws depend on nothing else. */
const hashId = (id: string): number => {
  let h = 2166136261
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619) >>> 0
  return h
}

const toScale = (rate: number) => Math.round(rate * RATE_SCALE)

/** Checks a policy and fills in its defaults. Pure; `engineSeed` is the random policy's default seed. */
export const normalisePolicy = (input: DeskPolicyInput, engineSeed: number): DeskPolicy | ApiFailure => {
  const allowed: Record<DeskPolicyInput["mode"], ReadonlyArray<string>> = {
    manual: [],
    auto: ["delaySeconds", "price"],
    random: ["delaySeconds", "price", "seed", "rejectionRate", "rejectionCodes", "partialFillRate", "settlementFailureRate"],
    scripted: ["scripts"]
  }
  for (const key of Object.keys(input)) {
    if (key !== "mode" && !allowed[input.mode].includes(key))
      return fail("VALIDATION_ERROR", `${key} does not apply to the ${input.mode} policy`, { param: key })
  }
  const delaySeconds = input.delaySeconds ?? DEFAULT_DELAY_SECONDS
  const price = input.price ?? "quote"
  switch (input.mode) {
    case "manual":
      return MANUAL
    case "auto":
      return { mode: "auto", delaySeconds, price }
    case "random": {
      for (const key of ["rejectionRate", "partialFillRate", "settlementFailureRate"] as const) {
        const rate = input[key]
        if (rate !== undefined && (rate < 0 || rate > 1 || !Number.isInteger(Math.round(rate * RATE_SCALE * 1e6) / 1e6)))
          return fail("VALIDATION_ERROR", `${key} must be from 0 to 1 with at most 4 decimals`, { param: key })
      }
      const rejectionRate = input.rejectionRate ?? 0
      const settlementFailureRate = input.settlementFailureRate ?? 0
      if (toScale(rejectionRate) + toScale(settlementFailureRate) > RATE_SCALE)
        return fail("VALIDATION_ERROR", "rejectionRate and settlementFailureRate add up to more than 1", { params: ["rejectionRate", "settlementFailureRate"] })
      return {
        mode: "random",
        seed: input.seed ?? engineSeed,
        delaySeconds,
        price,
        rejectionRate,
        rejectionCodes: input.rejectionCodes ?? [DEFAULT_REJECTION_CODE],
        partialFillRate: input.partialFillRate ?? 0,
        settlementFailureRate
      }
    }
    case "scripted": {
      if (input.scripts === undefined) return fail("MISSING_PARAM", "the scripted policy needs scripts", { param: "scripts" })
      const named = new Set<string>()
      const scripts: Array<DeskScript> = []
      for (const [i, script] of input.scripts.entries()) {
        if (script.orderId != null) {
          if (named.has(script.orderId)) return fail("VALIDATION_ERROR", `two scripts name order ${script.orderId}`, { param: `scripts[${i}].orderId` })
          named.add(script.orderId)
        }
        for (const [j, step] of script.steps.entries()) {
          const problem = stepProblem(step)
          if (problem !== undefined) return fail("VALIDATION_ERROR", problem.message, { param: `scripts[${i}].steps[${j}].${problem.param}` })
        }
        const last = script.steps.at(-1)
        for (const [j, step] of script.steps.entries()) {
          if (step.action !== "fill" && step !== last)
            return fail("VALIDATION_ERROR", `a ${step.action} step ends the order: it must be the script's last step`, {
              param: `scripts[${i}].steps[${j}].action`
            })
        }
        scripts.push({ orderId: script.orderId ?? null, steps: script.steps })
      }
      return { mode: "scripted", scripts }
    }
  }
}

const STEP_FIELDS: Record<DeskAction, ReadonlyArray<string>> = {
  fill: ["afterSeconds", "action", "percent", "quantity", "price"],
  reject: ["afterSeconds", "action", "rejectionCode", "rejectionReason"],
  failSettlement: ["afterSeconds", "action", "rejectionReason"]
}

const stepProblem = (step: DeskStepInput): { message: string; param: string } | undefined => {
  for (const key of Object.keys(step)) {
    if (!STEP_FIELDS[step.action].includes(key)) return { message: `${key} does not apply to a ${step.action} step`, param: key }
  }
  if (step.action === "fill" && step.percent !== undefined && step.quantity !== undefined)
    return { message: "give percent or quantity, not both", param: "percent" }
  if (step.action === "reject" && step.rejectionCode === undefined) return { message: "a reject step needs a rejectionCode", param: "rejectionCode" }
  return undefined
}

/**
 * The steps `policy` plans for `order`, each with its delay from queueing. Pure: a random policy draws from a
 * generator seeded with the policy's seed and the order's id, so the same seed decides the same order the same way
 * whatever else happens in the run.
 */
export const planFor = (policy: DeskPolicy, order: OrderRecord, script: DeskScript | undefined): ReadonlyArray<{ afterSeconds: number; step: PlannedStep }> => {
  switch (policy.mode) {
    case "manual":
      return []
    case "auto":
      return [{ afterSeconds: policy.delaySeconds, step: { action: "fill", quantity: null, price: policy.price } }]
    case "random": {
      const next = makeGenerator((policy.seed ^ hashId(order.orderId)) >>> 0)
      const draw = next() % RATE_SCALE
      const delay = policy.delaySeconds
      const rejectionBps = toScale(policy.rejectionRate)
      if (draw < rejectionBps) {
        const code = policy.rejectionCodes[next() % policy.rejectionCodes.length] ?? DEFAULT_REJECTION_CODE
        return [{ afterSeconds: delay, step: { action: "reject", rejectionCode: code, rejectionReason: RANDOM_REJECTION_REASON } }]
      }
      if (draw < rejectionBps + toScale(policy.settlementFailureRate)) {
        return [{ afterSeconds: delay, step: { action: "failSettlement", reason: SETTLEMENT_FAILED_REASON } }]
      }
      const remaining = order.quantity - order.fills.reduce((n, f) => n + f.quantity, 0)
      if (remaining > 1 && next() % RATE_SCALE < toScale(policy.partialFillRate)) {
        const first = 1 + (next() % (remaining - 1))
        return [
          { afterSeconds: delay, step: { action: "fill", quantity: first, price: policy.price } },
          { afterSeconds: 2 * delay, step: { action: "fill", quantity: null, price: policy.price } }
        ]
      }
      return [{ afterSeconds: delay, step: { action: "fill", quantity: null, price: policy.price } }]
    }
    case "scripted":
      return (script?.steps ?? []).map((s) => ({ afterSeconds: s.afterSeconds, step: plannedOf(s, order.quantity) }))
  }
}

const plannedOf = (s: DeskStepInput, ordered: number): PlannedStep => {
  switch (s.action) {
    case "fill":
      return {
        action: "fill",
        // a percentage of the ordered quantity, rounded down, at least one unit (the job caps it at what remains)
        quantity: s.quantity ?? (s.percent === undefined ? null : Math.max(1, Math.floor((ordered * s.percent) / 100))),
        price: s.price ?? "quote"
      }
    case "reject":
      return { action: "reject", rejectionCode: s.rejectionCode ?? DEFAULT_REJECTION_CODE, rejectionReason: s.rejectionReason ?? SCRIPTED_REJECTION_REASON }
    case "failSettlement":
      return { action: "failSettlement", reason: s.rejectionReason ?? SETTLEMENT_FAILED_REASON }
  }
}

export class ExecutionDesk extends Context.Service<
  ExecutionDesk,
  {
    /** The policy in force. */
    readonly policy: Effect.Effect<DeskPolicy>
    /**
     * Checks and sets the policy; it applies to orders queued from now on, and a script naming one of the `queued`
     * orders (awaiting the desk now) is scheduled for it at once, its steps counted from now.
     */
    readonly setPolicy: (
      input: DeskPolicyInput,
      queued: ReadonlyArray<{ readonly orderId: string; readonly quantity: number }>
    ) => Effect.Effect<DeskPolicy, ApiFailure | StoreError>
    /** Called in the transaction that queued the order for the desk: plans its steps and schedules them. */
    readonly onQueued: (tx: Tx, order: OrderRecord, now: number) => Effect.Effect<void, StoreError>
    /** The market price a `price: market` fill of `order` takes at `now` (the feed's published price). */
    readonly marketPrice: (instrument: Instrument | undefined, now: number) => Effect.Effect<Price4 | undefined>
  }
>()("sokoni/ExecutionDesk") {
  static readonly make = (initial: DeskPolicy) =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      const entropy = yield* Entropy
      const feed = yield* MarketFeed
      const store = yield* Store
      const clock = yield* EngineClock
      // The policy, and for a scripted one the unnamed scripts not used yet (each takes the next order queued).
      const state = yield* Ref.make<DeskState>({ policy: initial, unnamedUsed: 0 })

      const setPolicy = (input: DeskPolicyInput, queued: ReadonlyArray<{ readonly orderId: string; readonly quantity: number }>) =>
        Effect.gen(function* () {
          const policy = normalisePolicy(input, entropy.seed)
          if (policy instanceof ApiFailure) return yield* Effect.fail(policy)
          yield* Ref.set(state, { policy, unnamedUsed: 0 })
          if (policy.mode !== "scripted") return policy
          const now = yield* clock.nowHere()
          const named = queued.flatMap((o) => {
            const script = policy.scripts.find((x) => x.orderId === o.orderId)
            return script === undefined ? [] : [{ order: o, script }]
          })
          if (named.length === 0) return policy
          yield* store.transact((tx) =>
            Effect.forEach(named, ({ order, script }) =>
              Effect.forEach(script.steps, (step) =>
                scheduler.schedule(tx, DESK_STEP_JOB, now + step.afterSeconds * 1000, {
                  orderId: order.orderId,
                  step: plannedOf(step, order.quantity)
                } satisfies DeskStepJob)
              )
            )
          )
          return policy
        })

      // Made once (Effect.fnUntraced), not per order: see sim/scheduler.ts.
      const onQueued = Effect.fnUntraced(function* (tx: Tx, order: OrderRecord, now: number) {
        const script = yield* Ref.modify(state, (s: DeskState): [DeskScript | undefined, DeskState] => {
          if (s.policy.mode !== "scripted") return [undefined, s]
          const named = s.policy.scripts.find((x) => x.orderId === order.orderId)
          if (named !== undefined) return [named, s]
          const unnamed = s.policy.scripts.filter((x) => x.orderId === null)
          const next = unnamed[s.unnamedUsed]
          return next === undefined ? [undefined, s] : [next, { ...s, unnamedUsed: s.unnamedUsed + 1 }]
        })
        const { policy } = yield* Ref.get(state)
        for (const planned of planFor(policy, order, script)) {
          yield* scheduler.scheduleHere(tx, DESK_STEP_JOB, now + planned.afterSeconds * 1000, {
            orderId: order.orderId,
            step: planned.step
          } satisfies DeskStepJob)
        }
      })

      const marketPrice = (instrument: Instrument | undefined, now: number) =>
        instrument === undefined ? Effect.succeed(undefined) : Effect.map(feed.observe(instrument, now), (o): Price4 | undefined => o.price)

      return ExecutionDesk.of({ policy: Effect.map(Ref.get(state), (s) => s.policy), setPolicy, onQueued, marketPrice })
    })

  /** The desk `serve` starts with: manual, or auto filling at the quote price after `autoFillDelaySeconds`. */
  static readonly layer = (mode: DeskMode, autoFillDelaySeconds = DEFAULT_DELAY_SECONDS) =>
    Layer.effect(ExecutionDesk, ExecutionDesk.make(mode === "auto" ? { mode: "auto", delaySeconds: autoFillDelaySeconds, price: "quote" } : MANUAL))
}
