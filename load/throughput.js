// k6 throughput profile for performance engineers: a mixed workload offered at rising arrival rates (steps of a
// constant-arrival-rate each), to find the engine's ceiling and latency per operation on a store.
//
// Workload per iteration (by iteration number, so the mix is exact): 60% GET /stocks, 20% GET /quote,
// 15% quote then POST /trade (auto desk fills it; a webhook fires for each fill to a local receiver), 5% GET /wallet.
// Rate limits are off on the target (`serve --rate-limit off`): this measures the engine, not the limiter.
//
// Environment (set by `sokoni load throughput`, engine/load/throughput.ts): BASE (API base), KEY, STEPS (comma-
// separated iterations/s), STEP_S (seconds per step), OUT (summary.json).
import http from "k6/http"
import exec from "k6/execution"

const BASE = __ENV.BASE
const KEY = __ENV.KEY
const STEPS = __ENV.STEPS.split(",").map(Number)
const STEP_S = Number(__ENV.STEP_S)
const OPS = ["stocks", "quote", "trade", "wallet"]

const scenarios = {}
const thresholds = {}
STEPS.forEach((rate, i) => {
  scenarios[`step${i}`] = {
    executor: "constant-arrival-rate",
    rate,
    timeUnit: "1s",
    duration: `${STEP_S}s`,
    startTime: `${i * STEP_S}s`,
    preAllocatedVUs: Math.min(400, Math.max(20, Math.ceil(rate / 20))),
    maxVUs: Math.min(800, Math.max(50, rate)),
    tags: { step: String(i) },
    exec: "mixed"
  }
  // Thresholds that always hold, so k6 keeps each step's and each operation's sub-metrics for the summary.
  thresholds[`http_req_duration{step:${i}}`] = ["max>=0"]
  thresholds[`http_reqs{step:${i}}`] = ["count>=0"]
  thresholds[`http_req_failed{step:${i}}`] = ["rate>=0"]
  thresholds[`dropped_iterations{scenario:step${i}}`] = ["count>=0"]
})
for (const op of OPS) thresholds[`http_req_duration{op:${op}}`] = ["max>=0"]

export const options = { scenarios, thresholds, summaryTrendStats: ["avg", "p(50)", "p(95)", "p(99)", "max"] }

const headers = { "x-api-key": KEY }
let sequence = 0

export function mixed() {
  const n = exec.scenario.iterationInTest % 20
  if (n < 12) {
    http.get(`${BASE}/stocks?limit=20`, { headers, tags: { op: "stocks" } })
  } else if (n < 16) {
    http.get(`${BASE}/quote/SCOM?side=BUY&quantity=1`, { headers, tags: { op: "quote" } })
  } else if (n < 19) {
    const quote = http.get(`${BASE}/quote/SCOM?side=BUY&quantity=1`, { headers, tags: { op: "quote" } })
    const quoteId = quote.status === 200 ? quote.json("quoteId") : "qt_missing"
    http.post(`${BASE}/trade`, JSON.stringify({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId }), {
      headers: { ...headers, "content-type": "application/json", "idempotency-key": `tp-${exec.vu.idInTest}-${++sequence}-key` },
      tags: { op: "trade" }
    })
  } else {
    http.get(`${BASE}/wallet`, { headers, tags: { op: "wallet" } })
  }
}

const values = (data, name) => (data.metrics[name] ? data.metrics[name].values : undefined)

export function handleSummary(data) {
  const steps = STEPS.map((rate, i) => {
    const reqs = values(data, `http_reqs{step:${i}}`)
    const failed = values(data, `http_req_failed{step:${i}}`)
    const dropped = values(data, `dropped_iterations{scenario:step${i}}`)
    const duration = values(data, `http_req_duration{step:${i}}`) || {}
    return {
      offeredIterationsPerSecond: rate,
      requestsPerSecond: reqs ? reqs.count / STEP_S : 0,
      failedRate: failed ? failed.rate : 0,
      droppedIterations: dropped ? dropped.count : 0,
      p50: duration["p(50)"],
      p95: duration["p(95)"],
      p99: duration["p(99)"]
    }
  })
  const operations = Object.fromEntries(OPS.map((op) => [op, values(data, `http_req_duration{op:${op}}`) || null]))
  const out = __ENV.OUT || "."
  return { [`${out}/summary.json`]: JSON.stringify({ stepSeconds: STEP_S, steps, operations }, null, 2) }
}
