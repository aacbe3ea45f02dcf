/**
 * Fault plans (docs/faults.md): what an operator asks the engine to break, and the pure rules that decide each
 * injection. Owns the plan's shape, its checking (from the control API, `serve --faults FILE` and scenario steps
 * alike) and the decision "does this rule fire now". Does not own the state of a running plan (sim/faults.ts), the
 * answers (http/guards/faults.ts) nor the deliveries and streams they act on.
 */

/** 429, 500, 503, latency and timeout act on requests; drop..delay on webhook delivery attempts; cut on streams. */
export const REQUEST_FAULTS = ["429", "500", "503", "latency", "timeout"] as const
export const WEBHOOK_FAULTS = ["drop", "duplicate", "reorder", "delay"] as const
export const STREAM_FAULTS = ["cut"] as const
export const FAULT_KINDS = [...REQUEST_FAULTS, ...WEBHOOK_FAULTS, ...STREAM_FAULTS] as const

export type FaultKind = (typeof FAULT_KINDS)[number]
export type FaultTarget = "requests" | "webhooks" | "stream"

export const targetOf = (kind: FaultKind): FaultTarget =>
  (REQUEST_FAULTS as ReadonlyArray<string>).includes(kind) ? "requests" : (WEBHOOK_FAULTS as ReadonlyArray<string>).includes(kind) ? "webhooks" : "stream"

export interface FaultRule {
  readonly fault: FaultKind
  /** Requests only: the partner-contract operations it hits (operationId); absent: every operation. */
  readonly operations?: ReadonlyArray<string> | undefined
  /** Only this partner's requests, deliveries or streams; absent: every partner's. */
  readonly partnerId?: string | undefined
  /** Fires on the Nth, 2Nth, ... matching target (default 1: every one). Not with `probability`. */
  readonly every?: number | undefined
  /** Fires on each matching target with this probability, drawn from the plan's seeded stream. Not with `every`. */
  readonly probability?: number | undefined
  /** 429 and 503: the Retry-After announced, seconds (default 1). */
  readonly retryAfterSeconds?: number | undefined
  /** latency: engine milliseconds added before the request runs. */
  readonly latencyMs?: number | undefined
  /** timeout: engine seconds the socket is held with no answer before the engine hangs up (default 30). */
  readonly holdSeconds?: number | undefined
  /** delay: engine milliseconds an attempt is held; reorder: the window a seeded hold is drawn from (default 5000). */
  readonly delayMs?: number | undefined
  /** cut: the stream ends after this many event messages (keep-alive comments do not count). */
  readonly afterMessages?: number | undefined
  /** Engine seconds after the plan is set from which the rule no longer fires (absent: until the plan changes). */
  readonly healAfterSeconds?: number | undefined
}

export interface FaultPlan {
  /** The seed of the plan's draws; absent: the engine's `--seed`. */
  readonly seed?: number | undefined
  readonly rules: ReadonlyArray<FaultRule>
}

export const DEFAULT_RETRY_AFTER_S = 1
export const DEFAULT_HOLD_S = 30
export const DEFAULT_REORDER_WINDOW_MS = 5_000
export const MAX_RULES = 50
/** Bounds of the durations a rule may name: a day of engine time. */
export const MAX_SECONDS = 86_400
export const MAX_MS = MAX_SECONDS * 1000

const UINT32 = 2 ** 32

/**
 * Whether a rule fires on its `count`th matching target (1-based) with the uniform draw `draw` (uint32). Pure. A
 * probability rule fires when draw / 2^32 < p: never at 0, always at 1.
 */
export const fires = (rule: FaultRule, count: number, draw: number): boolean =>
  rule.probability !== undefined ? draw / UINT32 < rule.probability : count % (rule.every ?? 1) === 0

/** When a rule set at `setAt` heals (epoch ms), or undefined when it never does. */
export const healsAt = (rule: FaultRule, setAt: number): number | undefined =>
  rule.healAfterSeconds === undefined ? undefined : setAt + rule.healAfterSeconds * 1000

export interface PlanProblem {
  readonly problem: string
  readonly param: string
}

const isInt = (v: unknown, min: number, max: number): v is number => typeof v === "number" && Number.isInteger(v) && v >= min && v <= max

/** The fields only some kinds take: naming one on another kind is a mistake worth refusing. */
const ONLY_FOR: Readonly<Record<string, ReadonlyArray<FaultKind>>> = {
  operations: REQUEST_FAULTS,
  retryAfterSeconds: ["429", "503"],
  latencyMs: ["latency"],
  holdSeconds: ["timeout"],
  delayMs: ["delay", "reorder"],
  afterMessages: ["cut"]
}

const BOUNDS: Readonly<Record<string, readonly [number, number]>> = {
  every: [1, 1_000_000],
  retryAfterSeconds: [1, MAX_SECONDS],
  latencyMs: [1, MAX_MS],
  holdSeconds: [1, MAX_SECONDS],
  delayMs: [1, MAX_MS],
  afterMessages: [1, 1_000_000],
  healAfterSeconds: [0, 366 * MAX_SECONDS]
}

/** What is wrong with rule `i`, or undefined. `known`: the operationIds a rule may name. Pure. */
const ruleProblem = (rule: Record<string, unknown>, i: number, known: ReadonlySet<string>): PlanProblem | undefined => {
  const at = (field: string) => `rules[${i}].${field}`
  const kind = rule.fault as FaultKind
  for (const [field, kinds] of Object.entries(ONLY_FOR))
    if (rule[field] !== undefined && !kinds.includes(kind)) return { problem: `${field} applies to ${kinds.join(", ")} only, not ${kind}`, param: at(field) }
  for (const [field, [min, max]] of Object.entries(BOUNDS))
    if (rule[field] !== undefined && !isInt(rule[field], min, max)) return { problem: `${field} must be an integer from ${min} to ${max}`, param: at(field) }
  const p = rule.probability
  if (p !== undefined && (typeof p !== "number" || !(p >= 0 && p <= 1)))
    return { problem: "probability must be a number from 0 to 1", param: at("probability") }
  if (p !== undefined && rule.every !== undefined) return { problem: "a rule fires `every` N or with a `probability`, not both", param: at("every") }
  if (kind === "latency" && rule.latencyMs === undefined) return { problem: "a latency rule needs latencyMs", param: at("latencyMs") }
  if (kind === "delay" && rule.delayMs === undefined) return { problem: "a delay rule needs delayMs", param: at("delayMs") }
  if (kind === "cut" && rule.afterMessages === undefined) return { problem: "a cut rule needs afterMessages", param: at("afterMessages") }
  if (rule.partnerId !== undefined && (typeof rule.partnerId !== "string" || rule.partnerId === ""))
    return { problem: "partnerId must be a partner id", param: at("partnerId") }
  const ops = rule.operations
  if (ops !== undefined) {
    if (!Array.isArray(ops) || ops.length === 0 || ops.some((o) => typeof o !== "string"))
      return { problem: "operations lists operationIds of the partner contract", param: at("operations") }
    const unknown = ops.filter((o) => !known.has(o as string))
    if (unknown.length > 0) return { problem: `not operations of the partner contract: ${unknown.join(", ")}`, param: at("operations") }
  }
  return undefined
}

const RULE_FIELDS: ReadonlySet<string> = new Set(["fault", ...Object.keys(ONLY_FOR), ...Object.keys(BOUNDS), "probability", "partnerId"])

/**
 * Checks a plan as it arrives (JSON or YAML already parsed): a FaultPlan, or the first problem and where it is. A
 * numeric `fault` (YAML's `fault: 503`) is read as its string. Pure.
 */
export const parsePlan = (raw: unknown, known: ReadonlySet<string>): FaultPlan | PlanProblem => {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { problem: "a fault plan is an object with `rules`", param: "body" }
  const { seed, rules, ...rest } = raw as Record<string, unknown>
  const extra = Object.keys(rest)
  if (extra.length > 0) return { problem: `unknown field(s) ${extra.join(", ")}: a plan has seed and rules`, param: extra[0] as string }
  if (seed !== undefined && !isInt(seed, 0, UINT32 - 1)) return { problem: "seed must be an integer from 0 to 4294967295", param: "seed" }
  if (!Array.isArray(rules) || rules.length > MAX_RULES) return { problem: `rules is a list of at most ${MAX_RULES} rules`, param: "rules" }
  const out: Array<FaultRule> = []
  for (const [i, given] of rules.entries()) {
    if (typeof given !== "object" || given === null) return { problem: "a rule is an object", param: `rules[${i}]` }
    const rule = { ...(given as Record<string, unknown>) }
    if (typeof rule.fault === "number") rule.fault = String(rule.fault)
    if (!(FAULT_KINDS as ReadonlyArray<unknown>).includes(rule.fault))
      return { problem: `fault must be one of ${FAULT_KINDS.join(", ")}`, param: `rules[${i}].fault` }
    const unknownField = Object.keys(rule).find((k) => !RULE_FIELDS.has(k))
    if (unknownField !== undefined) return { problem: `unknown rule field ${unknownField}`, param: `rules[${i}].${unknownField}` }
    const problem = ruleProblem(rule, i, known)
    if (problem !== undefined) return problem
    out.push(rule as unknown as FaultRule)
  }
  return seed === undefined ? { rules: out } : { seed: seed as number, rules: out }
}

export const isPlanProblem = (value: FaultPlan | PlanProblem): value is PlanProblem => "problem" in value
