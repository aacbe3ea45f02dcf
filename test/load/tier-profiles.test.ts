/**
 * The tier profiles (engine/load/tier-profile.ts through run.ts) against real engine processes with a compressed
 * window: every tier's limit is admitted exactly in each burst, across two processes on one PostgreSQL too, and the
 * same profile fails against a target that admits one request more than the limit.
 */
import { createServer, type Server } from "node:http"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import {
  defaultWindowSeconds,
  LIMITS,
  outcomeOf,
  partnerKey,
  profileFor,
  sharedBucketCredentials,
  type StartedEngine,
  startEngineProcess,
  TIERS
} from "../../engine/load/run.ts"
import { runProfile } from "../../engine/load/tier-profile.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL
const OUT = join(import.meta.dirname, "..", "..", "out", "load-test")
const ADMIN = "adm_load_test"
const WINDOW_S = 5

describe("tier profiles", () => {
  const engines: Array<StartedEngine> = []
  afterAll(() => Promise.all(engines.map((e) => e.stop())))

  /**
   * On a busy machine the generator (or the engine) may not offer the limit within a burst: no 429, fewer admitted. That run is
   * no evidence either way (outcomeOf: INCONCLUSIVE), so it is run again with the window doubled, which offers the same
   * requests at half the rate; any run that is evidence (a 429, or more admitted than the limit) is the verdict.
   */
  const prove = async (tier: (typeof TIERS)[number], store: "memory" | "postgres", instances: number, databaseUrl?: string, shared = false) => {
    let windowSeconds = defaultWindowSeconds(LIMITS[tier])
    for (let attempt = 1; ; attempt++) {
      const verdict = await proveOnce(tier, store, instances, windowSeconds, databaseUrl, shared)
      if (outcomeOf(verdict) !== "INCONCLUSIVE" || attempt === 3) return verdict
      await Promise.all(engines.splice(0).map((e) => e.stop()))
      const counts = verdict.phases.map((p) => `${p.admitted} admitted, ${p.refused} refused`).join("; ")
      console.log(`${tier}: the load never reached the limit with a ${windowSeconds} s window (${counts}); again with ${windowSeconds * 2} s`)
      windowSeconds *= 2
    }
  }

  const proveOnce = async (
    tier: (typeof TIERS)[number],
    store: "memory" | "postgres",
    instances: number,
    windowSeconds: number,
    databaseUrl: string | undefined,
    shared: boolean
  ) => {
    const started = await Promise.all(Array.from({ length: instances }, () => startEngineProcess({ windowSeconds, adminToken: ADMIN, store, databaseUrl })))
    engines.push(...started)
    const partner = await partnerKey((started[0] as StartedEngine).base, ADMIN, tier)
    return runProfile({
      bases: started.map((e) => `${e.base}${partner.base}`),
      credentials: shared ? await sharedBucketCredentials((started[0] as StartedEngine).base, ADMIN, partner) : [{ "x-api-key": partner.key }],
      profile: profileFor(LIMITS[tier], windowSeconds),
      // creating the data key is a keyed request the bucket counts: let it leave the window first
      settleSeconds: shared ? windowSeconds + 1 : 0,
      out: join(OUT, `${tier}-${store}-x${instances}${shared ? "-shared" : ""}`)
    })
  }

  for (const tier of TIERS) {
    it(`admits exactly ${LIMITS[tier]} per window in each burst (${tier})`, { timeout: 300_000 }, async () => {
      const verdict = await prove(tier, "memory", 1)
      expect(verdict.phases.map((p) => p.admitted)).toEqual([LIMITS[tier], LIMITS[tier]])
      expect(verdict.phases.every((p) => p.refused > 0)).toBe(true)
      expect(verdict.unexpected).toBe(0)
      expect(verdict.checksFailed).toBe(0)
      expect(verdict.ok).toBe(true)
    })
  }

  it("counts a full key, a data key and an OAuth token of one partner against one limit (starter)", { timeout: 300_000 }, async () => {
    const verdict = await prove("starter", "memory", 1, undefined, true)
    expect(verdict.credentials).toBe(3)
    expect(verdict.phases.map((p) => p.admitted)).toEqual([100, 100])
    expect(verdict.ok).toBe(true)
  })

  it.skipIf(adminUrl === undefined)("holds the starter limit across two engine processes on one PostgreSQL", { ...onPostgres, timeout: 300_000 }, async () => {
    const scope = Effect.runSync(Scope.make())
    try {
      const url = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(adminUrl as string), Scope.Scope, scope))
      const verdict = await prove("starter", "postgres", 2, url)
      expect(verdict.instances).toBe(2)
      expect(verdict.phases.map((p) => p.admitted)).toEqual([100, 100])
      expect(verdict.ok).toBe(true)
    } finally {
      await Promise.all(engines.splice(0).map((e) => e.stop()))
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("fails against a limiter that admits the limit plus one, naming the burst", { timeout: 300_000 }, async () => {
    // A stand-in API with a sliding window that lets limit + 1 through: everything else about its answers is right.
    const limit = 20
    const hits: Array<number> = []
    const server: Server = createServer((_req, res) => {
      const now = performance.now()
      while (hits.length > 0 && (hits[0] as number) <= now - WINDOW_S * 1000) hits.shift()
      if (hits.length < limit + 1) {
        hits.push(now)
        res.writeHead(200, { "content-type": "application/json", "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": "0" })
        res.end("{}")
      } else {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "1", "x-ratelimit-limit": String(limit), "x-ratelimit-remaining": "0" })
        res.end(JSON.stringify({ error: { code: "RATE_LIMITED", message: "Rate limit exceeded" } }))
      }
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    try {
      const verdict = await runProfile({
        bases: [`http://127.0.0.1:${port}`],
        credentials: [{ "x-api-key": "k" }],
        profile: profileFor(limit, WINDOW_S),
        out: join(OUT, "planted-limit-plus-one")
      })
      expect(verdict.phases.map((p) => p.admitted)).toEqual([limit + 1, limit + 1])
      expect(verdict.ok).toBe(false)
      expect(outcomeOf(verdict)).toBe("FAIL")
      expect(verdict.thresholdsFailed).toEqual(expect.arrayContaining(["admitted{phase:one}", "admitted{phase:two}"]))
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
