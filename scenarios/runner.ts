/**
 * The scenario runner: loads a declarative scenario (YAML, format in scenarios/README.md), runs it in-process on a
 * manual clock with a given seed and store, checks every expectation, and returns the trace and its hash.
 * Owns: the scenario format, variable saving/substitution, expectations and the report. The engine is used only
 * through HTTP (partner and control API), exactly as an outside client would.
 */
import { readFile } from "node:fs/promises"
import { Effect } from "effect"
import { parse } from "yaml"
import { findExchange, holidayOn } from "../engine/domain/calendar.ts"
import { withTemporaryDatabase } from "../engine/store/pg-temp-db.ts"
import { CONTROL_MOUNTS, CONTROL_PATH, makeValidator } from "../spec/validator.ts"
import { makeInProcessEngine } from "../engine/runtime.ts"
import type { DeskMode } from "../engine/sim/desk.ts"
import { Outbound, type ScriptedAnswer, SimReceivers } from "../engine/sim/outbound.ts"
import { type ReceivedView, receivedView } from "../engine/sim/received-view.ts"

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
  if (usesReceivers(scenario) || scenario.steps.some((s) => s.control !== undefined || s.advance !== undefined || s.desk !== undefined))
    needs.add("control-api")
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

const WEEK_MS = 7 * 86_400_000
// An instant in UTC (`Z`) or with an offset (`+03:00`, as a partner in Nairobi writes a GTD date): both are shifted.
const ISO_INSTANT = /\b(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?)(Z\b|[+-]\d{2}:\d{2}\b)/g
const ISO_DATE = /\b(\d{4}-\d{2}-\d{2})\b(?!T)/g

/**
 * The scenario moved `ms` later (a whole number of weeks): its start and every ISO instant and date in its steps and
 * expectations. Over the wire a target's clock never goes back, so a scenario whose start has passed runs the same
 * weekday and time of a later week. Instants keep their written precision.
 */
export const shiftScenario = (scenario: Scenario, ms: number): Scenario => {
  if (ms === 0) return scenario
  const days = Math.round(ms / 86_400_000)
  const shiftDate = (d: string) => new Date(Date.parse(`${d}T00:00:00.000Z`) + days * 86_400_000).toISOString().slice(0, 10)
  const shiftText = (text: string) =>
    text
      .replace(ISO_INSTANT, (_m, date: string, time: string, zone: string) => `${shiftDate(date)}T${time}${zone}`)
      .replace(ISO_DATE, (_m, date: string) => shiftDate(date))
  const walk = (value: unknown): unknown => {
    if (typeof value === "string") return shiftText(value)
    if (Array.isArray(value)) return value.map(walk)
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
    return value
  }
  return { ...scenario, start: shiftText(scenario.start), steps: walk(scenario.steps) as ReadonlyArray<ScenarioStep> }
}

/**
 * The whole weeks that move `start` past `now` into a stretch as open as the written one: when no day within a week
 * either side of the written start is a holiday of NSE or JSE (the suites' exchanges; a week either side covers
 * their waits and a week of history), weeks whose stretch has one are passed over, so a shifted scenario meets the
 * same sessions.
 */
const weeksPast = (start: string, now: number): number => {
  const from = Date.parse(start)
  const exchanges = ["NSE", "JSE"].flatMap((code) => findExchange(code) ?? [])
  const holidayFree = (ms: number) => {
    for (let day = -7; day <= 7; day++) {
      const date = new Date(ms + day * 86_400_000).toISOString().slice(0, 10)
      if (exchanges.some((exchange) => holidayOn(exchange, date) !== undefined)) return false
    }
    return true
  }
  let weeks = Math.ceil((now - from) / WEEK_MS)
  while (holidayFree(from) && !holidayFree(from + weeks * WEEK_MS) && weeks < 520) weeks += 1
  return weeks * WEEK_MS
}

/** Whether a scenario scripts webhook receivers or expects what they got. */
const usesReceivers = (scenario: Scenario) => scenario.steps.some((s) => s.receiver !== undefined || s.expect?.received !== undefined)

/** Whether, over the wire, a scenario runs on a world of its own (after `POST /_sim/reset` to its start, E-243). */
export const needsFreshWorld = (scenario: Scenario) => scenario.ownTarget !== undefined || scenario.dated !== undefined

/** Why a scenario cannot run over the wire against this target (each need it cannot give), or undefined when it can. */
export const wireObstacle = (scenario: Scenario, hasControl: boolean): string | undefined => {
  if (hasControl) return undefined
  const why: Array<string> = []
  const needs = scenarioNeeds(scenario)
  if (scenario.ownTarget !== undefined) why.push(`it needs a target of its own: ${scenario.ownTarget} (a fresh world through the control API)`)
  else if (needs.includes("fresh-world")) why.push(`it is tied to its date: ${scenario.dated} (a fresh world through the control API)`)
  if (usesReceivers(scenario)) why.push("it scripts webhook receivers, which need the control API")
  else if (needs.includes("control-api")) why.push("its later steps rest on its clock, desk or price steps, which need the control API")
  if (needs.includes("own-partner")) why.push("it needs a partner of its own (its tier, a seeded wallet), which only the control API makes")
  return why.length === 0 ? undefined : `${why.join("; ")} (--admin-token; or run it in-process with \`sokoni scenario run\`)`
}

/**
 * Runs `scenario` against a running target over HTTP. With a control API the target's clock is first advanced to the
 * scenario's start (past it, the scenario moves by whole weeks: a clock never goes back), or, for a scenario that needs
 * a world of its own, the target starts over at its start (`POST /_sim/reset`); its receivers are the control API's.
 * Without one, control, clock and desk steps are skipped and reported as such, and the scenario runs in the target's
 * present.
 */
export const runScenarioOverWire = async (
  given: Scenario,
  options: WireOptions
): Promise<RunResult & { readonly skipped?: string; readonly freshWorld?: boolean }> => {
  const origin = options.base.replace(/\/+$/, "")
  const doFetch = options.fetch ?? globalThis.fetch
  const transport: Transport = {
    fetch: async (request) => {
      const url = new URL(request.url)
      const body = request.body === null ? undefined : await request.text()
      return doFetch(`${origin}${(options.pathOf ?? ((p: string) => p))(url.pathname)}${url.search}`, {
        method: request.method,
        headers: request.headers,
        ...(body === undefined ? {} : { body })
      })
    },
    adminToken: options.adminToken,
    receivers: undefined,
    keys: { sandboxKey: options.sandboxKey, liveKey: options.liveKey },
    idempotencyPrefix: options.idempotencyPrefix
  }
  let scenario = given
  const runOptions: RunOptions = { seed: options.seed, store: "memory", ...(options.onStep === undefined ? {} : { onStep: options.onStep }) }
  const empty = { scenario: scenario.name, seed: options.seed, store: "memory" as const, steps: [], passed: false, trace: [], hash: "" }
  const obstacle = wireObstacle(scenario, options.adminToken !== undefined)
  if (obstacle !== undefined) return { ...empty, skipped: obstacle }
  if (options.adminToken !== undefined) {
    const auth = { authorization: `Bearer ${options.adminToken}` }
    if (needsFreshWorld(scenario)) {
      // A world of its own, its clock at the scenario's start: the target starts over (E-243).
      const reset = await doFetch(`${origin}/_sim/reset`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ at: scenario.start })
      })
      const why = scenario.ownTarget !== undefined ? `it needs a target of its own: ${scenario.ownTarget}` : `it is tied to its date: ${scenario.dated}`
      if (reset.status !== 200)
        return {
          ...empty,
          skipped: `${why}, and the target cannot start over (POST /_sim/reset answered ${reset.status} ${(await reset.text()).slice(0, 200)})`
        }
      await reset.body?.cancel()
      return { ...(await runOn(scenario, runOptions, transport)), freshWorld: true }
    }
    const clock = (await (await doFetch(`${origin}/_sim/clock`, { headers: auth })).json()) as { now: string }
    const now = Date.parse(clock.now)
    // Past its start, the scenario moves by whole weeks (same weekday and time, same market hours; E-195).
    if (now > Date.parse(scenario.start)) scenario = shiftScenario(scenario, weeksPast(scenario.start, now))
    if (now < Date.parse(scenario.start)) {
      const moved = await doFetch(`${origin}/_sim/clock/advance`, {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: JSON.stringify({ to: scenario.start })
      })
      if (moved.status !== 200) return { ...empty, skipped: `the target's clock cannot be moved to the scenario's start (${moved.status})` }
    }
  }
  return runOn(scenario, runOptions, transport)
}

const ADMIN = "scenario-admin-token"
/** Every partner-API answer in a scenario is also checked against the contract. */
const contract = makeValidator()
/** And every control-API answer against spec/control.yaml. */
const controlContract = makeValidator(CONTROL_PATH, CONTROL_MOUNTS)

export const loadScenario = async (file: string): Promise<Scenario> => {
  const parsed = parse(await readFile(file, "utf8")) as Scenario
  if (typeof parsed?.name !== "string" || typeof parsed.start !== "string" || !Array.isArray(parsed.steps)) {
    throw new Error(`${file}: a scenario needs name, start and steps (see scenarios/README.md)`)
  }
  return parsed
}

const substitute = (value: unknown, vars: Record<string, unknown>): unknown => {
  if (typeof value === "string") {
    const whole = /^\$\{(\w+)\}$/.exec(value)
    if (whole?.[1] !== undefined && whole[1] in vars) return vars[whole[1]]
    return value.replace(/\$\{(\w+)\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m))
  }
  if (Array.isArray(value)) return value.map((v) => substitute(v, vars))
  if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, vars)]))
  return value
}

const pick = (source: unknown, path: string): unknown =>
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

const labelOf = (step: ScenarioStep, index: number) =>
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
        : `step ${index + 1}`)

/** A scenario's webhook receivers, wherever they live: script one by URL, take what they got since the last take. */
interface ScenarioReceivers {
  /** Problems when the script was refused (none when it is in force). */
  readonly script: (url: string, answers: ReadonlyArray<ScriptedAnswer>, otherwise: ScriptedAnswer, secret: string | undefined) => Promise<Array<string>>
  readonly take: () => Promise<Array<ReceivedView>>
}

const inProcessReceivers = (receivers: SimReceivers): ScenarioReceivers => ({
  script: async (url, answers, otherwise, secret) => {
    receivers.script(url, answers, otherwise, { secret })
    return []
  },
  take: async () => receivers.take().map((r) => receivedView(r))
})

/**
 * How long a stream `read` waits for the messages it expects before reporting what it got. A failure bound only: a
 * read returns as soon as its messages are there, so a passing run never waits on it, and a loaded machine (or a live
 * target on a wall clock, where a keep-alive takes 15 s) has room before a correct stream is called short.
 */
export const STREAM_READ_LIMIT_MS = 60_000

/** One SSE block as a scenario sees it: its fields, the data parsed when it is JSON. */
export interface StreamMessage {
  readonly retry?: number
  readonly id?: string
  readonly event?: string
  readonly data?: unknown
  readonly comment?: string
}

const parseBlock = (block: string): StreamMessage => {
  const message: Record<string, unknown> = {}
  for (const line of block.split("\n")) {
    if (line.startsWith(":")) message.comment = line.slice(1).trim()
    else {
      const colon = line.indexOf(":")
      const field = colon === -1 ? line : line.slice(0, colon)
      const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (field === "retry") message.retry = Number(value)
      else if (field === "data") {
        try {
          message.data = JSON.parse(value)
        } catch {
          message.data = value
        }
      } else message[field] = value
    }
  }
  return message as StreamMessage
}

/** A stream opened by a scenario: reads in the background, hands out complete messages in order. */
const streamReader = (body: ReadableStream<Uint8Array>) => {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const messages: Array<StreamMessage> = []
  let text = ""
  let ended = false
  let wake: (() => void) | undefined
  void (async () => {
    try {
      while (true) {
        const chunk = await reader.read()
        if (chunk.done) break
        text += decoder.decode(chunk.value, { stream: true })
        let end = text.indexOf("\n\n")
        while (end !== -1) {
          messages.push(parseBlock(text.slice(0, end)))
          text = text.slice(end + 2)
          end = text.indexOf("\n\n")
        }
        wake?.()
      }
    } catch {
      // cancelled
    }
    ended = true
    wake?.()
  })()
  /** The next `count` messages, or fewer when the stream ends or the limit passes first. */
  const take = async (count: number): Promise<Array<StreamMessage>> => {
    const deadline = Date.now() + STREAM_READ_LIMIT_MS
    while (messages.length < count && !ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()))
        wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    }
    return messages.splice(0, count)
  }
  return { take, close: () => reader.cancel() }
}

/**
 * Runs `scenario`. On postgres every run gets a fresh database on the server of `databaseUrl` (dropped afterwards),
 * so a run never sees another run's rows: the same seed must replay from nothing to be comparable.
 */
export const runScenario = (scenario: Scenario, options: RunOptions): Promise<RunResult> => {
  if (options.store === "memory") return runOn(scenario, options)
  const adminUrl = options.databaseUrl
  if (adminUrl === undefined) return Promise.reject(new Error("--store postgres needs --database-url or DATABASE_URL"))
  return Effect.runPromise(
    Effect.scoped(Effect.flatMap(withTemporaryDatabase(adminUrl), (url) => Effect.promise(() => runOn(scenario, { ...options, databaseUrl: url }))))
  )
}

const runOn = async (scenario: Scenario, options: RunOptions, given?: Transport): Promise<RunResult> => {
  const start = Date.parse(scenario.start)
  if (Number.isNaN(start)) throw new Error(`start ${scenario.start} is not an ISO date-time`)
  const secrets = new Map<string, string>()
  const engine =
    given === undefined
      ? (() => {
          const receivers = new SimReceivers()
          const inProcess = makeInProcessEngine({
            outbound: Outbound.simulated(receivers),
            store: options.store,
            databaseUrl: options.databaseUrl,
            clock: "manual",
            start,
            seed: options.seed,
            desk: scenario.desk ?? "manual",
            adminToken: ADMIN
          })
          return {
            fetch: inProcess.fetch,
            adminToken: ADMIN as string | undefined,
            receivers: receivers as SimReceivers | undefined,
            keys: undefined,
            idempotencyPrefix: undefined as string | undefined,
            dispose: inProcess.dispose
          }
        })()
      : { ...given, dispose: async () => undefined }
  const adminToken = engine.adminToken
  const hasControl = adminToken !== undefined
  const vars: Record<string, unknown> = {}
  const reports: Array<StepReport> = []
  const streams = new Map<string, ReturnType<typeof streamReader>>()
  const controlProblems: Array<string> = []
  const call = async (method: string, path: string, headers: Record<string, string>, body: unknown) => {
    const response = await engine.fetch(
      new Request(`http://sokoni.local${path}`, {
        method,
        headers: { "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
    )
    if (response.headers.get("content-type")?.startsWith("text/event-stream") === true && response.body !== null) {
      // An open stream never ends: a `stream: { open }` step keeps it, any other step lets it go at once.
      const opened = streamReader(response.body)
      return { status: response.status, headers: response.headers, body: "", stream: opened }
    }
    const text = await response.text()
    let parsed: unknown = text
    try {
      parsed = text === "" ? null : JSON.parse(text)
    } catch {
      // keep the text: an ndjson trace, for example
    }
    const reply: { status: number; headers: Headers; body: unknown; stream?: ReturnType<typeof streamReader> } = {
      status: response.status,
      headers: response.headers,
      body: parsed
    }
    if (path.startsWith("/_sim/")) controlProblems.push(...controlContract.check({ method, url: path, ...reply }).map((p) => `control contract: ${p}`))
    return reply
  }
  const admin = { authorization: `Bearer ${adminToken ?? ""}` }
  type TraceLine = { kind: string; event?: string; partition?: string; eventId?: string; timestamp?: string }
  const traceLines = async (): Promise<Array<TraceLine>> => {
    const trace = (await call("GET", "/_sim/trace", admin, undefined)).body
    return (typeof trace === "string" ? trace.split("\n").filter((l) => l !== "") : []).map((l) => JSON.parse(l) as TraceLine)
  }
  /**
   * Where the trace stands before a step: its length in-process (the whole trace is kept); over the wire the last
   * event's id, as `serve` keeps only the last lines (a ring), so positions shift once it is full.
   */
  const traceLength = async (): Promise<number | string | undefined> => {
    if (!hasControl) return 0
    if (given === undefined) return ((await call("GET", "/_sim/trace/hash", admin, undefined)).body as { lines: number }).lines
    return (await traceLines()).findLast((l) => l.kind === "event")?.eventId
  }
  /**
   * The scenario's webhook receivers: in-process the engine's SimReceivers directly (as always: the trace stays
   * byte-identical); over the wire the control API's, scripted for this scenario's partner only (E-241).
   */
  const receivers: ScenarioReceivers | undefined =
    engine.receivers !== undefined
      ? inProcessReceivers(engine.receivers)
      : hasControl && usesReceivers(scenario)
        ? {
            script: async (url, answers, otherwise, secret) => {
              const body = { url, partnerId: String(vars.partnerId), answers, otherwise, ...(secret === undefined ? {} : { secret }) }
              const set = await call("PUT", "/_sim/receivers", admin, body)
              return set.status === 200 ? [] : [`receiver: PUT /_sim/receivers answered ${set.status} ${JSON.stringify(set.body)}`]
            },
            take: async () => {
              const got = await call("POST", "/_sim/receivers/take", admin, { partnerId: String(vars.partnerId) })
              return got.status === 200 ? (got.body as { received: Array<ReceivedView> }).received : []
            }
          }
        : undefined
  const clockNow = async () => (hasControl ? ((await call("GET", "/_sim/clock", admin, undefined)).body as { now: string }).now : undefined)
  const eventsSince = async (from: number | string | undefined) => {
    const lines = await traceLines()
    const at = typeof from === "number" ? from : from === undefined ? 0 : lines.findIndex((l) => l.eventId === from) + 1
    return (
      lines
        .slice(at)
        // Over the wire the target is shared: only this scenario partner's events are its own.
        .filter((l) => l.kind === "event" && (given === undefined || String(l.partition).startsWith(`${String(vars.partnerId)}:`)))
        .map((l) => ({ event: l.event as string, at: String(l.timestamp ?? "") }))
    )
  }

  try {
    const partner = scenario.partner ?? { businessName: "Scenario Partner", email: "partner@scenario.test" }
    if (hasControl) {
      const created = await call("POST", "/_sim/partners", admin, { tier: "starter", ...partner })
      if (created.status !== 201) throw new Error(`could not bootstrap the scenario partner: ${JSON.stringify(created.body)}`)
      Object.assign(vars, created.body)
    } else Object.assign(vars, engine.keys ?? {})
    // What the Idempotency-Keys sent start with, for a step that expects one back (an audit record).
    vars.idempotencyPrefix = engine.idempotencyPrefix === undefined ? "" : `${engine.idempotencyPrefix}-`

    for (const [index, rawStep] of scenario.steps.entries()) {
      const step = substitute(rawStep, vars) as ScenarioStep
      const label = labelOf(rawStep, index)
      const needsControl = step.control !== undefined || step.advance !== undefined || step.desk !== undefined
      if (!hasControl && needsControl) {
        const report: StepReport = { index, label, ok: true, problems: [], skipped: "needs the control API (--admin-token)" }
        reports.push(report)
        options.onStep?.(report)
        continue
      }
      const at = await clockNow()
      const before = await traceLength()
      let result: { status: number; headers: Headers; body: unknown; stream?: ReturnType<typeof streamReader> } | undefined
      let messages: Array<StreamMessage> = []
      const receiverProblems: Array<string> = []
      await receivers?.take()
      const streamProblems: Array<string> = []
      if (step.stream?.read !== undefined) {
        const open = streams.get(step.stream.read)
        if (open === undefined) streamProblems.push(`stream ${step.stream.read} is not open`)
        else messages = await open.take(step.expect?.messages?.length ?? 0)
      } else if (step.stream?.close !== undefined) {
        await streams.get(step.stream.close)?.close()
        streams.delete(step.stream.close)
      }
      if (step.stream?.read !== undefined || step.stream?.close !== undefined) {
        // nothing more to send: the stream step is done
      } else if (step.request !== undefined) {
        const [method = "GET", path = "/"] = step.request.split(/\s+/, 2)
        const sandbox = path.startsWith("/api/sandbox/")
        const who = step.as ?? (sandbox ? "sandbox" : "live")
        const key = who === "none" ? {} : { "x-api-key": String(vars[who === "sandbox" ? "sandboxKey" : "liveKey"]) }
        const prefix = engine.idempotencyPrefix === undefined ? "" : `${engine.idempotencyPrefix}-`
        const idem = method === "GET" ? {} : { "idempotency-key": `${prefix}scenario-step-${index + 1}` }
        // Header names are case-insensitive: a step's `Idempotency-Key` replaces the default one, not joins it.
        const stepHeaders = Object.fromEntries(
          Object.entries(step.headers ?? {}).map(([name, value]) => [
            name.toLowerCase(),
            name.toLowerCase() === "idempotency-key" ? `${prefix}${value}` : value
          ])
        )
        result = await call(method, path, { ...key, ...idem, ...stepHeaders }, step.body)
        if (result.stream !== undefined) {
          if (step.stream?.open !== undefined) {
            // A name opened again (a stream a target admitted where a 429 was expected) first lets the earlier one go:
            // a stream left open keeps the whole process alive.
            await streams.get(step.stream.open)?.close()
            streams.set(step.stream.open, result.stream)
          } else await result.stream.close()
        }
      } else if (step.control !== undefined) {
        const [method = "GET", path = "/"] = step.control.split(/\s+/, 2)
        result = await call(method, path, admin, step.body)
      } else if (step.advance !== undefined) {
        result = await call("POST", "/_sim/clock/advance", admin, step.advance)
      } else if (step.desk !== undefined) {
        const { fill, reject, failSettlement, policy, ...rest } = step.desk
        result =
          policy !== undefined
            ? await call("PUT", "/_sim/desk/policy", admin, policy)
            : failSettlement !== undefined
              ? await call("POST", `/_sim/desk/orders/${failSettlement}/fail-settlement`, admin, {
                  ...(rest.rejectionReason === undefined ? {} : { rejectionReason: rest.rejectionReason })
                })
              : fill !== undefined
                ? await call("POST", `/_sim/desk/orders/${fill}/fill`, admin, {
                    ...(rest.price === undefined ? {} : { price: rest.price }),
                    ...(rest.quantity === undefined ? {} : { quantity: rest.quantity })
                  })
                : await call("POST", `/_sim/desk/orders/${reject}/reject`, admin, { rejectionCode: rest.rejectionCode, rejectionReason: rest.rejectionReason })
      } else if (step.receiver !== undefined && receivers !== undefined) {
        // A receiver keeps the secret it was last given for its URL until it is given another.
        if (step.receiver.secret !== undefined) secrets.set(step.receiver.url, step.receiver.secret)
        receiverProblems.push(
          ...(await receivers.script(
            step.receiver.url,
            step.receiver.answers ?? [],
            step.receiver.otherwise ?? { status: 200 },
            secrets.get(step.receiver.url)
          ))
        )
      }
      const received = (await receivers?.take()) ?? []
      const problems: Array<string> = [...controlProblems.splice(0), ...streamProblems, ...receiverProblems]
      const expect = step.expect
      if (result !== undefined && expect?.status === undefined && result.status >= 400)
        problems.push(`unexpected ${result.status}: ${JSON.stringify(result.body)}`)
      if (expect?.status !== undefined && result?.status !== expect.status)
        problems.push(`status: expected ${expect.status}, got ${result?.status} ${JSON.stringify(result?.body)}`)
      if (expect?.body !== undefined) problems.push(...subsetProblems(expect.body, result?.body))
      if (result !== undefined && step.request !== undefined && !Object.keys(step.headers ?? {}).some((h) => /^x-sandbox-force-/i.test(h))) {
        const [method = "GET", path = "/"] = step.request.split(/\s+/, 2)
        problems.push(...contract.check({ method, url: path, status: result.status, headers: result.headers, body: result.body }).map((p) => `contract: ${p}`))
      }
      const happened = hasControl ? await eventsSince(before) : undefined
      const seen = happened?.map((e) => e.event)
      if (expect?.events !== undefined && seen !== undefined) {
        if (JSON.stringify(seen) !== JSON.stringify(expect.events))
          problems.push(`events: expected ${JSON.stringify(expect.events)}, got ${JSON.stringify(seen)}`)
      }
      if (expect?.messages !== undefined) {
        if (messages.length !== expect.messages.length)
          problems.push(`messages: expected ${expect.messages.length}, got ${messages.length}: ${JSON.stringify(messages)}`)
        else problems.push(...expect.messages.flatMap((e, i) => subsetProblems(e, messages[i], `messages[${i}]`)))
      }
      if (expect?.received !== undefined) {
        if (received.length !== expect.received.length)
          problems.push(`received: expected ${expect.received.length} webhook requests, got ${received.length}: ${JSON.stringify(received)}`)
        else problems.push(...expect.received.flatMap((e, i) => subsetProblems(e, received[i], `received[${i}]`)))
      }
      for (const [name, path] of Object.entries(step.save ?? {})) vars[name] = pick({ ...result, received, messages }, path)
      const report: StepReport = {
        index,
        label,
        ok: problems.length === 0,
        problems,
        at,
        status: result?.status,
        events: happened,
        received: received.map((r) => `${String(r.event)} -> ${r.outcome}${r.status === null ? "" : ` ${r.status}`}`)
      }
      reports.push(report)
      options.onStep?.(report)
    }
    const traceText = hasControl ? (await call("GET", "/_sim/trace", admin, undefined)).body : ""
    const hash = hasControl ? ((await call("GET", "/_sim/trace/hash", admin, undefined)).body as { hash: string }) : { hash: "" }
    return {
      scenario: scenario.name,
      seed: options.seed,
      store: options.store,
      steps: reports,
      passed: reports.every((r) => r.ok),
      trace: typeof traceText === "string" ? traceText.split("\n").filter((l) => l !== "") : [],
      hash: hash.hash
    }
  } finally {
    for (const open of streams.values()) await open.close()
    await engine.dispose()
  }
}
