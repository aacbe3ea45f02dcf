/**
 * What partner A's slow requests wait on under partner B's flood (issue 25 item 2): the engine as `serve` runs it
 * (memory store, rate limits off) under `--trace-gc-nvp` with stalls-probe.ts loaded, on the server core; partner B
 * floods a fixed number of quote->trade pairs over 50 connections from a child on the load core, while partner A
 * runs 20 pairs/s from this process: alone first, then under the flood, then alone again on the heap the flood left.
 * Prints the collections of 10 ms or more by kind with the heap's size, and A's requests over 10 ms set against the
 * collections and the event loop's delay, and per pair what the scavenges copied and promoted: countable for a fixed
 * number of pairs, unlike a p99 on a busy machine (E-480). STALLS_VERBOSE=1 lists every collection of 10 ms or more;
 * STALLS_LOG=<file> keeps the GC trace; STALLS_SERVE_ARGS / STALLS_NODE_FLAGS add serve's or node's flags;
 * STALLS_FIFO=1 runs the engine under the FIFO scheduler (its GC threads too: they then run in turn with the main
 * thread on its one core, which distorts the pauses: not a model of an idle machine).
 *   node scripts/bench/stalls.ts [B's pairs, default 60000] [connections, default 50] [A alone seconds, default 10]
 */
import { spawn } from "node:child_process"
import { Agent, request } from "node:http"
import { fileURLToPath } from "node:url"
import { ADMIN_TOKEN, createPartner, freePort, LOAD_CORE, root, SERVER_CORE, spawnPinned, stop, waitForHttp } from "./targets.ts"

const here = fileURLToPath(import.meta.url)
const PREFIX = "/api/sandbox/v1/partner"

const caller = (base: string, key: string, sockets: number) => {
  const agent = new Agent({ keepAlive: true, maxSockets: sockets })
  return (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${base}${PREFIX}${path}`, { method, agent, headers: { "x-api-key": key, ...headers } }, (res) => {
        const chunks: Buffer[] = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
      })
      req.on("error", reject)
      req.end(body)
    })
}

type Call = ReturnType<typeof caller>
let sequence = 0
/** One quote->trade pair; each request's wall-clock start and duration. */
const pair = async (call: Call, symbol: string, tag: string, out?: Array<{ at: number; ms: number }>) => {
  const t0 = performance.now()
  const quote = await call("GET", `/quote/${symbol}?side=BUY&quantity=1`)
  const t1 = performance.now()
  const quoteId = (JSON.parse(quote.body) as { quoteId: string }).quoteId
  const body = JSON.stringify({ symbol, type: "BUY", quantity: 1, quoteId })
  const trade = await call("POST", "/trade", { "content-type": "application/json", "idempotency-key": `${tag}-${++sequence}` }, body)
  const t2 = performance.now()
  out?.push({ at: performance.timeOrigin + t0, ms: t1 - t0 }, { at: performance.timeOrigin + t1, ms: t2 - t1 })
  return trade.status === 202
}

if (process.argv[2] === "--flood") {
  const [base, key, symbol, pairs, connections] = process.argv.slice(3) as [string, string, string, string, string]
  const call = caller(base, key, Number(connections))
  let accepted = 0
  let left = Number(pairs)
  const started = performance.now()
  const lane = async () => {
    while (left-- > 0) if (await pair(call, symbol, `flood-${process.pid}`)) accepted++
  }
  await Promise.all(Array.from({ length: Number(connections) }, lane))
  process.stdout.write(`${JSON.stringify({ accepted, seconds: (performance.now() - started) / 1000 })}\n`)
  process.exit(0)
}

const B_PAIRS = Number(process.argv[2] ?? 60_000)
const CONNECTIONS = Number(process.argv[3] ?? 50)
const ALONE_S = Number(process.argv[4] ?? 10)
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const serve = [
  "engine/cli/bin.ts",
  "serve",
  "--port",
  String(port),
  "--store",
  "memory",
  "--rate-limit",
  "off",
  "--desk",
  "manual",
  ...(process.env.STALLS_SERVE_ARGS ?? "").split(" ").filter((a) => a !== "")
]
const extraFlags = (process.env.STALLS_NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")
const engine = spawnPinned(
  SERVER_CORE,
  [...extraFlags, "--trace-gc-nvp", "--import", "./scripts/bench/stalls-probe.ts", ...serve, "--seed", "1", "--admin-token", ADMIN_TOKEN],
  process.env,
  "pipe",
  root,
  process.env.STALLS_FIFO === "1"
)
let nvp = ""
let probe = ""
engine.stdout?.on("data", (c: Buffer) => (nvp += c.toString()))
engine.stderr?.on("data", (c: Buffer) => (probe += c.toString()))
await waitForHttp(`${base}/api/v1/status`, engine, 60_000, true)
const a = await createPartner(base, "Quiet")
const b = await createPartner(base, "Flood")
const callA = caller(base, a.apiKey, 64)
const symbol = ((JSON.parse((await callA("GET", "/stocks")).body) as { stocks: { symbol: string }[] }).stocks[0] as { symbol: string }).symbol

/** A at 20 pairs/s (an open loop, as paced.ts) until `until` resolves or `seconds` pass. */
const paced = async (seconds: number, until?: Promise<unknown>) => {
  const out: Array<{ at: number; ms: number }> = []
  let done = false
  void until?.then(() => (done = true))
  const started = performance.now()
  const pending: Promise<unknown>[] = []
  for (let i = 0; until !== undefined ? !done : i < seconds * 20; i++) {
    const wait = started + i * 50 - performance.now()
    if (wait > 0) await new Promise((r) => setTimeout(r, wait))
    pending.push(pair(callA, symbol, "quiet", out))
  }
  await Promise.all(pending)
  return out
}

const nvpMark = (label: string) => (nvp += `\nMARK ${label} ${Date.now()}\n`)
await paced(3) // warm-up
nvpMark("alone")
const alone = await paced(ALONE_S)
nvpMark("flood")
const floodChild = spawn("taskset", ["-c", LOAD_CORE, process.execPath, here, "--flood", base, b.apiKey, symbol, String(B_PAIRS), String(CONNECTIONS)], {
  cwd: root,
  stdio: ["ignore", "pipe", "inherit"]
})
let floodOut = ""
floodChild.stdout?.on("data", (c: Buffer) => (floodOut += c.toString()))
const floodDone = new Promise((r) => floodChild.once("exit", r))
const flooded = await paced(0, floodDone)
nvpMark("after")
const after = await paced(ALONE_S)
nvpMark("end")
await stop(engine)

// --- analysis ---
const probes = probe
  .split("\n")
  .filter((l) => l.startsWith("PROBE "))
  .map((l) => JSON.parse(l.slice(6)) as { gc?: string; start: number; ms: number; heapMB: number; loop?: number; maxMs?: number })
const gcs = probes.filter((p) => p.gc !== undefined)
const loops = probes.filter((p) => p.loop !== undefined)
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((x, y) => x - y)
  return s.length === 0 ? Number.NaN : (s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] as number)
}
const overlapsGc = (r: { at: number; ms: number }, min: number) => gcs.some((g) => g.ms >= min && g.start < r.at + r.ms && g.start + g.ms > r.at)

const nvpPhases = nvp.split(/\nMARK (\w+) \d+\n/)
const nvpOf = (label: string) => nvpPhases[nvpPhases.indexOf(label) + 1] ?? ""
const field = (line: string, name: string) => Number(new RegExp(`\\b${name}=([\\d.]+)`).exec(line)?.[1] ?? Number.NaN)
const describe = (label: string, requests: Array<{ at: number; ms: number }>) => {
  const lines = nvpOf(label)
    .split("\n")
    .filter((l) => l.includes("pause="))
  const big = lines.filter((l) => field(l, "pause") >= 10)
  const byKind = new Map<string, number[]>()
  for (const l of lines) {
    const kind = /\bgc=(\w+)/.exec(l)?.[1] ?? "?"
    byKind.set(kind, [...(byKind.get(kind) ?? []), field(l, "pause")])
  }
  const kinds = [...byKind]
    .map(([k, ps]) => `${k} ${ps.length} (max ${Math.max(...ps).toFixed(1)} ms, ${ps.filter((p) => p >= 10).length} >= 10 ms)`)
    .join(", ")
  const slow = requests.filter((r) => r.ms >= 10)
  const quiet = requests.filter((r) => !overlapsGc(r, 2))
  console.log(
    `\n== ${label}: A ${requests.length} requests, p50 ${pct(
      requests.map((r) => r.ms),
      50
    ).toFixed(1)} p99 ${pct(
      requests.map((r) => r.ms),
      99
    ).toFixed(1)} ms; p99 of those overlapping no GC >= 2 ms: ${pct(
      quiet.map((r) => r.ms),
      99
    ).toFixed(1)} ms (${quiet.length})`
  )
  console.log(`   collections: ${kinds}`)
  // The countable part, judged on a busy machine: what each scavenge copied, what the pairs promoted.
  const scavenges = lines.filter((l) => /\bgc=s\b/.test(l))
  const pairs = requests.length / 2 + (label === "flood" ? B_PAIRS : 0)
  const total = (ls: string[], name: string) => ls.reduce((n, l) => n + (field(l, name) || 0), 0)
  console.log(
    `   per scavenge survived ${(total(scavenges, "new_space_survived") / Math.max(1, scavenges.length) / 1024).toFixed(0)} KB; per pair promoted ${(total(scavenges, "promoted") / pairs / 1024).toFixed(1)} KB, ${((scavenges.length / pairs) * 1000).toFixed(1)} scavenges per 1,000 pairs`
  )
  console.log(`   A requests >= 10 ms: ${slow.length}, of them overlapping a GC >= 5 ms: ${slow.filter((r) => overlapsGc(r, 5)).length}`)
  for (const l of process.env.STALLS_VERBOSE === "1" ? big : []) {
    const kind = /\bgc=(\w+)/.exec(l)?.[1]
    const sizes = `heap ${(field(l, "start_object_size") / 2 ** 20).toFixed(0)} -> ${(field(l, "end_object_size") / 2 ** 20).toFixed(0)} MB`
    const detail =
      kind === "s"
        ? `survived ${(field(l, "new_space_survived") / 2 ** 20).toFixed(1)} MB, promoted ${(field(l, "promoted") / 2 ** 20).toFixed(1)} MB, scavenge ${field(l, "scavenge")} (roots ${field(l, "scavenge.roots")}, parallel ${field(l, "scavenge.parallel")}, background ${field(l, "background.scavenge.parallel")}), safepoint ${field(l, "time_to_safepoint")}`
        : `mark ${field(l, "mark")} sweep ${field(l, "sweep")} evacuate ${field(l, "evacuate")} clear ${field(l, "clear")} finish ${field(l, "finish")} (incremental ${field(l, "incremental")}, ${field(l, "incremental_steps_count")} steps, longest ${field(l, "incremental_longest_step")})`
    console.log(`   ${kind} pause ${field(l, "pause").toFixed(1)} ms, ${sizes}, ${detail}`)
  }
  const window = loops.filter(
    (p) => requests.length > 0 && (p.loop as number) >= (requests[0] as { at: number }).at && (p.loop as number) <= (requests.at(-1) as { at: number }).at
  )
  const worst = window.map((p) => p.maxMs as number)
  const withoutGc = window
    .filter((p) => !gcs.some((g) => g.ms >= 2 && g.start + g.ms >= (p.loop as number) - 100 && g.start <= (p.loop as number)))
    .map((p) => p.maxMs as number)
  console.log(
    `   event-loop delay per 100 ms: p99 of max ${pct(worst, 99).toFixed(1)} ms; in intervals with no GC >= 2 ms: p99 ${pct(withoutGc, 99).toFixed(1)}, max ${Math.max(...withoutGc).toFixed(1)} ms (${withoutGc.length} intervals)`
  )
}
if (process.env.STALLS_LOG !== undefined) (await import("node:fs")).writeFileSync(process.env.STALLS_LOG, nvp)
console.log(`B: ${floodOut.trim()}`)
describe("alone", alone)
describe("flood", flooded)
describe("after", after)
