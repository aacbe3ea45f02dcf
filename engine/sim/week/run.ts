/**
 * `sokoni simulate`'s work: plans the week from its seed, builds an engine in-process on a manual clock (the memory
 * store, or a fresh temporary PostgreSQL database), drives the week through the gateway, and judges it (verdict.ts).
 * Owns the engine's configuration for a week and the summary. The trace is hashed as it is recorded and not kept,
 * so memory holds the history only; its lines are counted by kind for the summary (events, webhook attempts).
 */
import { Effect } from "effect"
import type { HistoryEntry } from "../../conform/history-entries.ts"
import { makeInProcessEngine } from "../../runtime.ts"
import { withTemporaryDatabase } from "../../store/pg-temp-db.ts"
import { Outbound, SimReceivers } from "../outbound.ts"
import { Trace } from "../trace.ts"
import { makeClient, WEEK_ADMIN_TOKEN, type WeekCounters } from "./client.ts"
import { driveWeek, type WeekProgress } from "./drive.ts"
import { planWeek, WEEK_START, type WeekOptions } from "./plan.ts"
import { checkConservation, type Conservation, judgeHistory } from "./verdict.ts"

export interface WeekRunOptions extends WeekOptions {
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
  readonly onProgress?: ((p: WeekProgress) => void) | undefined
  /** Keep the history in the result (the CLI's --history writes it for `sokoni history check`). */
  readonly keepHistory?: boolean | undefined
}

export interface WeekSummary {
  readonly options: WeekOptions
  readonly store: "memory" | "postgres"
  readonly simulatedMs: number
  readonly requests: number
  readonly ordersPlaced: number
  readonly ordersRefused: number
  readonly events: number
  /** Webhook attempts made: first attempts (deliveries) and later ones (retries); how many reached a receiver. */
  readonly deliveries: number
  readonly retries: number
  readonly received: number
  /** Refused partner requests by error code. */
  readonly refusals: Readonly<Record<string, number>>
  readonly traceHash: string
  readonly traceLines: number
  readonly historyEntries: number
  readonly violations: ReadonlyArray<string>
  readonly conservation: Conservation
  /** Answers a healthy engine never gives (5xx). */
  readonly problems: ReadonlyArray<string>
}

export interface WeekResult {
  readonly summary: WeekSummary
  readonly history?: ReadonlyArray<HistoryEntry> | undefined
  /** Whether every check held. */
  readonly passed: boolean
}

/** Counts the trace's lines by what they record: events, webhook attempts (first and later), order answers. */
const traceCounter = () => {
  const counts = { events: 0, deliveries: 0, retries: 0, placed: 0, refused: 0 }
  const observe = (line: Record<string, unknown>) => {
    if (line.kind === "event") counts.events += 1
    else if (line.kind === "webhook") {
      if (line.attempt === 1) counts.deliveries += 1
      else counts.retries += 1
    } else if (line.kind === "http" && line.method === "POST" && typeof line.path === "string" && line.path.endsWith("/trade")) {
      if (line.status === 202) counts.placed += 1
      else counts.refused += 1
    }
  }
  return { counts, observe }
}

const runOn = async (options: WeekRunOptions, databaseUrl: string | undefined): Promise<WeekResult> => {
  const plan = planWeek(options)
  const receivers = new SimReceivers()
  const { counts, observe } = traceCounter()
  const engine = makeInProcessEngine({
    store: options.store,
    databaseUrl,
    clock: "manual",
    start: WEEK_START,
    seed: options.seed,
    desk: "manual",
    adminToken: WEEK_ADMIN_TOKEN,
    outbound: Outbound.simulated(receivers),
    trace: Trace.layerHashed(observe)
  })
  const history: Array<HistoryEntry> = []
  const counters: WeekCounters = { requests: 0, received: 0, refusals: new Map(), problems: [] }
  try {
    const program = Effect.gen(function* () {
      const client = yield* makeClient(history, receivers, counters)
      const driven = yield* driveWeek(plan, client, receivers, options.onProgress)
      const conservation = yield* checkConservation(driven.partners)
      const hash = yield* Trace.use((t) => t.hash)
      return { driven, conservation, hash }
    })
    const { driven, conservation, hash } = await engine.runtime.runPromise(program)
    const violations = judgeHistory(history).map((v) => `${v.rule}: ${v.message}`)
    const summary: WeekSummary = {
      options: { seed: options.seed, partners: options.partners, subAccounts: options.subAccounts, orders: options.orders, days: options.days },
      store: options.store,
      simulatedMs: driven.simulatedMs,
      requests: counters.requests,
      ordersPlaced: counts.placed,
      ordersRefused: counts.refused,
      events: counts.events,
      deliveries: counts.deliveries,
      retries: counts.retries,
      received: counters.received,
      refusals: Object.fromEntries([...counters.refusals.entries()].sort(([a], [b]) => a.localeCompare(b))),
      traceHash: hash.hash,
      traceLines: hash.lines,
      historyEntries: history.length,
      violations,
      conservation,
      problems: counters.problems
    }
    const passed = violations.length === 0 && conservation.problems.length === 0 && counters.problems.length === 0
    return { summary, passed, history: options.keepHistory === true ? history : undefined }
  } finally {
    await engine.dispose()
  }
}

/** Runs a week. On postgres it gets a fresh database on the server of `databaseUrl`, dropped afterwards. */
export const runWeek = (options: WeekRunOptions): Promise<WeekResult> => {
  if (options.store === "memory") return runOn(options, undefined)
  const adminUrl = options.databaseUrl
  if (adminUrl === undefined) return Promise.reject(new Error("--store postgres needs --database-url or DATABASE_URL"))
  return Effect.runPromise(Effect.scoped(Effect.flatMap(withTemporaryDatabase(adminUrl), (url) => Effect.promise(() => runOn(options, url)))))
}
