/**
 * The portal: the simulated identity provider's ID tokens, applications and their review, sandbox registration at
 * the sandbox root, portal sessions, OAuth client credentials, suspension, and where raw keys may (not) appear.
 * Every answer goes through the harness, so it is checked against the contract.
 */
import { Effect, Exit, Scope } from "effect"
import { SignJWT } from "jose"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { AccessTokens, type PartnerDoc, Partners } from "../../engine/app/docs.ts"
import { IDP_AUDIENCE, IDP_ISSUER, signingKeyOf } from "../../engine/app/identity.ts"
import { hashKey } from "../../engine/app/partners/credentials.ts"
import { FULL_SCOPES } from "../../engine/app/portal.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store } from "../../engine/store/port.ts"
import { eventsOf, LIVE, SANDBOX, storeDocs } from "./accounts-kit.ts"
import { MONDAY_OPEN, startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

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
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`portal (${store})`, tagsFor(store), () => {
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
          expect(JSON.parse(Buffer.from(a.split(".")[0] ?? "", "base64url").toString())).toEqual({ alg: "EdDSA", typ: "JWT" })
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
        expect(none.body.error.message).toBe("send an identity-provider ID token as `Authorization: Bearer <ID token>`")
        const [h, p, s] = token.split(".")
        const forged = `${h}.${Buffer.from(JSON.stringify({ sub: "admin", email: "x@y.z", iss: "https://idp.sokoni.test", aud: "sokoni-portal", exp: 9e9 })).toString("base64url")}.${s}`
        const foreign = startEngine({ seed: 7 })
        const foreignToken = await idToken(foreign, "u1")
        await foreign.dispose()
        const partner = await engine.newPartner()
        for (const bad of [forged, `${h}.${p}.${s?.slice(0, -4)}AAAA`, foreignToken, partner.liveKey, "not-a-jwt"]) {
          const r = await session(engine, bad)
          expect([r.status, r.body.error.code]).toEqual([401, "AUTH_INVALID"])
          expect(r.body.error.message).toBe("the ID token is invalid or expired")
        }
        await advance(engine, 3600)
        const expired = await apply(engine, token)
        expect([expired.status, expired.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect(expired.body.error.message).toBe("the ID token is invalid or expired")
      })

      it("refuses a token the identity provider signed that lacks the subject or the email (AUTH_INVALID)", async () => {
        // Signed with this engine's own key, with the right issuer, audience and lifetime: only a claim is missing.
        const signed = (claims: Record<string, unknown>, subject?: string) => {
          const seconds = Math.floor(MONDAY_OPEN / 1000)
          const jwt = new SignJWT(claims)
            .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
            .setIssuer(IDP_ISSUER)
            .setAudience(IDP_AUDIENCE)
            .setIssuedAt(seconds)
            .setExpirationTime(seconds + 3600)
          return (subject === undefined ? jwt : jwt.setSubject(subject)).sign(signingKeyOf(seed).privateKey)
        }
        const whole = await session(engine, await signed({ email: "u9@acme.test", email_verified: true }, "u9"))
        expect([whole.status, whole.body.error.code]).toEqual([403, "FORBIDDEN"])
        for (const token of [
          await signed({ email: "u9@acme.test", email_verified: true }),
          await signed({ email_verified: true }, "u9"),
          await signed({ email: 7, email_verified: true }, "u9")
        ]) {
          const r = await session(engine, token)
          expect([r.status, r.body.error.code]).toEqual([401, "AUTH_INVALID"])
          expect(r.body.error.message).toBe("the ID token lacks a subject or email")
        }
      })
    })

    describe("apply and review", () => {
      it("files a pending application; a second while pending or approved is 409; an unverified email 403", async () => {
        const token = await idToken(engine, "u1")
        const r = await apply(engine, token)
        expect(r.status).toBe(201)
        expect(r.body).toEqual({
          message: "Application received; it is reviewed within 1-2 business days.",
          applicationId: expect.stringMatching(/^app_/),
          status: "pending",
          submittedAt: "2026-11-23T08:00:00.000Z"
        })
        const id = r.body.applicationId
        const whilePending = await apply(engine, token)
        expect([whilePending.status, whilePending.body.error.message]).toEqual([409, `an application is already pending (${id})`])
        expect((await engine.admin("POST", `/_sim/applications/${id}/approve`)).status).toBe(200)
        const whileApproved = await apply(engine, token)
        expect([whileApproved.status, whileApproved.body.error.message]).toEqual([409, `an application is already approved (${id})`])
        const twice = await engine.admin("POST", `/_sim/applications/${id}/approve`)
        expect([twice.status, twice.body.error.message]).toEqual([409, `application ${id} is already approved`])
        const unverified = await apply(engine, await idToken(engine, "u2", false))
        expect([unverified.status, unverified.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(unverified.body.error.message).toContain("verify your email")
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
        // A body that is not JSON is refused as such, not decoded as if it were an empty object.
        const broken = await engine.call("POST", `${LIVE}/apply`, { headers: bearer(token), rawBody: '{"businessName": "Acme' })
        expect([broken.status, broken.body.error]).toEqual([400, { code: "VALIDATION_ERROR", message: "the request body is not valid JSON" }])
      })

      it("a rejected application blocks register; a new application is then accepted", async () => {
        const token = await idToken(engine, "u1")
        const id = (await apply(engine, token)).body.applicationId
        const rejected = await engine.admin("POST", `/_sim/applications/${id}/reject`, { reason: "Incomplete documents" })
        expect(rejected.body).toEqual({ applicationId: id, status: "rejected", partnerId: null, liveKey: null, reason: "Incomplete documents" })
        const again = await engine.admin("POST", `/_sim/applications/${id}/reject`, { reason: "again" })
        expect([again.status, again.body.error.message]).toEqual([409, `application ${id} is already rejected`])
        const r = await register(engine, token)
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(r.body.error.message).toContain("no partner application on file")
        expect((await apply(engine, token)).status).toBe(201)
        const unknown = await engine.admin("POST", "/_sim/applications/app_nope/approve")
        expect([unknown.status, unknown.body.error.message]).toEqual([404, "application app_nope was not found"])
      })

      it("rejecting an unknown application is 404 naming it", async () => {
        const r = await engine.admin("POST", "/_sim/applications/app_nope/reject", { reason: "No licence" })
        expect([r.status, r.body.error.code, r.body.error.message]).toEqual([404, "NOT_FOUND", "application app_nope was not found"])
      })
    })

    describe("POST /register (sandbox root)", () => {
      it("403 with no application on file", async () => {
        const r = await register(engine, await idToken(engine, "nobody"))
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(r.body.error.message).toBe("no partner application on file: apply first (POST /apply)")
      })

      it("creates the sandbox account once (100000 seed); again rotates the key, the old one then answers 401", async () => {
        const token = await idToken(engine, "u1")
        await apply(engine, token)
        const first = await register(engine, token)
        expect(first.status).toBe(201)
        expect(first.body).toEqual({
          message: "Sandbox account created.",
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
        expect(second.body).toMatchObject({ message: "Sandbox key rotated; the previous key no longer works.", existing: true, walletBalance: 100000 })
        expect(second.body.apiKey).not.toBe(key1)
        const old = await withKey(engine, key1, "GET", `${SANDBOX}/wallet`)
        expect([old.status, old.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect(old.body.error.message).toBe("the API key was rotated and is no longer valid")
        // the same account: its sub-account is still there, and the wallet was not seeded twice
        expect((await withKey(engine, second.body.apiKey, "GET", `${SANDBOX}/users/${user.body.subAccountId}`)).status).toBe(200)
        expect((await withKey(engine, second.body.apiKey, "GET", `${SANDBOX}/wallet`)).body.balance).toBe(100000)
        // a sandbox key is no production credential
        const onLive = await withKey(engine, second.body.apiKey, "GET", `${LIVE}/wallet`)
        expect([onLive.status, onLive.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect(onLive.body.error.message).toBe("this key is not valid on the production base (expected a key starting pk_live_ or pk_data_ or svc_oauth_)")
      })

      it("a sandbox reset keeps the portal's sandbox key: /me still shows it, and registering again rotates it without a second seed", async () => {
        const token = await idToken(engine, "u1")
        await apply(engine, token)
        const key1 = (await register(engine, token)).body.apiKey as string
        const reset = await engine.call("POST", "/api/sandbox/v1/reset", { headers: { "x-api-key": key1 } })
        expect(reset.status).toBe(200)
        const seen = await engine.call("GET", `${LIVE}/me`, { headers: bearer(token) })
        expect(seen.body).toMatchObject({ status: "sandbox_active", sandboxActive: true })
        const again = await register(engine, token)
        expect(again.body).toMatchObject({ message: "Sandbox key rotated; the previous key no longer works.", existing: true, walletBalance: 100000 })
        const old = await withKey(engine, key1, "GET", `${SANDBOX}/wallet`)
        expect([old.status, old.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect((await withKey(engine, again.body.apiKey, "GET", `${SANDBOX}/wallet`)).body.balance).toBe(100000)
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
        expect(early.body.error.message).toBe("no production key provisioned for this account")
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
        expect(s.body).toEqual({
          accessToken: expect.stringMatching(/^svc_oauth_/),
          tokenType: "Bearer",
          expiresIn: 3600,
          keyType: "full",
          member: {
            id: "mbr_u1",
            email: "u1@acme.test",
            roleIds: ["owner"],
            permissions: [...FULL_SCOPES],
            status: "ACTIVE",
            uid: "u1",
            displayName: null
          },
          permissions: [...FULL_SCOPES],
          sessionId: expect.stringMatching(/^ses_/)
        })
        expect(s.body.permissions).toContain("keys:write")
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

    describe("POST /session without a partner", () => {
      it("403 with no application, and with an application that has no partner yet (neither registered nor approved)", async () => {
        const token = await idToken(engine, "u1")
        const none = await session(engine, token)
        expect([none.status, none.body.error.code, none.body.error.message]).toEqual([403, "FORBIDDEN", "no partner key provisioned for this account"])
        await apply(engine, token)
        const pending = await session(engine, token)
        expect([pending.status, pending.body.error.code, pending.body.error.message]).toEqual([403, "FORBIDDEN", "no partner key provisioned for this account"])
      })
    })

    describe("POST /oauth/token", () => {
      const basic = (secret: string) => ({ authorization: `Basic ${Buffer.from(`client:${secret}`).toString("base64")}` })

      it("403 FORBIDDEN until the service enables OAuth for the partner", async () => {
        const p = await engine.newPartner()
        const r = await engine.call("POST", `${LIVE}/oauth/token`, { headers: basic(p.liveKey), body: { grant_type: "client_credentials" } })
        expect([r.status, r.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(r.body.error.message).toBe("OAuth client credentials are not enabled for this partner")
        const unknown = await engine.admin("POST", "/_sim/partners/ptn_nope/oauth", { enabled: true })
        expect([unknown.status, unknown.body.error.message]).toEqual([404, "partner ptn_nope was not found"])
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
        const spaced = await engine.call("POST", `${LIVE}/oauth/token`, {
          body: { grant_type: "client_credentials", client_secret: p.liveKey, scope: " market:read  accounts:read " }
        })
        expect([spaced.status, spaced.body.scope]).toEqual([200, "market:read accounts:read"])
        const token = byJson.body.access_token
        expect(token).toMatch(/^svc_oauth_/)
        expect((await withKey(engine, token, "GET", `${LIVE}/stocks`)).status).toBe(200)
        await advance(engine, 900)
        const expired = await withKey(engine, token, "GET", `${LIVE}/stocks`)
        expect([expired.status, expired.body.error.code]).toEqual([401, "AUTH_INVALID"])
        expect(expired.body.error.message).toBe("the access token has expired; request a new one")
      })

      it("an unknown access token, and one whose key or partner record is missing from the store, is not recognised (401)", async () => {
        const p = await engine.newPartner()
        const notRecognised = async (token: string) => {
          const r = await withKey(engine, token, "GET", `${LIVE}/stocks`)
          expect([r.status, r.body.error.code]).toEqual([401, "AUTH_INVALID"])
          expect(r.body.error.message).toBe("the access token is not recognised")
        }
        await notRecognised("svc_oauth_NEVERISSUEDNEVERISSUEDNEVERISSUED")
        // Token rows as a store restored from another moment could hold them: a parent key or a partner it lacks.
        const plant = (raw: string, row: { partnerId: string; parentKeyHash: string }) =>
          engine.runtime.runPromise(
            Store.use((store) =>
              store.transact((tx) =>
                AccessTokens.put(tx, hashKey(raw), "global", `t${raw}`, {
                  tokenHash: hashKey(raw),
                  environment: "production",
                  kind: "full",
                  scopes: ["market:read"],
                  expiresAt: MONDAY_OPEN + 900_000,
                  ...row
                })
              )
            )
          )
        await plant("svc_oauth_NOKEYNOKEYNOKEYNOKEYNOKEYNOKEY01", { partnerId: p.partnerId, parentKeyHash: hashKey("pk_live_neverissued") })
        await notRecognised("svc_oauth_NOKEYNOKEYNOKEYNOKEYNOKEYNOKEY01")
        await plant("svc_oauth_NOPARTNERNOPARTNERNOPARTNER01", { partnerId: "ptn_gone", parentKeyHash: hashKey(p.liveKey) })
        await notRecognised("svc_oauth_NOPARTNERNOPARTNERNOPARTNER01")
        // The same row with both present is a working token: what was missing is what refused the others.
        await plant("svc_oauth_WHOLEWHOLEWHOLEWHOLEWHOLEWHOLE01", { partnerId: p.partnerId, parentKeyHash: hashKey(p.liveKey) })
        expect((await withKey(engine, "svc_oauth_WHOLEWHOLEWHOLEWHOLEWHOLEWHOLE01", "GET", `${LIVE}/stocks`)).status).toBe(200)
      })

      it("a change made with an access token is audited as the token's, named by its key's last four characters", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const token = (await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: p.liveKey } })).body
          .access_token as string
        expect((await withKey(engine, token, "POST", `${LIVE}/users`, { externalId: "by-token" })).status).toBe(201)
        expect((await withKey(engine, p.liveKey, "POST", `${LIVE}/users`, { externalId: "by-key" })).status).toBe(201)
        const records = (await withKey(engine, p.liveKey, "GET", `${LIVE}/audit?action=subaccount.create`)).body.records
        expect(records.map((r: any) => [r.actorType, r.actorId])).toEqual([
          ["api_key", `key_****${p.liveKey.slice(-4)}`],
          ["oauth_token", `key_****${p.liveKey.slice(-4)}`]
        ])
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
        const invalidKey = "the client secret is not a valid production key"
        const cases: Array<[unknown, Record<string, string>, number, string, string, string | undefined]> = [
          [{ grant_type: "password", client_secret: p.liveKey }, {}, 400, "VALIDATION_ERROR", "grant_type must be client_credentials", "grant_type"],
          [{ client_secret: p.liveKey }, {}, 400, "MISSING_PARAM", "grant_type is required", "grant_type"],
          [{ grant_type: "client_credentials" }, {}, 400, "MISSING_PARAM", "client_secret is required", "client_secret"],
          [{ grant_type: "client_credentials", client_secret: "" }, {}, 400, "MISSING_PARAM", "client_secret is required", "client_secret"],
          [
            { grant_type: "client_credentials", client_secret: p.liveKey, scope: "market:read god:mode" },
            {},
            400,
            "VALIDATION_ERROR",
            "scope god:mode is not among the key's scopes",
            "scope"
          ],
          [{ grant_type: "client_credentials", client_secret: p.sandboxKey }, {}, 401, "AUTH_INVALID", invalidKey, undefined],
          [{ grant_type: "client_credentials", client_secret: "pk_live_unknown" }, {}, 401, "AUTH_INVALID", invalidKey, undefined],
          [{ grant_type: "client_credentials" }, { authorization: "Basic bm9jb2xvbg==" }, 401, "AUTH_INVALID", "client_id:client_secret", undefined]
        ]
        for (const [body, headers, status, code, message, param] of cases) {
          const r = await token(body, headers)
          expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([status, code])
          expect(r.body.error.message, JSON.stringify(body)).toContain(message)
          expect(r.body.error.param, JSON.stringify(body)).toBe(param)
        }
      })

      it("reads the body as a form by its content type (parameters allowed), otherwise as a JSON object", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const form = new URLSearchParams({ grant_type: "client_credentials", client_secret: p.liveKey, scope: "market:read" }).toString()
        const charset = await engine.call("POST", `${LIVE}/oauth/token`, {
          headers: { "content-type": "application/x-www-form-urlencoded; charset=UTF-8" },
          rawBody: form
        })
        expect([charset.status, charset.body.scope]).toEqual([200, "market:read"])
        // The same fields under another content type are read as JSON, which they are not.
        const asJson = await engine.call("POST", `${LIVE}/oauth/token`, { headers: { "content-type": "text/plain" }, rawBody: form })
        expect([asJson.status, asJson.body.error]).toEqual([400, { code: "VALIDATION_ERROR", message: "the request body is not valid JSON" }])
        for (const rawBody of ["42", '"client_credentials"', "true", "null", "[]"]) {
          const r = await engine.call("POST", `${LIVE}/oauth/token`, { rawBody })
          expect([r.status, r.body.error], rawBody).toEqual([400, { code: "VALIDATION_ERROR", message: "the body must be a JSON object or a form" }])
        }
      })

      it("takes HTTP Basic as `Basic` then whitespace then one token, the secret after the first colon (the client id may be empty)", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const b64 = (text: string) => Buffer.from(text).toString("base64")
        const token = (authorization: string, body: Record<string, string> = {}) =>
          engine.call("POST", `${LIVE}/oauth/token`, { headers: { authorization }, body: { grant_type: "client_credentials", ...body } })
        // Any run of whitespace after the scheme, and an empty client id: the secret is what follows the colon.
        for (const authorization of [`Basic   ${b64(`client:${p.liveKey}`)}`, `basic\t${b64(`client:${p.liveKey}`)}`, `Basic ${b64(`:${p.liveKey}`)}`]) {
          const r = await token(authorization)
          expect([r.status, r.body.token_type], authorization).toEqual([200, "Bearer"])
        }
        // Not HTTP Basic (another scheme first, or more than one token after it): the header is not read, the body's
        // secret is; were the header read, its credentials (no colon) would be refused.
        const noColon = b64("nocolon")
        for (const authorization of [`Bearer Basic ${noColon}`, `Basic ${noColon} ${noColon}`]) {
          const r = await token(authorization, { client_secret: p.liveKey })
          expect([r.status, r.body.token_type], authorization).toEqual([200, "Bearer"])
          const without = await token(authorization)
          expect([without.status, without.body.error.code, without.body.error.param], authorization).toEqual([400, "MISSING_PARAM", "client_secret"])
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

      it("a rotated data key is no client secret (401); the key it was rotated to is", async () => {
        const p = await engine.newPartner()
        await engine.admin("POST", `/_sim/partners/${p.partnerId}/oauth`, { enabled: true })
        const first = (await withKey(engine, p.liveKey, "POST", `${LIVE}/api-keys/data-key`)).body.dataKey as string
        const second = (
          await engine.call("POST", `${LIVE}/api-keys/data-key`, { headers: { authorization: `Bearer ${p.liveKey}`, "idempotency-key": "data-key-again" } })
        ).body.dataKey as string
        expect(second).not.toBe(first)
        const old = await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: first } })
        expect([old.status, old.body.error.code, old.body.error.message]).toEqual([401, "AUTH_INVALID", "the client secret is not a valid production key"])
        const current = await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: second } })
        expect([current.status, current.body.scope]).toEqual([200, "market:read"])
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
          expect(r.body.error.message).toBe("the partner account is suspended")
        }
        const s = await session(engine, o.token)
        expect([s.status, s.body.error.code, s.body.error.message]).toEqual([403, "AUTH_SUSPENDED", "the partner account is suspended"])
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/status`, { status: "active" })
        expect((await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
        const unknown = await engine.admin("POST", "/_sim/partners/ptn_nope/status", { status: "active" })
        expect([unknown.status, unknown.body.error.message]).toEqual([404, "partner ptn_nope was not found"])
      })

      it("a portal partner hears platform incidents in both environments, not while suspended, and again once reactivated", async () => {
        const o = await onboard(engine, "u1")
        const heard = async (title: string) => {
          const declared = await engine.admin("POST", "/_sim/incidents", { title })
          expect(declared.status).toBe(201)
          return (await eventsOf(engine))
            .filter((e) => e.event === "incident.declared" && e.data.id === declared.body.id)
            .map((e) => e.partition)
            .sort()
        }
        const both = [`${o.partnerId}:production`, `${o.partnerId}:sandbox`]
        expect(await heard("Feed lag")).toEqual(both)
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/status`, { status: "suspended" })
        expect(await heard("Slow fills")).toEqual([])
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/status`, { status: "active" })
        expect(await heard("Stream drops")).toEqual(both)
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
        expect((await me(token)).body).toEqual({
          status: "suspended",
          sandboxActive: true,
          businessName: "Acme Wallet",
          email: "ops@acme.test",
          applicationSubmittedAt: "2026-11-23T08:00:00.000Z",
          applicationRejectionReason: null
        })
      })

      it("the workspace form follows the account: what is live, what is next, in each status", async () => {
        const token = await idToken(engine, "u1")
        const workspace = async () => {
          const r = await me(token, "?workspace=1")
          expect(r.status).toBe(200)
          return { status: r.body.status, hosted: r.body.hosted, sandbox: r.body.sandbox, environment: r.body.environment }
        }
        const notLive = { liveAllowed: false, status: "sandbox" }
        const noSandbox = { status: "inactive", nextAction: "register" }
        const hostedOff = (nextAction: string, keyLast4: string | null = null) => ({ status: "inactive", liveAllowed: false, code: null, nextAction, keyLast4 })
        expect(await workspace()).toEqual({ status: "not_found", hosted: hostedOff("apply"), sandbox: noSandbox, environment: notLive })
        const applied = (await apply(engine, token)).body
        expect(await workspace()).toEqual({ status: "pending", hosted: hostedOff("await_review"), sandbox: noSandbox, environment: notLive })
        await register(engine, token)
        const sandboxOn = { status: "active", nextAction: null }
        expect(await workspace()).toEqual({ status: "sandbox_active", hosted: hostedOff("await_review"), sandbox: sandboxOn, environment: notLive })
        const approved = (await engine.admin("POST", `/_sim/applications/${applied.applicationId}/approve`)).body
        const last4 = approved.liveKey.slice(-4)
        expect(await workspace()).toEqual({
          status: "active",
          hosted: { status: "active", liveAllowed: true, code: null, nextAction: null, keyLast4: last4 },
          sandbox: sandboxOn,
          environment: { liveAllowed: true, status: "live" }
        })
        await engine.admin("POST", `/_sim/partners/${approved.partnerId}/status`, { status: "suspended" })
        expect(await workspace()).toEqual({ status: "suspended", hosted: hostedOff("await_review", last4), sandbox: sandboxOn, environment: notLive })
      })

      it("names the partner's contact once a partner exists, the application's before", async () => {
        const token = await idToken(engine, "u1")
        await apply(engine, token, { businessName: "Acme Wallet", email: "apply@acme.test", country: "KE" })
        expect((await me(token)).body).toMatchObject({ businessName: "Acme Wallet", email: "apply@acme.test" })
        const key = (await register(engine, token, { businessName: "Acme Sandbox", email: "dev@acme.test" })).body.apiKey
        expect((await me(token)).body).toMatchObject({ businessName: "Acme Sandbox", email: "dev@acme.test" })
        // a portal partner starts on the starter tier
        expect((await engine.call("GET", "/api/sandbox/v1/partner/settings", { headers: bearer(key) })).body.tier).toBe("starter")
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
        const refused = await me(unverified, "?workspace=1")
        expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
          403,
          "FORBIDDEN",
          "the workspace summary needs a verified email"
        ])
        expect((await me(unverified)).status).toBe(200)
        const act = (body: unknown, token = o.token) => engine.call("POST", `${LIVE}/me`, { headers: bearer(token), body })
        expect((await act({ action: "deployment_preference", deploymentPreference: "onprem" })).body).toEqual({
          action: "deployment_preference",
          deploymentPreference: "onprem"
        })
        expect((await me(o.token, "?workspace=1")).body.deploymentPreference).toBe("onprem")
        expect((await act({ action: "select_environment", environment: "sandbox" })).body).toEqual({ action: "select_environment", path: "/dashboard/sandbox" })
        expect((await act({ action: "select_environment" })).body.error).toEqual({
          code: "MISSING_PARAM",
          message: "environment is required",
          param: "environment"
        })
        expect((await act({ action: "deployment_preference" })).body.error).toEqual({
          code: "MISSING_PARAM",
          message: "deploymentPreference is required",
          param: "deploymentPreference"
        })
        expect((await act({ action: "launch" })).status).toBe(400)
        const unverifiedAct = await act({ action: "select_environment", environment: "sandbox" }, unverified)
        expect([unverifiedAct.status, unverifiedAct.body.error.message]).toEqual([403, "portal actions need a verified email"])
      })
    })

    describe("POST /upgrade-request", () => {
      const upgrade = (token: string, body?: unknown) => engine.call("POST", `${LIVE}/upgrade-request`, { headers: bearer(token), body })

      it("files tier moves upwards only; sandbox-to-live only before approval; 403 with no account", async () => {
        const nobody = await upgrade(await idToken(engine, "nobody"), { targetTier: "growth" })
        expect([nobody.status, nobody.body.error.message]).toEqual([403, "no partner account for this identity: apply and register first"])
        const token = await idToken(engine, "u1")
        const id = (await apply(engine, token)).body.applicationId
        await register(engine, token)
        const live = await upgrade(token)
        expect(live.status).toBe(201)
        expect(live.body).toEqual({ message: expect.stringContaining("verification"), requestId: expect.stringMatching(/^upg_/) })
        const partnerId = (await engine.admin("POST", `/_sim/applications/${id}/approve`)).body.partnerId
        const already = await upgrade(token)
        expect(already.status).toBe(400)
        expect(already.body.error).toEqual({
          code: "VALIDATION_ERROR",
          message: "the account is already live; give a targetTier for a tier upgrade",
          param: "targetTier"
        })
        await advance(engine, 60)
        const tier = await upgrade(token, { targetTier: "growth", message: "more volume" })
        expect(tier.status).toBe(201)
        expect(tier.body).toEqual({ message: "Upgrade to growth requested; you will be contacted.", requestId: expect.stringMatching(/^upg_/) })
        expect(tier.body.requestId).not.toBe(live.body.requestId)
        // each request is recorded under the partner, with what was asked
        expect((await storeDocs(engine, "upgradeRequests", partnerId)).map((d) => d.body)).toEqual([
          { requestId: live.body.requestId, partnerId, uid: "u1", targetTier: null, message: null, createdAt: Date.parse("2026-11-23T08:00:00.000Z") },
          {
            requestId: tier.body.requestId,
            partnerId,
            uid: "u1",
            targetTier: "growth",
            message: "more volume",
            createdAt: Date.parse("2026-11-23T08:01:00.000Z")
          }
        ])
        expect((await upgrade(token, { targetTier: "starter" })).status).toBe(400)
        expect((await upgrade(token, { targetTier: "platinum" })).status).toBe(400)
      })

      it("on growth, a request for growth is refused naming the current tier; enterprise is filed", async () => {
        const o = await onboard(engine, "u1")
        // No API moves a tier (support does): the partner's record is set to growth directly.
        const doc = (await storeDocs(engine, "partners", "global")).find((d) => d.id === o.partnerId)
        if (doc === undefined) throw new Error("the portal partner is not stored")
        const growth: PartnerDoc = { ...(doc.body as PartnerDoc), tier: "growth" }
        await engine.runtime.runPromise(Store.use((store) => store.transact((tx) => Partners.put(tx, doc.id, doc.partition, doc.sortKey, growth))))
        const same = await upgrade(o.token, { targetTier: "growth" })
        expect(same.status).toBe(400)
        expect(same.body.error).toEqual({
          code: "VALIDATION_ERROR",
          message: "the account is already on growth; targetTier must be a higher tier",
          param: "targetTier"
        })
        const higher = await upgrade(o.token, { targetTier: "enterprise" })
        expect([higher.status, higher.body.message]).toEqual([201, "Upgrade to enterprise requested; you will be contacted."])
      })
    })

    describe("POST /api-keys/revoke", () => {
      const revoke = (token: string, apiKey: string, key = `revoke-${apiKey.slice(-8)}`) =>
        engine.call("POST", `${LIVE}/api-keys/revoke`, { headers: { ...bearer(token), "idempotency-key": key }, body: { apiKey } })

      it("refuses the only active key (403); with two, revokes one: 403 AUTH_REVOKED at once and account.frozen with revocation fields", async () => {
        const o = await onboard(engine, "u1")
        const only = await revoke(o.token, o.liveKey)
        expect([only.status, only.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect(only.body.error.message).toBe("this is the only active production key: contact support to revoke it")
        const second = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        expect((await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
        await advance(engine, 30)
        const r = await revoke(o.token, o.liveKey)
        expect(r.status).toBe(200)
        expect(r.body).toEqual({ message: "The API key is revoked.", apiKey: `pk_live_****${o.liveKey.slice(-4)}` })
        const refused = await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)
        expect([refused.status, refused.body.error.code]).toEqual([403, "AUTH_REVOKED"])
        expect(refused.body.error.message).toBe("the API key has been revoked")
        expect((await withKey(engine, second, "GET", `${LIVE}/wallet`)).status).toBe(200)
        const repeat = await revoke(o.token, o.liveKey, "another-key-1")
        expect([repeat.status, repeat.body]).toEqual([200, { message: "The API key is revoked.", apiKey: `pk_live_****${o.liveKey.slice(-4)}` }])
        const trace = String((await engine.admin("GET", "/_sim/trace")).body)
          .split("\n")
          .filter((l) => l.includes('"kind":"event"') && l.includes("account.frozen"))
          .map((l) => JSON.parse(l))
        expect(trace).toHaveLength(1)
        expect(trace[0]).toMatchObject({ partition: `${o.partnerId}:production` })
        expect(JSON.stringify(trace[0])).toContain('"revokedAt":"2026-11-23T08:00:30.000Z"')
        expect(JSON.stringify(trace[0])).toContain('"revokedBy":"u1@acme.test"')
        const frozen = (await eventsOf(engine)).filter((e) => e.event === "account.frozen")
        expect(frozen.map((e) => e.data)).toEqual([
          {
            externalId: null,
            frozen: true,
            reason: `API key pk_live_****${o.liveKey.slice(-4)} revoked`,
            revokedBy: "u1@acme.test",
            revokedAt: "2026-11-23T08:00:30.000Z"
          }
        ])
        // the session now inherits the remaining key
        expect((await session(engine, o.token)).status).toBe(200)
      })

      it("404 for another partner's key or an unknown one; 400 without Idempotency-Key or with a non-live key; 403 in the sandbox", async () => {
        const a = await onboard(engine, "ua")
        const b = await onboard(engine, "ub")
        const foreign = await revoke(a.token, b.liveKey)
        expect([foreign.status, foreign.body.error.message]).toEqual([404, "no such production key on this account"])
        const unknown = await revoke(a.token, "pk_live_doesnotexist")
        expect([unknown.status, unknown.body.error.message]).toEqual([404, "no such production key on this account"])
        // another partner's active key does not make a's only key revocable
        expect((await revoke(a.token, a.liveKey)).status).toBe(403)
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

      it("revoking a key that is not the account's current one leaves the current one shown and in use", async () => {
        const o = await onboard(engine, "u1")
        await advance(engine, 10)
        const extra = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        await advance(engine, 10)
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)
        expect((await revoke(o.token, extra)).status).toBe(200)
        const seen = await engine.call("GET", `${LIVE}/me`, { headers: bearer(o.token) })
        expect(seen.body.maskedKey).toBe(`pk_live_****${o.liveKey.slice(-4)}`)
      })

      it("the operator's extra key may be revoked while the portal's key remains", async () => {
        const o = await onboard(engine, "u1")
        const extra = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        expect((await revoke(o.token, extra)).status).toBe(200)
        const refused = await withKey(engine, extra, "GET", `${LIVE}/wallet`)
        expect([refused.status, refused.body.error.code]).toEqual([403, "AUTH_REVOKED"])
        expect((await withKey(engine, o.liveKey, "GET", `${LIVE}/wallet`)).status).toBe(200)
      })

      it("revoking the current key hands the account to its newest remaining key", async () => {
        const o = await onboard(engine, "u1")
        await advance(engine, 10)
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)
        await advance(engine, 10)
        const newest = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        expect((await revoke(o.token, o.liveKey)).status).toBe(200)
        const seen = await engine.call("GET", `${LIVE}/me`, { headers: bearer(o.token) })
        expect(seen.body.maskedKey).toBe(`pk_live_****${newest.slice(-4)}`)
      })

      it("a revoked key and a data key do not count as another active key: the last full key stays", async () => {
        const o = await onboard(engine, "u1")
        const extra = (await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)).body.liveKey as string
        expect((await withKey(engine, o.liveKey, "POST", `${LIVE}/api-keys/data-key`)).status).toBe(201)
        expect((await revoke(o.token, o.liveKey)).status).toBe(200)
        const last = await revoke(o.token, extra)
        expect([last.status, last.body.error.code]).toEqual([403, "FORBIDDEN"])
        expect((await withKey(engine, extra, "GET", `${LIVE}/wallet`)).status).toBe(200)
        expect((await session(engine, o.token)).status).toBe(200)
      })

      it("a data key alone does not make the only full key revocable", async () => {
        const o = await onboard(engine, "u1")
        expect((await withKey(engine, o.liveKey, "POST", `${LIVE}/api-keys/data-key`)).status).toBe(201)
        const only = await revoke(o.token, o.liveKey)
        expect([only.status, only.body.error.code]).toEqual([403, "FORBIDDEN"])
      })

      it("a revoked key is refused as an OAuth client secret with 403 AUTH_REVOKED", async () => {
        const o = await onboard(engine, "u1")
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/oauth`, { enabled: true })
        await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)
        expect((await revoke(o.token, o.liveKey)).status).toBe(200)
        const r = await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: o.liveKey } })
        expect([r.status, r.body.error.code, r.body.error.message]).toEqual([403, "AUTH_REVOKED", "the API key has been revoked"])
      })

      it("support issues an extra key only to a known partner", async () => {
        const r = await engine.admin("POST", "/_sim/partners/ptn_nope/keys")
        expect([r.status, r.body.error.code, r.body.error.message]).toEqual([404, "NOT_FOUND", "partner ptn_nope was not found"])
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
