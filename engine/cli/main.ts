/**
 * `sokoni`: the command line. `serve` runs the engine over HTTP; `scenario run` runs a scenario file in-process;
 * `simulate` runs a seeded trading week in-process (simulate.ts);
 * `webhooks check` grades a partner's webhook receiver; `conform` checks a target over the wire.
 * Owns flag parsing and what is printed; the work is the runtime's and the runner's.
 */
import { appendFileSync, writeFileSync } from "node:fs"
import { Console, Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { databaseUrlFlag, databaseUrlOf, seedFlag, storeFlag, usageError } from "./common.ts"
import { load } from "./load.ts"
import { root, runCli, VERSION } from "./program.ts"
import { serve } from "./serve.ts"
import { findings, targetDialect } from "./findings.ts"
import { simulate } from "./simulate.ts"
import { wallClockNow, wallSleep } from "../sim/clock.ts"
import { freshSeed } from "../sim/random.ts"

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
    signatureHeader: Flag.String("signature-header").pipe(
      Flag.atLeast(0),
      Flag.withDescription(
        "Also send the signature under this header name (repeatable), e.g. x-mystocks-signature for a receiver written against the public service; x-service-signature is always sent"
      )
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
    const { signatureHeaderNames } = yield* Effect.promise(() => import("../events/webhook-delivery.ts"))
    const signatureHeaders = signatureHeaderNames(flags.signatureHeader)
    if ("problem" in signatureHeaders) return yield* usageError(signatureHeaders.problem.replace("--webhook-signature-header", "--signature-header"))
    if (signatureHeaders.length > 0) yield* Console.log(`signatures also sent as ${signatureHeaders.join(", ")} (besides x-service-signature)`)
    const options = { url: flags.url, secret, seed, startMs: wallClockNow(), events, signatureHeaders }
    const report = yield* checkReceiver(options).pipe(Effect.provide(Outbound.network))
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
    progress: Flag.Boolean("progress").pipe(Flag.withDefault(false), Flag.withDescription("Print the progress line on stderr even when it is not a terminal")),
    prefix: Flag.String("prefix").pipe(
      Flag.optional,
      Flag.withDescription(
        "The target serves the contract's paths under this prefix, the bases taken off (e.g. /mock; default: found from GET /api/v1/status or /status)"
      )
    ),
    history: Flag.String("history").pipe(
      Flag.optional,
      Flag.withDescription("Record the run's history (JSON lines: exchanges, stream messages, deliveries) to this file and judge it as a whole")
    ),
    faults: Flag.String("faults").pipe(
      Flag.optional,
      Flag.withDescription("Run under this fault plan (JSON or YAML, docs/faults.md), put on the target through its control API (needs --admin-token)")
    )
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
    const faultsFile = Option.getOrUndefined(flags.faults)
    if (faultsFile !== undefined && adminToken === undefined)
      return yield* usageError("--faults puts the plan on the target through its control API: give --admin-token")
    const { loadFaultPlan } = yield* Effect.promise(() => import("./fault-file.ts"))
    const faults = faultsFile === undefined ? undefined : yield* Effect.tryPromise({ try: () => loadFaultPlan(faultsFile), catch: (e) => e as Error })
    yield* Console.log(
      `checking ${flags.base}${adminToken === undefined ? " (no control API: real time; what needs it is skipped, each with its reason)" : " (control API: virtual clock)"}`
    )
    // An engine in the public service's dialect accepts what the spec refuses: its checks of those refusals fail by design.
    const dialect = adminToken === undefined ? undefined : yield* Effect.promise(() => targetDialect(flags.base, adminToken))
    if (dialect !== undefined && dialect !== "spec")
      yield* Console.log(
        `the target serves --dialect ${dialect}: the checks of the spec's refusals it relaxes fail by design (docs/dialects.md); serve --dialect spec to check the spec`
      )
    const showProgress = flags.progress || process.stderr.isTTY === true
    const historyFile = Option.getOrUndefined(flags.history)
    if (historyFile !== undefined) writeFileSync(historyFile, "")
    const report = yield* Effect.promise(() =>
      runConform({
        base: flags.base,
        adminToken,
        sandboxKey,
        liveKey,
        seed,
        only,
        faults,
        onStart: (info) =>
          console.log(
            `${info.checks} checks${info.layout === "flat" ? "; the target serves the contract's paths at its root (a contract mock such as Prism)" : info.layout === "prefix" ? `; the target serves the contract's paths under ${Option.getOrElse(flags.prefix, () => "")}` : ""}`
          ),
        now: wallClockNow,
        sleep: wallSleep,
        historyFile,
        prefix: Option.getOrUndefined(flags.prefix),
        onHistory: historyFile === undefined ? undefined : (entry) => appendFileSync(historyFile, `${JSON.stringify(entry)}\n`),
        onWait: (what, ms) => process.stderr.write(`waiting up to ${Math.ceil(ms / 1000)} s for ${what}\n`),
        onProgress: showProgress
          ? (p) => {
              const line = `${p.done}/${p.total} checks, ${p.failed} failed, ${p.skipped} skipped, ~${Math.ceil(p.etaMs / 1000)} s left  ${p.current.slice(0, 60)}`
              process.stderr.write(process.stderr.isTTY === true ? `\r\x1b[2K${line}` : `${line}\n`)
              if (p.done === p.total && process.stderr.isTTY === true) process.stderr.write("\n")
            }
          : undefined
      })
    )
    for (const note of report.notes ?? []) yield* Console.log(note)
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
    // The report is out: exit now, whatever a target or a scenario left open (a stream the target never ends, a
    // receiver's socket, a timer), so a CI job calling conform never waits on it (E-282).
    yield* Effect.sync(() => process.exit(failed > 0 ? 1 : 0))
  })
).pipe(Command.withDescription("Check a target (our engine, a mock, the real service) against the contract and its stateful rules"))

const historyCheck = Command.make(
  "check",
  {
    file: Argument.String("file").pipe(Argument.withDescription("A history: JSON lines of exchanges, deliveries and stream messages (conform --history)")),
    report: Flag.String("report").pipe(Flag.optional, Flag.withDescription("Directory to write report.xml (JUnit), report.ctrf.json and report.html into"))
  },
  Effect.fn("sokoni.history.check")(function* (flags) {
    const { readFile } = yield* Effect.promise(() => import("node:fs/promises"))
    const { parseHistory, historyReport } = yield* Effect.promise(() => import("../conform/history.ts"))
    const loaded = yield* Effect.promise(async () => {
      try {
        return { entries: parseHistory(await readFile(flags.file, "utf8")) }
      } catch (error) {
        return { error: String((error as Error)?.message ?? error) }
      }
    })
    if (!("entries" in loaded)) return yield* usageError(`${flags.file}: ${loaded.error}`)
    const parsed = loaded.entries
    const replay = `npx sokoni history check '${flags.file.replace(/'/g, `'\\''`)}'`
    const report = historyReport(flags.file, parsed, replay)
    yield* Console.log(`${parsed.length} entries in ${flags.file}`)
    for (const check of report.checks) {
      yield* Console.log(`  ${check.status === "passed" ? "ok  " : "FAIL"} ${check.name}`)
      if (check.message !== undefined) yield* Console.log(`       ${check.message}`)
    }
    const failed = report.checks.filter((c) => c.status === "failed").length
    yield* Console.log(failed === 0 ? "the history holds every rule" : `${failed} rules violated; replay: ${replay}`)
    const dir = Option.getOrUndefined(flags.report)
    if (dir !== undefined) {
      const { writeReports } = yield* Effect.promise(() => import("../report/write.ts"))
      const paths = yield* Effect.promise(() => writeReports(report, dir))
      yield* Console.log(`reports: ${paths.join(", ")}`)
    }
    if (failed > 0) process.exitCode = 1
  })
).pipe(Command.withDescription("Judge a recorded history as a whole: balances, Idempotency-Keys, deliveries, rate-limit windows, orders"))

const history = Command.make("history").pipe(Command.withSubcommands([historyCheck]), Command.withDescription("Run histories"))

const webhooks = Command.make("webhooks").pipe(Command.withSubcommands([webhooksCheck]), Command.withDescription("Webhook tools"))

const scenario = Command.make("scenario").pipe(Command.withSubcommands([run]), Command.withDescription("Declarative scenarios"))

root.pipe(Command.withSubcommands([serve, scenario, simulate, load, webhooks, conform, history, findings]), Command.run({ version: VERSION }), runCli)
