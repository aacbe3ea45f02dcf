/**
 * `npm run bench [-- --quick] [-- --store memory|postgres|both] [-- --only stocks,trade,rss,memory,startup,isolation,processes,floor,week]
 * [-- --baseline DIR] [-- --strict] [-- --out FILE]`: engine vs bare node:http vs Prism, RSS growth, `serve` start-up,
 * memory kept per order on the memory store (memory.ts), and on postgres whether tenants wait on each other
 * (tenants.ts), and what a PostgreSQL round trip and commit cost below the engine (`floor`, floor.ts); prints tables as
 * it goes and writes docs/performance.md; `week` is the simulated week (week.ts:
 * `sokoni simulate` at 1k..20k orders and a 1,000-order scenario file). `--baseline DIR` (another checkout of the
 * engine, e.g. `git worktree add /tmp/base main`) runs
 * its engine (each store asked for) beside this one in the same interleaved rounds (throughput and isolation):
 * before and after a change, on one machine state.
 * A missed target prints `TARGET MISSED: …` (exit 1 only with --strict).
 */
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import type { Flow } from "./cannon.ts"
import { type LoadResult, runChild, runLoad } from "./load.ts"
import { measureStartup } from "./startup.ts"
import {
  markdown,
  median,
  medianCpu,
  medianRate,
  type MemoryRow,
  memoryTable,
  type Rss,
  rssGrowth,
  rssTable,
  type Sample,
  startupTable,
  type Throughput,
  throughputTable,
  type Verdict
} from "./report.ts"
import { capture, cleanup, type Engine, LOAD_CORE, root, SERVER_CORE, type Server, type Store, startBare, startEngine, startPrism, stop } from "./targets.ts"
import { isolation, isolationRatio, isolationTable, processes, processesRatio, processesTable, type Variant } from "./tenants.ts"
import { floorTable, measureFloor } from "./floor.ts"
import { measureWeek, weekTable, weekVerdicts } from "./week.ts"

const { values: flags } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    store: { type: "string", default: "both" },
    only: { type: "string", default: "stocks,trade,rss,memory,startup,isolation,processes,floor,week" },
    baseline: { type: "string" },
    strict: { type: "boolean", default: false },
    out: { type: "string", default: join(root, "docs/performance.md") }
  }
})
const stores: Store[] = flags.store === "both" ? ["memory", "postgres"] : flags.store === "memory" || flags.store === "postgres" ? [flags.store] : []
const only = new Set(flags.only.split(","))
const unknown = [...only].filter((o) => !["stocks", "trade", "rss", "memory", "startup", "isolation", "processes", "floor", "week"].includes(o))
if (stores.length === 0 || unknown.length > 0) {
  console.error(
    "usage: npm run bench -- [--quick] [--store memory|postgres|both] [--only stocks,trade,rss,memory,startup,isolation,processes,floor,week] [--baseline DIR] [--strict] [--out FILE]"
  )
  process.exit(2)
}
const settings = flags.quick
  ? {
      rounds: 1,
      seconds: 2,
      warmupSeconds: 1,
      connections: 50,
      rssWarmup: 5_000,
      rssRequests: 20_000,
      startupRuns: 5,
      memory: { from: 2_000, to: 10_000, batch: 2_000 },
      weekOrders: [1_000, 5_000, 10_000]
    }
  : {
      rounds: 3,
      seconds: 5,
      warmupSeconds: 2,
      connections: 50,
      rssWarmup: 300_000,
      rssRequests: 200_000,
      startupRuns: 5,
      memory: { from: 10_000, to: 100_000, batch: 10_000 },
      weekOrders: [1_000, 5_000, 10_000, 20_000]
    }

const log = (line: string) => console.log(line)
const sh = (command: string, args: readonly string[]) => execFileSync(command, args, { encoding: "utf8" }).trim()

let stopping = false
const abort = async (why: string) => {
  if (stopping) return
  stopping = true
  console.error(`\nbench: ${why}; stopping servers and dropping temporary databases…`)
  await cleanup()
  process.exit(130)
}
process.on("SIGINT", () => void abort("interrupted"))
process.on("SIGTERM", () => void abort("terminated"))

/** A server as the load generator addresses it. */
interface Target extends Server {
  readonly prefix: string
  readonly apiKey: string
}

const describe = (r: LoadResult, unit: string) => {
  const codes = Object.entries(r.statusCodes)
    .map(([code, n]) => `${code}×${n}`)
    .join(" ")
  const failure = r.firstFailure === undefined ? "" : `\n      first failure: ${r.firstFailure}`
  return `${r.rate.toFixed(0)} ${unit}, server ${r.serverCpuMicrosPerOp.toFixed(0)} µs/op, p99 ${r.latencyP99} ms, loader CPU ${r.loaderCpuPct.toFixed(0)}%, status ${codes}${failure}`
}

/** Rounds of every target in turn (the order rotates by one each round so no target always goes first). */
const interleave = async (title: string, flow: Flow, unit: string, targets: readonly Target[], symbol: string): Promise<Throughput> => {
  const samples: Sample[] = []
  for (let round = 1; round <= settings.rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round - 1) % targets.length]!)
    for (const target of order) {
      process.stdout.write(`  [${title}] round ${round}/${settings.rounds} ${target.name.padEnd(15)} `)
      const result = await runLoad({
        base: target.base,
        prefix: target.prefix,
        apiKey: target.apiKey,
        symbol,
        flow,
        connections: settings.connections,
        warmup: { seconds: settings.warmupSeconds },
        measure: { seconds: settings.seconds },
        serverPid: target.pid
      })
      log(describe(result, unit))
      samples.push({ target: target.name, round, result })
    }
  }
  const section = { title, unit, samples }
  log(`\n${throughputTable(section)}\n`)
  return section
}

const throughput = async (): Promise<Throughput[]> => {
  log(`starting servers on core ${SERVER_CORE}: ${stores.map((s) => `engine-${s}`).join(", ")}, bare-node, prism`)
  const engines: Engine[] = []
  for (const store of stores) engines.push(await startEngine(store))
  // The baseline checkout beside this one, on each store asked for, in the same interleaved rounds.
  if (flags.baseline !== undefined) for (const store of stores) engines.push(await startEngine(store, { cwd: flags.baseline, name: `engine-${store}@base` }))
  const reference = engines[0]!
  const list = (await (await fetch(`${reference.base}${reference.prefix}/stocks`, { headers: { "x-api-key": reference.apiKey } })).json()) as {
    stocks: { symbol: string }[]
  }
  const symbol = list.stocks[0]!.symbol
  const stocks = await capture(reference, "GET", "/stocks")
  const quote = await capture(reference, "GET", `/quote/${encodeURIComponent(symbol)}?side=BUY&quantity=1`)
  const quoteId = (JSON.parse(quote.body) as { quoteId: string }).quoteId
  const trade = await capture(
    reference,
    "POST",
    "/trade",
    { "content-type": "application/json", "idempotency-key": `bench-capture-${process.pid}` },
    JSON.stringify({ symbol, type: "BUY", quantity: 1, quoteId })
  )
  if (stocks.status !== 200 || quote.status !== 200 || trade.status !== 202) {
    throw new Error(`capture failed: stocks ${stocks.status}, quote ${quote.status} ${quote.body}, trade ${trade.status} ${trade.body}`)
  }
  log(`captured from ${reference.name}: /stocks ${stocks.body.length} B, quote ${quote.body.length} B, trade ${trade.body.length} B (symbol ${symbol})`)
  const bare = await startBare([stocks, quote, trade].map((r) => ({ ...r, pathPrefix: reference.prefix + r.pathPrefix })))
  const prism = await startPrism()
  const key = reference.apiKey
  const targets: Target[] = [{ ...bare, prefix: reference.prefix, apiKey: key }, ...engines, { ...prism, prefix: "", apiKey: key }]
  const sections: Throughput[] = []
  if (only.has("stocks")) sections.push(await interleave("GET /stocks", "stocks", "req/s", targets, symbol))
  if (only.has("trade")) sections.push(await interleave("quote->trade", "trade", "op/s", targets, symbol))
  await Promise.all([bare, prism, ...engines].map((s) => stop(s.child)))
  return sections
}

/**
 * RSS over a long run, per store and flow (docs/decisions.md E-050): the target holds the engine to keeping nothing
 * per request of its own (read flow, both stores; and the trading mix on postgres, where state lives in the
 * database). The memory store keeps every order in the process by design, so its mix row is reported, not gated.
 */
const RSS_RUNS: ReadonlyArray<{ readonly flow: Rss["flow"]; readonly gated: (store: Store) => boolean }> = [
  { flow: "read", gated: () => true },
  { flow: "mix", gated: (store) => store === "postgres" }
]

const rss = async (): Promise<Rss[]> => {
  const rows: Rss[] = []
  for (const store of stores)
    for (const { flow } of RSS_RUNS) {
      process.stdout.write(
        `  [RSS] engine-${store} ${flow}: ${settings.rssWarmup.toLocaleString("en")} warm-up then ${settings.rssRequests.toLocaleString("en")} requests… `
      )
      const engine = await startEngine(store)
      const stocks = (await (await fetch(`${engine.base}${engine.prefix}/stocks`, { headers: { "x-api-key": engine.apiKey } })).json()) as {
        stocks: { symbol: string }[]
      }
      const result = await runLoad({
        base: engine.base,
        prefix: engine.prefix,
        apiKey: engine.apiKey,
        symbol: stocks.stocks[0]!.symbol,
        flow,
        connections: settings.connections,
        // V8 grows its committed heap towards a plateau under load whatever the engine keeps (E-050); the growth that
        // counts is what comes after it, so the full run warms up long enough to reach it.
        warmup: { amount: settings.rssWarmup },
        measure: { amount: settings.rssRequests },
        serverPid: engine.pid
      })
      await stop(engine.child)
      const rssLine = `${result.rssBeforeMB.toFixed(1)} → ${result.rssHalfwayMB.toFixed(1)} → ${result.rssAfterMB.toFixed(1)} MB`
      log(`${rssLine}, ${describe(result, "req/s")}`)
      rows.push({ store, flow, result })
    }
  log(`\n${rssTable(rows)}\n`)
  return rows
}

/** The tenant comparisons on postgres (tenants.ts): this checkout, and the baseline beside it when given. */
const tenants = async (sections: string[]): Promise<Verdict[]> => {
  const variants: Variant[] = stores.includes("postgres") ? [{ name: "engine-postgres" }] : []
  if (flags.baseline !== undefined && stores.includes("postgres")) variants.push({ name: "engine-postgres@base", cwd: flags.baseline })
  // The memory store's isolation is the GC's (issue 25 item 2): a flood's garbage must not stall the quiet partner.
  const onMemory: Variant[] = [
    { name: "engine-memory", store: "memory" },
    ...(flags.baseline === undefined ? [] : [{ name: "engine-memory@base", store: "memory" as const, cwd: flags.baseline }])
  ]
  const isolated: Variant[] = stores.includes("memory") ? [...onMemory, ...variants] : variants
  // A p99 wants a few hundred requests: 10 s at 20 pairs/s is 400 of A's requests a round (the quick run keeps its 2 s).
  const tenantSettings = { ...settings, seconds: flags.quick ? settings.seconds : 10, pairsPerSecond: 20 }
  const verdicts: Verdict[] = []
  if (only.has("isolation")) {
    log(`partner A at ${tenantSettings.pairsPerSecond} quote->trade pairs/s, alone and while partner B floods (${settings.connections} connections)`)
    const samples = await isolation(isolated, tenantSettings, log)
    const text = isolationTable(samples)
    log(`\n${text}\n`)
    sections.push(`### Isolation: partner A's latency while partner B floods\n\n${text}`)
    // 1.5x on postgres (issue 22 item 3), 2x on memory (issue 25 item 2)
    for (const { name, goal } of [
      { name: "engine-memory", goal: 2 },
      { name: "engine-postgres", goal: 1.5 }
    ].filter((v) => isolated.some((i) => i.name === v.name))) {
      const value = isolationRatio(samples, name)
      const store = name.slice("engine-".length)
      verdicts.push({
        name: `partner A's p99 under B's flood / alone (${store})`,
        measured: `${value.toFixed(2)}x`,
        target: `≤ ${goal.toFixed(2)}x`,
        pass: value <= goal
      })
    }
  }
  if (only.has("processes") && stores.includes("postgres")) {
    log("two partners' quote->trade, one engine process vs two on one database (all on the server core)")
    const samples = await processes(variants, tenantSettings, log)
    const text = processesTable(samples)
    log(`\n${text}\n`)
    sections.push(`### Two engine processes on one database vs one (postgres, quote->trade, pairs/s)\n\n${text}`)
    const value = processesRatio(samples, "engine-postgres")
    verdicts.push({ name: "two processes on one database / one (postgres)", measured: `${value.toFixed(2)}x`, target: "> 1.00x", pass: value > 1 })
  }
  return verdicts
}

const machine = () => {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"))?.[1] ?? "unknown"
  const commit = sh("git", ["-C", root, "rev-parse", "--short", "HEAD"])
  const dirty = sh("git", ["-C", root, "status", "--porcelain", "engine"]) === "" ? "" : " with uncommitted changes in engine/"
  return {
    cores: sh("nproc", []),
    model,
    node: process.version,
    date: sh("date", ["-u", "+%Y-%m-%d %H:%M UTC"]),
    kernel: sh("uname", ["-r"]),
    commit: `commit ${commit}${dirty}`
  }
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")

const main = async () => {
  const info = machine() // before pinning: nproc counts the cores this process may use
  const loadBefore = loadAverage()
  const busy = Number(loadBefore.split(" ")[0]) > 0.5
  if (busy) log(`WARNING: the machine is busy (load average ${loadBefore}): figures will be disturbed`)
  if (Number(info.cores) < 2) throw new Error(`needs 2 cores (server on core ${SERVER_CORE}, load on core ${LOAD_CORE}); nproc says ${info.cores}`)
  // The orchestrator shares the load generator's core, away from the servers (it is idle during the runs).
  sh("taskset", ["-pc", LOAD_CORE, String(process.pid)])
  const mode = `${flags.quick ? "quick" : "full"}, stores ${stores.join("+")}, parts ${[...only].join("+")}`
  const runSettings = `${settings.rounds} round(s) x ${settings.seconds} s measured (+${settings.warmupSeconds} s warm-up) per target, ${settings.connections} connections; RSS over ${settings.rssRequests.toLocaleString("en")} requests after ${settings.rssWarmup.toLocaleString("en")} warm-up; ${settings.startupRuns} start-ups per mode`
  log(`sokoni bench: ${info.model}, ${info.cores} cores, Node ${info.node}, ${info.commit}\n${mode}; ${runSettings}\n`)

  const sections: string[] = []
  const verdicts: Verdict[] = []
  if (only.has("stocks") || only.has("trade")) {
    for (const section of await throughput()) {
      sections.push(`### ${section.title} (${section.unit})\n\n${throughputTable(section)}`)
      // Issue 25 item 3: GET /stocks 0.40x, quote->trade 0.15x on memory, by CPU per request (what a busy machine
      // disturbs least); quote->trade on postgres 0.05x by rate (issue 22 item 3).
      const byCpu = (store: Store) => section.title === "GET /stocks" || store === "memory"
      const goalOf = (store: Store) => (section.title === "GET /stocks" ? 0.4 : store === "memory" ? 0.15 : 0.05)
      for (const store of stores) {
        const goal = goalOf(store)
        const value = byCpu(store)
          ? medianCpu(section, "bare-node") / medianCpu(section, `engine-${store}`)
          : medianRate(section, `engine-${store}`) / medianRate(section, "bare-node")
        verdicts.push({
          name: `${section.title} engine-${store} / bare node:http${byCpu(store) ? " (CPU per request)" : ""}`,
          measured: `${value.toFixed(2)}x`,
          target: `≥ ${goal.toFixed(2)}x`,
          pass: value >= goal
        })
      }
    }
  }
  if (only.has("isolation") || (stores.includes("postgres") && only.has("processes"))) {
    for (const verdict of await tenants(sections)) verdicts.push(verdict)
  }
  if (only.has("rss")) {
    const rows = await rss()
    sections.push(`### RSS growth over ${settings.rssRequests.toLocaleString("en")} requests\n\n${rssTable(rows)}`)
    for (const row of rows) {
      if (!RSS_RUNS.some((r) => r.flow === row.flow && r.gated(row.store as Store))) continue
      const growth = rssGrowth(row)
      verdicts.push({
        name: `RSS growth engine-${row.store}, ${row.flow} flow (${settings.rssRequests.toLocaleString("en")} requests${flags.quick ? ", quick: indicative" : ""})`,
        measured: `${growth.toFixed(1)} MB`,
        target: "< 50 MB over 200,000 requests",
        pass: growth < 50
      })
    }
  }
  if (only.has("memory") && stores.includes("memory")) {
    const spec = settings.memory
    process.stdout.write(`  [memory] ${spec.to.toLocaleString("en")} quote->trade pairs in process, ${spec.batch.toLocaleString("en")} a simulated day… `)
    const row = await runChild<MemoryRow>("scripts/bench/memory.ts", spec, "memory per order", { core: SERVER_CORE, nodeFlags: ["--expose-gc"] })
    log(`${row.bytesPerOrder.toFixed(0)} B kept per order, ${row.bytesPerOrderWithinDay.toFixed(0)} B within 24 h`)
    log(`\n${memoryTable(row)}\n`)
    sections.push(`### Memory per order (memory store, in process)\n\n${memoryTable(row)}`)
    verdicts.push({
      name: `memory kept per order, memory store (${spec.from.toLocaleString("en")} -> ${spec.to.toLocaleString("en")} orders)`,
      measured: `${row.bytesPerOrder.toFixed(0)} B`,
      target: "≤ 4096 B",
      pass: row.bytesPerOrder <= 4096
    })
  }
  if (only.has("startup")) {
    const rows = await measureStartup(stores, settings.startupRuns, log)
    log(`\n${startupTable(rows)}\n`)
    sections.push(`### serve start-up (ms)\n\n${startupTable(rows)}`)
    // Judged on what a plain `sokoni serve` runs: the bundle when there is one, else the sources.
    const judged = rows.find((r) => r.store === "memory" && r.mode === "warm" && r.code === "bundle") ?? rows.find((r) => r.mode === "warm")!
    const warm = median(judged.ms)
    verdicts.push({
      name: `serve ready with a warm compile cache (${judged.store} store, ${judged.code})`,
      measured: `${warm.toFixed(0)} ms`,
      target: "≤ 400 ms",
      pass: warm <= 400
    })
  }

  if (only.has("floor") && stores.includes("postgres")) {
    log("what a PostgreSQL round trip and commit cost here, below the engine (synchronous commit, then synchronous_commit = off)")
    const rows = await measureFloor(flags.quick ? 1_000 : 4_000, log)
    log(`\n${floorTable(rows)}\n`)
    sections.push(`### PostgreSQL's floor: a round trip and a commit on this machine (scripts/bench/floor.ts)\n\n${floorTable(rows)}`)
  }

  if (only.has("week")) {
    log("a simulated week (`sokoni simulate`, memory store, in-process, CPU time) and a 1,000-order scenario file")
    const week = measureWeek(settings.weekOrders, log)
    log(`\n${weekTable(week.rows)}\n`)
    sections.push(
      `### A simulated week (sokoni simulate --seed 1, 10 partners, one sub-account per 10 orders, 5 trading days)\n\n${weekTable(week.rows)}\n\nA 1,000-order scenario file (scenarios/generate.ts) through \`sokoni scenario run\`: ${week.scenarioCpu.toFixed(2)} s of process CPU; the 1,000-order week's process: ${week.weekProcessCpu.toFixed(2)} s.`
    )
    for (const verdict of weekVerdicts(week)) verdicts.push(verdict)
  }

  const load = `${loadBefore} before, ${loadAverage()} after (1, 5, 15 min)`
  writeFileSync(flags.out, markdown({ machine: info, load, busy, mode, settings: runSettings, sections, verdicts }))
  log(`written: ${flags.out}\n`)
  for (const v of verdicts) log(`${v.pass ? "target met:   " : "TARGET MISSED:"} ${v.name}: ${v.measured} (goal ${v.target})`)
  if (flags.strict && verdicts.some((v) => !v.pass)) process.exitCode = 1
}

try {
  await main()
} catch (error) {
  if (!stopping) console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`)
  process.exitCode = 1
} finally {
  await cleanup()
}
