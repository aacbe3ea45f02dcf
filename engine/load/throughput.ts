/**
 * `sokoni load throughput`: the k6 throughput profile (load/throughput.js) against an engine process it starts on a
 * store (rate limits off, auto desk after 1 s, a local webhook receiver counting the fills' deliveries), then the
 * ceiling and latency per step and per operation. Owns the parameters and the verdict's arithmetic; real time and
 * processes by nature (a load tool, not engine logic).
 */
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { freePort, ROOT } from "./run.ts"

export const THROUGHPUT_PROFILE = join(ROOT, "load", "throughput.js")
// The bin, not bin.ts: in an installed package (no sources) it runs the bundled CLI (engine/cli/sokoni.js, E-330).
const BIN = join(ROOT, "engine", "cli", "sokoni.js")

export interface Step {
  readonly offeredIterationsPerSecond: number
  readonly requestsPerSecond: number
  readonly failedRate: number
  readonly droppedIterations: number
  readonly p50?: number
  readonly p95?: number
  readonly p99?: number
}

export interface ThroughputSummary {
  readonly stepSeconds: number
  readonly steps: ReadonlyArray<Step>
  readonly operations: Record<string, Record<string, number> | null>
}

/** What counts as keeping up: under 1% failed, under 1% of the offered iterations dropped, p95 under 100 ms. */
export const keepsUp = (step: Step, stepSeconds: number) =>
  step.failedRate < 0.01 && step.droppedIterations <= 0.01 * step.offeredIterationsPerSecond * stepSeconds && (step.p95 ?? Infinity) < 100

/** The highest step the engine kept up with, in requests per second actually served (undefined if none). */
export const ceilingOf = (summary: ThroughputSummary): Step | undefined => summary.steps.filter((s) => keepsUp(s, summary.stepSeconds)).at(-1)

const ms = (v: number | undefined) => (v === undefined ? "-" : v.toFixed(2))

export const describeThroughput = (store: string, summary: ThroughputSummary, deliveries: number): ReadonlyArray<string> => {
  const ceiling = ceilingOf(summary)
  return [
    `| offered it/s | served req/s | failed | dropped | p50 ms | p95 ms | p99 ms | kept up |`,
    `|---:|---:|---:|---:|---:|---:|---:|:---:|`,
    ...summary.steps.map(
      (s) =>
        `| ${s.offeredIterationsPerSecond} | ${s.requestsPerSecond.toFixed(0)} | ${(s.failedRate * 100).toFixed(2)}% | ${s.droppedIterations} | ${ms(s.p50)} | ${ms(s.p95)} | ${ms(s.p99)} | ${keepsUp(s, summary.stepSeconds) ? "yes" : "no"} |`
    ),
    "",
    `| operation | avg ms | p50 ms | p95 ms | p99 ms | max ms |`,
    `|---|---:|---:|---:|---:|---:|`,
    ...Object.entries(summary.operations).map(([op, v]) =>
      v === null ? `| ${op} | - | - | - | - | - |` : `| ${op} | ${ms(v.avg)} | ${ms(v["p(50)"])} | ${ms(v["p(95)"])} | ${ms(v["p(99)"])} | ${ms(v.max)} |`
    ),
    "",
    `ceiling on ${store}: ${ceiling === undefined ? "below the first step" : `${ceiling.requestsPerSecond.toFixed(0)} req/s (offered ${ceiling.offeredIterationsPerSecond} it/s)`}; webhook deliveries received: ${deliveries}`
  ]
}

/** Runs the profile: engine process, partner, webhook receiver, k6; resolves with the summary and deliveries. */
export const runThroughput = async (options: {
  readonly k6: string
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
  readonly steps: ReadonlyArray<number>
  readonly stepSeconds: number
  readonly out: string
  readonly onLine?: (line: string) => void
}): Promise<{ summary: ThroughputSummary; deliveries: number }> => {
  mkdirSync(options.out, { recursive: true })
  let deliveries = 0
  const receiver: Server = createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      deliveries++
      res.writeHead(204)
      res.end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const address = receiver.address()
  const hook = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hook`
  const port = await freePort()
  const admin = "adm_throughput"
  // The follow clock starts at the next moment NSE and JSE are both open and runs at wall speed from there: with the
  // system clock, trades (15% of the mix) answered MARKET_CLOSED whenever the profile ran outside their hours.
  const args = [BIN, "serve", "--port", String(port), "--clock", "follow", "--seed", "1", "--admin-token", admin, "--rate-limit", "off"]
  args.push("--desk", "auto", "--desk-delay", "1", "--trace-ring", "0", "--store", options.store)
  if (options.databaseUrl !== undefined) args.push("--database-url", options.databaseUrl)
  const engine = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise<void>((resolve) => engine.on("close", () => resolve()))
  try {
    let output = ""
    await new Promise<void>((resolve, reject) => {
      const read = (c: Buffer) => {
        output += c.toString("utf8")
        if (output.includes("ready in")) resolve()
      }
      engine.stdout.on("data", read)
      engine.stderr.on("data", read)
      engine.on("close", (code) => reject(new Error(`serve exited (${code}):\n${output}`)))
    })
    const base = `http://127.0.0.1:${port}`
    const created = await fetch(`${base}/_sim/partners`, {
      method: "POST",
      headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
      body: JSON.stringify({ businessName: "Throughput Co", email: "tp@sokoni.test", tier: "enterprise" })
    })
    const partner = (await created.json()) as { sandboxKey: string }
    const api = `${base}/api/sandbox/v1/partner`
    const webhook = await fetch(`${api}/webhooks`, {
      method: "POST",
      headers: { "x-api-key": partner.sandboxKey, "content-type": "application/json", "idempotency-key": "throughput-webhook-1" },
      body: JSON.stringify({ url: hook, events: ["order.filled"], secret: "whsec_throughput_0001" })
    })
    if (webhook.status !== 201) throw new Error(`webhook registration answered ${webhook.status}: ${await webhook.text()}`)
    const env = {
      ...process.env,
      BASE: api,
      KEY: partner.sandboxKey,
      STEPS: options.steps.join(","),
      STEP_S: String(options.stepSeconds),
      OUT: options.out,
      K6_NO_USAGE_REPORT: "true"
    }
    await new Promise<void>((resolve, reject) => {
      const k6 = spawn(options.k6, ["run", "--quiet", "--no-color", THROUGHPUT_PROFILE], { env, stdio: ["ignore", "pipe", "pipe"] })
      const forward = (c: Buffer) => {
        for (const line of c.toString("utf8").split("\n")) if (line.trim() !== "") options.onLine?.(line)
      }
      k6.stdout.on("data", forward)
      k6.stderr.on("data", forward)
      k6.on("error", reject)
      k6.on("close", () => resolve())
    })
    const file = join(options.out, "summary.json")
    if (!existsSync(file)) throw new Error(`k6 wrote no summary (${file})`)
    return { summary: JSON.parse(readFileSync(file, "utf8")) as ThroughputSummary, deliveries }
  } finally {
    engine.kill("SIGTERM")
    await exited
    await new Promise((resolve) => receiver.close(resolve))
  }
}
