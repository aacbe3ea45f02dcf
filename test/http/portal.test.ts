/**
 * The portal: the simulated identity provider's ID tokens, applications and their review, sandbox registration at
 * the sandbox root, portal sessions, OAuth client credentials, suspension, and where raw keys may (not) appear.
 * Every answer goes through the harness, so it is checked against the contract.
 */
import { Effect, Exit, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { LIVE, SANDBOX, storeDocs } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

const DATABASE_URL = process.env.DATABASE_URL

type Engine = ReturnType<typeof startEngine>

const idToken = async (engine: Engine, uid: string, emailVerified = true) => {
  const r = await engine.admin("POST", "/_sim/idp/tokens", { uid, email: `${uid}@acme.test`, emailVerified })
  expect(r.status).toBe(200)
  return r.body.idToken as string
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const apply = (engine: Engine, token: string, body: unknown = { businessName: "Acme Wallet", email: "ops@acme.test", country: "KE" }) =>
  engine.call("POST", `${LIVE}/apply`, { headers: bearer(token), body })
const register = (engine: Engine, token: string, body: unknown = { businessName: "Acme Wallet", email: "ops@acme.test" }) =>
  engine.call("POST", "/api/sandbox/v1/register", { headers: bearer(token), body })
const session = (engine: Engine, token: string) => engine.call("POST", `${LIVE}/session`, { headers: bearer(token) })
const withKey = (engine: Engine, key: string, method: string, path: string, body?: unknown) =>
  engine.call(method, path, {
    headers: { authorization: `Bearer ${key}`, ...(method === "GET" ? {} : { "idempotency-key": `idem-${path}-${key.slice(-6)}` }) },
    body
  })
const advance = (engine: Engine, seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })

/** A partner through the portal: applied, approved, with its sandbox and live keys. */
const onboard = async (engine: Engine, uid: string) => {
  const token = await idToken(engine, uid)
  const applied = (await apply(engine, token)).body
  const sandboxKey = (await register(engine, token)).body.apiKey as string
  const approved = (await engine.admin("POST", `/_sim/applications/${applied.applicationId}/approve`)).body
  return { token, applicationId: applied.applicationId as string, sandboxKey, liveKey: approved.liveKey as string, partnerId: approved.partnerId as string }
}

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`portal (${store})`, () => {
    let engine: Engine
    // On postgres each test gets its own temporary database (uids and applications are global to a store).
    let seed = 0
    let scope = Effect.runSync(Scope.make())
    beforeEach(async () => {
      seed += 1
      if (store === "memory") {
        engine = startEngine({ seed })
        return
      }
      scope = Effect.runSync(Scope.make())
      const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
      engine = startEngine({ seed, store: "postgres", databaseUrl: url })
    })
    afterEach(async () => {
      await engine.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    })

    describe("identity provider", () => {
      it("signs reproducible EdDSA ID tokens: the same seed and clock give the same token", async () => {
        const other = startEngine({ seed })
        try {
          const a = await idToken(engine, "u1")
          expect(a.split(".")).toHaveLength(3)
          expect(JSON.parse(Buffer.from(a.split(".")[0] ?? "", "base64url").toString())).toMatchObject({ alg: "EdDSA" })
          expect(JSON.parse(Buffer.from(a.split(".")[1] ?? "", "base64url").toString())).toMatchObject({
            sub: "u1",
            email: "u1@acme.test",
            email_verified: true
          })
          expect(await idToken(other, "u1")).toBe(a)
          const reseeded = startEngine({ seed: 99_999 })
          try {
            expect(await idToken(reseeded, "u1")).not.toBe(a)
          } finally {
            await reseeded.dispose()
          }
        } finally {
          await other.dispose()
        }
      })

      it("a portal operation refuses no token (AUTH_MISSING), a tampered one, another seed's, an API key and an expired one (AUTH_INVALID)", async () => {
        const token = await idToken(engine, "u1")
        const none = await engine.call("POST", `${LIVE}/session`)
        expect([none.status, none.body.error.code]).toEqual([401, "AUTH_MISSING"])
        const [h, p, s] = token.split(".")
        const forged = `${h}.${Buffer.from(JSON.stringify({ sub: "admin", email: "x@y.z", iss: "https://idp.sokoni.test", aud: "sokoni-portal", exp: 9e9 })).toString("base64url")}.${s}`
        const foreign = startEngine({ seed: 7 })
        const foreignToken = await idToken(foreign, "u1")
        await foreign.dispose()
        const partner = await engine.newPartner()
        for (const bad of [forged, `${h}.${p}.${s?.slice(0, -4)}AAAA`, foreignToken, partner.liveKey, "not-a-jwt"]) {
          const r = await session(engine, bad)
          expect([r.status, r.body.error.code]).toEqual([401, "AUTH_INVALID"])
        }
        await advance(engine, 3600)
        const expired = await apply(engine, token)
        expect([expired.status, expired.body.error.code]).toEqual([401, "AUTH_INVALID"])
      })
    })

    describe("apply and review", () => {
      it("files a pending application; a second while pending or approved is 409; an unverified email 403", async () => {
        const token = await idToken(engine, "u1")
        const r = await apply(engine, token)
        expect(r.status).toBe(201)
        expect(r.body).toEqual({
          message: expect.any(String),
          applicationId: expect.stringMatching(/^app_/),
          status: "pending",
          submittedAt: "2026-11-23T08:00:00.000Z"
        })
        expect((await apply(engine, token)).status).toBe(409)
        expect((await engine.admin("POST", `/_sim/applications/${r.body.applicationId}/approve`)).status).toBe(200)
        expect((await apply(engine, token)).status).toBe(409)
        expect((await engine.admin("POST", `/_sim/applications/${r.body.applicationId}/approve`)).status).toBe(409)
        const unverified = await apply(engine, await idToken(engine, "u2", false))
        expect([unverified.status, unverified.body.error.code]).toEqual([403, "FORBIDDEN"])
      })

      it("refuses bad bodies with 400 after the token is checked", async () => {
        const token = await idToken(engine, "u1")
        for (const body of [
          {},
          { businessName: "A", email: "a@b.co", country: "KE" },
          { businessName: "Acme", email: "nope", country: "KE" },
          { businessName: "Acme", email: "a@b.co", country: "Kenya" }
        ]) {
          expect((await apply(engine, token, body)).status, JSON.stringify(body)).toBe(400)
        }
        expect((await engine.call("POST", `${LIVE}/apply`, { body: {} })).status).toBe(401)
      })

      it("a rejected application blocks register; a new application is then accepted", async () => {
        const token = await idToken(engine, "u1")
        const id = (await apply(engine, token)).body.applicationId
        const rejected = await engine.admin("POST", `/_sim/applications/${id}/reject`, { reason: "Incomplete documents" })
        expect(rejected.body).toEqual({ applicationId: id, status: "rejected", partnerId: null, liveKey: null, reason: "Incomplete documents" })
        expect((await engine.admin("POST", `/_sim/applications/${id}/reject`, { reason: "again" })).status).toBe(409)
        const r = await register(engine, token)
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect((await apply(engine, token)).status).toBe(201)
        expect((await engine.admin("POST", "/_sim/applications/app_nope/approve")).status).toBe(404)
      })
    })

    describe("POST /register (sandbox root)", () => {
      it("403 with no application on file", async () => {
        const r = await register(engine, await idToken(engine, "nobody"))
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
      })

      it("creates the sandbox account once (100000 seed); again rotates the key, the old one then answers 401", async () => {
        const token = await idToken(engine, "u1")
        await apply(engine, token)
        const first = await register(engine, token)
        expect(first.status).toBe(201)
        expect(first.body).toEqual({
          message: expect.any(String),
          apiKey: expect.stringMatching(/^sk_sandbox_/),
          walletBalance: 100000,
          currency: "USD",
          existing: false
        })
        const key1 = first.body.apiKey
        expect((await withKey(engine, key1, "GET", `${SANDBOX}/wallet`)).body.balance).toBe(100000)
        const user = await withKey(engine, key1, "POST", `${SANDBOX}/users`, { externalId: "c1" })
        expect(user.status).toBe(201)
        const second = await register(engine, token)
        expect(second.body).toMatchObject({ existing: true, walletBalance: 100000 })
        expect(second.body.apiKey).not.toBe(key1)
        const old = await withKey(engine, key1, "GET", `${SANDBOX}/wallet`)
        expect([old.status, old.body.error.code]).toEqual([401, "AUTH_INVALID"])
        // the same account: its sub-account is still there, and the wallet was not seeded twice
        expect((await withKey(engine, second.body.apiKey, "GET", `${SANDBOX}/users/${user.body.subAccountId}`)).status).toBe(200)
        expect((await withKey(engine, second.body.apiKey, "GET", `${SANDBOX}/wallet`)).body.balance).toBe(100000)
        // a sandbox key is no production credential
        expect((await withKey(engine, second.body.apiKey, "GET", `${LIVE}/wallet`)).status).toBe(401)
      })

      it("is not served on the production base", async () => {
        const r = await engine.call("POST", "/api/v1/register", { headers: bearer(await idToken(engine, "u1")), body: {}, unchecked: true })
        expect(r.status).toBe(404)
      })
    })

    describe("POST /session", () => {
      it("403 before the account has a production key; after approval a 3600 s token that acts as the live key", async () => {
        const token = await idToken(engine, "u1")
        const applied = (await apply(engine, token)).body
        await register(engine, token)
        const early = await session(engine, token)
        expect([early.status, early.body.error.code]).toEqual([403, "FORBIDDEN"])
        const approved = (await engine.admin("POST", `/_sim/applications/${applied.applicationId}/approve`)).body
        expect(approved).toEqual({
          applicationId: applied.applicationId,
          status: "approved",
          partnerId: expect.stringMatching(/^ptn_/),
          liveKey: expect.stringMatching(/^pk_live_/),
          reason: null
        })
        const s = await session(engine, token)
        expect(s.status).toBe(200)
        expect(s.body).toMatchObject({ tokenType: "Bearer", expiresIn: 3600, keyType: "full", member: { email: "u1@acme.test", uid: "u1", status: "ACTIVE" } })
        expect(s.body.accessToken).toMatch(/^svc_oauth_/)
        const wallet = await withKey(engine, s.body.accessToken, "GET", `${LIVE}/wallet`)
        expect([wallet.status, wallet.body.environment]).toEqual([200, "production"])
        expect((await withKey(engine, s.body.accessToken, "GET", `${SANDBOX}/wallet`)).status).toBe(401)
        await advance(engine, 3599)
        expect((await withKey(engine, s.body.accessToken, "GET", `${LIVE}/wallet`)).status).toBe(200)
        await advance(engine, 1)
        const expired = await withKey(engine, s.body.accessToken, "GET", `${LIVE}/wallet`)
        expect([expired.status, expired.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect((await withKey(engine, approved.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
      })
    })

    describe("POST /oauth/token", () => {
      const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`client:${secret}`).toString("base64")}` })

      it("403 FORBIDDEN until the service enables OAuth for the partner", async () => {
        const p = await engine.newPartner()
        const r = await engine.call("POST", `${LIVE}/oauth/token`, { headers: basic(p.liveKey), body: { grant_type: "client_credentials" } })
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect((await engine.admin("POST", "/_sim/partners/ptn_nope/oauth", { enabled: true })).status).toBe(404)
      })

      it("issues a 900 s svc_oauth_ token by Basic, form or JSON; scope narrows; the token expires on the engine clock", async () => {
        const p = await engine.newPartner()
        expect((await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })).body).toEqual({
          partnerId: p.partnerId,
          oauthEnabled: true
        })
        expect((await engine.call("GET", `${LIVE}/settings`, { headers: bearer(p.liveKey) })).body.oauthEnabled).toBe(true)
        const byBasic = await engine.call("POST", `${LIVE}/oauth/token`, { headers: basic(p.liveKey), body: { grant_type: "client_credentials" } })
        expect(byBasic.status).toBe(200)
        expect(byBasic.body).toMatchObject({ token_type: "Bearer", expires_in: 900 })
        expect(byBasic.body.scope.split(" ")).toContain("trading:write")
        const byForm = await engine.call("POST", `${LIVE}/oauth/token`, {
          headers: { "content-type": "application/x-www-form-urlencoded" },
          rawBody: new URLSearchParams({ grant_type: "client_credentials", client_secret: p.liveKey, scope: "market:read accounts:read" }).toString()
        })
        expect([byForm.status, byForm.body.scope]).toEqual([200, "market:read accounts:read"])
        const byJson = await engine.call("POST", `${LIVE}/oauth/token`, {
          body: { grant_type: "client_credentials", client_secret: p.liveKey, scope: "market:read" }
        })
        expect([byJson.status, byJson.body.scope]).toEqual([200, "market:read"])
        const token = byJson.body.access_token
        expect(token).toMatch(/^svc_oauth_/)
        expect((await withKey(engine, token, "GET", `${LIVE}/stocks`)).status).toBe(200)
        await advance(engine, 900)
        expect((await withKey(engine, token, "GET", `${LIVE}/stocks`)).status).toBe(401)
      })

      it("a token calls only the operations its scopes name (D-122); the key itself is not narrowed", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const issue = async (scope: string) =>
          (await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: p.liveKey, scope } })).body
            .access_token as string
        const reader = await issue("market:read accounts:read")
        expect((await withKey(engine, reader, "GET", `${LIVE}/stocks`)).status).toBe(200)
        expect((await withKey(engine, reader, "GET", `${LIVE}/wallet`)).status).toBe(200)
        const refused = await withKey(engine, reader, "GET", `${LIVE}/webhooks`)
        expect([refused.status, refused.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(refused.body.error.message).toContain("webhooks:read")
        // The refusal still counts and carries the rate-limit headers, as every keyed answer does (D-002).
        expect(refused.headers.get("x-ratelimit-limit")).not.toBeNull()
        const marketOnly = await issue("market:read")
        expect((await withKey(engine, marketOnly, "GET", `${LIVE}/wallet`)).status).toBe(403)
        expect((await withKey(engine, await issue("webhooks:read"), "GET", `${LIVE}/webhooks`)).status).toBe(200)
        expect((await withKey(engine, p.liveKey, "GET", `${LIVE}/webhooks`)).status).toBe(200)
      })

      it("refuses bad requests: grant type, missing secret, unknown scope, sandbox or unknown keys", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const token = (body: unknown, headers: Record<string, string> = {}) => engine.call("POST", `${LIVE}/oauth/token`, { headers, body })
        const cases: Array<[unknown, Record<string, string>, number, string]> = [
          [{ grant_type: "password", client_secret: p.liveKey }, {}, 400, "VALIDATION_ERROR"],
          [{ client_secret: p.liveKey }, {}, 400, "MISSING_PARAM"],
          [{ grant_type: "client_credentials" }, {}, 400, "MISSING_PARAM"],
          [{ grant_type: "client_credentials", client_secret: p.liveKey, scope: "market:read god:mode" }, {}, 400, "VALIDATION_ERROR"],
          [{ grant_type: "client_credentials", client_secret: p.sandboxKey }, {}, 401, "AUTH_INVALID"],
          [{ grant_type: "client_credentials", client_secret: "pk_live_unknown" }, {}, 401, "AUTH_INVALID"],
          [{ grant_type: "client_credentials" }, { authorization: "Basic bm9jb2xvbg==" }, 401, "AUTH_INVALID"]
        ]
        for (const [body, headers, status, code] of cases) {
          const r = await token(body, headers)
          expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([status, code])
        }
      })

      it("a data key's token holds only market:read", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const dataKey = (await withKey(engine, p.liveKey, "POST", `${LIVE}/api-keys/data-key`)).body.dataKey
        const r = await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: dataKey } })
        expect([r.status, r.body.scope]).toEqual([200, "market:read"])
        expect((await withKey(engine, r.body.access_token, "GET", `${LIVE}/stocks`)).status).toBe(200)
        const wallet = await withKey(engine, r.body.access_token, "GET", `${LIVE}/wallet`)
        expect([wallet.status, wallet.body.error.code]).toEqual([403, "FORBIDDEN"])
        const wider = await engine.call("POST", `${LIVE}/oauth/token`, {
          body: { grant_type: "client_credentials", client_secret: dataKey, scope: "trading:write" }
        })
        expect(wider.status).toBe(400)
      })
    })

    describe("suspension", () => {
      it("a suspended partner's keys and tokens answer 403 AUTH_SUSPENDED everywhere until reactivated", async () => {
        const o = await onboard(engine, "u1")
        const access = (await session(engine, o.token)).body.accessToken
        expect((await engine.admin("POST", `/_sim/partners/${o.partnerId}/status`, { status: "suspended" })).body).toEqual({
          partnerId: o.partnerId,
          status: "suspended"
        })
        for (const [key, base] of [
          [o.liveKey, LIVE],
          [o.sandboxKey, SANDBOX],
          [access, LIVE]
        ] as const) {
          const r = await withKey(engine, key, "GET", `${base}/wallet`)
          expect([r.status, r.body.error.code]).toEqual([403, "AUTH_SUSPENDED"])
        }
        const s = await session(engine, o.token)
        expect([s.status, s.body.error.code]).toEqual([403, "AUTH_SUSPENDED"])
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/status`, { status: "active" })
        expect((await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
        expect((await engine.admin("POST", "/_sim/partners/ptn_nope/status", { status: "active" })).status).toBe(404)
      })
    })

    describe("GET /me and POST /me", () => {
      const me = (token: string, query = "") => engine.call("GET", `${LIVE}/me${query}`, { headers: bearer(token) })

      it("follows the account through not_found, pending, sandbox_active, active, suspended; maskedKey only when active and never a key", async () => {
        const token = await idToken(engine, "u1")
        expect((await me(token)).body).toEqual({
          status: "not_found",
          sandboxActive: false,
          businessName: null,
          email: null,
          applicationSubmittedAt: null,
          applicationRejectionReason: null
        })
        const applied = (await apply(engine, token)).body
        expect((await me(token)).body).toMatchObject({
          status: "pending",
          sandboxActive: false,
          businessName: "Acme Wallet",
          applicationSubmittedAt: "2026-11-23T08:00:00.000Z"
        })
        await register(engine, token)
        expect((await me(token)).body).toMatchObject({ status: "sandbox_active", sandboxActive: true })
        expect((await me(token)).body.maskedKey).toBeUndefined()
        const approved = (await engine.admin("POST", `/_sim/applications/${applied.applicationId}/approve`)).body
        const active = (await me(token)).body
        expect(active).toMatchObject({ status: "active", sandboxActive: true, maskedKey: `pk_live_****${approved.liveKey.slice(-4)}` })
        const masked = await withKey(engine, active.maskedKey, "GET", `${LIVE}/wallet`)
        expect(masked.status).toBe(401)
        await engine.admin("POST", `/_sim/partners/${approved.partnerId}/status`, { status: "suspended" })
        expect((await me(token)).body.status).toBe("suspended")
      })

      it("reports a rejection with its reason", async () => {
        const token = await idToken(engine, "u1")
        const id = (await apply(engine, token)).body.applicationId
        await engine.admin("POST", `/_sim/applications/${id}/reject`, { reason: "No licence" })
        expect((await me(token)).body).toMatchObject({ status: "rejected", applicationRejectionReason: "No licence" })
      })

      it("the workspace form needs a verified email and adds the workspace fields; POST /me saves the preference", async () => {
        const o = await onboard(engine, "u1")
        const ws = await me(o.token, "?workspace=1")
        expect(ws.status).toBe(200)
        expect(ws.body).toMatchObject({
          status: "active",
          deploymentPreference: null,
          hosted: { status: "active", liveAllowed: true, keyLast4: o.liveKey.slice(-4) },
          sandbox: { status: "active", nextAction: null },
          environment: { liveAllowed: true },
          limit: 50,
          installations: []
        })
        expect((await me(o.token, "?workspace=0")).body.hosted).toBeUndefined()
        expect((await me(o.token, "?workspace=2")).body.hosted).toBeUndefined()
        const unverified = await idToken(engine, "u1", false)
        expect((await me(unverified, "?workspace=1")).status).toBe(403)
        expect((await me(unverified)).status).toBe(200)
        const act = (body: unknown, token = o.token) => engine.call("POST", `${LIVE}/me`, { headers: bearer(token), body })
        expect((await act({ action: "deployment_preference", deploymentPreference: "onprem" })).body).toEqual({
          action: "deployment_preference",
          deploymentPreference: "onprem"
        })
        expect((await me(o.token, "?workspace=1")).body.deploymentPreference).toBe("onprem")
        expect((await act({ action: "select_environment", environment: "sandbox" })).body).toEqual({ action: "select_environment", path: "/dashboard/sandbox" })
        expect((await act({ action: "select_environment" })).body.error.code).toBe("MISSING_PARAM")
        expect((await act({ action: "deployment_preference" })).body.error.code).toBe("MISSING_PARAM")
        expect((await act({ action: "launch" })).status).toBe(400)
        expect((await act({ action: "select_environment", environment: "sandbox" }, unverified)).status).toBe(403)
      })
    })

    describe("POST /upgrade-request", () => {
      const upgrade = (token: string, body?: unknown) => engine.call("POST", `${LIVE}/upgrade-request`, { headers: bearer(token), body })

      it("files tier moves upwards only; sandbox-to-live only before approval; 403 with no account", async () => {
        expect((await upgrade(await idToken(engine, "nobody"), { targetTier: "growth" })).status).toBe(403)
        const token = await idToken(engine, "u1")
        const id = (await apply(engine, token)).body.applicationId
        await register(engine, token)
        const live = await upgrade(token)
        expect(live.status).toBe(201)
        expect(live.body).toEqual({ message: expect.stringContaining("verification"), requestId: expect.stringMatching(/^upg_/) })
        await engine.admin("POST", `/_sim/applications/${id}/approve`)
        expect((await upgrade(token)).status).toBe(400)
        const tier = await upgrade(token, { targetTier: "growth", message: "more volume" })
        expect(tier.status).toBe(201)
        expect(tier.body.requestId).not.toBe(live.body.requestId)
        expect((await upgrade(token, { targetTier: "starter" })).status).toBe(400)
        expect((await upgrade(token, { targetTier: "platinum" })).status).toBe(400)
      })
    })

    describe("POST /api-keys/revoke", () => {
      const revoke = (token: string, apiKey: string, key = `revoke-${apiKey.slice(-8)}`) =>
        engine.call("POST", `${LIVE}/api-keys/revoke`, { headers: { ...bearer(token), "idempotency-key": key }, body: { apiKey } })

      it("refuses the only active key (403); with two, revokes one: 403 AUTH_REVOKED at once and account.frozen with revocation fields", async () => {
        const o = await onboard(engine, "u1")
        const only = await revoke(o.token, o.liveKey)
        expect([only.status, only.body.error.code]).toEqual([403, "FORBIDDEN"])
        const second = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        expect((await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
        await advance(engine, 30)
        const r = await revoke(o.token, o.liveKey)
        expect(r.status).toBe(200)
        expect(r.body).toEqual({ message: expect.any(String), apiKey: `pk_live_****${o.liveKey.slice(-4)}` })
        const refused = await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)
        expect([refused.status, refused.body.error.code]).toEqual([403, "AUTH_REVOKED"])
        expect((await withKey(engine, second, "GET", `${LIVE}/wallet`)).status).toBe(200)
        expect((await revoke(o.token, o.liveKey, "another-key-1")).status).toBe(200)
        const trace = String((await engine.admin("GET", "/_sim/trace")).body)
          .split("\n")
          .filter((l) => l.includes('"kind":"event"') && l.includes("account.frozen"))
          .map((l) => JSON.parse(l))
        expect(trace).toHaveLength(1)
        expect(trace[0]).toMatchObject({ partition: `${o.partnerId}:production` })
        expect(JSON.stringify(trace[0])).toContain('"revokedAt":"2026-11-23T08:00:30.000Z"')
        expect(JSON.stringify(trace[0])).toContain('"revokedBy":"u1@acme.test"')
        // the session now inherits the remaining key
        expect((await session(engine, o.token)).status).toBe(200)
      })

      it("404 for another partner's key or an unknown one; 400 without Idempotency-Key or with a non-live key; 403 in the sandbox", async () => {
        const a = await onboard(engine, "ua")
        const b = await onboard(engine, "ub")
        expect((await revoke(a.token, b.liveKey)).status).toBe(404)
        expect((await revoke(a.token, "pk_live_doesnotexist")).status).toBe(404)
        expect((await revoke(a.token, a.sandboxKey)).status).toBe(400)
        const noKey = await engine.call("POST", `${LIVE}/api-keys/revoke`, { headers: bearer(a.token), body: { apiKey: a.liveKey } })
        expect([noKey.status, noKey.body.error.code]).toEqual([400, "MISSING_IDEMPOTENCY_KEY"])
        const sandbox = await engine.call("POST", `${SANDBOX}/api-keys/revoke`, {
          headers: { ...bearer(a.token), "idempotency-key": "sandbox-revoke" },
          body: { apiKey: a.liveKey }
        })
        expect(sandbox.status).toBe(403)
        expect((await withKey(engine, b.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
      })
    })

    describe("isolation and secrecy", () => {
      it("two portal partners never see each other's data, in either environment", async () => {
        const a = await onboard(engine, "ua")
        const b = await onboard(engine, "ub")
        expect(a.partnerId).not.toBe(b.partnerId)
        for (const [key, base] of [
          [a.sandboxKey, SANDBOX],
          [a.liveKey, LIVE]
        ] as const) {
          const user = await withKey(engine, key, "POST", `${base}/users`, { externalId: "shared" })
          expect(user.status).toBe(201)
          const otherKey = base === SANDBOX ? b.sandboxKey : b.liveKey
          expect((await withKey(engine, otherKey, "GET", `${base}/users/${user.body.subAccountId}`)).status).toBe(404)
          const otherEnvKey = base === SANDBOX ? a.liveKey : a.sandboxKey
          const otherBase = base === SANDBOX ? LIVE : SANDBOX
          expect((await withKey(engine, otherEnvKey, "GET", `${otherBase}/users/${user.body.subAccountId}`)).status).toBe(404)
        }
      })

      it("raw keys and tokens are stored only as SHA-256 hashes and never appear in the store or the trace", async () => {
        const o = await onboard(engine, "u1")
        const access = (await session(engine, o.token)).body.accessToken
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/oauth`, { enabled: true })
        const oauth = (await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: o.liveKey } })).body
          .access_token
        const dataKey = (await withKey(engine, o.liveKey, "POST", `${LIVE}/api-keys/data-key`)).body.dataKey
        const secrets = [o.sandboxKey, o.liveKey, access, oauth, dataKey]
        const stored = JSON.stringify([
          await storeDocs(engine, "apiKeys", "global"),
          await storeDocs(engine, "accessTokens", "global"),
          await storeDocs(engine, "partners", "global"),
          await storeDocs(engine, "applications", "global")
        ])
        const trace = String((await engine.admin("GET", "/_sim/trace")).body)
        for (const secret of secrets) {
          expect(stored).not.toContain(secret)
          expect(trace).not.toContain(secret)
        }
        // the trace keeps a recognisable mask
        expect(trace).toContain(`sk_sandbox_…${o.sandboxKey.slice(-4)}`)
      })
    })
  })
}
