// k6 profile: proves one tier's rate limit exactly (issue "Pact contract tests and k6 tier profiles").
//
// Two bursts at a constant arrival rate well above the limit, each shorter than the window, the second starting
// after every admitted request of the first has left the window. Whatever the machine's speed, the oracle is exact:
// in each burst the engine must admit exactly LIMIT requests (not at most: exactly, since the burst saturates it),
// and every refusal must be a 429 RATE_LIMITED carrying Retry-After and X-RateLimit-Remaining: 0.
//
// Environment (set by `sokoni load run`, engine/load/run.ts):
//   BASES     comma-separated API bases (several engine processes on one store: requests alternate between them)
//   KEY       the partner key (x-api-key), or CREDENTIALS: a JSON array of header objects, used in turn (the shared
//             bucket: a full key, a data key and an OAuth token of one partner count against one limit)
//   LIMIT     the tier's limit; WINDOW_S the engine's window in seconds
//   RATE      arrival rate per second; BURST_S each burst's length; GAP_S pause between bursts; START_S wait first
//   OUT       directory for summary.json and summary.html
import http from "k6/http"
import { check } from "k6"
import { Counter } from "k6/metrics"

const BASES = __ENV.BASES.split(",")
const CREDENTIALS = __ENV.CREDENTIALS ? JSON.parse(__ENV.CREDENTIALS) : [{ "x-api-key": __ENV.KEY }]
const LIMIT = Number(__ENV.LIMIT)
const RATE = Number(__ENV.RATE)
const BURST_S = Number(__ENV.BURST_S)
const GAP_S = Number(__ENV.GAP_S)
// Seconds before the first burst: a window's worth after any keyed set-up request (creating a data key counts)
const START_S = Number(__ENV.START_S || 0)
const PATH = __ENV.PATH_UNDER_TEST || "/stocks?limit=1"

const admitted = new Counter("admitted")
const refused = new Counter("refused")
const unexpected = new Counter("unexpected")

const burst = (phase, startSeconds) => ({
  executor: "constant-arrival-rate",
  rate: RATE,
  timeUnit: "1s",
  duration: `${BURST_S}s`,
  startTime: `${startSeconds}s`,
  preAllocatedVUs: Math.max(10, Math.ceil(RATE / 10)),
  maxVUs: Math.max(50, RATE),
  tags: { phase },
  exec: "hit"
})

export const options = {
  discardResponseBodies: false,
  scenarios: { one: burst("one", START_S), two: burst("two", START_S + BURST_S + GAP_S) },
  thresholds: {
    "admitted{phase:one}": [`count==${LIMIT}`],
    "admitted{phase:two}": [`count==${LIMIT}`],
    "refused{phase:one}": ["count>0"],
    "refused{phase:two}": ["count>0"],
    unexpected: ["count==0"],
    checks: ["rate==1"]
  },
  summaryTrendStats: ["avg", "p(50)", "p(95)", "p(99)", "max"]
}

let turn = 0
export function hit() {
  const base = BASES[turn % BASES.length]
  const headers = CREDENTIALS[turn % CREDENTIALS.length]
  turn++
  const res = http.get(`${base}${PATH}`, { headers })
  if (res.status === 200) {
    admitted.add(1)
    check(res, { "an admitted answer carries the tier's X-RateLimit-Limit": (r) => r.headers["X-Ratelimit-Limit"] === String(LIMIT) })
  } else if (res.status === 429) {
    refused.add(1)
    check(res, {
      "a 429 carries Retry-After of at least 1 s": (r) => Number(r.headers["Retry-After"]) >= 1,
      "a 429 carries X-RateLimit-Remaining: 0": (r) => r.headers["X-Ratelimit-Remaining"] === "0",
      "a 429 says RATE_LIMITED in the envelope": (r) => {
        try {
          return JSON.parse(r.body).error.code === "RATE_LIMITED"
        } catch (_) {
          return false
        }
      }
    })
  } else {
    unexpected.add(1)
  }
}

const count = (data, name, phase) => {
  const m = data.metrics[phase === undefined ? name : `${name}{phase:${phase}}`]
  return m === undefined ? 0 : m.values.count
}

const escapeHtml = (s) => String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c])

export function handleSummary(data) {
  const verdict = {
    limit: LIMIT,
    windowSeconds: Number(__ENV.WINDOW_S),
    instances: BASES.length,
    credentials: CREDENTIALS.length,
    phases: ["one", "two"].map((phase) => ({ phase, admitted: count(data, "admitted", phase), refused: count(data, "refused", phase) })),
    unexpected: count(data, "unexpected"),
    checksPassed: data.metrics.checks ? data.metrics.checks.values.passes : 0,
    checksFailed: data.metrics.checks ? data.metrics.checks.values.fails : 0,
    thresholdsFailed: Object.entries(data.metrics)
      .filter(([, m]) => m.thresholds && Object.values(m.thresholds).some((t) => !t.ok))
      .map(([name]) => name),
    latencyMs: data.metrics.http_req_duration ? data.metrics.http_req_duration.values : {}
  }
  verdict.ok = verdict.thresholdsFailed.length === 0
  const rows = verdict.phases
    .map(
      (p) =>
        `<tr><td>${p.phase}</td><td>${p.admitted}</td><td>${LIMIT}</td><td>${p.refused}</td><td class="${p.admitted === LIMIT ? "ok" : "bad"}">${p.admitted === LIMIT ? "exact" : "WRONG"}</td></tr>`
    )
    .join("")
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>Tier limit ${LIMIT}: ${verdict.ok ? "passed" : "FAILED"}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}
.ok{color:#070}.bad{color:#b00;font-weight:bold}h1{font-size:20px}</style></head><body>
<h1 class="${verdict.ok ? "ok" : "bad"}">Rate limit ${LIMIT} per ${escapeHtml(__ENV.WINDOW_S)} s window, ${BASES.length} engine process(es), ${CREDENTIALS.length} credential(s): ${verdict.ok ? "exact" : "VIOLATED"}</h1>
<table><tr><th>burst</th><th>admitted</th><th>limit</th><th>429s</th><th>verdict</th></tr>${rows}</table>
<p>Checks: ${verdict.checksPassed} passed, ${verdict.checksFailed} failed. Unexpected statuses: ${verdict.unexpected}.</p>
<p>Thresholds failed: ${verdict.thresholdsFailed.length === 0 ? "none" : escapeHtml(verdict.thresholdsFailed.join(", "))}</p>
<p>Latency (ms): ${Object.entries(verdict.latencyMs)
    .map(([k, v]) => `${escapeHtml(k)} ${Number(v).toFixed(2)}`)
    .join(" · ")}</p>
</body></html>`
  const out = __ENV.OUT || "."
  return { [`${out}/summary.json`]: JSON.stringify(verdict, null, 2), [`${out}/summary.html`]: html }
}
