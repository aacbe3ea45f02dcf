/**
 * Operations without a partner key are limited per source IP (spec Limits: "OAuth token endpoint | Rate-limited per
 * source IP"; D-002, D-016, D-321), on the memory store and (DATABASE_URL set) on PostgreSQL, every answer checked
 * against the contract: 60 requests a minute per source address and operation, on the engine clock; the 61st is 429
 * RATE_LIMITED with Retry-After and no X-RateLimit headers (no partner bucket); another address, another operation or a
 * partner's keyed requests from the same address are not affected; the token endpoint counts failed guesses. Over a
 * real socket the peer's address is the source (E-211).
 */
import { Effect, Exit, ManagedRuntime, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { EngineRequest } from "../../../engine/http/exchange.ts"
import { Gateway } from "../../../engine/http/gateway.ts"
import { SOURCE_IP_LIMIT, sourceBucket } from "../../../engine/http/guards/rate-limit.ts"
import { type RunningServer, startServer } from "../../../engine/http/node-server.ts"
import { engineLayer } from "../../../engine/runtime.ts"
import { withTemporaryDatabase } from "../../../engine/store/pg-temp-db.ts"
import { ADMIN, contractProblems, engineRequest, MONDAY_OPEN } from "../harness.ts"
import { config, portOf, send as sendRaw } from "../node-server-kit.ts"
import { tagsFor } from "../../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
const LIVE = "/api/v1/partner"

describe("sourceBucket", () => {
  it("is per address and operation; an IPv4-mapped IPv6 address is its IPv4 one; no socket is one in-process source", () => {
    expect(sourceBucket("10.0.0.1", "issueOAuthToken")).toBe("ip:10.0.0.1:issueOAuthToken")
    expect(sourceBucket("::ffff:10.0.0.1", "issueOAuthToken")).toBe("ip:10.0.0.1:issueOAuthToken")
    // Only the dotted form is an IPv4 address: a mapped address written in hex stays as it is.
    expect(sourceBucket("::ffff:a00:1", "issueOAuthToken")).toBe("ip:::ffff:a00:1:issueOAuthToken")
    expect(sourceBucket("::1", "getServiceStatus")).toBe("ip:::1:getServiceStatus")
    expect(sourceBucket(undefined, "getServiceStatus")).toBe("ip:in-process:getServiceStatus")
    expect(sourceBucket("", "getServiceStatus")).toBe(sourceBucket(undefined, "getServiceStatus"))
    expect(SOURCE_IP_LIMIT).toBe(60)
  })
})

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && (DATABASE_URL === undefined || DATABASE_URL === ""))(`per source IP limit (${store})`, tagsFor(store), () => {
    let scope = Effect.runSync(Scope.make())
    let runtime: ManagedRuntime.ManagedRuntime<Gateway, unknown>
    beforeEach(async () => {
      scope = Effect.runSync(Scope.make())
      const databaseUrl = store === "memory" ? undefined : await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
      runtime = ManagedRuntime.make(
        engineLayer({ store, databaseUrl, clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN })
      ) as ManagedRuntime.ManagedRuntime<Gateway, unknown>
    }, 60_000)
    afterEach(async () => {
      await runtime.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 60_000)

    const send = async (method: string, path: string, from: string | undefined, headers: Record<string, string> = {}, body?: unknown) => {
      const request = engineRequest(
        method,
        path,
        { "content-type": "application/json", ...headers },
        body === undefined ? undefined : JSON.stringify(body),
        from
      )
      const r = await runtime.runPromise(Gateway.use((g) => g.handle(request)))
      const reply = { status: r.status, headers: new Headers(r.headers), body: r.body === "" ? null : JSON.parse(r.body) }
      const problems = contractProblems(method, path, headers, reply)
      if (problems.length > 0) throw new Error(`response breaks the contract:\n  ${problems.join("\n  ")}`)
      return reply
    }
    const status = (from: string | undefined) => send("GET", "/api/v1/status", from)
    const admin = (method: string, path: string, body?: unknown) => send(method, path, undefined, { authorization: `Bearer ${ADMIN}` }, body)
    const noPartnerHeaders = (r: { headers: Headers }) => {
      expect(r.headers.get("x-ratelimit-limit")).toBeNull()
      expect(r.headers.get("x-ratelimit-remaining")).toBeNull()
    }

    it("GET /api/v1/status: 60 a minute per address; the 61st 429 with Retry-After, no X-RateLimit headers; others unaffected; frees on the clock", async () => {
      for (let i = 0; i < SOURCE_IP_LIMIT; i++) {
        const r = await status("10.0.0.1")
        expect(r.status, `request ${i + 1}`).toBe(200)
        noPartnerHeaders(r)
      }
      const refused = await status("::ffff:10.0.0.1")
      expect([refused.status, refused.body.error.code, refused.body.error.limit]).toEqual([429, "RATE_LIMITED", 60])
      expect(refused.body.error.message).toBe("rate limit exceeded: tier source-ip, 60 requests per minute, resets in 60 s")
      expect(refused.headers.get("retry-after")).toBe("60")
      noPartnerHeaders(refused)
      // Another address, and the in-process source, have their own windows; another operation too.
      expect((await status("10.0.0.2")).status).toBe(200)
      expect((await status(undefined)).status).toBe(200)
      const token = await send("POST", `${LIVE}/oauth/token`, "10.0.0.1", {}, { grant_type: "client_credentials", client_secret: "pk_live_nope" })
      expect([token.status, token.body.error.code]).toEqual([401, "AUTH_INVALID"])
      expect((await admin("POST", "/_sim/clock/advance", { seconds: 30 })).status).toBe(200)
      const later = await status("10.0.0.1")
      expect([later.status, later.headers.get("retry-after")]).toEqual([429, "30"])
      expect((await admin("POST", "/_sim/clock/advance", { seconds: 30 })).status).toBe(200)
      expect((await status("10.0.0.1")).status).toBe(200)
    })

    it("POST /oauth/token counts failed guesses: after 60 from one address even the right secret waits; the partner's keyed calls do not", async () => {
      const partner = (await admin("POST", "/_sim/partners", { businessName: "Token Partner", email: "t@p.test" })).body
      expect((await admin("POST", `/_sim/partners/${partner.partnerId}/oauth`, { enabled: true })).status).toBe(200)
      const token = (secret: string, from: string) => send("POST", `${LIVE}/oauth/token`, from, {}, { grant_type: "client_credentials", client_secret: secret })
      for (let i = 0; i < SOURCE_IP_LIMIT; i++) {
        const guess = await token(`pk_live_guess${i}`, "203.0.113.9")
        expect([guess.status, guess.body.error.code], `guess ${i + 1}`).toEqual([401, "AUTH_INVALID"])
      }
      const right = await token(partner.liveKey, "203.0.113.9")
      expect([right.status, right.body.error.code]).toEqual([429, "RATE_LIMITED"])
      noPartnerHeaders(right)
      expect((await token(partner.liveKey, "198.51.100.7")).status).toBe(200)
      const keyed = await send("GET", `${LIVE}/stocks?limit=1`, "203.0.113.9", { "x-api-key": partner.liveKey })
      expect([keyed.status, keyed.headers.get("x-ratelimit-remaining")]).toEqual([200, "99"])
    })
  })
}

describe("per source IP limit with --rate-limit off", () => {
  it("is lifted with the partner limits (benchmarks only)", async () => {
    const runtime = ManagedRuntime.make(
      engineLayer({ store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN, rateLimit: "off" })
    ) as ManagedRuntime.ManagedRuntime<Gateway, unknown>
    try {
      const request: EngineRequest = { method: "GET", path: "/api/v1/status", query: new URLSearchParams(), search: "", headers: {}, body: undefined }
      for (let i = 0; i <= SOURCE_IP_LIMIT; i++) {
        const r = await runtime.runPromise(Gateway.use((g) => g.handle(request)))
        expect(r.status, `request ${i + 1}`).toBe(200)
      }
    } finally {
      await runtime.dispose()
    }
  })
})

describe("per source IP limit over a socket", () => {
  let server: RunningServer | undefined
  afterEach(async () => {
    await server?.stop()
    server = undefined
  })

  it("the peer's address is the source: the 61st GET /api/v1/status from 127.0.0.1 is 429, whatever X-Forwarded-For says", async () => {
    server = await startServer(config, 0)
    const port = portOf(server)
    for (let i = 0; i < SOURCE_IP_LIMIT; i++) {
      const r = await sendRaw(port, "GET", "/api/v1/status", { "x-forwarded-for": `192.0.2.${i}` })
      expect(r.status, `request ${i + 1}`).toBe(200)
    }
    const refused = await sendRaw(port, "GET", "/api/v1/status", { "x-forwarded-for": "192.0.2.200" })
    expect(refused.status).toBe(429)
    expect(refused.headers["retry-after"]).toBe("60")
    expect(JSON.parse(refused.body).error.code).toBe("RATE_LIMITED")
  })
})
