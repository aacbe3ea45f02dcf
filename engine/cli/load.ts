/**
 * `sokoni load run --tier T [--instances N] [--window-seconds S] [--base URL --key K] [--out DIR]`: the tier
 * profile (engine/load/tier-profile.ts, run.ts) with what it needs started and stopped around it; `sokoni load
 * throughput`: the mixed workload (engine/load/throughput.ts). Owns the flags and what is printed; exit code 1 when the
 * limit was not exact, 3 when the run proved nothing (outcomeOf).
 */
import { Console, Effect, Option } from "effect"
import { Command, Flag } from "effect/cli"
import {
  defaultWindowSeconds,
  describeVerdict,
  LIMITS,
  partnerKey,
  outcomeOf,
  profileFor,
  sharedBucketCredentials,
  type StartedEngine,
  startEngineProcess,
  TIERS
} from "../load/run.ts"
import { describeThroughput, runThroughput } from "../load/throughput.ts"
import { runProfile } from "../load/tier-profile.ts"
import { withTemporaryDatabase } from "../store/pg-temp-db.ts"

const ADMIN_TOKEN = "adm_load"

const runLoad = Command.make(
  "run",
  {
    tier: Flag.Literals("tier", TIERS).pipe(Flag.withDescription("Which limit to prove: sandbox (300), starter (100), growth (500), enterprise (2000)")),
    instances: Flag.Int("instances").pipe(
      Flag.withDefault(1),
      Flag.withDescription("Engine processes to start; more than one share a temporary PostgreSQL database (needs DATABASE_URL; default: 1)")
    ),
    windowSeconds: Flag.Int("window-seconds").pipe(
      Flag.optional,
      Flag.withDescription("The engines' rate-limit window (default: 5 s, longer for large limits; the API's is 60 s)")
    ),
    base: Flag.String("base").pipe(Flag.optional, Flag.withDescription("Run against this API base instead (e.g. http://host/api/v1/partner); needs --key")),
    key: Flag.String("key").pipe(Flag.optional, Flag.withDescription("The partner key to use with --base")),
    sharedBucket: Flag.Boolean("shared-bucket").pipe(
      Flag.withDefault(false),
      Flag.withDescription("Send in turn with the full key, a data key and an OAuth token of one partner: one limit for all three")
    ),
    out: Flag.String("out").pipe(
      Flag.withDefault("out/load"),
      Flag.withDescription("Where summary.json and summary.html go, a folder per tier (default: out/load)")
    )
  },
  Effect.fn("sokoni.load.run")(function* (flags) {
    const limit = LIMITS[flags.tier]
    const windowSeconds = Option.getOrElse(flags.windowSeconds, () => defaultWindowSeconds(limit))
    const profile = profileFor(limit, windowSeconds)
    const out = `${flags.out}/${flags.tier}${flags.instances > 1 ? `-x${flags.instances}` : ""}${flags.sharedBucket ? "-shared" : ""}`
    let bases: ReadonlyArray<string>
    let credentials: ReadonlyArray<Record<string, string>>
    const givenBase = Option.getOrUndefined(flags.base)
    if (givenBase !== undefined) {
      const givenKey = Option.getOrUndefined(flags.key)
      if (givenKey === undefined) return yield* Effect.fail(new Error("--base needs --key"))
      if (flags.sharedBucket) return yield* Effect.fail(new Error("--shared-bucket needs an engine this command starts (it uses the control API)"))
      bases = [givenBase]
      credentials = [{ "x-api-key": givenKey }]
      yield* Console.log(`target ${givenBase}; its window must be ${windowSeconds} s (--window-seconds), or the bursts prove nothing`)
    } else {
      let databaseUrl: string | undefined
      if (flags.instances > 1) {
        const admin = process.env.DATABASE_URL
        if (admin === undefined) return yield* Effect.fail(new Error("--instances above 1 needs DATABASE_URL (the processes share a database)"))
        databaseUrl = yield* withTemporaryDatabase(admin)
      }
      const engines: Array<StartedEngine> = []
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all(engines.map((e) => e.stop()))))
      for (let i = 0; i < flags.instances; i++) {
        const store = databaseUrl === undefined ? ("memory" as const) : ("postgres" as const)
        engines.push(yield* Effect.promise(() => startEngineProcess({ windowSeconds, adminToken: ADMIN_TOKEN, store, databaseUrl })))
      }
      const first = engines[0] as StartedEngine
      if (flags.sharedBucket && flags.tier === "sandbox")
        return yield* Effect.fail(new Error("--shared-bucket is for production tiers (data keys and OAuth are production-only)"))
      const partner = yield* Effect.promise(() => partnerKey(first.base, ADMIN_TOKEN, flags.tier))
      bases = engines.map((e) => `${e.base}${partner.base}`)
      credentials = flags.sharedBucket ? yield* Effect.promise(() => sharedBucketCredentials(first.base, ADMIN_TOKEN, partner)) : [{ "x-api-key": partner.key }]
      yield* Console.log(
        `${flags.instances} engine process(es) on ${databaseUrl === undefined ? "the memory store" : "one PostgreSQL database"}, window ${windowSeconds} s`
      )
    }
    yield* Console.log(`tier ${flags.tier}: limit ${limit}; two bursts of ${profile.burstSeconds} s at ${profile.rate} req/s, ${profile.gapSeconds} s apart`)
    const verdict = yield* Effect.promise(() =>
      runProfile({
        bases,
        credentials,
        profile,
        settleSeconds: flags.sharedBucket ? windowSeconds + 1 : 0,
        out,
        onLine: (line) => console.log(`  ${line}`)
      })
    )
    for (const line of describeVerdict(flags.tier, verdict)) yield* Console.log(line)
    yield* Console.log(`report: ${out}/summary.html`)
    // 3, not 1: a run whose load never reached the limit is no evidence against the target (outcomeOf)
    const outcome = outcomeOf(verdict)
    if (outcome !== "PASS") process.exitCode = outcome === "FAIL" ? 1 : 3
  }, Effect.scoped)
).pipe(Command.withDescription("Prove a tier's rate limit exactly under load"))

const throughput = Command.make(
  "throughput",
  {
    store: Flag.Literals("store", ["memory", "postgres"]).pipe(
      Flag.withDefault("memory" as const),
      Flag.withDescription("The engine's store (default: memory)")
    ),
    steps: Flag.String("steps").pipe(
      Flag.withDefault("100,200,400,800,1600"),
      Flag.withDescription("Offered iterations per second, one step each (default: 100,200,400,800,1600)")
    ),
    stepSeconds: Flag.Int("step-seconds").pipe(Flag.withDefault(10), Flag.withDescription("Seconds per step (default: 10)")),
    out: Flag.String("out").pipe(Flag.withDefault("out/load/throughput"), Flag.withDescription("Where summary.json goes (default: out/load/throughput)"))
  },
  Effect.fn("sokoni.load.throughput")(function* (flags) {
    const steps = flags.steps.split(",").map(Number)
    if (steps.some((s) => !Number.isInteger(s) || s < 1)) return yield* Effect.fail(new Error("--steps takes whole numbers above 0, comma-separated"))
    let databaseUrl: string | undefined
    if (flags.store === "postgres") {
      const admin = process.env.DATABASE_URL
      if (admin === undefined) return yield* Effect.fail(new Error("--store postgres needs DATABASE_URL (a temporary database is created on it)"))
      databaseUrl = yield* withTemporaryDatabase(admin)
    }
    yield* Console.log(
      `throughput on ${flags.store}: steps ${steps.join(", ")} it/s, ${flags.stepSeconds} s each (60% stocks, 20% quote, 15% quote+trade, 5% wallet)`
    )
    const out = `${flags.out}/${flags.store}`
    const { summary, deliveries } = yield* Effect.promise(() =>
      runThroughput({ store: flags.store, databaseUrl, steps, stepSeconds: flags.stepSeconds, out, onLine: (line) => console.log(`  ${line}`) })
    )
    for (const line of describeThroughput(flags.store, summary, deliveries)) yield* Console.log(line)
  }, Effect.scoped)
).pipe(Command.withDescription("Find the engine's ceiling and latency per operation on a mixed workload"))

export const load = Command.make("load").pipe(
  Command.withSubcommands([runLoad, throughput]),
  Command.withDescription("Load profiles: a tier's rate limit proven exactly, the engine's ceiling")
)
