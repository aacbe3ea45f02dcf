/**
 * `sokoni load run`: proves a tier's rate limit under load (the profile: tier-profile.ts). Starts what it needs (one
 * or several `sokoni serve` processes with a compressed rate-limit window; several share a temporary PostgreSQL
 * database, so the limit is proven across processes), creates a partner of the tier through the control API, runs
 * the profile and reads its verdict. Or points the profile at a running target (`--base`, `--key`).
 * Owns: the profile's parameters (rate, bursts, gap), the verdict's reading and the processes it starts. Does not own
 * the oracle (tier-profile.ts's checks and thresholds) nor the limiter (engine/http/guards/rate-limit.ts). Real time
 * and processes by nature.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { join } from "node:path"
import { createServer } from "node:net"
import type { TrendSummary } from "./arrival.ts"

export const ROOT = join(import.meta.dirname, "..", "..")
// The bin, not bin.ts: in an installed package (no sources) it runs the bundled CLI (engine/cli/sokoni.js, E-330).
const BIN = join(ROOT, "engine", "cli", "sokoni.js")

export const TIERS = ["sandbox", "starter", "growth", "enterprise"] as const
export type LoadTier = (typeof TIERS)[number]
/** The contract's limits per minute (spec Limits; sandbox per D-001). */
export const LIMITS: Record<LoadTier, number> = { sandbox: 300, starter: 100, growth: 500, enterprise: 2_000 }

export interface Profile {
  readonly limit: number
  readonly windowSeconds: number
  /** Requests per second during a burst: 2.5 times the limit over the burst, so the limit is reached early. */
  readonly rate: number
  readonly burstSeconds: number
  /** Pause so the second burst starts once every admitted request of the first has left the window. */
  readonly gapSeconds: number
}

/** Bursts of 60% of the window; the second starts a window plus one second after the first ends. */
export const profileFor = (limit: number, windowSeconds: number): Profile => {
  const burstSeconds = Math.max(1, Math.floor(windowSeconds * 0.6))
  return { limit, windowSeconds, rate: Math.ceil((2.5 * limit) / burstSeconds), burstSeconds, gapSeconds: windowSeconds + 1 }
}

/** A window long enough that the generator can offer 2.5x the limit on a small machine without dropping the rate. */
export const defaultWindowSeconds = (limit: number) => Math.max(5, Math.ceil(limit / 200))

export interface Verdict {
  readonly ok: boolean
  readonly limit: number
  readonly windowSeconds: number
  readonly instances: number
  readonly credentials: number
  /** Per burst; `dropped`: iterations that fell due while the most allowed at once were still waiting for answers. */
  readonly phases: ReadonlyArray<{ readonly phase: string; readonly admitted: number; readonly refused: number; readonly dropped: number }>
  readonly unexpected: number
  readonly checksPassed: number
  readonly checksFailed: number
  /** The names of the checks that failed at least once. */
  readonly failedChecks: ReadonlyArray<string>
  readonly thresholdsFailed: ReadonlyArray<string>
  /**
   * Every burst met a 429, so the load really reached the limit and the counts prove it. A burst without one on a slow
   * machine (or against a slow target) proves nothing either way unless it admitted more than the limit.
   */
  readonly saturated: boolean
  /** Latency of every request, in ms; undefined when none was sent. */
  readonly latencyMs?: TrendSummary | undefined
}

export type Outcome = "PASS" | "FAIL" | "INCONCLUSIVE"

/**
 * FAIL only on evidence: a burst admitted more than the limit, a wrong status or header, or a burst that reached the
 * limit (a 429) with the wrong count. A burst that never met a 429 and admitted no more than the limit is not evidence
 * of a wrong limiter: the offered load fell short of it (INCONCLUSIVE; a longer window offers the same requests slower).
 */
export const outcomeOf = (v: Verdict): Outcome => {
  if (v.ok) return "PASS"
  const over = v.phases.some((p) => p.admitted > v.limit)
  const wrong = v.unexpected > 0 || v.checksFailed > 0
  return over || wrong || v.saturated ? "FAIL" : "INCONCLUSIVE"
}

/** A port that was free a moment ago. */
export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.once("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address()
      probe.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0))
    })
  })

export interface StartedEngine {
  readonly base: string
  readonly stop: () => Promise<void>
}

/** One `sokoni serve` process on the real clock with the compressed window; resolves once it says it is ready. */
export const startEngineProcess = async (options: {
  readonly windowSeconds: number
  readonly adminToken: string
  readonly store: "memory" | "postgres"
  readonly databaseUrl?: string | undefined
}): Promise<StartedEngine> => {
  const port = await freePort()
  const args = [BIN, "serve", "--port", String(port), "--clock", "system", "--seed", "1", "--admin-token", options.adminToken]
  args.push("--rate-window-seconds", String(options.windowSeconds), "--trace-ring", "0", "--store", options.store)
  if (options.databaseUrl !== undefined) args.push("--database-url", options.databaseUrl)
  const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()))
  await new Promise<void>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8")
      if (output.includes("ready in")) resolve()
    }
    child.stdout?.on("data", read)
    child.stderr?.on("data", read)
    child.on("close", (code) => reject(new Error(`sokoni serve exited (${code}) before it was ready:\n${output}`)))
  })
  return {
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill("SIGTERM")
      await exited
    }
  }
}

/** Creates a partner of the tier on the engine's control API; the key that the tier's profile uses. */
export const partnerKey = async (base: string, adminToken: string, tier: LoadTier): Promise<{ base: string; key: string; partnerId: string }> => {
  const response = await fetch(`${base}/_sim/partners`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ businessName: `Load ${tier}`, email: `load-${tier}@sokoni.test`, tier: tier === "sandbox" ? "starter" : tier })
  })
  if (response.status !== 201) throw new Error(`POST /_sim/partners answered ${response.status}: ${await response.text()}`)
  const partner = (await response.json()) as { partnerId: string; sandboxKey: string; liveKey: string }
  const { partnerId } = partner
  return tier === "sandbox"
    ? { base: "/api/sandbox/v1/partner", key: partner.sandboxKey, partnerId }
    : { base: "/api/v1/partner", key: partner.liveKey, partnerId }
}

/**
 * The three credentials of one production partner that share its bucket: the full key, a data key
 * (`POST /api-keys/data-key`) and an OAuth token (`POST /oauth/token`, after `/_sim/partners/{id}/oauth` enables it).
 */
export const sharedBucketCredentials = async (
  base: string,
  adminToken: string,
  partner: { readonly key: string; readonly partnerId: string }
): Promise<ReadonlyArray<Record<string, string>>> => {
  const post = async (path: string, headers: Record<string, string>, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const json = (await response.json()) as Record<string, unknown>
    if (response.status >= 300) throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(json)}`)
    return json
  }
  const full = { "x-api-key": partner.key }
  const dataKey = String((await post("/api/v1/partner/api-keys/data-key", { ...full, "idempotency-key": "load-data-key-0001" })).dataKey)
  await post(`/_sim/partners/${partner.partnerId}/oauth`, { authorization: `Bearer ${adminToken}` }, { enabled: true })
  const basic = `Basic ${Buffer.from(`client:${partner.key}`).toString("base64")}`
  const token = String((await post("/api/v1/partner/oauth/token", { authorization: basic }, { grant_type: "client_credentials" })).access_token)
  return [full, { "x-api-key": dataKey }, { authorization: `Bearer ${token}` }]
}

/** One line per burst and the verdict, as `sokoni load run` prints them. */
export const describeVerdict = (tier: string, v: Verdict): ReadonlyArray<string> => {
  const outcome = outcomeOf(v)
  const scope = `limit ${v.limit} per ${v.windowSeconds} s window across ${v.instances} process(es) and ${v.credentials} credential(s)`
  const why =
    outcome === "FAIL"
      ? `; failed: ${v.thresholdsFailed.join(", ")}`
      : outcome === "INCONCLUSIVE"
        ? `; a burst met no 429, so the offered load never reached the limit (the machine or the target was too slow): rerun with a longer --window-seconds`
        : ""
  return [
    ...v.phases.map(
      (p) =>
        `  burst ${p.phase}: ${p.admitted} admitted of limit ${v.limit} (${burstWord(p, v.limit)}), ${p.refused} refused with 429${p.dropped > 0 ? `, ${p.dropped} not sent (too many waiting)` : ""}`
    ),
    `  checks ${v.checksPassed} passed, ${v.checksFailed} failed${v.failedChecks.length === 0 ? "" : ` (${v.failedChecks.join("; ")})`}; unexpected statuses ${v.unexpected}`,
    `${outcome} ${tier}: ${scope}${why}`
  ]
}

/** A burst in one word: `exact`, `limit not reached` (no 429, fewer admitted: no evidence) or `WRONG`. */
export const burstWord = (p: Verdict["phases"][number], limit: number) =>
  p.admitted === limit ? "exact" : p.admitted < limit && p.refused === 0 ? "limit not reached" : "WRONG"
