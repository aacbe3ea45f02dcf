/**
 * Bytes allocated per quote->trade pair over HTTP: the engine's node:http server (startServer, the bench's engine
 * config) in a child process under `--expose-gc --trace-gc-nvp`, driven from this process over keep-alive sockets, so
 * what the transport costs (node:http, node-server.ts, the gateway's plumbing) counts as well as the commands'. The
 * method is alloc-pair.ts's: full collections and markers bound the measured pairs, and the collections' `allocated=`
 * fields between them sum to what the server allocated. Deterministic enough to judge a change on a busy machine.
 *   taskset -c 0 node scripts/bench/alloc-http.ts [pairs, default 3000] [connections, default 10]
 * With `--cpu-prof` after the numbers, the server child also writes a CPU profile of the measured pairs' process.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { benchHostConfig } from "./in-process.ts"
import { pairDriver } from "./pair-driver.ts"

const here = fileURLToPath(import.meta.url)

if (process.argv[2] === "--server") {
  // The young generation `serve` runs with (bin.ts), capped before the engine loads: what survives depends on it.
  const { capYoungGeneration, DEFAULT_YOUNG_GENERATION_MB } = await import("../../engine/cli/young-generation.js")
  capYoungGeneration(DEFAULT_YOUNG_GENERATION_MB)
  const { startServer } = await import("../../engine/http/node-server.ts")
  // ALLOC_TRACE_RING=<n>: another trace ring than serve's 1,000 lines (0: none), to see what the trace keeps alive.
  const ring = process.env.ALLOC_TRACE_RING === undefined ? undefined : Number(process.env.ALLOC_TRACE_RING)
  const { Trace } = await import("../../engine/sim/trace.ts")
  const trace = ring === undefined ? {} : { trace: ring === 0 ? Trace.layerOff : Trace.layerRing(ring) }
  const running = await startServer({ ...benchHostConfig({ store: "memory" }), ...trace }, 0)
  const gc = (globalThis as { gc?: () => void }).gc
  const sites = process.env.ALLOC_SITES === undefined ? undefined : await import("./alloc-sites.ts")
  process.on("message", async (message: string) => {
    if (message === "stop") return void running.stop({ idleLingerMs: 0 }).then(() => process.exit(0))
    if (message === "start") await sites?.startSampling()
    if (message === "end") await sites?.stopSampling(Number(process.env.ALLOC_SITES))
    gc?.()
    console.log(message === "start" ? "ALLOC-MEASURE-START" : "ALLOC-MEASURE-END")
    process.send?.(message)
  })
  process.send?.(running.url)
} else {
  const PAIRS = Number(process.argv[2] ?? 3000)
  const CONNECTIONS = Number(process.argv[3] ?? 10)
  const profile = process.argv.includes("--cpu-prof") ? ["--cpu-prof", "--cpu-prof-dir", "/tmp"] : []
  // The server on core 1 and this client on core 0 (as the bench pins them), when the machine has two.
  const args = ["-c", "1", process.execPath, "--expose-gc", "--trace-gc-nvp", ...profile, here, "--server"]
  const child: ChildProcess = spawn("taskset", args, { stdio: ["ignore", "pipe", "inherit", "ipc"] })
  let out = ""
  child.stdout?.on("data", (chunk: Buffer) => {
    out += chunk.toString()
  })
  const next = () => new Promise<string>((resolve) => child.once("message", (m) => resolve(m as string)))
  const base = await next()
  const driver = await pairDriver(base, CONNECTIONS, "alloc-http")
  const pairs = (count: number) => driver.pairs(count, CONNECTIONS)
  await pairs(1000)
  child.send("start")
  await next()
  driver.resetCounts()
  const measured = Math.ceil(PAIRS / CONNECTIONS) * CONNECTIONS
  await pairs(PAIRS)
  child.send("end")
  await next()
  child.send("stop")
  await new Promise((resolve) => child.once("exit", resolve))
  driver.close()
  const inside = out.slice(out.indexOf("ALLOC-MEASURE-START"), out.indexOf("ALLOC-MEASURE-END"))
  const sum = (field: string) => [...inside.matchAll(new RegExp(`\\b${field}=(\\d+)`, "g"))].reduce((total, m) => total + Number(m[1]), 0)
  const perPair = (bytes: number) => `${(bytes / measured / 1024).toFixed(1)} KB`
  // The collections' own time, by kind (s: scavenge, mc: mark-compact, ms: the marking steps), in µs per pair.
  // The last mark-compact is the closing one the END marker forces, not the pairs': left out.
  const pauses = new Map<string, { ms: number; count: number }>()
  const collections = [...inside.matchAll(/pause=([\d.]+).*?\bgc=(\w+)/g)]
  const forced = collections.findLastIndex((m) => m[2] === "mc")
  collections.forEach((m, i) => {
    if (i === forced) return
    const kind = pauses.get(m[2] as string) ?? { ms: 0, count: 0 }
    pauses.set(m[2] as string, { ms: kind.ms + Number(m[1]), count: kind.count + 1 })
  })
  const gcTime = [...pauses].map(([kind, { ms, count }]) => `${kind} ${((ms * 1000) / measured).toFixed(1)} (${count})`).join(", ")
  console.log(
    `${measured} pairs over HTTP (${CONNECTIONS} connections): allocated ${perPair(sum("allocated"))}, promoted ${perPair(sum("promoted"))} per pair; ${driver.accepted()}/${measured} trades accepted; GC pauses µs per pair: ${gcTime}`
  )
}
