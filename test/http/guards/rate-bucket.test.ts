/**
 * One rate-limit bucket per partner identity and environment, through HTTP (issue 9, item 6), on the memory store and
 * (DATABASE_URL set) on PostgreSQL, every answer checked against the contract:
 * - the full key, a second full key issued during a rotation, the data key (rotated midway) and an OAuth token all
 *   draw on one window: admitted answers count X-RateLimit-Remaining down by exactly one each, whatever the
 *   credential, and the 101st request of a starter partner is 429 on any of them;
 * - the bucket survives key rotation (the revoked key, the rotated-out data key and the re-registered sandbox key
 *   leave the count where it was, the new key goes on from it);
 * - invalid credentials consume nothing: an unknown key, a key of the other environment, a forged or expired OAuth
 *   token, a revoked key and a rotated-out key answer 401/403 without rate-limit headers, leave the count untouched,
 *   and are refused for what they are (not 429) even while the partner's window is full.
 */
import { Effect, Exit, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { withTemporaryDatabase } from "../../../engine/store/pg-temp-db.ts"
import { LIVE, SANDBOX } from "../accounts-kit.ts"
import { type Reply, startEngine } from "../harness.ts"
import { tagsFor } from "../../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL
type Engine = ReturnType<typeof startEngine>

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && (DATABASE_URL === undefined || DATABASE_URL === ""))(
    `one rate-limit bucket per partner (${store})`,
    tagsFor(store),
    () => {
      let engine: Engine
      let scope = Effect.runSync(Scope.make())
      beforeEach(async () => {
        if (store === "memory") {
          engine = startEngine()
          return
        }
        scope = Effect.runSync(Scope.make())
        const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
        engine = startEngine({ databaseUrl: url })
      }, 60_000)
      afterEach(async () => {
        await engine.dispose()
        await Effect.runPromise(Scope.close(scope, Exit.void))
      }, 60_000)

      const idToken = async (uid: string) => {
        const r = await engine.admin("POST", "/_sim/idp/tokens", { uid, email: `${uid}@acme.test`, emailVerified: true })
        expect(r.status).toBe(200)
        return r.body.idToken as string
      }
      /** A partner through the portal (starter), so its keys can be revoked and re-registered like a real one's. */
      const onboard = async (uid: string) => {
        const token = await idToken(uid)
        const applied = await engine.call("POST", `${LIVE}/apply`, {
          headers: bearer(token),
          body: { businessName: "Acme Wallet", email: "ops@acme.test", country: "KE" }
        })
        expect(applied.status).toBe(201)
        const registered = await engine.call("POST", "/api/sandbox/v1/register", {
          headers: bearer(token),
          body: { businessName: "Acme Wallet", email: "ops@acme.test" }
        })
        expect(registered.status).toBe(201)
        const approved = await engine.admin("POST", `/_sim/applications/${applied.body.applicationId}/approve`)
        expect(approved.status).toBe(200)
        return { token, sandboxKey: registered.body.apiKey as string, liveKey: approved.body.liveKey as string, partnerId: approved.body.partnerId as string }
      }

      /** Follows one partner's window: every admitted answer must take exactly one slot, every refused credential none. */
      const meter = (limit: number) => {
        let remaining = limit
        let admitted = 0
        return {
          get admitted() {
            return admitted
          },
          get remaining() {
            return remaining
          },
          counted(r: Reply, what: string) {
            expect(r.status, what).toBeLessThan(300)
            expect(r.headers.get("x-ratelimit-limit"), what).toBe(String(limit))
            expect(r.headers.get("x-ratelimit-remaining"), what).toBe(String(remaining - 1))
            remaining -= 1
            admitted += 1
          },
          refused(r: Reply, status: number, code: string, what: string) {
            expect([r.status, r.body.error.code], what).toEqual([status, code])
            expect(r.headers.get("x-ratelimit-limit"), what).toBeNull()
            expect(r.headers.get("x-ratelimit-remaining"), what).toBeNull()
          }
        }
      }

      it("production: full keys, data key and OAuth token share one window of 100 that survives rotation; invalid credentials take nothing", async () => {
        const o = await onboard("u1")
        expect((await engine.admin("POST", `/_sim/partners/${o.partnerId}/oauth`, { enabled: true })).status).toBe(200)
        // Token issuance authenticates by client secret, not by key: it is not a keyed call of the window.
        const tokenFor = async (secret: string) => {
          const issued = await engine.call("POST", `${LIVE}/oauth/token`, { body: { grant_type: "client_credentials", client_secret: secret } })
          expect(issued.status).toBe(200)
          return issued.body.access_token as string
        }
        const oauth1 = await tokenFor(o.liveKey)
        const m = meter(100)
        const get = (credential: string, what: string) =>
          engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(credential) }).then((r) => m.counted(r, what))
        let n = 0
        const rotateDataKey = async (withKey: string) => {
          const r = await engine.call("POST", `${LIVE}/api-keys/data-key`, { headers: { ...bearer(withKey), "idempotency-key": `data-key-${++n}` } })
          m.counted(r, "data key rotation")
          return r.body.dataKey as string
        }
        const invalid = async (label: string) => {
          m.refused(
            await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer("pk_live_doesnotexist0000") }),
            401,
            "AUTH_INVALID",
            `${label}: unknown key`
          )
          m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(o.sandboxKey) }), 401, "AUTH_INVALID", `${label}: sandbox key`)
          m.refused(
            await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer("svc_oauth_forged0000") }),
            401,
            "AUTH_INVALID",
            `${label}: forged token`
          )
        }

        const dataKey1 = await rotateDataKey(o.liveKey)
        await invalid("first")
        for (let i = 0; i < 10; i++) {
          await get(o.liveKey, `full key ${i}`)
          await get(dataKey1, `data key ${i}`)
          await get(oauth1, `oauth token ${i}`)
        }
        expect(m.remaining).toBe(69)

        // Rotation: a second full key (issued as support does), the first revoked through the portal, the data key
        // rotated with the new key, a new token from the new key (a token dies with its key, D-124). The revoke (ID
        // token), the token issuance (client secret) and the old credentials take nothing.
        const second = await engine.admin("POST", `/_sim/partners/${o.partnerId}/keys`)
        expect(second.status).toBe(201)
        const liveKey2 = second.body.liveKey as string
        await get(liveKey2, "second full key, first use")
        const revoked = await engine.call("POST", `${LIVE}/api-keys/revoke`, {
          headers: { ...bearer(o.token), "idempotency-key": "revoke-first-key" },
          body: { apiKey: o.liveKey }
        })
        expect(revoked.status).toBe(200)
        const dataKey2 = await rotateDataKey(liveKey2)
        const oauth = await tokenFor(liveKey2)
        for (let i = 0; i < 5; i++) {
          m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(oauth1) }), 403, "AUTH_REVOKED", "the revoked key's token")
          m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(o.liveKey) }), 403, "AUTH_REVOKED", "revoked full key")
          m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(dataKey1) }), 401, "AUTH_INVALID", "rotated-out data key")
        }
        await invalid("after rotation")
        const credentials = [liveKey2, dataKey2, oauth]
        while (m.remaining > 0) await get(credentials[m.remaining % 3] as string, `after rotation, ${m.remaining} left`)
        expect(m.admitted).toBe(100)

        // The window is full: every valid credential is refused with 429, each refusal counted against nobody.
        for (const credential of credentials) {
          const r = await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(credential) })
          expect([r.status, r.body.error.code]).toEqual([429, "RATE_LIMITED"])
          expect(r.body.error.limit).toBe(100)
          expect(r.headers.get("x-ratelimit-remaining")).toBe("0")
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        }
        // Invalid credentials are refused for what they are, never 429: they are not this partner's.
        await invalid("window full")
        m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(o.liveKey) }), 403, "AUTH_REVOKED", "revoked key, window full")
        // An expired token takes nothing either, and the window frees on the engine clock.
        expect((await engine.admin("POST", "/_sim/clock/advance", { seconds: 900 })).status).toBe(200)
        m.refused(await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(oauth) }), 401, "AUTH_INVALID", "expired token")
        const freed = await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(liveKey2) })
        expect([freed.status, freed.headers.get("x-ratelimit-remaining")]).toEqual([200, "99"])
      })

      it("sandbox: re-registering rotates the key and the new key goes on from the old key's count (300); the old key takes nothing", async () => {
        const o = await onboard("u2")
        const m = meter(300)
        const get = (key: string, what: string) => engine.call("GET", `${SANDBOX}/stocks?limit=1`, { headers: bearer(key) }).then((r) => m.counted(r, what))
        for (let i = 0; i < 7; i++) await get(o.sandboxKey, `first key ${i}`)
        const again = await engine.call("POST", "/api/sandbox/v1/register", {
          headers: bearer(o.token),
          body: { businessName: "Acme Wallet", email: "ops@acme.test" }
        })
        expect([again.status, again.body.existing]).toEqual([201, true])
        const key2 = again.body.apiKey as string
        for (let i = 0; i < 20; i++) {
          m.refused(await engine.call("GET", `${SANDBOX}/stocks?limit=1`, { headers: bearer(o.sandboxKey) }), 401, "AUTH_INVALID", "old sandbox key")
          m.refused(await engine.call("GET", `${SANDBOX}/stocks?limit=1`, { headers: bearer(o.liveKey) }), 401, "AUTH_INVALID", "live key on the sandbox")
        }
        await get(key2, "new key")
        expect(m.remaining).toBe(292)
        // And the production window of the same partner is its own: untouched by all of the above.
        const live = await engine.call("GET", `${LIVE}/stocks?limit=1`, { headers: bearer(o.liveKey) })
        expect([live.headers.get("x-ratelimit-limit"), live.headers.get("x-ratelimit-remaining")]).toEqual(["100", "99"])
      })
    }
  )
}
