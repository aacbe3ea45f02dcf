/**
 * The load generator, run in its own process pinned to its own core (see load.ts): autocannon's programmatic API, a
 * warm-up phase then a measured one. Reads the server's CPU time and RSS from /proc around the measured phase and its
 * own CPU use (to tell when the generator, not the server, was the limit). Prints one JSON line: a LoadResult.
 * Usage: node cannon.ts '<LoadSpec as JSON>'
 */
import autocannon, { type Request } from "autocannon"
import { cpuMicros, residentMB } from "./proc.ts"

/** A phase lasts `seconds` or sends `amount` requests. */
export interface Phase {
  readonly seconds?: number
  readonly amount?: number
}

/**
 * stocks: GET /stocks. trade: GET /quote then POST /trade with that quoteId and a fresh Idempotency-Key (one operation
 * is the pair). mix: GET /stocks, GET /quote, POST /trade in turn (an operation is one request). read: GET /stocks,
 * GET /orders, GET /stocks?exchange=JSE in turn: requests that leave nothing the spec requires kept (the RSS target's flow).
 */
export type Flow = "stocks" | "trade" | "mix" | "read"

export interface LoadSpec {
  readonly base: string
  /** Path prefix of the partner API: the engine's sandbox base, or "" for Prism (which mounts paths at the root). */
  readonly prefix: string
  readonly apiKey: string
  readonly symbol: string
  readonly flow: Flow
  readonly connections: number
  readonly warmup: Phase
  readonly measure: Phase
  readonly serverPid: number
}

export interface LoadResult {
  readonly seconds: number
  readonly requests: number
  readonly operations: number
  /** Operations per second (requests per second for stocks and mix). */
  readonly rate: number
  readonly failures: number
  readonly statusCodes: Record<string, number>
  readonly firstFailure: string | undefined
  readonly serverCpuMicrosPerOp: number
  readonly loaderCpuPct: number
  readonly latencyP50: number
  readonly latencyP99: number
  readonly rssBeforeMB: number
  /** Sampled once a second during the measured phase: the sample half-way through (a plateau or a slope?). */
  readonly rssHalfwayMB: number
  readonly rssAfterMB: number
}

const spec = JSON.parse(process.argv[2]!) as LoadSpec
const runId = `${process.pid.toString(36)}${Date.now().toString(36)}`
let sequence = 0
let trades = 0
let firstFailure: string | undefined

const noteFailure = (what: string, status: number, body: string) => {
  firstFailure ??= `${what} ${status}: ${body.slice(0, 300)}`
}

const stocks: Request = { method: "GET", path: `${spec.prefix}/stocks` }
const quote: Request = {
  method: "GET",
  path: `${spec.prefix}/quote/${encodeURIComponent(spec.symbol)}?side=BUY&quantity=1`,
  onResponse: (status, body, context) => {
    if (status !== 200) return noteFailure("quote", status, body)
    try {
      context.quoteId = (JSON.parse(body) as { quoteId?: string }).quoteId
    } catch {
      noteFailure("quote", status, body)
    }
  }
}
const trade: Request = {
  method: "POST",
  path: `${spec.prefix}/trade`,
  setupRequest: (request, context) => ({
    ...request,
    headers: { ...request.headers, "content-type": "application/json", "idempotency-key": `bench-${runId}-${++sequence}` },
    body: JSON.stringify({ symbol: spec.symbol, type: "BUY", quantity: 1, quoteId: context.quoteId ?? "qt_missing" })
  }),
  onResponse: (status, body) => {
    if (status === 202) trades++
    else noteFailure("trade", status, body)
  }
}
const orders: Request = { method: "GET", path: `${spec.prefix}/orders?limit=5` }
const exchangePage: Request = { method: "GET", path: `${spec.prefix}/stocks?exchange=JSE&limit=10` }
const requests = { stocks: [stocks], trade: [quote, trade], mix: [stocks, quote, trade], read: [stocks, orders, exchangePage] }[spec.flow]

const fire = (phase: Phase) =>
  autocannon({
    url: spec.base,
    connections: spec.connections,
    headers: { "x-api-key": spec.apiKey },
    requests,
    ...(phase.amount === undefined ? { duration: phase.seconds ?? 1 } : { amount: phase.amount })
  })

await fire(spec.warmup)
trades = 0
const rssBeforeMB = residentMB(spec.serverPid)
const cpuBefore = cpuMicros(spec.serverPid)
const ownBefore = process.cpuUsage()
const started = performance.now()
const rssSamples: number[] = []
const sampler = setInterval(() => rssSamples.push(residentMB(spec.serverPid)), 1000)
const result = await fire(spec.measure)
clearInterval(sampler)
const seconds = (performance.now() - started) / 1000
const own = process.cpuUsage(ownBefore)
const serverCpu = cpuMicros(spec.serverPid) - cpuBefore
const operations = spec.flow === "trade" ? trades : result["2xx"]
const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, s]) => [code, s.count]))

const out: LoadResult = {
  seconds,
  requests: result.requests.total,
  operations,
  rate: operations / seconds,
  failures: result.non2xx + result.errors,
  statusCodes,
  firstFailure,
  serverCpuMicrosPerOp: operations > 0 ? serverCpu / operations : 0,
  loaderCpuPct: ((own.user + own.system) / 1e6 / seconds) * 100,
  latencyP50: result.latency.p50,
  latencyP99: result.latency.p99,
  rssBeforeMB,
  rssHalfwayMB: rssSamples[rssSamples.length >> 1] ?? Number.NaN,
  rssAfterMB: residentMB(spec.serverPid)
}
process.stdout.write(`${JSON.stringify(out)}\n`)
