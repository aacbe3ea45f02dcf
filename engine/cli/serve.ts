/**
 * `sokoni serve`: runs the engine over HTTP until SIGINT/SIGTERM. Owns serve's flags and what it prints; the engine
 * itself is engine/http/node-server.ts. Kept apart from the other commands because it is also the entry of the
 * bundled `serve` (engine/cli/serve-main.ts, scripts/build-serve.ts), which must not bring them in.
 */
import { Console, Data, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import { databaseUrlFlag, databaseUrlOf, seedFlag, storeFlag, usageError } from "./common.ts"
import { nextInstantAllOpen } from "../domain/calendar.ts"
import { signatureHeaderNames } from "../events/webhook-delivery.ts"
import { MIN_WINDOW_MS } from "../http/guards/rate-limit.ts"
import { DIALECTS, signatureHeadersFor } from "../http/dialect.ts"
import type { EngineRequest, EngineResponse } from "../http/exchange.ts"
import { startServer } from "../http/node-server.ts"
import { findingsReport } from "../findings/report.ts"
import { CLOCK_MODES, isoAt, processUptimeMs, wallClockNow } from "../sim/clock.ts"
import { Trace } from "../sim/trace.ts"
import { DEFAULT_YOUNG_GENERATION_MB } from "./young-generation.js"
import { DESK_MODES } from "../sim/desk.ts"
import { DEFECT_DESCRIPTIONS, isPlantedDefect, PLANTED_DEFECTS } from "../sim/defects.ts"
import { freshSeed } from "../sim/random.ts"
import { loadFaultPlan } from "./fault-file.ts"

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

/** The summary `serve` prints when it stops: the findings of the engine, as `sokoni findings` prints them. */
const printFindings = async (ask: (request: EngineRequest) => Promise<EngineResponse>, adminToken: string) => {
  const headers = { authorization: `Bearer ${adminToken}` }
  const response = await ask({ method: "GET", path: "/_sim/findings", query: new URLSearchParams(), search: "", headers, body: undefined })
  if (response.status !== 200) return
  for (const line of findingsReport(JSON.parse(response.body))) console.log(line)
}

export const serve = Command.make(
  "serve",
  {
    port: Flag.Int("port").pipe(Flag.withDefault(4010), Flag.withDescription("Port to listen on (127.0.0.1; default: 4010)")),
    store: storeFlag,
    databaseUrl: databaseUrlFlag,
    clock: Flag.Literals("clock", CLOCK_MODES).pipe(
      Flag.withDefault("follow" as const),
      Flag.withDescription(
        "system: real time; follow: real time plus an offset that /_sim/clock/advance grows; manual: frozen until advanced (default: follow)"
      )
    ),
    start: Flag.String("start").pipe(
      Flag.optional,
      Flag.withDescription("ISO date-time the clock starts at, or `now` (default: now, or the next moment NSE and JSE are both open)")
    ),
    seed: seedFlag,
    desk: Flag.Literals("desk", DESK_MODES).pipe(
      Flag.withDefault("auto" as const),
      Flag.withDescription("manual: orders wait for /_sim/desk; auto: filled at the quote price after --desk-delay seconds (default: auto)")
    ),
    deskDelay: Flag.Int("desk-delay").pipe(Flag.withDefault(5), Flag.withDescription("Seconds an auto desk waits before filling (default: 5)")),
    adminToken: Flag.String("admin-token").pipe(Flag.optional, Flag.withDescription("Bearer token of the /_sim control API (default: derived from the seed)")),
    rateLimit: Flag.Literals("rate-limit", ["on", "off"]).pipe(
      Flag.withDefault("on" as const),
      Flag.withDescription("off admits every request (benchmarks only); X-RateLimit-* headers are still sent (default: on)")
    ),
    rateWindow: Flag.Int("rate-window-seconds").pipe(
      Flag.withDefault(60),
      Flag.withDescription("Length of the rate-limit window (the API's is 60 s); load profiles shorten it to prove limits in seconds (default: 60)")
    ),
    traceRing: Flag.Int("trace-ring").pipe(
      Flag.withDefault(1000),
      Flag.withDescription("How many trace lines serve keeps for GET /_sim/trace (0 keeps none; default: 1000); memory stays bounded")
    ),
    traceFile: Flag.String("trace").pipe(Flag.optional, Flag.withDescription("Also append every trace line (JSON lines) to this file as it happens")),
    signatureHeaders: Flag.String("webhook-signature-header").pipe(
      Flag.atLeast(0),
      Flag.withDescription(
        "Also send each webhook's signature under this header name (repeatable), e.g. x-mystocks-signature for receivers written against the public service; x-service-signature is always sent"
      )
    ),
    faults: Flag.String("faults").pipe(
      Flag.optional,
      Flag.withDescription("A fault plan (JSON or YAML, docs/faults.md) in force from the start; PUT /_sim/faults replaces it (default: none)")
    ),
    dialect: Flag.Literals("dialect", DIALECTS).pipe(
      Flag.withDefault("spec" as const),
      Flag.withDescription(
        "spec: the spec's rules; public-service: also accept what the public service accepts (no Idempotency-Key on /users, KYC, /webhooks; the legacy /api/sandbox/v1 root; KYC {status, level}; signatures also under x-mystocks-signature). Both record findings (default: spec)"
      )
    ),
    youngGenerationMb: Flag.Int("young-generation-mb").pipe(
      Flag.withDefault(DEFAULT_YOUNG_GENERATION_MB),
      Flag.withDescription(
        `Cap on V8's young generation in MB, kept from the process's start (bin.ts): smaller collects more often in shorter pauses (a quiet partner's p99 under another's flood); 0 leaves V8's own sizing (default: ${DEFAULT_YOUNG_GENERATION_MB})`
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
    const faultsFile = Option.getOrUndefined(flags.faults)
    const faults = faultsFile === undefined ? undefined : yield* Effect.tryPromise({ try: () => loadFaultPlan(faultsFile), catch: (e) => e as Error })
    const config = {
      faults,
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
      dialect: flags.dialect,
      trace: traceLayer(flags.traceRing, Option.getOrUndefined(flags.traceFile)),
      plantDefects: plantDefects.filter(isPlantedDefect)
    }
    const base = `http://127.0.0.1:${flags.port}`
    const running = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => startServer(config, flags.port), catch: (error) => new StartupError({ message: startupProblem(error, flags.port) }) }),
      // The findings are read once every request is answered, and printed before the engine (and they) are gone.
      (server) => Effect.promise(() => server.stop({ beforeRelease: (ask) => printFindings(ask, adminToken) }))
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
    if (faults !== undefined) yield* Console.log(`fault plan ${faultsFile}: ${faults.rules.length} rule(s) in force (GET /_sim/faults; docs/faults.md)`)
    const sentAs = signatureHeadersFor(flags.dialect, signatureHeaders)
    yield* Console.log(
      `dialect ${flags.dialect}${flags.dialect === "spec" ? "" : " (leniencies and what relied on them: GET /_sim/findings, sokoni findings)"}`
    )
    if (sentAs.length > 0) yield* Console.log(`webhook signatures also sent as ${sentAs.join(", ")} (besides x-service-signature)`)
    yield* Console.log(`store ${flags.store}, desk ${flags.desk}${flags.desk === "auto" ? ` (fills after ${flags.deskDelay} s)` : ""}`)
    yield* Console.log(`production  ${base}/api/v1/partner`)
    yield* Console.log(`sandbox     ${base}/api/sandbox/v1/partner`)
    yield* Console.log(`control     ${base}/_sim   (Authorization: Bearer ${adminToken})`)
    yield* Console.log(`console     ${base}/_sim/console   (open it in a browser; it asks for the admin token)`)
    if (flags.demo) {
      const response = yield* Effect.promise(() =>
        fetch(`${base}/_sim/partners`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: JSON.stringify({ businessName: "Demo Partner", email: "demo@sokoni.test", tier: "starter" })
        }).then((r) => r.json() as Promise<{ partnerId: string; sandboxKey: string; liveKey: string }>)
      )
      // The partner id is what the production examples need (`/_sim/partners/{partnerId}/...`), so it is printed too.
      yield* Console.log(`demo partner: ${response.partnerId}`)
      yield* Console.log(`              sandbox key ${response.sandboxKey}`)
      yield* Console.log(`              live key    ${response.liveKey} (production wallet starts at 0)`)
      yield* Console.log(`try: curl -s -H "x-api-key: ${response.sandboxKey}" ${base}/api/sandbox/v1/partner/stocks`)
    }
    yield* Console.log(`ready in ${Math.round(processUptimeMs())} ms (Ctrl-C stops: in-flight requests finish first)`)
    return yield* Effect.never
  }, Effect.scoped)
).pipe(Command.withDescription("Run the engine over HTTP"))
