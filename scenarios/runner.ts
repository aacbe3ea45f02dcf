/**
 * The scenario runner: loads a declarative scenario (YAML, format in scenarios/README.md), runs it in-process on a
 * manual clock with a given seed and store, checks every expectation, and returns the trace and its hash.
 * Owns: running the steps, variable saving, expectations and the report. The engine is used only through HTTP
 * (partner and control API), exactly as an outside client would. The format and its pure helpers are format.ts's,
 * the over-the-wire planning wire-plan.ts's, the stream reading stream-reader.ts's (re-exported here).
 */
import { Effect } from "effect"
import { withTemporaryDatabase } from "../engine/store/pg-temp-db.ts"
import { CONTROL_MOUNTS, CONTROL_PATH, makeValidator } from "../spec/validator.ts"
import { makeInProcessEngine } from "../engine/runtime.ts"
import { Outbound, SimReceivers } from "../engine/sim/outbound.ts"
import {
  labelOf,
  needsControlApi,
  needsFreshWorld,
  pick,
  type RunOptions,
  type RunResult,
  type Scenario,
  type ScenarioStep,
  scopedPlan,
  type StepReport,
  substitute,
  subsetProblems,
  type Transport,
  usesReceivers,
  type WireOptions
} from "./format.ts"
import { controlReceivers, inProcessReceivers, type ScenarioReceivers } from "./receivers.ts"
import { type StreamMessage, streamReader } from "./stream-reader.ts"
import { shiftScenario, weeksPast, wireObstacle } from "./wire-plan.ts"

export * from "./format.ts"
export { STREAM_READ_LIMIT_MS, type StreamMessage } from "./stream-reader.ts"
export { shiftScenario, wireObstacle } from "./wire-plan.ts"

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
      // JSON lines stay text, even one line of them (a step's trace since it began).
      if (response.headers.get("content-type")?.includes("ndjson") !== true) parsed = text === "" ? null : JSON.parse(text)
    } catch {
      // keep the text
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
  const traceLines = async (from?: number): Promise<Array<TraceLine>> => {
    const trace = (await call("GET", from === undefined ? "/_sim/trace" : `/_sim/trace?from=${from}`, admin, undefined)).body
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
        ? controlReceivers(
            (method, path, body) => call(method, path, admin, body),
            () => String(vars.partnerId)
          )
        : undefined
  const clockNow = async () => (hasControl ? ((await call("GET", "/_sim/clock", admin, undefined)).body as { now: string }).now : undefined)
  const eventsSince = async (from: number | string | undefined) => {
    // In-process only what came since the step began (positions are the whole run's); reading the whole trace every
    // step made a long scenario quadratic (issue 25). Over the wire the ring shifts, so the last event id marks it.
    const lines = typeof from === "number" ? await traceLines(from) : await traceLines()
    const at = typeof from === "number" ? 0 : from === undefined ? 0 : lines.findIndex((l) => l.eventId === from) + 1
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
      if (!hasControl && needsControlApi(step)) {
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
      } else if (step.faults !== undefined) {
        const plan = step.faults === "clear" ? undefined : scopedPlan(step.faults, String(vars.partnerId))
        result = await call(plan === undefined ? "DELETE" : "PUT", "/_sim/faults", admin, plan)
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
