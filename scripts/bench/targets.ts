/**
 * The servers under test, each spawned pinned to core 0: the engine (memory or postgres store), the bare node:http
 * baseline replaying the engine's captured answers, and Prism's mock of the contract. Every child process and temporary
 * database is registered so that cleanup() can remove them on any exit path.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import type { Route } from "./bare-server.ts"

export const root = join(import.meta.dirname, "../..")
export const SERVER_CORE = "0"
export const LOAD_CORE = "1"
export const ADMIN_TOKEN = "adm_bench"
const PG = ["-h", "127.0.0.1", "-U", "postgres"]
const run = promisify(execFile)

const children = new Set<ChildProcess>()

let realtimeAllowed: boolean | undefined
/** Whether this user may run a process under the FIFO scheduler (root, or CAP_SYS_NICE). */
export const canRunRealtime = (): boolean => {
  if (realtimeAllowed === undefined) {
    try {
      execFileSync("chrt", ["-f", "10", "true"], { stdio: "ignore" })
      realtimeAllowed = true
    } catch {
      realtimeAllowed = false
      console.error("bench: chrt -f is not allowed here; the paced client runs at normal priority beside the load generator")
    }
  }
  return realtimeAllowed
}
const finalizers: Array<() => Promise<void> | void> = []

/**
 * Spawns `node args…` pinned to a core (taskset execs, so the pid is node's own). `realtime`: under the FIFO
 * scheduler (chrt, which execs too), for a client that measures latency beside a load generator on the same core: it
 * runs the moment it has work, so what it measures is the server's wait and not its own (tenants.ts). Without the
 * right to that priority it runs as usual, and says so.
 */
export const spawnPinned = (
  core: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
  stdout: "pipe" | "ignore" = "pipe",
  cwd: string = root,
  realtime = false
): ChildProcess => {
  const priority = realtime && canRunRealtime() ? ["chrt", "-f", "10"] : []
  const child = spawn("taskset", ["-c", core, ...priority, process.execPath, ...args], { cwd, env, stdio: ["ignore", stdout, "pipe"] })
  children.add(child)
  child.on("exit", () => children.delete(child))
  return child
}

/** Stops a child (SIGTERM, then SIGKILL after 3 s) and waits for it to be gone. */
export const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const force = setTimeout(() => child.kill("SIGKILL"), 3000)
    child.once("exit", () => {
      clearTimeout(force)
      resolve()
    })
    child.kill("SIGTERM")
  })

export const cleanup = async (): Promise<void> => {
  await Promise.all([...children].map(stop))
  for (const finalize of finalizers.splice(0).reverse()) {
    try {
      await finalize()
    } catch (error) {
      console.error(`cleanup: ${String(error)}`)
    }
  }
}

/** `SOKONI_BENCH_PORTS=7400-7499`: ports from that range only (helpers sharing a machine each have their own). */
const portRange = process.env.SOKONI_BENCH_PORTS?.split("-").map(Number)
let nextInRange = portRange?.[0] ?? 0

export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const wanted = portRange === undefined ? 0 : nextInRange++
    if (portRange !== undefined && wanted > (portRange[1] ?? wanted)) return reject(new Error(`no port left in ${process.env.SOKONI_BENCH_PORTS}`))
    const server = createServer().listen(wanted, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
    server.on("error", reject)
  })

/** Polls `url` until it answers with any HTTP status (or `okOnly`: a 2xx); resolves with the time it took, in ms. */
export const waitForHttp = async (url: string, child: ChildProcess, timeoutMs = 60_000, okOnly = false): Promise<number> => {
  const started = performance.now()
  while (performance.now() - started < timeoutMs) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited (${child.exitCode}) before answering`)
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) })
      await response.arrayBuffer()
      if (!okOnly || response.ok) return performance.now() - started
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  throw new Error(`${url}: no answer within ${timeoutMs} ms`)
}

/** Keeps the last lines a child wrote, to explain a failure. */
const tail = (child: ChildProcess): (() => string) => {
  let text = ""
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-2000)
  }
  child.stdout?.on("data", keep)
  child.stderr?.on("data", keep)
  return () => text
}

export interface Server {
  readonly name: string
  readonly base: string
  readonly pid: number
  readonly child: ChildProcess
}

export interface Engine extends Server {
  readonly apiKey: string
  readonly partnerId: string
  readonly prefix: string
  readonly databaseUrl?: string | undefined
}

export type Store = "memory" | "postgres"

/** A fresh database for one run of the postgres store, dropped at cleanup. */
export const freshDatabase = async (): Promise<string> => {
  const name = `${process.env.SOKONI_BENCH_DB_PREFIX ?? "sokoni_bench_"}${process.pid}_${finalizers.length}`
  await run("createdb", [...PG, name])
  finalizers.push(async () => {
    await run("dropdb", [...PG, "--force", "--if-exists", name])
  })
  return `postgres://postgres@127.0.0.1:5432/${name}`
}

const admin = async (base: string, path: string, body: unknown): Promise<Record<string, string>> => {
  const response = await fetch(`${base}/_sim${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = (await response.json()) as Record<string, string>
  if (!response.ok) throw new Error(`POST /_sim${path}: ${response.status} ${JSON.stringify(json)}`)
  return json
}

/** An enterprise partner created through /_sim, its sandbox wallet topped up by 1,000,000 USD so that no run meets INSUFFICIENT_FUNDS. */
export const createPartner = async (base: string, name = "Bench"): Promise<{ readonly partnerId: string; readonly apiKey: string }> => {
  const partner = await admin(base, "/partners", { businessName: name, email: `${name.toLowerCase()}@sokoni.test`, tier: "enterprise" })
  const partnerId = partner.partnerId!
  await admin(base, `/partners/${partnerId}/wallet/credit`, { environment: "sandbox", amount: 1_000_000 })
  return { partnerId, apiKey: partner.sandboxKey! }
}

export interface EngineOptions {
  /** Another checkout of the engine to run (`--baseline`), instead of this one. */
  readonly cwd?: string | undefined
  readonly name?: string | undefined
  /** An existing database to share (a second process); a fresh one otherwise. */
  readonly databaseUrl?: string | undefined
  readonly seed?: number | undefined
  readonly core?: string | undefined
  /** Node or V8 flags for the engine's process (before the script), to compare runtime settings side by side. */
  readonly nodeFlags?: readonly string[] | undefined
}

/**
 * `serve --rate-limit off --desk manual` (orders stay PENDING: no background fill work), with an enterprise partner
 * (createPartner).
 */
export const startEngine = async (store: Store, options: EngineOptions = {}): Promise<Engine> => {
  const port = await freePort()
  const database = store === "postgres" ? ["--database-url", options.databaseUrl ?? (await freshDatabase())] : []
  const args = ["engine/cli/sokoni.js", "serve", "--port", String(port), "--store", store, ...database]
  const seed = String(options.seed ?? 1)
  const flags = ["--rate-limit", "off", "--desk", "manual", "--seed", seed, "--admin-token", ADMIN_TOKEN]
  const child = spawnPinned(options.core ?? SERVER_CORE, [...(options.nodeFlags ?? []), ...args, ...flags], process.env, "pipe", options.cwd ?? root)
  const output = tail(child)
  const base = `http://127.0.0.1:${port}`
  try {
    await waitForHttp(`${base}/api/v1/status`, child, 60_000, true)
  } catch (error) {
    throw new Error(`engine (${store}) did not start: ${String(error)}\n${output()}`)
  }
  const { partnerId, apiKey } = await createPartner(base)
  const name = options.name ?? `engine-${store}`
  return { name, base, pid: child.pid!, child, apiKey, partnerId, prefix: "/api/sandbox/v1/partner", databaseUrl: database[1] }
}

/** One answer of the engine, as the bare server replays it: status, body, and its headers in order, less the ones node:http adds itself. */
export const capture = (engine: Engine, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Route> =>
  new Promise((resolve, reject) => {
    const url = `${engine.base}${engine.prefix}${path}`
    const req = request(url, { method, headers: { "x-api-key": engine.apiKey, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        const kept: Record<string, string> = {}
        for (let i = 0; i < res.rawHeaders.length; i += 2) {
          const name = res.rawHeaders[i]!
          if (!["date", "connection", "keep-alive", "transfer-encoding"].includes(name.toLowerCase())) kept[name] = res.rawHeaders[i + 1]!
        }
        resolve({ method, pathPrefix: path.split("?")[0]!, status: res.statusCode!, headers: kept, body: Buffer.concat(chunks).toString() })
      })
    })
    req.on("error", reject)
    req.end(body)
  })

export const startBare = async (routes: readonly Route[]): Promise<Server> => {
  const dir = mkdtempSync(join(tmpdir(), "sokoni-bench-"))
  finalizers.push(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, "routes.json")
  writeFileSync(file, JSON.stringify(routes))
  const port = await freePort()
  const child = spawnPinned(SERVER_CORE, ["scripts/bench/bare-server.ts", String(port), file])
  const base = `http://127.0.0.1:${port}`
  await waitForHttp(`${base}/`, child)
  return { name: "bare-node", base, pid: child.pid!, child }
}

/** Prism's static mock (the `npm run mock` command line): it answers from the contract's examples. */
export const startPrism = async (): Promise<Server> => {
  const port = await freePort()
  // Its per-request log lines go to /dev/null: reading them here would cost this process CPU during the runs.
  const args = ["node_modules/@stoplight/prism-cli/dist/index.js", "mock", "--port", String(port), "spec/openapi.yaml"]
  const child = spawnPinned(SERVER_CORE, args, process.env, "ignore")
  const output = tail(child)
  const base = `http://127.0.0.1:${port}`
  try {
    await waitForHttp(`${base}/stocks`, child)
  } catch (error) {
    throw new Error(`prism did not start: ${String(error)}\n${output()}`)
  }
  return { name: "prism", base, pid: child.pid!, child }
}
