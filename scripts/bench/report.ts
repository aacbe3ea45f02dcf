/** Figures → tables, target verdicts and docs/performance.md. Tables are padded Markdown, readable on a terminal too. */
import type { LoadResult } from "./load.ts"

export const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length === 0 ? Number.NaN : sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

const fixed = (value: number, digits = 0) => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")
const ratio = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}x` : "n/a")

export const table = (headers: readonly string[], rows: readonly (readonly string[])[]): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`
  return [line(headers), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")
}

export interface Sample {
  readonly target: string
  readonly round: number
  readonly result: LoadResult
}

/** One interleaved throughput comparison (GET /stocks, or quote->trade). */
export interface Throughput {
  readonly title: string
  readonly unit: string
  readonly samples: readonly Sample[]
}

export const medianRate = (section: Throughput, target: string): number => median(section.samples.filter((s) => s.target === target).map((s) => s.result.rate))

/** Server CPU per operation, median over rounds: what a busy machine disturbs least. */
export const medianCpu = (section: Throughput, target: string): number =>
  median(section.samples.filter((s) => s.target === target).map((s) => s.result.serverCpuMicrosPerOp))

export const throughputTable = (section: Throughput): string => {
  const targets = [...new Set(section.samples.map((s) => s.target))]
  const bare = medianRate(section, "bare-node")
  const prism = medianRate(section, "prism")
  const rows = targets.map((target) => {
    const mine = section.samples.filter((s) => s.target === target).map((s) => s.result)
    const rate = median(mine.map((r) => r.rate))
    const cpu = median(mine.map((r) => r.serverCpuMicrosPerOp))
    const of = (pick: (r: LoadResult) => number, digits = 0) => fixed(median(mine.map(pick)), digits)
    return [
      target,
      fixed(rate),
      mine.map((r) => fixed(r.rate)).join(" / "),
      target === "bare-node" ? "1.00x" : ratio(rate / bare),
      target === "prism" ? "1.00x" : ratio(rate / prism),
      of((r) => r.serverCpuMicrosPerOp),
      target === "bare-node" ? "1.00x" : ratio(medianCpu(section, "bare-node") / cpu),
      `${of((r) => r.latencyP50)} / ${of((r) => r.latencyP99)}`,
      `${of((r) => r.loaderCpuPct)}%`,
      String(mine.reduce((n, r) => n + r.failures, 0))
    ]
  })
  const headers = [
    "target",
    `median ${section.unit}`,
    "per round",
    "vs bare",
    "vs Prism",
    "server CPU µs/op",
    "CPU vs bare",
    "latency p50 / p99 ms",
    "loader CPU",
    "failures"
  ]
  return table(headers, rows)
}

export interface Rss {
  readonly store: string
  /** read: requests that keep nothing; mix: stocks, quote and trade (every trade keeps an order). */
  readonly flow: "read" | "mix"
  readonly result: LoadResult
}

/** Memory per order on the memory store (memory.ts). */
export interface MemoryRow {
  readonly from: number
  readonly to: number
  readonly batch: number
  readonly heapFromMB: number
  readonly heapToMB: number
  readonly bytesPerOrder: number
  readonly bytesPerOrderWithinDay: number
  readonly seconds: number
  readonly failures: number
}

export const memoryTable = (row: MemoryRow): string =>
  table(
    ["orders", "a simulated day", "heap after first / last MB", "kept per order (after 24 h)", "per order within 24 h", "run s", "failures"],
    [
      [
        `${row.from.toLocaleString("en")} -> ${row.to.toLocaleString("en")}`,
        `${row.batch.toLocaleString("en")} orders`,
        `${fixed(row.heapFromMB, 1)} / ${fixed(row.heapToMB, 1)}`,
        `${fixed(row.bytesPerOrder)} B`,
        `${fixed(row.bytesPerOrderWithinDay)} B`,
        fixed(row.seconds, 1),
        String(row.failures)
      ]
    ]
  )

export const rssGrowth = (r: Rss): number => r.result.rssAfterMB - r.result.rssBeforeMB

export const rssTable = (rows: readonly Rss[]): string =>
  table(
    ["store", "flow", "requests", "req/s", "RSS after warm-up MB", "half-way MB", "after MB", "growth MB", "failures"],
    rows.map((r) => [
      r.store,
      r.flow,
      String(r.result.requests),
      fixed(r.result.rate),
      fixed(r.result.rssBeforeMB, 1),
      fixed(r.result.rssHalfwayMB, 1),
      fixed(r.result.rssAfterMB, 1),
      fixed(rssGrowth(r), 1),
      String(r.result.failures)
    ])
  )

export interface StartupRow {
  readonly store: string
  /** "bundle": dist/serve, what serve runs when it is fresh; "sources": SOKONI_SERVE_BUNDLE=off. */
  readonly code: string
  readonly mode: string
  /** Spawn to the first 200 from GET /api/v1/status, per run. */
  readonly ms: readonly number[]
  /** What `serve` printed as "ready in N ms" (time since its process started), per run. */
  readonly selfReported: readonly number[]
}

export const startupTable = (rows: readonly StartupRow[]): string =>
  table(
    ["store", "code", "compile cache", "runs", "median ms (spawn → first 200)", "per run", "median `ready in` (self-reported)"],
    rows.map((r) => [r.store, r.code, r.mode, String(r.ms.length), fixed(median(r.ms)), r.ms.map((v) => fixed(v)).join(" / "), fixed(median(r.selfReported))])
  )

export interface Verdict {
  readonly name: string
  readonly measured: string
  readonly target: string
  readonly pass: boolean
}

export const verdictTable = (verdicts: readonly Verdict[]): string =>
  table(
    ["target", "measured", "goal", "verdict"],
    verdicts.map((v) => [v.name, v.measured, v.target, v.pass ? "PASS" : "FAIL"])
  )

export interface Machine {
  readonly cores: string
  readonly model: string
  readonly node: string
  readonly date: string
  readonly kernel: string
  readonly commit: string
}

export interface Document {
  readonly machine: Machine
  /** /proc/loadavg before and after: anything else running on the two cores disturbs every figure. */
  readonly load: string
  /** Something else was using the cores when the run began. */
  readonly busy: boolean
  readonly mode: string
  readonly settings: string
  readonly sections: readonly string[]
  readonly verdicts: readonly Verdict[]
}

export const markdown = (doc: Document): string => `# Performance

Produced by \`npm run bench\` (scripts/bench). Figures are from one machine and one run: compare ratios, not absolute
numbers, and re-run before drawing conclusions.

${doc.busy ? "> **Busy machine.** Other processes were using the cores when this run began (load average below): every figure\n> is disturbed, ratios included. Re-run on an idle machine before comparing with another run.\n\n" : ""}## Machine

- CPU: ${doc.machine.model}, ${doc.machine.cores} cores (\`nproc\`)
- Node ${doc.machine.node}, Linux ${doc.machine.kernel}
- Date: ${doc.machine.date}
- Engine: ${doc.machine.commit}
- Load average: ${doc.load}
- Run: ${doc.mode}; ${doc.settings}

## Method

- **Cores.** Every server under test is spawned pinned to core 0 (\`taskset -c 0\`); the load generator (autocannon 9,
  programmatic API, in its own node process) is pinned to core 1, and so is the orchestrating script. PostgreSQL is
  not pinned: with the postgres store its backends share the two cores with the engine and the load generator, and
  their CPU is not counted in "server CPU".
- **Targets.** \`bare-node\`: a bare \`node:http\` server that replays, byte for byte, the answer the engine (the
  memory store when it runs) gave to the same request, captured once before the rounds: status, body and every header
  the engine set, in its order (content-type, the x-ratelimit-* set, content-length); node:http adds
  Date/Connection/Keep-Alive for both. It reads each request body to the end before answering. \`engine-memory\` /
  \`engine-postgres\`: \`sokoni serve --rate-limit off --desk manual\` (orders stay PENDING, so no background fill
  work), each with a fresh enterprise partner (postgres: a fresh database, dropped afterwards). \`prism\`: \`prism mock
  spec/openapi.yaml\` as \`npm run mock\` runs it (default logging, sent to /dev/null). Prism answers from the
  contract's examples, so its bodies are not the engine's bytes (its /stocks example lists one stock where the engine
  lists all of them); it is the same operation of the same contract, not the same payload.
- **Interleaved rounds.** All four servers are up at once and idle except the one under load. Each round runs every
  target once (the order rotates from round to round), each run being a warm-up then a measured phase with the same
  connection count; the table gives the median over rounds and each round's figure.
- **GET /stocks**: \`GET /api/sandbox/v1/partner/stocks\` with the sandbox key (Prism: \`GET /stocks\`).
- **quote->trade**: one operation is \`GET /quote/{symbol}?side=BUY&quantity=1\` then \`POST /trade\` with that
  answer's \`quoteId\`, a fresh \`Idempotency-Key\` and quantity 1 (symbol: the first item of GET /stocks); op/s counts
  trades answered 202. The bare server answers the captured quote bytes and the captured 202 trade bytes.
- **Server CPU µs/op**: utime+stime of the server process from /proc/<pid>/stat over the measured phase, divided by
  the operations (10 ms tick resolution). **Loader CPU**: the load generator's own CPU over the phase; near 100% means
  the generator, not the server, was the limit (then the bare-node figure is a floor and its ratios are flattering).
- **RSS growth**: a fresh engine per store, VmRSS from /proc/<pid>/status after a warm-up of 5,000 requests and again
  after the measured requests (and once a second in between: "half-way" tells a plateau from a slope), cycling
  GET /stocks, GET /quote, POST /trade (so a third of them create an order that the store keeps). The 50 MB goal is
  defined over 200,000 requests; a quick run (20,000) is indicative only. Growth counts whatever the engine keeps on
  purpose (the memory store's quotes, orders and idempotency records; the trace, if \`serve\` keeps it in memory) as well
  as leaks.
- **Startup**: time from spawning \`node engine/cli/sokoni.js serve\` (the bin \`npx sokoni\` and \`npm start\` run;
  pinned to core 0) to the first 200 from \`GET /api/v1/status\`, polled every 5 ms, per store (postgres: one database
  for all runs; its first start, which creates the schema, is reported apart). "bundle" is dist/serve, which \`serve\`
  runs when it is fresh (built first when missing or stale, as \`npm start\` does); "sources" sets
  \`SOKONI_SERVE_BUNDLE=off\`. The bin calls \`module.enableCompileCache()\` (its default directory, under the temporary
  directory): "off" sets \`NODE_DISABLE_COMPILE_CACHE=1\`, "cold" is the first run with an empty temporary directory of
  its own (\`TMPDIR\`) and "warm" the runs after it, as a user's starts are (E-531); bundle and sources runs alternate.
- **Isolation**: partner A at 20 quote->trade pairs/s (an open loop, scripts/bench/paced.ts) alone, then while partner
  B floods the same server over 50 connections. A's client shares the load core with B's generator, so it runs under
  the FIFO scheduler (\`chrt -f\`): it answers the moment a reply arrives, as a partner on its own machine would. The
  bare-node row replays the engine's quote and trade answers: the floor of what this method can show on this machine.
- **Two processes**: "server core busy" is the engine processes' CPU over the measured phase as a share of the one core
  they are pinned to (one process counted once): below 100%, CPU was not what limited them.
- **PostgreSQL's floor** (scripts/bench/floor.ts): below the engine, pinned to core 0, against a fresh database: a raw
  \`@effect/sql-pg\` SELECT by key, the store's read of one document and its write transaction of one document (BEGIN,
  the partition's lock, the row, COMMIT), once with the server's synchronous commit and once with
  \`synchronous_commit = off\` on that database. One partner's writes run one at a time under its lock, so a round trip's
  wall time times a command's round trips bounds that partner's rate.

## Results

${doc.sections.join("\n\n")}

## Targets

${verdictTable(doc.verdicts)}

## Reproduce

\`\`\`sh
export PATH=$PWD/node_modules/.bin:$PATH   # Node 24 from the devDependency
npm run bench                              # full: 3 rounds x 5 s per target, 200,000 requests for RSS
npm run bench -- --quick                   # 1 round x 2 s, 20,000 requests for RSS
npm run bench -- --store memory --only stocks,trade
npm run bench -- --strict                  # exit 1 when a target is missed
\`\`\`

Needs Linux with at least 2 cores, \`taskset\`, and for the postgres store a PostgreSQL on 127.0.0.1:5432 that user
\`postgres\` reaches without a password (\`createdb\`/\`dropdb\` on the PATH). \`--out FILE\` writes the report elsewhere.
`
