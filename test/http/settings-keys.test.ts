/**
 * Partner settings (GET/PATCH /settings, D-065) and the data key (POST /api-keys/data-key): per-environment
 * settings, the markup reaching quotes at once, validation, and a data key's rights, bucket and rotation.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { KeyService } from "../../engine/app/keys/service.ts"
import { PartnerService } from "../../engine/app/partners/service.ts"
import { SettingsService } from "../../engine/app/settings/service.ts"
import { LIVE, partnerOf, SANDBOX, storeDocs } from "./accounts-kit.ts"
import { engineOn, type startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL

for (const store of ["memory", "postgres"] as const) {
  const skip = store === "postgres" && DATABASE_URL === undefined

  describe.skipIf(skip)(`settings (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
    })
    afterEach(() => dispose())

    it("answers the defaults per environment: the partner's markup, no address, empty allowlist, OAuth off", async () => {
      const r = await p.sb("GET", "/settings")
      expect(r.status).toBe(200)
      expect(r.body).toEqual({
        partnerId: p.keys.partnerId,
        businessName: expect.any(String),
        tier: expect.stringMatching(/^(starter|growth|enterprise)$/),
        environment: "sandbox",
        markupBps: 0,
        notificationEmail: null,
        oauthEnabled: false,
        ipAllowlist: [],
        updatedAt: "2026-11-23T08:00:00.000Z"
      })
      expect((await p.call("production", "GET", "/settings")).body.environment).toBe("production")
    })

    it("PATCH changes only the fields sent, in its environment only, and stamps updatedAt with the engine clock", async () => {
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 90 })
      const r = await p.sb("PATCH", "/settings", { markupBps: 150, ipAllowlist: ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7", "127.0.0.0/8"] })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({
        markupBps: 150,
        notificationEmail: null,
        ipAllowlist: ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7", "127.0.0.0/8"],
        updatedAt: "2026-11-23T08:01:30.000Z"
      })
      const mail = await p.sb("PATCH", "/settings", { notificationEmail: "ops@example.com" })
      expect(mail.body).toMatchObject({
        markupBps: 150,
        notificationEmail: "ops@example.com",
        ipAllowlist: ["10.0.0.0/8", "2001:db8::/32", "192.168.1.7", "127.0.0.0/8"]
      })
      expect((await p.sb("GET", "/settings")).body).toEqual(mail.body)
      expect((await p.sb("PATCH", "/settings", { notificationEmail: null })).body.notificationEmail).toBeNull()
      expect((await p.call("production", "GET", "/settings")).body).toMatchObject({ markupBps: 0, notificationEmail: null, ipAllowlist: [] })
    })

    it("a non-empty ipAllowlist admits only callers inside its ranges, in its environment only (D-127)", async () => {
      const from = (remoteAddress: string, env: "sandbox" | "production" = "sandbox") =>
        engine.call("GET", `${env === "sandbox" ? SANDBOX : LIVE}/wallet`, {
          headers: { "x-api-key": env === "sandbox" ? p.keys.sandboxKey : p.keys.liveKey },
          remoteAddress
        })
      expect((await p.sb("PATCH", "/settings", { ipAllowlist: ["10.0.0.0/8", "2001:db8::/32"] })).status).toBe(200)
      expect((await from("10.20.30.40")).status).toBe(200)
      expect((await from("::ffff:10.20.30.40")).status).toBe(200)
      expect((await from("2001:db8:0:1::7")).status).toBe(200)
      const outside = await from("11.0.0.1")
      expect([outside.status, outside.body.error.code]).toEqual([403, "FORBIDDEN"])
      expect(outside.body.error.message).toContain("11.0.0.1")
      expect(outside.headers.get("x-ratelimit-remaining")).not.toBeNull()
      expect((await from("2001:db9::1")).status).toBe(403)
      // The in-process default caller is loopback, outside these ranges; production's own (empty) list admits anyone.
      expect((await p.sb("GET", "/wallet")).status).toBe(403)
      expect((await from("11.0.0.1", "production")).status).toBe(200)
      // Emptying the list (from an allowed address) opens the keys again at once.
      const reopen = await engine.call("PATCH", `${SANDBOX}/settings`, {
        headers: { "x-api-key": p.keys.sandboxKey, "idempotency-key": "reopen-allowlist" },
        body: { ipAllowlist: [] },
        remoteAddress: "10.0.0.1"
      })
      expect(reopen.status).toBe(200)
      expect((await from("11.0.0.1")).status).toBe(200)
    })

    it("refuses bad bodies with 400 and changes nothing", async () => {
      for (const body of [
        {},
        { markupBps: 201 },
        { markupBps: -1 },
        { markupBps: 1.5 },
        { notificationEmail: "nope" },
        { ipAllowlist: ["300.1.1.1"] },
        { ipAllowlist: ["10.0.0.0/33"] },
        { ipAllowlist: ["hello"] },
        { ipAllowlist: Array(51).fill("10.0.0.1") }
      ]) {
        const r = await p.sb("PATCH", "/settings", body)
        expect(r.status, JSON.stringify(body)).toBe(400)
        expect(r.body.error.code).toMatch(/VALIDATION_ERROR|MISSING_PARAM/)
      }
      expect((await p.sb("GET", "/settings")).body.updatedAt).toBe("2026-11-23T08:00:00.000Z")
    })

    it("says which fields an empty update may carry", async () => {
      const r = await p.sb("PATCH", "/settings", {})
      expect(r.status).toBe(400)
      expect(r.body.error.message).toContain("at least one of markupBps, notificationEmail, ipAllowlist")
    })

    it("names the allowlist entry it refuses, with param ipAllowlist", async () => {
      const r = await p.sb("PATCH", "/settings", { ipAllowlist: ["10.0.0.0/8", "10.0.0.0/33"] })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "ipAllowlist" })
      expect(r.body.error.message).toContain(`"10.0.0.0/33" is not an IP address or CIDR range`)
    })

    it("a new markup is charged on the very next quote (the cached principal is invalidated)", async () => {
      const before = (await p.sb("GET", "/quote/SCOM?side=BUY&quantity=100")).body
      expect((await p.sb("PATCH", "/settings", { markupBps: 100 })).status).toBe(200)
      const after = (await p.sb("GET", "/quote/SCOM?side=BUY&quantity=100")).body
      // Both fees are on their own gross; the markup adds 1% of gross, give or take a cent of rounding each.
      const added = after.estimatedFee - (before.estimatedFee / before.estimatedGross) * after.estimatedGross
      expect(Math.abs(added - after.estimatedGross * 0.01)).toBeLessThanOrEqual(0.02)
      expect(after.estimatedFee).toBeGreaterThan(0)
      const live = (await p.call("production", "GET", "/quote/SCOM?side=BUY&quantity=100")).body
      expect(Math.abs(live.estimatedFee / live.estimatedGross - before.estimatedFee / before.estimatedGross)).toBeLessThan(0.0005)
    })

    it("the settings service answers NOT_FOUND for a principal whose partner is not on file", async () => {
      const ghost = { partnerId: "ptn_ghost", environment: "sandbox", keyKind: "full", tier: "starter", markupBps: 0, partition: "ptn_ghost:sandbox" } as const
      const exit = await engine.runtime.runPromise(Effect.exit(SettingsService.use((s) => s.get(ghost))))
      expect(JSON.stringify(exit)).toContain("partner not found")
      expect(JSON.stringify(exit)).toContain("NOT_FOUND")
    })

    it("needs a key: 401 without one", async () => {
      const r = await engine.call("GET", `${SANDBOX}/settings`)
      expect(r.status).toBe(401)
      expect(r.body.error.code).toBe("AUTH_MISSING")
    })
  })

  describe.skipIf(skip)(`data key (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let p: Awaited<ReturnType<typeof partnerOf>>
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      p = await partnerOf(engine)
    })
    afterEach(() => dispose())
    const withKey = (key: string, method: string, path: string, base = LIVE) =>
      engine.call(method, `${base}${path}`, {
        headers: { authorization: `Bearer ${key}`, ...(method === "GET" ? {} : { "idempotency-key": `dk-${path}-${Math.round(performance.now() * 1000)}` }) }
      })

    it("is issued once with a pk_data_ prefix and reads market data on production", async () => {
      const r = await p.call("production", "POST", "/api-keys/data-key")
      expect(r.status).toBe(201)
      expect(r.body).toEqual({ dataKey: expect.stringMatching(/^pk_data_/), note: expect.any(String) })
      const stocks = await withKey(r.body.dataKey, "GET", "/stocks")
      expect(stocks.status).toBe(200)
    })

    it("is GET-only on the market-data families: 403 FORBIDDEN elsewhere and for any mutation", async () => {
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey
      for (const [method, path] of [
        ["GET", "/users"],
        ["GET", "/wallet"],
        ["GET", "/settings"],
        ["POST", "/api-keys/data-key"],
        ["PATCH", "/settings"]
      ] as const) {
        const r = await withKey(dataKey, method, path)
        expect(r.status, `${method} ${path}`).toBe(403)
        expect(r.body.error.code).toBe("FORBIDDEN")
      }
    })

    it("shares the parent key's rate-limit bucket", async () => {
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey
      const first = await withKey(dataKey, "GET", "/stocks")
      const parent = await p.call("production", "GET", "/stocks")
      expect(first.headers.get("x-ratelimit-remaining")).toMatch(/^\d+$/)
      expect(Number(parent.headers.get("x-ratelimit-remaining"))).toBe(Number(first.headers.get("x-ratelimit-remaining")) - 1)
    })

    it("rotation breaks the previous data key at once (401) and leaves the full key working", async () => {
      const old = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey
      expect((await withKey(old, "GET", "/stocks")).status).toBe(200)
      const fresh = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey
      expect(fresh).not.toBe(old)
      const r = await withKey(old, "GET", "/stocks")
      expect(r.status).toBe(401)
      expect(r.body.error.code).toBe("AUTH_INVALID")
      expect((await withKey(fresh, "GET", "/stocks")).status).toBe(200)
      expect((await p.call("production", "GET", "/wallet")).status).toBe(200)
    })

    it("rotation marks the previous key's record rotated; each record keeps the key's last four characters", async () => {
      const old = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey as string
      const fresh = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey as string
      const { createHash } = await import("node:crypto")
      const records = await storeDocs(engine, "apiKeys", "global")
      const recordOf = (raw: string) => records.find((k) => k.id === createHash("sha256").update(raw).digest("hex"))?.body
      expect(recordOf(old)).toMatchObject({ kind: "data", status: "rotated", environment: "production", last4: old.slice(-4) })
      expect(recordOf(fresh)).toMatchObject({ kind: "data", status: "active", environment: "production", last4: fresh.slice(-4) })
      // A third rotation leaves the first as it was and rotates the second.
      await p.call("production", "POST", "/api-keys/data-key")
      const after = await storeDocs(engine, "apiKeys", "global")
      expect(
        after
          .filter((k) => (k.body as { kind: string; status: string }).kind === "data")
          .map((k) => (k.body as { status: string }).status)
          .sort()
      ).toEqual(["active", "rotated", "rotated"])
    })

    it("the key service itself refuses a data key asking for a data key (the gateway refuses it first)", async () => {
      const principal = {
        partnerId: p.keys.partnerId,
        environment: "production",
        keyKind: "data",
        tier: "starter",
        markupBps: 0,
        partition: p.partition("production")
      } as const
      const exit = await engine.runtime.runPromise(Effect.exit(KeyService.use((keys) => keys.rotateDataKey(principal))))
      expect(exit._tag).toBe("Failure")
      expect(JSON.stringify(exit)).toContain("FORBIDDEN")
      expect((await storeDocs(engine, "apiKeys", "global")).filter((k) => (k.body as { kind: string }).kind === "data")).toEqual([])
    })

    it("is not offered in the sandbox, and a data key never authenticates on the sandbox base", async () => {
      const r = await p.sb("POST", "/api-keys/data-key")
      expect(r.status).toBe(403)
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey
      expect((await withKey(dataKey, "GET", "/stocks", SANDBOX)).status).toBe(401)
    })

    it("is stored only as its SHA-256 hash: the raw key is nowhere in the store or the trace", async () => {
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey as string
      const keys = await storeDocs(engine, "apiKeys", "global")
      expect(keys.length).toBeGreaterThanOrEqual(3)
      expect(JSON.stringify(keys)).not.toContain(dataKey)
      expect(JSON.stringify(keys)).not.toContain(p.keys.liveKey)
      expect(JSON.stringify(keys)).not.toContain(p.keys.sandboxKey)
      const { createHash } = await import("node:crypto")
      expect(keys.map((k) => k.id)).toContain(createHash("sha256").update(dataKey).digest("hex"))
    })

    it("a sandbox key on production and a production key on sandbox: 401", async () => {
      expect((await withKey(p.keys.sandboxKey, "GET", "/wallet", LIVE)).status).toBe(401)
      expect((await withKey(p.keys.liveKey, "GET", "/wallet", SANDBOX)).status).toBe(401)
    })

    it("a key of the base's prefix that was never issued is not recognised (401 AUTH_INVALID); one of another prefix names the expected one", async () => {
      for (const [key, base, message] of [
        ["pk_live_NEVERISSUEDNEVERISSUEDNEVERISSUED", LIVE, "the API key is not recognised"],
        ["pk_data_NEVERISSUEDNEVERISSUEDNEVERISSUED", LIVE, "the API key is not recognised"],
        ["sk_sandbox_NEVERISSUEDNEVERISSUEDNEVERISSU", SANDBOX, "the API key is not recognised"],
        [p.keys.liveKey, SANDBOX, "this key is not valid on the sandbox base (expected a key starting sk_sandbox_)"]
      ] as const) {
        const r = await withKey(key, "GET", "/stocks", base)
        expect([r.status, r.body.error.code, r.body.error.message], key).toEqual([401, "AUTH_INVALID", message])
      }
    })

    it("the principal a key resolves to names its credential as the audit log does: data_key or api_key, with the key's last four", async () => {
      const dataKey = (await p.call("production", "POST", "/api-keys/data-key")).body.dataKey as string
      const principalOf = (key: string) => engine.runtime.runPromise(PartnerService.use((s) => s.authenticate(key, "production")))
      const data = await principalOf(dataKey)
      expect(data).toEqual({
        partnerId: p.keys.partnerId,
        environment: "production",
        keyKind: "data",
        tier: "starter",
        markupBps: 0,
        partition: p.partition("production"),
        credential: { kind: "data_key", last4: dataKey.slice(-4) }
      })
      expect((await principalOf(p.keys.liveKey)).credential).toEqual({ kind: "api_key", last4: p.keys.liveKey.slice(-4) })
    })
  })
}
