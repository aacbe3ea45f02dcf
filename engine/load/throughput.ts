/**
 * `sokoni load throughput`: a mixed workload offered at rising arrival rates (one constant-arrival-rate step each, so
 * each step has its own percentiles) against an engine process it starts on a store (rate limits off, auto desk after
 * 1 s, a local webhook receiver counting the fills' deliveries), then the ceiling and latency per step and per
 * operation. The mix, by iteration number so it is exact: 60% GET /stocks, 20% GET /quote, 15% a quote then POST
 * /trade, 5% GET /wallet. Owns the parameters, the mix and the verdict's arithmetic; real time and processes by nature
 * (a load tool, not engine logic). It ran under k6 until E-530.
 */
import { spawn } from "node:child_process"
import { mkdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { type Answer, type Client, makeClient, runArrivals, summarize } from "./arrival.ts"
import { freePort, ROOT } from "./run.ts"
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

const OPERATIONS = ["stocks", "quote", "trade", "wallet"] as const
type Operation = (typeof OPERATIONS)[number]

interface Recorded {
  readonly operation: Operation
  readonly step: number
  readonly answer: Answer
}

/** One iteration of the mix, by its number in the whole run (so 12 of every 20 are stocks, whatever the rate). */
const mixed = async (client: Client, api: string, key: string, n: number, step: number, record: (r: Recorded) => void) => {
  const headers = { "x-api-key": key }
  const get = async (operation: Operation, path: string) => {
    const answer = await client.send("GET", `${api}${path}`, headers)
    record({ operation, step, answer })
    return answer
  }
  const slot = n % 20
  if (slot < 12) return void (await get("stocks", "/stocks?limit=20"))
  if (slot < 16) return void (await get("quote", "/quote/SCOM?side=BUY&quantity=1"))
  if (slot >= 19) return void (await get("wallet", "/wallet"))
  const quote = await get("quote", "/quote/SCOM?side=BUY&quantity=1")
  const quoteId = quote.status === 200 ? String((JSON.parse(quote.body) as { quoteId: unknown }).quoteId) : "qt_missing"
  const body = JSON.stringify({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId })
  const trade = await client.send("POST", `${api}/trade`, { ...headers, "content-type": "application/json", "idempotency-key": `tp-${n}-trade-key` }, body)
  record({ operation: "trade", step, answer: trade })
}

/** Steps and operations from every request recorded; a request failed when it had no answer or a status of 400 or more. */
export const summarizeThroughput = (
  steps: ReadonlyArray<number>,
  stepSeconds: number,
  dropped: ReadonlyArray<number>,
  recorded: ReadonlyArray<Recorded>
): ThroughputSummary => ({
  stepSeconds,
  steps: steps.map((rate, i) => {
    const mine = recorded.filter((r) => r.step === i)
    const failed = mine.filter((r) => r.answer.status === 0 || r.answer.status >= 400).length
    const latency = summarize(mine.map((r) => r.answer.ms))
    return {
      offeredIterationsPerSecond: rate,
      requestsPerSecond: mine.length / stepSeconds,
      failedRate: mine.length === 0 ? 0 : failed / mine.length,
      droppedIterations: dropped[i] ?? 0,
      ...(latency === undefined ? {} : { p50: latency["p(50)"], p95: latency["p(95)"], p99: latency["p(99)"] })
    }
  }),
  operations: Object.fromEntries(
    OPERATIONS.map((op) => [op, (summarize(recorded.filter((r) => r.operation === op).map((r) => r.answer.ms)) as Record<string, number> | undefined) ?? null])
  )
})

/** Offers each step in turn; resolves with what it recorded and what each step dropped. */
const offerSteps = async (api: string, key: string, options: ThroughputOptions) => {
  const recorded: Array<Recorded> = []
  const dropped: Array<number> = []
  let iteration = 0
  for (const [step, rate] of options.steps.entries()) {
    const maxInFlight = Math.min(800, Math.max(50, rate))
    const client = makeClient(maxInFlight)
    options.onLine?.(`step ${step + 1} of ${options.steps.length}: ${rate} it/s for ${options.stepSeconds} s`)
    try {
      const outcome = await runArrivals({ rate, seconds: options.stepSeconds, maxInFlight }, () =>
        mixed(client, api, key, iteration++, step, (r) => recorded.push(r))
      )
      dropped.push(outcome.dropped)
      const [done] = summarizeThroughput(
        [rate],
        options.stepSeconds,
        [outcome.dropped],
        recorded.filter((r) => r.step === step).map((r) => ({ ...r, step: 0 }))
      ).steps
      if (done !== undefined)
        options.onLine?.(
          `step ${step + 1}: ${done.requestsPerSecond.toFixed(0)} req/s served, ${(done.failedRate * 100).toFixed(2)}% failed, ${done.droppedIterations} dropped, p95 ${ms(done.p95)} ms`
        )
    } finally {
      client.close()
    }
  }
  return summarizeThroughput(options.steps, options.stepSeconds, dropped, recorded)
}

export interface ThroughputOptions {
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
  readonly steps: ReadonlyArray<number>
  readonly stepSeconds: number
  readonly out: string
  readonly onLine?: (line: string) => void
}

/** A local receiver for the fills' webhooks; counts what it was sent. */
const startReceiver = async () => {
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
  return {
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hook`,
    deliveries: () => deliveries,
    close: () => new Promise((resolve) => receiver.close(resolve))
  }
}

/** One engine process on the follow clock, rate limits off, the auto desk; resolves once it says it is ready. */
const startEngine = async (options: ThroughputOptions, admin: string) => {
  const port = await freePort()
  // The follow clock starts at the next moment NSE and JSE are both open and runs at wall speed from there: with the
  // system clock, trades (15% of the mix) answered MARKET_CLOSED whenever the profile ran outside their hours.
  const args = [BIN, "serve", "--port", String(port), "--clock", "follow", "--seed", "1", "--admin-token", admin, "--rate-limit", "off"]
  args.push("--desk", "auto", "--desk-delay", "1", "--trace-ring", "0", "--store", options.store)
  if (options.databaseUrl !== undefined) args.push("--database-url", options.databaseUrl)
  const engine = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  const exited = new Promise<void>((resolve) => engine.on("close", () => resolve()))
  const stop = async () => {
    engine.kill("SIGTERM")
    await exited
  }
  let output = ""
  try {
    await new Promise<void>((resolve, reject) => {
      const read = (c: Buffer) => {
        output += c.toString("utf8")
        if (output.includes("ready in")) resolve()
      }
      engine.stdout.on("data", read)
      engine.stderr.on("data", read)
      engine.on("close", (code) => reject(new Error(`serve exited (${code}):\n${output}`)))
    })
  } catch (error) {
    await stop()
    throw error
  }
  return { base: `http://127.0.0.1:${port}`, stop }
}

/** A sandbox partner of the enterprise tier with a webhook for fills to `hook`; its API base and key. */
const preparePartner = async (base: string, admin: string, hook: string) => {
  const created = await fetch(`${base}/_sim/partners`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ businessName: "Throughput Co", email: "tp@sokoni.test", tier: "enterprise" })
  })
  if (created.status !== 201) throw new Error(`POST /_sim/partners answered ${created.status}: ${await created.text()}`)
  const partner = (await created.json()) as { sandboxKey: string }
  const api = `${base}/api/sandbox/v1/partner`
  const webhook = await fetch(`${api}/webhooks`, {
    method: "POST",
    headers: { "x-api-key": partner.sandboxKey, "content-type": "application/json", "idempotency-key": "throughput-webhook-1" },
    body: JSON.stringify({ url: hook, events: ["order.filled"], secret: "whsec_throughput_0001" })
  })
  if (webhook.status !== 201) throw new Error(`webhook registration answered ${webhook.status}: ${await webhook.text()}`)
  return { api, key: partner.sandboxKey }
}

/** Runs the profile: engine process, partner, webhook receiver, the steps; writes summary.json and summary.md. */
export const runThroughput = async (options: ThroughputOptions): Promise<{ summary: ThroughputSummary; deliveries: number }> => {
  mkdirSync(options.out, { recursive: true })
  const receiver = await startReceiver()
  const admin = "adm_throughput"
  try {
    const engine = await startEngine(options, admin)
    try {
      const { api, key } = await preparePartner(engine.base, admin, receiver.url)
      const summary = await offerSteps(api, key, options)
      writeFileSync(join(options.out, "summary.json"), JSON.stringify(summary, null, 2))
      writeFileSync(join(options.out, "summary.md"), `${describeThroughput(options.store, summary, receiver.deliveries()).join("\n")}\n`)
      return { summary, deliveries: receiver.deliveries() }
    } finally {
      await engine.stop()
    }
  } finally {
    await receiver.close()
  }
}
