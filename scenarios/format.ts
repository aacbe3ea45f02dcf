/**
 * The scenario format (scenarios/README.md): a scenario's steps and expectations as its YAML file writes them, what
 * it needs of a target, what a run reports, and the pure helpers over them (loading, `${var}` substitution, subset
 * matching, a step's label). Owns no run: the runner is runner.ts, its over-the-wire planning wire-plan.ts.
 */
import { readFile } from "node:fs/promises"
import { parse } from "yaml"
import type { DeskMode } from "../engine/sim/desk.ts"
import type { ScriptedAnswer, SimReceivers } from "../engine/sim/outbound.ts"

export interface ScenarioStep {
  readonly name?: string
  /** "METHOD /path" on the partner API, with the scenario partner's key for that base. */
  readonly request?: string
  /** "METHOD /_sim/..." on the control API. */
  readonly control?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
  /** Which key to send: the sandbox or live key (default: the one matching the path), or none. */
  readonly as?: "sandbox" | "live" | "none"
  readonly advance?: { readonly seconds?: number; readonly to?: string }
  /** A desk action: `fill`, `reject` or `failSettlement` an order, or set the desk's `policy` (PUT /_sim/desk/policy). */
  readonly desk?: {
    readonly fill?: string
    readonly reject?: string
    readonly failSettlement?: string
    readonly policy?: Record<string, unknown>
    readonly price?: number
    readonly quantity?: number
    readonly rejectionCode?: string
    readonly rejectionReason?: string
  }
  /**
   * Scripts a webhook receiver (the partner's endpoint, simulated by the engine: in-process directly, over the wire
   * through `PUT /_sim/receivers` for the scenario's partner): its next answers in order, then `otherwise` (default
   * 200). With `secret`, the receiver checks every signature it gets (node:crypto).
   */
  readonly receiver?: {
    readonly url: string
    readonly secret?: string
    readonly answers?: ReadonlyArray<ScriptedAnswer>
    readonly otherwise?: ScriptedAnswer
  }
  /**
   * An event stream (`GET /stream`): `open: name` with `request: GET <path>` (and `as`, `headers`) opens it;
   * `read: name` takes the next messages it sent, as many as `expect.messages` lists (waiting for them); `close: name`
   * goes away as a client would.
   */
  readonly stream?: { readonly open?: string; readonly read?: string; readonly close?: string }
  /**
   * Sets the fault plan (`PUT /_sim/faults`, docs/faults.md), each rule scoped to the scenario's partner unless it
   * names one (over the wire the target is shared), or `clear` removes it (`DELETE /_sim/faults`).
   */
  readonly faults?: { readonly seed?: number; readonly rules: ReadonlyArray<Record<string, unknown>> } | "clear"
  readonly expect?: {
    readonly status?: number
    readonly body?: unknown
    readonly events?: ReadonlyArray<string>
    /** Exactly the webhook requests receivers got during this step, in order (each a subset match). */
    readonly received?: ReadonlyArray<Record<string, unknown>>
    /** A stream `read`: the next messages, in order (each a subset of { retry, id, event, data, comment }). */
    readonly messages?: ReadonlyArray<Record<string, unknown>>
  }
  /** name -> path into the response ("body.orderId"). */
  readonly save?: Record<string, string>
}

export interface Scenario {
  readonly name: string
  readonly start: string
  readonly desk?: DeskMode
  readonly partner?: { readonly businessName: string; readonly email: string; readonly tier?: string }
  readonly steps: ReadonlyArray<ScenarioStep>
  /**
   * Over the wire, why this scenario needs a target of its own (e.g. a corporate action acts on every holder of a
   * listing): `sokoni conform` runs it on a fresh world (`POST /_sim/reset` to its start, E-243), or skips it with
   * this reason when the target cannot start over; it runs in-process as usual.
   */
  readonly ownTarget?: string
  /**
   * Over the wire, why it is tied to its calendar date (a holiday): it runs on a fresh world at its start rather than
   * being moved by weeks, or is skipped with this reason when the target's clock is past it and cannot start over.
   */
  readonly dated?: string
  /**
   * What the scenario needs of a target beyond what its steps show (see `scenarioNeeds`, which adds what they show):
   * over the wire it is skipped, naming each need, when the target cannot give one.
   */
  readonly needs?: ReadonlyArray<ScenarioNeed>
}

/**
 * What a scenario can need of a target. control-api: its clock, desk, price or receiver steps, on which its later
 * expectations rest; own-partner: a partner made for it (its tier, a seeded wallet, an idempotency store of its
 * own; declared by a scenario whose expectations rest on its tier), which only the control API makes; fresh-world:
 * a target started over at its start (POST /_sim/reset).
 */
export type ScenarioNeed = "control-api" | "own-partner" | "fresh-world"

/** What the scenario declares it needs, plus what its file shows. */
export const scenarioNeeds = (scenario: Scenario): ReadonlyArray<ScenarioNeed> => {
  const needs = new Set<ScenarioNeed>(scenario.needs ?? [])
  if (needsFreshWorld(scenario)) needs.add("fresh-world")
  if (usesReceivers(scenario) || scenario.steps.some(needsControlApi)) needs.add("control-api")
  return [...needs]
}

export interface StepReport {
  readonly index: number
  readonly label: string
  readonly ok: boolean
  readonly problems: ReadonlyArray<string>
  /** Not run: it needs what the target lacks (the control API); says why. */
  readonly skipped?: string | undefined
  /** The target's clock when the step ran (ISO), when the target has a control API. */
  readonly at?: string | undefined
  /** The answer's status, when the step sent a request. */
  readonly status?: number | undefined
  /** The events the step caused (from the trace) and when, when the target has a control API. */
  readonly events?: ReadonlyArray<{ readonly event: string; readonly at: string }> | undefined
  /** The webhook requests receivers got during the step (event and outcome). */
  readonly received?: ReadonlyArray<string> | undefined
}

export interface RunResult {
  readonly scenario: string
  readonly seed: number
  readonly store: "memory" | "postgres"
  readonly steps: ReadonlyArray<StepReport>
  readonly passed: boolean
  readonly trace: ReadonlyArray<string>
  readonly hash: string
}

export interface RunOptions {
  readonly seed: number
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
  readonly onStep?: (report: StepReport) => void
}

/**
 * How a scenario reaches the engine: in-process (a fresh engine per run, its scripted receivers, the control API) or
 * over the wire (`sokoni conform`: a base URL; the control API, and through it the scripted receivers, only with an
 * admin token).
 */
export interface Transport {
  readonly fetch: (request: Request) => Promise<Response>
  /** The control API's token, or undefined when the target has none (its steps are then skipped). */
  readonly adminToken: string | undefined
  /** The in-process scripted webhook receivers; undefined over the wire (there they are the control API's). */
  readonly receivers: SimReceivers | undefined
  /** Keys to use when the control API cannot create the scenario's partner. */
  readonly keys?: { readonly sandboxKey?: string | undefined; readonly liveKey?: string | undefined } | undefined
  /**
   * Put before every Idempotency-Key the scenario sends (its default per-step keys and those its steps write), so a
   * run against a target that keeps its state never replays an earlier run's key (E-284). Undefined in-process.
   */
  readonly idempotencyPrefix?: string | undefined
}

export interface WireOptions {
  /** The target's origin, e.g. http://127.0.0.1:4010. */
  readonly base: string
  readonly adminToken?: string | undefined
  readonly sandboxKey?: string | undefined
  readonly liveKey?: string | undefined
  readonly seed: number
  readonly fetch?: typeof fetch | undefined
  readonly onStep?: (report: StepReport) => void
  /** See Transport: unique to the run (conform passes its seed and start on the target's clock). */
  readonly idempotencyPrefix?: string | undefined
  /** Where the target serves a contract path (conform's layout: a mock at its root, a `--prefix`); default as written. */
  readonly pathOf?: ((path: string) => string) | undefined
}

/** Whether a step acts through the control API (its control, clock, desk and fault steps). */
export const needsControlApi = (s: ScenarioStep) => s.control !== undefined || s.advance !== undefined || s.desk !== undefined || s.faults !== undefined

/** The body of a `faults` step's PUT: every rule for `partnerId` unless it names a partner itself. */
export const scopedPlan = (faults: Exclude<ScenarioStep["faults"], "clear" | undefined>, partnerId: string) => ({
  ...faults,
  rules: faults.rules.map((rule) => ({ partnerId, ...rule }))
})

/** Whether a scenario scripts webhook receivers or expects what they got. */
export const usesReceivers = (scenario: Scenario) => scenario.steps.some((s) => s.receiver !== undefined || s.expect?.received !== undefined)

/** Whether, over the wire, a scenario runs on a world of its own (after `POST /_sim/reset` to its start, E-243). */
export const needsFreshWorld = (scenario: Scenario) => scenario.ownTarget !== undefined || scenario.dated !== undefined

export const loadScenario = async (file: string): Promise<Scenario> => {
  const parsed = parse(await readFile(file, "utf8")) as Scenario
  if (typeof parsed?.name !== "string" || typeof parsed.start !== "string" || !Array.isArray(parsed.steps)) {
    throw new Error(`${file}: a scenario needs name, start and steps (see scenarios/README.md)`)
  }
  return parsed
}

export const substitute = (value: unknown, vars: Record<string, unknown>): unknown => {
  if (typeof value === "string") {
    const whole = /^\$\{(\w+)\}$/.exec(value)
    if (whole?.[1] !== undefined && whole[1] in vars) return vars[whole[1]]
    return value.replace(/\$\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m))
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars))
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]))
  return value
}

export const pick = (source: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((at, key) => (typeof at === "object" && at !== null ? (at as Record<string, unknown>)[key] : undefined), source)

/** Every key of `expected` must match in `actual` (recursively); arrays must match element by element. */
export const subsetProblems = (expected: unknown, actual: unknown, at = "body"): Array<string> => {
  if (typeof expected !== "object" || expected === null) {
    return Object.is(expected, actual) ? [] : [`${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return [`${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`]
    return expected.flatMap((e, i) => subsetProblems(e, actual[i], `${at}[${i}]`))
  }
  if (typeof actual !== "object" || actual === null) return [`${at}: expected an object, got ${JSON.stringify(actual)}`]
  return Object.entries(expected).flatMap(([k, v]) => subsetProblems(v, (actual as Record<string, unknown>)[k], `${at}.${k}`))
}

export const labelOf = (step: ScenarioStep, index: number) =>
  step.name ??
  (step.stream !== undefined ? `stream ${JSON.stringify(step.stream)}${step.request === undefined ? "" : ` ${step.request}`}` : undefined) ??
  step.request ??
  step.control ??
  (step.advance !== undefined
    ? `advance ${JSON.stringify(step.advance)}`
    : step.desk !== undefined
      ? `desk ${JSON.stringify(step.desk)}`
      : step.receiver !== undefined
        ? `receiver ${step.receiver.url}`
        : step.faults !== undefined
          ? `faults ${JSON.stringify(step.faults)}`
          : `step ${index + 1}`)
