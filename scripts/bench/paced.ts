/**
 * A partner at a steady pace (the isolation bench, E-322): starts one quote->trade pair every 1/rate seconds whether
 * or not the previous one has answered (an open loop, so time spent queueing in the engine shows in the latency),
 * over kept-alive connections. Run in its own process pinned to the load core (tenants.ts). Prints one JSON line: a
 * PacedResult. Usage: node paced.ts '<PacedSpec as JSON>'
 */
import { Agent, request } from "node:http"

export interface PacedSpec {
  readonly base: string
  readonly prefix: string
  readonly apiKey: string
  readonly symbol: string
  readonly pairsPerSecond: number
  readonly warmupSeconds: number
  readonly seconds: number
}

export interface PacedResult {
  readonly pairs: number
  readonly failures: number
  readonly firstFailure: string | undefined
  /** Per request (quotes and trades alike), in ms. */
  readonly requestP50: number
  readonly requestP99: number
  /** Per pair (quote sent to trade answered), in ms. */
  readonly pairP99: number
}

const spec = JSON.parse(process.argv[2]!) as PacedSpec
const agent = new Agent({ keepAlive: true, maxSockets: 64 })
const url = new URL(spec.base)
const runId = `${process.pid.toString(36)}${Date.now().toString(36)}`
let sequence = 0

const call = (method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path, agent, headers: { "x-api-key": spec.apiKey, ...headers } }, (res) => {
      const chunks: Buffer[] = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }))
    })
    req.on("error", reject)
    req.end(body)
  })

interface PairTiming {
  readonly requests: readonly number[]
  readonly pair: number
  readonly failure: string | undefined
}

const pair = async (): Promise<PairTiming> => {
  const started = performance.now()
  const quote = await call("GET", `${spec.prefix}/quote/${encodeURIComponent(spec.symbol)}?side=BUY&quantity=1`, {})
  const quoted = performance.now()
  if (quote.status !== 200) return { requests: [quoted - started], pair: quoted - started, failure: `quote ${quote.status}: ${quote.body.slice(0, 200)}` }
  const quoteId = (JSON.parse(quote.body) as { quoteId: string }).quoteId
  const trade = await call(
    "POST",
    `${spec.prefix}/trade`,
    { "content-type": "application/json", "idempotency-key": `paced-${runId}-${++sequence}` },
    JSON.stringify({ symbol: spec.symbol, type: "BUY", quantity: 1, quoteId })
  )
  const traded = performance.now()
  const failure = trade.status === 202 ? undefined : `trade ${trade.status}: ${trade.body.slice(0, 200)}`
  return { requests: [quoted - started, traded - quoted], pair: traded - started, failure }
}

/** Starts a pair every interval for `seconds`, then waits for the last ones. */
const run = async (seconds: number): Promise<PairTiming[]> => {
  const interval = 1000 / spec.pairsPerSecond
  const count = Math.round(seconds * spec.pairsPerSecond)
  const started = performance.now()
  const pending: Promise<PairTiming>[] = []
  for (let i = 0; i < count; i++) {
    const due = started + i * interval
    const wait = due - performance.now()
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    pending.push(pair().catch((error: unknown) => ({ requests: [], pair: Number.NaN, failure: String(error) })))
  }
  return Promise.all(pending)
}

const percentile = (values: readonly number[], p: number): number => {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b)
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

await run(spec.warmupSeconds)
const timings = await run(spec.seconds)
const failures = timings.filter((t) => t.failure !== undefined)
const out: PacedResult = {
  pairs: timings.length - failures.length,
  failures: failures.length,
  firstFailure: failures[0]?.failure,
  requestP50: percentile(
    timings.flatMap((t) => t.requests),
    50
  ),
  requestP99: percentile(
    timings.flatMap((t) => t.requests),
    99
  ),
  pairP99: percentile(
    timings.map((t) => t.pair),
    99
  )
}
agent.destroy()
process.stdout.write(`${JSON.stringify(out)}\n`)
