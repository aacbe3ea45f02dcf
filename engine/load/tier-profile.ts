/**
 * The tier-limit profile (E-530; it was load/tier-limit.js under k6): proves one tier's rate limit exactly.
 *
 * Two bursts at a constant arrival rate of 2.5 times the limit, each shorter than the window; the second starts a
 * window plus one second after the first has ended, when every request the first admitted has left the window. So,
 * whatever the machine's speed, the oracle is exact: each burst must admit exactly the limit (not at most: the burst
 * saturates it), and every refusal must be a 429 RATE_LIMITED with Retry-After and X-RateLimit-Remaining: 0.
 * Owns: what is sent, the checks, the thresholds, summary.json and summary.html. Does not own the verdict's reading
 * (run.ts `outcomeOf`) nor the processes (run.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { type Answer, type Client, Counters, makeClient, runArrivals, summarize, wallPacer } from "./arrival.ts"
import { burstWord, type Profile, type Verdict } from "./run.ts"

const PATH_UNDER_TEST = "/stocks?limit=1"
const PHASES = ["one", "two"] as const

/** The checks every answer is held to, by status; each returns its name when it fails. */
const checksOf = (answer: Answer, limit: number): ReadonlyArray<readonly [name: string, ok: boolean]> => {
  if (answer.status === 200) return [["an admitted answer carries the tier's X-RateLimit-Limit", answer.headers["x-ratelimit-limit"] === String(limit)]]
  const envelopeCode = (() => {
    try {
      return (JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code
    } catch {
      return undefined
    }
  })()
  return [
    ["a 429 carries Retry-After of at least 1 s", Number(answer.headers["retry-after"]) >= 1],
    ["a 429 carries X-RateLimit-Remaining: 0", answer.headers["x-ratelimit-remaining"] === "0"],
    ["a 429 says RATE_LIMITED in the envelope", envelopeCode === "RATE_LIMITED"]
  ]
}

interface Tally {
  readonly counters: Counters
  readonly failedChecks: Set<string>
  readonly latencies: Array<number>
}

const record = (tally: Tally, phase: string, answer: Answer, limit: number) => {
  tally.latencies.push(answer.ms)
  if (answer.status !== 200 && answer.status !== 429) return tally.counters.add("unexpected")
  tally.counters.add(`${answer.status === 200 ? "admitted" : "refused"}{phase:${phase}}`)
  for (const [name, ok] of checksOf(answer, limit)) {
    tally.counters.add(ok ? "checks.passes" : "checks.fails")
    if (!ok) tally.failedChecks.add(name)
  }
}

/** The thresholds k6 held the profile to, by the same names: each that does not hold is listed. */
export const failedThresholds = (counters: Counters, limit: number): ReadonlyArray<string> => {
  const failed: Array<string> = []
  for (const phase of PHASES) if (counters.get(`admitted{phase:${phase}}`) !== limit) failed.push(`admitted{phase:${phase}}`)
  for (const phase of PHASES) if (counters.get(`refused{phase:${phase}}`) === 0) failed.push(`refused{phase:${phase}}`)
  if (counters.get("unexpected") !== 0) failed.push("unexpected")
  if (counters.get("checks.fails") !== 0) failed.push("checks")
  return failed
}

const { now } = wallPacer
const sleepUntil = (instant: number) => wallPacer.sleep(instant - now())

const burst = async (options: ProfileRun, client: Client, tally: Tally, phase: string) => {
  const { profile } = options
  let turn = 0
  const plan = { rate: profile.rate, seconds: profile.burstSeconds, maxInFlight: Math.max(50, profile.rate) }
  options.onLine?.(`burst ${phase}: ${profile.rate} req/s for ${profile.burstSeconds} s`)
  const outcome = await runArrivals(plan, async () => {
    const n = turn++
    const base = options.bases[n % options.bases.length] as string
    const headers = options.credentials[n % options.credentials.length] as Record<string, string>
    record(tally, phase, await client.send("GET", `${base}${PATH_UNDER_TEST}`, headers), profile.limit)
  })
  const c = tally.counters
  options.onLine?.(
    `burst ${phase}: ${outcome.started} sent, ${c.get(`admitted{phase:${phase}}`)} admitted, ${c.get(`refused{phase:${phase}}`)} refused, ${outcome.dropped} dropped`
  )
  return outcome.dropped
}

export interface ProfileRun {
  readonly bases: ReadonlyArray<string>
  /** One header set per credential, used in turn; several share the partner's bucket. */
  readonly credentials: ReadonlyArray<Record<string, string>>
  readonly profile: Profile
  /** Seconds to wait before the first burst: a window after set-up requests that the bucket counted. */
  readonly settleSeconds?: number
  readonly out: string
  readonly onLine?: (line: string) => void
}

/** Runs both bursts against `bases`; writes summary.json and summary.html to `out` and resolves with the verdict. */
export const runProfile = async (options: ProfileRun): Promise<Verdict> => {
  const { profile } = options
  const client = makeClient(Math.max(50, profile.rate))
  const tally: Tally = { counters: new Counters(), failedChecks: new Set(), latencies: [] }
  const dropped: Array<number> = []
  try {
    if ((options.settleSeconds ?? 0) > 0) options.onLine?.(`waiting ${options.settleSeconds} s for the set-up requests to leave the window`)
    await sleepUntil(now() + (options.settleSeconds ?? 0) * 1000)
    const nominalEnd = now() + profile.burstSeconds * 1000
    dropped.push(await burst(options, client, tally, "one"))
    // Never sooner than a gap after the first burst really ended: on a slow machine it may end late.
    const secondAt = Math.max(nominalEnd, now()) + profile.gapSeconds * 1000
    options.onLine?.(`waiting ${Math.round((secondAt - now()) / 1000)} s for the first burst's admissions to leave the window`)
    await sleepUntil(secondAt)
    dropped.push(await burst(options, client, tally, "two"))
  } finally {
    client.close()
  }
  const c = tally.counters
  const thresholdsFailed = failedThresholds(c, profile.limit)
  const phases = PHASES.map((phase, i) => ({
    phase,
    admitted: c.get(`admitted{phase:${phase}}`),
    refused: c.get(`refused{phase:${phase}}`),
    dropped: dropped[i] ?? 0
  }))
  const verdict: Verdict = {
    ok: thresholdsFailed.length === 0,
    limit: profile.limit,
    windowSeconds: profile.windowSeconds,
    instances: options.bases.length,
    credentials: options.credentials.length,
    phases,
    unexpected: c.get("unexpected"),
    checksPassed: c.get("checks.passes"),
    checksFailed: c.get("checks.fails"),
    failedChecks: [...tally.failedChecks],
    thresholdsFailed,
    saturated: phases.every((p) => p.refused > 0),
    latencyMs: summarize(tally.latencies)
  }
  mkdirSync(options.out, { recursive: true })
  writeFileSync(join(options.out, "summary.json"), JSON.stringify(verdict, null, 2))
  writeFileSync(join(options.out, "summary.html"), verdictHtml(verdict))
  return verdict
}

const escapeHtml = (s: unknown) => String(s).replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch] as string)

/** The report a person reads: one row per burst, the checks, the thresholds, latency. */
export const verdictHtml = (v: Verdict) => {
  const rows = v.phases
    .map((p) => {
      const word = burstWord(p, v.limit)
      return `<tr><td>${p.phase}</td><td>${p.admitted}</td><td>${v.limit}</td><td>${p.refused}</td><td>${p.dropped}</td><td class="${word === "exact" ? "ok" : "bad"}">${word}</td></tr>`
    })
    .join("")
  const latency =
    v.latencyMs === undefined
      ? "none measured"
      : Object.entries(v.latencyMs)
          .map(([k, ms]) => `${escapeHtml(k)} ${ms.toFixed(2)}`)
          .join(" · ")
  return `<!doctype html><html><head><meta charset="utf-8"><title>Tier limit ${v.limit}: ${v.ok ? "passed" : "FAILED"}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 10px;text-align:right}
.ok{color:#070}.bad{color:#b00;font-weight:bold}h1{font-size:20px}</style></head><body>
<h1 class="${v.ok ? "ok" : "bad"}">Rate limit ${v.limit} per ${v.windowSeconds} s window, ${v.instances} engine process(es), ${v.credentials} credential(s): ${v.ok ? "exact" : "VIOLATED"}</h1>
<table><tr><th>burst</th><th>admitted</th><th>limit</th><th>429s</th><th>dropped</th><th>verdict</th></tr>${rows}</table>
<p>Checks: ${v.checksPassed} passed, ${v.checksFailed} failed${v.failedChecks.length === 0 ? "" : ` (${escapeHtml(v.failedChecks.join("; "))})`}. Unexpected statuses: ${v.unexpected}.</p>
<p>Thresholds failed: ${v.thresholdsFailed.length === 0 ? "none" : escapeHtml(v.thresholdsFailed.join(", "))}</p>
<p>Latency (ms): ${latency}</p>
</body></html>`
}
