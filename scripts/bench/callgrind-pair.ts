/**
 * Instructions per quote->trade pair over HTTP, counted by callgrind (docs/performance.md, "The session beside its
 * start"): timing on a busy 2-core machine cannot resolve a change of a few percent, instruction counts can. The
 * engine's node:http server (startServer, the bench's engine config, as alloc-http.ts runs it) in a child process
 * under `valgrind --tool=callgrind` with `node --single-threaded` (collections and compilations on the one thread
 * counted), driven from this process over keep-alive sockets: warm-up pairs first, then windows of pairs, each between
 * `callgrind_control -z` (counters zeroed) and `-d` (dumped). Prints each window's instructions and their median.
 *   node scripts/bench/callgrind-pair.ts [windows, default 5] [pairs per window, default 500] [connections, default 10]
 * Windows differ by up to 2x as collections land in some and not others: compare medians of several. The dumps stay
 * in CALLGRIND_DIR (default /tmp/callgrind-pair) for `callgrind_annotate --inclusive=yes`; PORT (default 47201), WARMUP
 * pairs (default 2000). NODE_FLAGS=--perf-basic-prof writes /tmp/perf-<pid>.map, whose ranges name the JIT code
 * callgrind lists by address; NO_VALGRIND=1 runs the same server and load without valgrind (SERVER_LOG=<file> keeps
 * its output, e.g. with NODE_FLAGS="--trace-deopt").
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { benchHostConfig } from "./in-process.ts"
import { pairDriver } from "./pair-driver.ts"

const here = fileURLToPath(import.meta.url)

if (process.argv[2] === "--server") {
  const { capYoungGeneration, DEFAULT_YOUNG_GENERATION_MB } = await import("../../engine/cli/young-generation.js")
  capYoungGeneration(DEFAULT_YOUNG_GENERATION_MB)
  const { startServer } = await import("../../engine/http/node-server.ts")
  const running = await startServer(benchHostConfig({ store: "memory" }), Number(process.argv[3]))
  // Each window starts from an empty young generation (SIGUSR2: a scavenge), so what a window scavenges is its own
  // pairs' garbage. Not a full collection: one clears the weak objects optimised code embeds, and about 130 hot
  // functions were deoptimised and compiled again inside every window (--trace-deopt: "embedded weak objects cleared").
  const gc = (globalThis as { gc?: (options: { type: "minor" }) => void }).gc
  process.on("SIGUSR2", () => {
    gc?.({ type: "minor" })
    console.log("COLLECTED")
  })
  console.log(`LISTENING ${running.url}`)
} else {
  const WINDOWS = Number(process.argv[2] ?? 5)
  const PAIRS = Number(process.argv[3] ?? 500)
  const CONNECTIONS = Number(process.argv[4] ?? 10)
  const WARMUP = Number(process.env.WARMUP ?? 2000)
  const dir = process.env.CALLGRIND_DIR ?? "/tmp/callgrind-pair"
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const valgrind = ["--tool=callgrind", "--smc-check=all-non-file", `--callgrind-out-file=${dir}/cg.out`]
  const flags = (process.env.NODE_FLAGS ?? "").split(" ").filter((f) => f !== "")
  const node = [process.execPath, "--single-threaded", "--expose-gc", ...flags, here, "--server", process.env.PORT ?? "47201"]
  // NO_VALGRIND=1: the same server and load without valgrind (to watch it with NODE_FLAGS, e.g. --trace-deopt).
  const bare = process.env.NO_VALGRIND === "1"
  const child: ChildProcess = bare
    ? spawn(node[0]!, node.slice(1), { stdio: ["ignore", "pipe", "inherit"] })
    : spawn("valgrind", [...valgrind, ...node], { stdio: ["ignore", "pipe", "inherit"] })
  let out = ""
  let heard: (() => void) | undefined
  const log = process.env.SERVER_LOG
  child.stdout?.on("data", (chunk: Buffer) => {
    if (log !== undefined) appendFileSync(log, chunk)
    out += chunk.toString()
    if (out.includes("COLLECTED")) {
      out = out.replaceAll("COLLECTED", "")
      heard?.()
    }
  })
  const base = await new Promise<string>((resolve) => {
    const poll = setInterval(() => {
      const url = /LISTENING (\S+)/.exec(out)?.[1]
      if (url === undefined) return
      clearInterval(poll)
      resolve(url)
    }, 50)
  })
  const collect = () =>
    new Promise<void>((resolve) => {
      heard = resolve
      child.kill("SIGUSR2")
    })
  const driver = await pairDriver(base, CONNECTIONS, "callgrind-pair")
  const pairs = driver.pairs
  const control = (flag: string) => (bare ? undefined : execFileSync("callgrind_control", [flag, String(child.pid)], { stdio: "ignore" }))
  // Warm-up from many loops, as a load generator's connections would arrive, long enough for the hot functions to
  // be optimised before the windows (300 pairs left TurboFan compiling in them).
  await pairs(WARMUP, 50)
  const counts: Array<number> = []
  for (let w = 0; w < WINDOWS; w++) {
    await collect()
    control("-z")
    await pairs(PAIRS, CONNECTIONS)
    control("-d")
    if (bare) {
      console.log(`window ${w + 1}: ${PAIRS} pairs`)
      continue
    }
    const dumps = readdirSync(dir).filter((f) => /^cg\.out\.\d+$/.test(f))
    const last = dumps.sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop())).at(-1)!
    const totals = /^totals:\s+(\d+)/m.exec(readFileSync(`${dir}/${last}`, "utf8"))?.[1]
    counts.push(Number(totals))
    console.log(`window ${w + 1}: ${(Number(totals) / 1e9).toFixed(3)} G instructions, ${(Number(totals) / PAIRS / 1e6).toFixed(2)} M per pair (${last})`)
  }
  driver.close()
  child.kill("SIGTERM")
  const sorted = [...counts].sort((a, b) => a - b)
  const median = sorted[Math.floor(sorted.length / 2)]!
  console.log(
    `median ${(median / 1e9).toFixed(3)} G per ${PAIRS} pairs, ${(median / PAIRS / 1e6).toFixed(2)} M per pair; ${driver.sent() - driver.accepted()} trades not accepted`
  )
}
