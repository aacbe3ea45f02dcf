/**
 * Faults: the fault plan in force (docs/faults.md) and every decision it makes. Owns the plan's state in this process
 * (like the maintenance mode and the desk's policy: a plan set through one engine process acts on that process), the
 * per-rule counters and seeded draws, the waits on the engine clock, the trace lines of what was injected, and the
 * record of which faults each client met and how it answered (retried with the same key? after Retry-After?).
 * Does not own the answers (http/guards/faults.ts), the deliveries (events/webhook-delivery.ts) nor the streams
 * (app/stream.ts), which ask here and act.
 *
 * Determinism (E-371): each rule draws from a stream of its own (`Entropy.stream("faults/<rule>")` under the plan's
 * seed, the run's by default), one draw per matching target in the order the targets arrive, so the same plan, seed
 * and traffic inject the same faults byte for byte, on either store, and no other id of the run moves.
 */
import { Context, Deferred, Effect, Layer } from "effect"
import { type FaultKind, type FaultPlan, type FaultRule, fires, healsAt, targetOf } from "../domain/faults.ts"
import { answerFindings, cutFinding, deliveryFinding, metFinding, reconnectFinding } from "../findings/fault-findings.ts"
import { Findings } from "../findings/findings.ts"
import { EngineClock, isoAt } from "./clock.ts"
import { Entropy } from "./random.ts"
import { Scheduler } from "./scheduler.ts"
import { Trace } from "./trace.ts"

interface LiveRule {
  readonly rule: FaultRule
  readonly index: number
  readonly healsAt: number | undefined
  readonly draw: () => number
  matched: number
  injected: number
}

interface Live {
  readonly plan: FaultPlan
  readonly seed: number
  readonly setAt: number
  readonly rules: ReadonlyArray<LiveRule>
}

/** What a request meets: engine milliseconds of latency first, then an answer in place of running it (or none). */
export interface RequestFault {
  readonly latencyMs: number
  readonly answer?: { readonly fault: "429" | "500" | "503"; readonly retryAfterSeconds?: number } | { readonly fault: "timeout"; readonly holdMs: number }
}

/** What a webhook delivery attempt meets. */
export type DeliveryFault = { readonly fault: "drop" | "duplicate" } | { readonly fault: "delay" | "reorder"; readonly holdMs: number }

/** A fault a client met, and how it answered it (its next request with the same key or the same bytes). */
export interface MetFault {
  readonly at: number
  readonly partnerId: string
  readonly operationId: string
  readonly method: string
  readonly fault: FaultKind
  readonly retryAfterSeconds: number | null
  readonly idempotencyKey: string | null
  /** Where the retry is looked for: the partition and the key, or the request's bytes when it had no key. */
  readonly partition: string
  readonly fingerprint: string
  answer: { readonly at: number; readonly sameKey: boolean; readonly honouredRetryAfter: boolean | null } | null
}

/** The most faults remembered (oldest forgotten first): a long `serve` must not grow without bound. */
export const MAX_MET = 1_000

export interface FaultsView {
  readonly seed: number | null
  readonly setAt: string | null
  readonly rules: ReadonlyArray<FaultRule & { readonly healsAt: string | null; readonly healed: boolean; readonly matched: number; readonly injected: number }>
  readonly met: ReadonlyArray<{
    readonly at: string
    readonly partnerId: string
    readonly operationId: string
    readonly fault: string
    readonly retryAfterSeconds: number | null
    readonly idempotencyKey: string | null
    readonly answer: { readonly at: string; readonly sameKey: boolean; readonly honouredRetryAfter: boolean | null } | null
  }>
}

export class Faults extends Context.Service<
  Faults,
  {
    readonly view: Effect.Effect<FaultsView>
    /** Replaces the plan (counters and draws start over; heal times count from now). */
    readonly set: (plan: FaultPlan) => Effect.Effect<FaultsView>
    readonly clear: Effect.Effect<FaultsView>
    /** False while no plan has a rule and no fault met awaits its retry: the hot path then asks nothing more. */
    readonly busy: () => boolean
    /** The fault a request to `operationId` meets now (undefined: none). `declared`: the statuses it may answer. */
    readonly forRequest: (input: {
      readonly operationId: string
      readonly declared: ReadonlyArray<number>
      readonly partnerId: string | undefined
      readonly now: number
    }) => Effect.Effect<RequestFault | undefined>
    readonly forDelivery: (input: {
      readonly partnerId: string
      readonly deliveryId: string
      readonly attempt: number
      readonly now: number
    }) => Effect.Effect<DeliveryFault | undefined>
    /**
     * The cut a stream opening now meets: after how many messages, unless healed by then. `resumed`: it asked for a
     * position (Last-Event-ID or `since`), which is how a client cut before should come back.
     */
    readonly streamCut: (input: {
      readonly partnerId: string
      readonly now: number
      readonly resumed: boolean
    }) => Effect.Effect<{ readonly afterMessages: number; readonly healsAt: number | undefined } | undefined>
    /** A stream was cut: the partner is told, and its next stream is watched for how it comes back. */
    readonly streamWasCut: (partnerId: string, afterMessages: number) => Effect.Effect<void>
    /** Waits `ms` of engine time (a Scheduler timer: advanced by the clock, never by real time in simulation). */
    readonly wait: (ms: number) => Effect.Effect<void>
    /** Remembers a fault a client met now (after any latency it waited), to see how it answers it. */
    readonly met: (fault: Omit<MetFault, "answer" | "at">) => Effect.Effect<void>
    /** A client's request: when it retries a fault it met, how (its answer is recorded); returns that fault. */
    readonly observe: (input: {
      readonly partition: string
      readonly idempotencyKey: string | undefined
      readonly fingerprint: string
      readonly now: number
    }) => Effect.Effect<MetFault | undefined>
  }
>()("sokoni/Faults") {
  static readonly make = (initial: FaultPlan | undefined) =>
    Effect.gen(function* () {
      const clock = yield* EngineClock
      const entropy = yield* Entropy
      const scheduler = yield* Scheduler
      const trace = yield* Trace
      const findings = yield* Findings
      let live: Live | undefined
      const metFaults: Array<MetFault> = []
      // How many of them still await their retry: kept as a count, as `busy` runs on every request.
      let unanswered = 0
      // Partners whose stream was cut and who have not opened another yet.
      const cutPartners = new Set<string>()

      const install = (plan: FaultPlan, setAt: number) => {
        const seed = plan.seed ?? entropy.seed
        live = {
          plan,
          seed,
          setAt,
          rules: plan.rules.map((rule, index) => ({
            rule,
            index,
            healsAt: healsAt(rule, setAt),
            draw: entropy.stream(`faults/${index}`, seed),
            matched: 0,
            injected: 0
          }))
        }
      }

      /** The state as the control API shows it, `healed` said against the engine clock `now`. */
      const viewAt = (now: number): FaultsView => ({
        seed: live?.seed ?? null,
        setAt: live === undefined ? null : isoAt(live.setAt),
        rules: (live?.rules ?? []).map((r) => ({
          ...r.rule,
          healsAt: r.healsAt === undefined ? null : isoAt(r.healsAt),
          healed: r.healsAt !== undefined && r.healsAt <= now,
          matched: r.matched,
          injected: r.injected
        })),
        met: metFaults.map((m) => ({
          at: isoAt(m.at),
          partnerId: m.partnerId,
          operationId: m.operationId,
          fault: m.fault,
          retryAfterSeconds: m.retryAfterSeconds,
          idempotencyKey: m.idempotencyKey,
          answer: m.answer === null ? null : { ...m.answer, at: isoAt(m.answer.at) }
        }))
      })
      const viewNow = Effect.map(clock.now, viewAt)

      /**
       * The rules of `target` that fire on this one, in plan order: each rule that applies counts it and draws once,
       * fired or not, so one rule's decisions never depend on another's.
       */
      const firing = (target: "requests" | "webhooks" | "stream", now: number, applies: (rule: FaultRule) => boolean): Array<LiveRule> => {
        const out: Array<LiveRule> = []
        for (const r of live?.rules ?? []) {
          if (targetOf(r.rule.fault) !== target || (r.healsAt !== undefined && now >= r.healsAt) || !applies(r.rule)) continue
          r.matched++
          const draw = r.rule.probability === undefined ? 0 : r.draw()
          if (fires(r.rule, r.matched, draw)) out.push(r)
        }
        return out
      }
      const forPartner = (rule: FaultRule, partnerId: string | undefined) => rule.partnerId === undefined || rule.partnerId === partnerId
      const note = (r: LiveRule, line: Record<string, unknown>) => {
        r.injected++
        return trace.record({ kind: "fault", rule: r.index, fault: r.rule.fault, ...line })
      }

      const forRequest: Faults["Service"]["forRequest"] = ({ operationId, declared, partnerId, now }) =>
        Effect.suspend(() => {
          const hit = firing(
            "requests",
            now,
            (rule) =>
              forPartner(rule, partnerId) &&
              (rule.operations === undefined || rule.operations.includes(operationId)) &&
              // A status the operation does not declare is never injected: every faulted answer is one the contract allows.
              (!["429", "500", "503"].includes(rule.fault) || declared.includes(Number(rule.fault)))
          )
          if (hit.length === 0) return Effect.succeed(undefined)
          let latencyMs = 0
          let answer: RequestFault["answer"]
          const lines: Array<Effect.Effect<void>> = []
          for (const r of hit) {
            if (r.rule.fault === "latency") latencyMs += r.rule.latencyMs ?? 0
            else if (answer !== undefined) continue
            else if (r.rule.fault === "timeout") answer = { fault: "timeout", holdMs: (r.rule.holdSeconds ?? 30) * 1000 }
            else {
              const fault = r.rule.fault as "429" | "500" | "503"
              answer = fault === "500" ? { fault } : { fault, retryAfterSeconds: r.rule.retryAfterSeconds ?? 1 }
            }
            lines.push(note(r, { operationId, at: isoAt(now) }))
          }
          return Effect.as(Effect.all(lines, { discard: true }), answer === undefined ? { latencyMs } : { latencyMs, answer })
        })

      const forDelivery: Faults["Service"]["forDelivery"] = ({ partnerId, deliveryId, attempt, now }) =>
        Effect.suspend(() => {
          const r = firing("webhooks", now, (rule) => forPartner(rule, partnerId))[0]
          if (r === undefined) return Effect.succeed(undefined)
          const fault: DeliveryFault =
            r.rule.fault === "delay"
              ? { fault: "delay", holdMs: r.rule.delayMs ?? 0 }
              : r.rule.fault === "reorder"
                ? // Held for a seeded part of the window, so deliveries sent meanwhile overtake it (E-373).
                  { fault: "reorder", holdMs: 1 + (r.draw() % (r.rule.delayMs ?? 5_000)) }
                : { fault: r.rule.fault as "drop" | "duplicate" }
          return Effect.as(
            Effect.andThen(
              note(r, { deliveryId, attempt, at: isoAt(now), ...("holdMs" in fault ? { holdMs: fault.holdMs } : {}) }),
              findings.record(deliveryFinding(partnerId, fault.fault))
            ),
            fault
          )
        })

      const streamCut: Faults["Service"]["streamCut"] = ({ partnerId, now, resumed }) =>
        Effect.suspend(() => {
          const cameBack = cutPartners.delete(partnerId) ? findings.record(reconnectFinding(partnerId, resumed)) : Effect.void
          const r = firing("stream", now, (rule) => forPartner(rule, partnerId))[0]
          if (r === undefined) return Effect.as(cameBack, undefined)
          const afterMessages = r.rule.afterMessages ?? 1
          return Effect.as(Effect.andThen(cameBack, note(r, { partnerId, at: isoAt(now), afterMessages })), { afterMessages, healsAt: r.healsAt })
        })

      const wait = (ms: number) =>
        Effect.gen(function* () {
          const done = yield* Deferred.make<void>()
          const cancel = yield* scheduler.timer((yield* clock.nowHere()) + ms, Deferred.succeed(done, undefined).pipe(Effect.asVoid))
          // A client that goes away (an interrupted request) leaves no timer behind.
          yield* Deferred.await(done).pipe(Effect.onInterrupt(() => cancel))
        })

      const observe: Faults["Service"]["observe"] = ({ partition, idempotencyKey, fingerprint, now }) =>
        Effect.suspend(() => {
          const m = metFaults.find(
            (f) =>
              f.answer === null &&
              f.partition === partition &&
              ((idempotencyKey !== undefined && f.idempotencyKey === idempotencyKey) || f.fingerprint === fingerprint)
          )
          if (m === undefined) return Effect.succeed(undefined)
          unanswered--
          m.answer = {
            at: now,
            sameKey: m.idempotencyKey !== null && m.idempotencyKey === idempotencyKey,
            honouredRetryAfter: m.retryAfterSeconds === null ? null : now >= m.at + m.retryAfterSeconds * 1000
          }
          const said = answerFindings(m, { ...m.answer, afterSeconds: Math.round((now - m.at) / 1000) })
          return Effect.as(Effect.forEach(said, findings.record, { discard: true }), m)
        })

      if (initial !== undefined) install(initial, yield* clock.nowHere())
      return Faults.of({
        view: viewNow,
        set: (plan) =>
          Effect.flatMap(clock.now, (now) =>
            Effect.andThen(
              Effect.sync(() => install(plan, now)),
              viewNow
            )
          ),
        clear: Effect.andThen(
          Effect.sync(() => {
            live = undefined
          }),
          viewNow
        ),
        busy: () => (live !== undefined && live.rules.length > 0) || unanswered > 0 || cutPartners.size > 0,
        forRequest,
        forDelivery,
        streamCut,
        streamWasCut: (partnerId, afterMessages) =>
          Effect.andThen(
            Effect.sync(() => cutPartners.add(partnerId)),
            findings.record(cutFinding(partnerId, afterMessages))
          ),
        wait,
        met: (fault) =>
          Effect.andThen(
            Effect.map(clock.now, (at) => {
              metFaults.push({ ...fault, at, answer: null })
              unanswered++
              if (metFaults.length > MAX_MET && metFaults.shift()?.answer === null) unanswered--
            }),
            findings.record(metFinding(fault))
          ),
        observe
      })
    })

  static readonly layer = (initial?: FaultPlan) => Layer.effect(Faults, Faults.make(initial))
}
