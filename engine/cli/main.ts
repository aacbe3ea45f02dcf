/**
 * `sokoni`: the command line. `serve` runs the engine over HTTP; `scenario run` runs a scenario file in-process;
 * `webhooks check` grades a partner's webhook receiver; `conform` checks a target over the wire.
 * Owns flag parsing and what is printed; the work is the runtime's and the runner's.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Cause, Console, Data, Effect, Exit, Option, Runtime } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { load } from "./load.ts"
import { nextInstantAllOpen } from "../domain/calendar.ts"
import { signatureHeaderNames } from "../events/webhook-delivery.ts"
import { MIN_WINDOW_MS } from "../http/guards/rate-limit.ts"
import { startServer } from "../http/node-server.ts"
import { CLOCK_MODES, isoAt, processUptimeMs, wallClockNow, wallSleep } from "../sim/clock.ts"
import { Trace } from "../sim/trace.ts"
import { DESK_MODES } from "../sim/desk.ts"
import { DEFECT_DESCRIPTIONS, isPlantedDefect, PLANTED_DEFECTS } from "../sim/defects.ts"
import { freshSeed } from "../sim/random.ts"

const storeFlag = Flag.Literals("store", ["memory", "postgres"]).pipe(
  Flag.withDescription("Where state lives: memory (embedded default) or postgres"),
  Flag.withDefault("memory" as const)
)
const databaseUrlFlag = Flag.String("database-url").pipe(Flag.withDescription("PostgreSQL URL for --store postgres (default: $DATABASE_URL)"), Flag.optional)
const seedFlag = Flag.Int("seed").pipe(
  Flag.withDescription("Seed of every random choice (ids, prices, desk); printed first so a run can be replayed"),
  Flag.optional
)

/** A wrong or missing flag: one line on stderr and exit code 2. */
const usageError = (message: string) => Console.error(`sokoni: ${message}`).pipe(Effect.andThen(Effect.sync(() => (process.exitCode = 2))), Effect.asVoid)

class StartupError extends Data.TaggedError("StartupError")<{ readonly message: string }> {}

/** One line that says what stopped the engine from starting and what to do about it (no stack). */
const startupProblem = (error: unknown, port: number): string => {
  const e = error as { code?: string; message?: string; cause?: unknown }
  if (e?.code === "EADDRINUSE") return `port ${port} is already in use: stop the other process or pass --port`
  if (e?.code === "EACCES") return `no permission to listen on port ${port}: pass --port above 1023`
  const text = String(e?.message ?? error)
  const cause = e?.cause === undefined ? "" : ` (${String((e.cause as { message?: string }).message ?? e.cause).split("\n")[0]})`
  return `could not start the engine: ${text.split("\n")[0]}${cause}`
}

/** serve keeps a bounded trace: the last `ring` lines in memory, and every line in `file` when one is named. */
const traceLayer = (ring: number, file: string | undefined) => {
  const kept = ring > 0 ? Trace.layerRing(ring) : Trace.layerOff
  return file === undefined ? kept : Trace.layerFile(file, kept)
}

const databaseUrlOf = (flag: Option.Option<string>) => Option.getOrUndefined(flag) ?? process.env.DATABASE_URL

const serve = Command.make(
  "serve",
  {
    port: Flag.Int("port").pipe(Flag.withDefault(4010), Flag.withDescription("Port to listen on (127.0.0.1)")),
    store: storeFlag,
    databaseUrl: databaseUrlFlag,
    clock: Flag.Literals("clock", CLOCK_MODES).pipe(
      Flag.withDefault("follow" as const),
      Flag.withDescription("system: real time; follow: real time plus an offset that /_sim/clock/advance grows; manual: frozen until advanced")
    ),
    start: Flag.String("start").pipe(
      Flag.optional,
      Flag.withDescription("ISO date-time the clock starts at, or `now` (default: now, or the next moment NSE and JSE are both open)")
    ),
    seed: seedFlag,
    desk: Flag.Literals("desk", DESK_MODES).pipe(
      Flag.withDefault("auto" as const),
      Flag.withDescription("manual: orders wait for /_sim/desk; auto: filled at the quote price after --desk-delay seconds")
    ),
    deskDelay: Flag.Int("desk-delay").pipe(Flag.withDefault(5), Flag.withDescription("Seconds an auto desk waits before filling")),
    adminToken: Flag.String("admin-token").pipe(Flag.optional, Flag.withDescription("Bearer token of the /_sim control API (default: derived from the seed)")),
    rateLimit: Flag.Literals("rate-limit", ["on", "off"]).pipe(
      Flag.withDefault("on" as const),
      Flag.withDescription("off admits every request (benchmarks only); X-RateLimit-* headers are still sent")
    ),
    rateWindow: Flag.Int("rate-window-seconds").pipe(
      Flag.withDefault(60),
      Flag.withDescription("Length of the rate-limit window (the API's is 60 s); load profiles shorten it to prove limits in seconds")
    ),
    traceRing: Flag.Int("trace-ring").pipe(
      Flag.withDefault(1000),
      Flag.withDescription("How many trace lines serve keeps for GET /_sim/trace (0 keeps none); memory stays bounded")
    ),
    traceFile: Flag.String("trace").pipe(Flag.optional, Flag.withDescription("Also append every trace line (JSON lines) to this file as it happens")),
    signatureHeaders: Flag.String("webhook-signature-header").pipe(
      Flag.atLeast(0),
      Flag.withDescription(
        "Also send each webhook's signature under this header name (repeatable), e.g. x-mystocks-signature for receivers written against the public service; x-service-signature is always sent"
      )
    ),
    demo: Flag.Boolean("demo").pipe(Flag.withDefault(false), Flag.withDescription("Create a demo partner and print its keys")),
    plantDefect: Flag.String("plant-defect").pipe(
      Flag.optional,
      Flag.withDescription(
        `TEST ONLY: build the engine with named faults (comma-separated: ${PLANTED_DEFECTS.join(", ")}) to prove sokoni conform catches them`
      )
    )
  },
  Effect.fn("sokoni.serve")(function* (flags) {
    const seed = Option.getOrElse(flags.seed, freshSeed)
    yield* Console.log(`seed ${seed}`)
    const wall = wallClockNow()
    const rawStart = Option.getOrUndefined(flags.start)
    let start: number
    if (rawStart === undefined) start = flags.clock === "system" ? wall : (nextInstantAllOpen(wall) ?? wall)
    else if (rawStart === "now") start = wall
    else {
      start = Date.parse(rawStart)
      if (Number.isNaN(start)) return yield* Effect.fail(new Error(`--start ${rawStart} is not an ISO date-time`))
    }
    const adminToken = Option.getOrElse(flags.adminToken, () => `adm_${seed.toString(36)}`)
    const plantDefects = (Option.getOrUndefined(flags.plantDefect) ?? "")
      .split(",")
      .map((d) => d.trim())
      .filter((d) => d !== "")
    const unknownDefects = plantDefects.filter((d) => !isPlantedDefect(d))
    if (unknownDefects.length > 0) return yield* usageError(`--plant-defect: ${unknownDefects.join(", ")} unknown; choose from ${PLANTED_DEFECTS.join(", ")}`)
    if (flags.rateWindow * 1000 < MIN_WINDOW_MS) return yield* Effect.fail(new Error(`--rate-window-seconds must be at least ${MIN_WINDOW_MS / 1000}`))
    const signatureHeaders = signatureHeaderNames(flags.signatureHeaders)
    if ("problem" in signatureHeaders) return yield* usageError(signatureHeaders.problem)
    const config = {
      store: flags.store,
      databaseUrl: databaseUrlOf(flags.databaseUrl),
      clock: flags.clock,
      start,
      seed,
      desk: flags.desk,
      deskDelaySeconds: flags.deskDelay,
      adminToken,
      rateLimit: flags.rateLimit,
      rateWindowMs: flags.rateWindow * 1000,
      webhookSignatureHeaders: signatureHeaders,
      trace: traceLayer(flags.traceRing, Option.getOrUndefined(flags.traceFile)),
      plantDefects: plantDefects.filter(isPlantedDefect)
    }
    const base = `http://127.0.0.1:${flags.port}`
    const running = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => startServer(config, flags.port), catch: (error) => new StartupError({ message: startupProblem(error, flags.port) }) }),
      (server) => Effect.promise(() => server.stop())
    ).pipe(
      Effect.catchTag("StartupError", (e) =>
        Console.error(`sokoni: ${e.message}`).pipe(Effect.andThen(Effect.sync(() => process.exit(1))), Effect.as(undefined))
      )
    )
    if (running === undefined) return
    yield* Console.log(
      `clock ${flags.clock}, starting ${isoAt(start)}${start !== wall && rawStart === undefined ? " (markets were closed at wall time; --start now keeps it)" : ""}`
    )
    for (const d of plantDefects.filter(isPlantedDefect)) yield* Console.log(`PLANTED DEFECT ${d} (test only): ${DEFECT_DESCRIPTIONS[d]}`)
    if (flags.rateWindow !== 60) yield* Console.log(`rate-limit window ${flags.rateWindow} s (compressed for load profiles; the API's is 60 s)`)
    if (signatureHeaders.length > 0) yield* Console.log(`webhook signatures also sent as ${signatureHeaders.join(", ")} (besides x-service-signature)`)
    yield* Console.log(`store ${flags.store}, desk ${flags.desk}${flags.desk === "auto" ? ` (fills after ${flags.deskDelay} s)` : ""}`)
    yield* Console.log(`production  ${base}/api/v1/partner`)
    yield* Console.log(`sandbox     ${base}/api/sandbox/v1/partner`)
    yield* Console.log(`control     ${base}/_sim   (Authorization: Bearer ${adminToken})`)
    if (flags.demo) {
      const response = yield* Effect.promise(() =>
        fetch(`${base}/_sim/partners`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify({ businessName: "Demo Partner", email: "demo@sokoni.test", tier: "starter" })
        }).then((r) => r.json() as Promise<{ sandboxKey: string; liveKey: string }>)
      )
      yield* Console.log(`demo partner: sandbox key ${response.sandboxKey}`)
      yield* Console.log(`              live key    ${response.liveKey} (production wallet starts at 0)`)
      yield* Console.log(`try: curl -s -H "x-api-key: ${response.sandboxKey}" ${base}/api/sandbox/v1/partner/stocks`)
    }
    yield* Console.log(`ready in ${Math.round(processUptimeMs())} ms (Ctrl-C stops: in-flight requests finish first)`)
    return yield* Effect.never
  }, Effect.scoped)
).pipe(Command.withDescription("Run the engine over HTTP"))

const run = Command.make(
  "run",
  {
    file: Argument.String("file").pipe(Argument.withDescription("Scenario file (YAML)")),
    seed: seedFlag,
    store: storeFlag,
    databaseUrl: databaseUrlFlag,
    trace: Flag.String("trace").pipe(Flag.optional, Flag.withDescription("Write the trace (JSON lines) to this file"))
  },
  Effect.fn("sokoni.scenario.run")(function* (flags) {
    const seed = Option.getOrElse(flags.seed, freshSeed)
    yield* Console.log(`seed ${seed}`)
    // Loaded on demand: the runner brings the contract validator, which `serve` does not need at start-up.
    const { loadScenario, runScenario } = yield* Effect.promise(() => import("../../scenarios/runner.ts"))
    const scenario = yield* Effect.promise(() => loadScenario(flags.file))
    yield* Console.log(`scenario: ${scenario.name} (${scenario.steps.length} steps, store ${flags.store})`)
    const result = yield* Effect.promise(() =>
      runScenario(scenario, {
        seed,
        store: flags.store,
        databaseUrl: databaseUrlOf(flags.databaseUrl),
        onStep: (r) => {
          console.log(`  ${r.ok ? "ok  " : "FAIL"} ${String(r.index + 1).padStart(2)} ${r.label}`)
          for (const p of r.problems) console.log(`         ${p}`)
        }
      })
    )
    const tracePath = Option.getOrUndefined(flags.trace)
    if (tracePath !== undefined) {
      const { writeFile } = yield* Effect.promise(() => import("node:fs/promises"))
      yield* Effect.promise(() => writeFile(tracePath, result.trace.map((l) => `${l}\n`).join("")))
      yield* Console.log(`trace written to ${tracePath} (${result.trace.length} lines)`)
    }
    const failed = result.steps.filter((s) => !s.ok).length
    yield* Console.log(`${result.steps.length - failed} passed, ${failed} failed`)
    if (failed > 0) {
      yield* Console.log(`replay: npx sokoni scenario run ${flags.file} --seed ${seed} --store ${flags.store}`)
    }
    yield* Console.log(`trace hash ${result.hash}`)
    if (failed > 0) process.exitCode = 1
  })
).pipe(Command.withDescription("Run a scenario file in-process on a virtual clock and print its trace hash"))

const webhooksCheck = Command.make(
  "check",
  {
    url: Flag.String("url").pipe(Flag.withDescription("Your webhook receiver's URL (what you register with POST /webhooks)")),
    secret: Flag.String("secret").pipe(Flag.optional, Flag.withDescription("The webhook secret deliveries are signed with (default: $SOKONI_WEBHOOK_SECRET)")),
    events: Flag.String("events").pipe(
      Flag.optional,
      Flag.withDescription("Comma-separated events to send (default: order.pending,order.filled,order.rejected,deposit.confirmed,kyc.updated,test.event)")
    ),
    seed: seedFlag,
    report: Flag.String("report").pipe(Flag.optional, Flag.withDescription("Directory to write report.xml (JUnit), report.ctrf.json and report.html into"))
  },
  Effect.fn("sokoni.webhooks.check")(function* (flags) {
    const seed = Option.getOrElse(flags.seed, freshSeed)
    yield* Console.log(`seed ${seed}`)
    const secret = Option.getOrUndefined(flags.secret) ?? process.env.SOKONI_WEBHOOK_SECRET
    if (secret === undefined || secret === "") return yield* usageError("give the webhook secret: --secret S, or SOKONI_WEBHOOK_SECRET")
    // Loaded on demand, as the scenario runner is: `serve` does not need the checker.
    const { CHECKABLE_EVENTS, isCheckableEvent } = yield* Effect.promise(() => import("../conform/receiver-events.ts"))
    const { checkReceiver } = yield* Effect.promise(() => import("../conform/webhook-receiver-check.ts"))
    const { Outbound } = yield* Effect.promise(() => import("../sim/outbound.ts"))
    const named = Option.map(flags.events, (list) =>
      list
        .split(",")
        .map((e) => e.trim())
        .filter((e) => e !== "")
    )
    const unknown = Option.getOrElse(named, () => []).filter((e) => !isCheckableEvent(e))
    if (unknown.length > 0) return yield* usageError(`--events: ${unknown.join(", ")} not sendable; choose from ${CHECKABLE_EVENTS.join(", ")}`)
    const events = Option.getOrUndefined(named)?.filter(isCheckableEvent)
    if (events !== undefined && events.length === 0) return yield* usageError("--events names no event")
    yield* Console.log(`checking ${flags.url}`)
    const report = yield* checkReceiver({ url: flags.url, secret, seed, startMs: wallClockNow(), events }).pipe(Effect.provide(Outbound.network))
    for (const check of report.checks) {
      const mark = check.status === "passed" ? "ok  " : check.status === "failed" ? "FAIL" : "skip"
      yield* Console.log(`  ${mark} ${`${check.score ?? 0}/${check.maxScore ?? 0}`.padStart(4)}  ${check.name}`)
      if (check.message !== undefined) yield* Console.log(`            ${check.message}`)
    }
    const score = report.checks.reduce((sum, c) => sum + (c.score ?? 0), 0)
    const maxScore = report.checks.reduce((sum, c) => sum + (c.maxScore ?? 0), 0)
    const failed = report.checks.filter((c) => c.status === "failed").length
    yield* Console.log(`score ${score}/${maxScore}, ${failed === 0 ? "every check passed" : `${failed} failed`}`)
    const dir = Option.getOrUndefined(flags.report)
    if (dir !== undefined) {
      const { writeReports } = yield* Effect.promise(() => import("../report/write.ts"))
      const paths = yield* Effect.promise(() => writeReports(report, dir))
      yield* Console.log(`reports: ${paths.join(", ")}`)
    }
    if (failed > 0) {
      yield* Console.log(`replay: ${report.checks[0]?.replay ?? ""}`)
      process.exitCode = 1
    }
  })
).pipe(Command.withDescription("Sign and send deliveries to your webhook receiver and grade how it answers"))

const conform = Command.make(
  "conform",
  {
    base: Flag.String("base").pipe(
      Flag.withDescription("The target's origin, e.g. http://127.0.0.1:4010 (the partner bases /api/v1/partner and /api/sandbox/v1/partner are appended)")
    ),
    sandboxKey: Flag.String("sandbox-key").pipe(
      Flag.optional,
      Flag.withDescription("Sandbox key to check with (default: $SOKONI_SANDBOX_KEY; not needed with --admin-token)")
    ),
    liveKey: Flag.String("live-key").pipe(
      Flag.optional,
      Flag.withDescription("Production key to check with (default: $SOKONI_LIVE_KEY; not needed with --admin-token)")
    ),
    adminToken: Flag.String("admin-token").pipe(
      Flag.optional,
      Flag.withDescription("Bearer token of the target's /_sim control API (our engine): fresh partners, virtual clock, desk; nothing skipped")
    ),
    seed: seedFlag,
    report: Flag.String("report").pipe(Flag.optional, Flag.withDescription("Directory to write report.xml (JUnit), report.ctrf.json and report.html into")),
    only: Flag.String("only").pipe(Flag.optional, Flag.withDescription("Comma-separated check ids to run (as printed in a failure's replay command)")),
    progress: Flag.Boolean("progress").pipe(Flag.withDefault(false), Flag.withDescription("Print the progress line on stderr even when it is not a terminal"))
  },
  Effect.fn("sokoni.conform")(function* (flags) {
    const seed = Option.getOrElse(flags.seed, freshSeed)
    yield* Console.log(`seed ${seed}`)
    const { runConform } = yield* Effect.promise(() => import("../conform/conform.ts"))
    const adminToken = Option.getOrUndefined(flags.adminToken) ?? process.env.SOKONI_ADMIN_TOKEN
    const sandboxKey = Option.getOrUndefined(flags.sandboxKey) ?? process.env.SOKONI_SANDBOX_KEY
    const liveKey = Option.getOrUndefined(flags.liveKey) ?? process.env.SOKONI_LIVE_KEY
    const only = Option.getOrUndefined(flags.only)
      ?.split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "")
    if (adminToken === undefined && sandboxKey === undefined && liveKey === undefined)
      return yield* usageError("give --admin-token (our engine) or --sandbox-key/--live-key (any target)")
    yield* Console.log(
      `checking ${flags.base}${adminToken === undefined ? " (no control API: real time, control steps skipped)" : " (control API: virtual clock)"}`
    )
    const showProgress = flags.progress || process.stderr.isTTY === true
    const report = yield* Effect.promise(() =>
      runConform({
        base: flags.base,
        adminToken,
        sandboxKey,
        liveKey,
        seed,
        only,
        onStart: (info) =>
          console.log(
            `${info.checks} checks${info.layout === "flat" ? "; the target serves the contract's paths at its root (a contract mock such as Prism)" : ""}`
          ),
        now: wallClockNow,
        sleep: wallSleep,
        onProgress: showProgress
          ? (p) => {
              const line = `${p.done}/${p.total} checks, ${p.failed} failed, ${p.skipped} skipped, ~${Math.ceil(p.etaMs / 1000)} s left  ${p.current.slice(0, 60)}`
              process.stderr.write(process.stderr.isTTY === true ? `\r\x1b[2K${line}` : `${line}\n`)
              if (p.done === p.total && process.stderr.isTTY === true) process.stderr.write("\n")
            }
          : undefined
      })
    )
    for (const check of report.checks.filter((c) => c.status === "failed")) {
      yield* Console.log(`  FAIL ${check.name}`)
      if (check.message !== undefined) yield* Console.log(`       ${check.message}`)
      if (check.reproducer !== undefined) yield* Console.log(`       reproduce: ${check.reproducer}`)
      if (check.replay !== undefined) yield* Console.log(`       replay:    ${check.replay}`)
    }
    const passed = report.checks.filter((c) => c.status === "passed").length
    const failed = report.checks.filter((c) => c.status === "failed").length
    const skipped = report.checks.filter((c) => c.status === "skipped").length
    yield* Console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`)
    const dir = Option.getOrUndefined(flags.report)
    if (dir !== undefined) {
      const { writeReports } = yield* Effect.promise(() => import("../report/write.ts"))
      const paths = yield* Effect.promise(() => writeReports(report, dir))
      yield* Console.log(`reports: ${paths.join(", ")}`)
    }
    if (failed > 0) process.exitCode = 1
  })
).pipe(Command.withDescription("Check a target (our engine, a mock, the real service) against the contract and its stateful rules"))

const webhooks = Command.make("webhooks").pipe(Command.withSubcommands([webhooksCheck]), Command.withDescription("Webhook tools"))

const scenario = Command.make("scenario").pipe(Command.withSubcommands([run]), Command.withDescription("Declarative scenarios"))

Command.make("sokoni").pipe(
  Command.withDescription("Sokoni: reference engine, deterministic simulator and conformance harness for the Partner Brokerage API"),
  Command.withSubcommands([serve, scenario, load, webhooks, conform]),
  Command.run({ version: "0.1.0" }),
  Effect.provide(NodeServices.layer),
  // A server stopped by SIGINT/SIGTERM has finished its in-flight requests and released its pool: that is a clean
  // exit (0), not the 130 Effect's default teardown gives an interrupted program.
  NodeRuntime.runMain({
    teardown: (exit, onExit) => (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit))
  })
)
