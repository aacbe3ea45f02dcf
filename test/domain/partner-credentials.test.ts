/**
 * Which credential works where (domain/partners/decide-partner.ts): a key's prefix must be its base's, an unknown key
 * and another environment's key are the same 401, a revoked key is AUTH_REVOKED, a rotated one is no longer a key, a
 * suspended partner is 403 whatever the credential; the Principal carries the settings' markup (else the partner's)
 * and allowlist; an access token works on its own base until it expires and narrows to its scopes.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AccessTokenRecord,
  type ApiKeyRecord,
  activeKey,
  authenticateKey,
  authenticateToken,
  decideBootstrap,
  KEY_PREFIX,
  type PartnerRecord,
  refusePrefix
} from "../../engine/domain/partners/decide-partner.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const plan = decideBootstrap({ businessName: "Acme", email: "ops@acme.test", tier: "growth", markupBps: 25 }, OPEN_AT, {
  partnerId: "ptn_1",
  sandboxKey: { raw: `${KEY_PREFIX.sandbox}aaaa1111`, hash: "h-sandbox" },
  liveKey: { raw: `${KEY_PREFIX.production}bbbb2222`, hash: "h-live" }
})
const partner: PartnerRecord = plan.partner
const [sandboxKey, liveKey] = plan.keys as [ApiKeyRecord, ApiKeyRecord]
const token = (over: Partial<AccessTokenRecord> = {}): AccessTokenRecord => ({
  environment: "production",
  kind: "full",
  scopes: ["market:read"],
  expiresAt: OPEN_AT + 900_000,
  ...over
})

describe("key prefixes per base", () => {
  it("the sandbox base takes sk_sandbox_ only; production takes pk_live_, pk_data_ and svc_oauth_", () => {
    const suffix = fc.stringMatching(/^[A-Za-z0-9]{1,24}$/)
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(KEY_PREFIX)), suffix, (prefix, rest) => {
        const onSandbox = refusePrefix(prefix + rest, "sandbox") === undefined
        const onProduction = refusePrefix(prefix + rest, "production") === undefined
        return onSandbox === (prefix === KEY_PREFIX.sandbox) && onProduction === (prefix !== KEY_PREFIX.sandbox)
      })
    )
    expect(refusePrefix("garbage", "production")?.message).toContain("pk_live_ or pk_data_ or svc_oauth_")
  })

  it("the planted defect (E-190) lets another base's key past the prefix check and the environment check", () => {
    expect(refusePrefix(`${KEY_PREFIX.sandbox}x`, "production", true)).toBeUndefined()
    expect(codeOf(authenticateKey({ key: sandboxKey, partner, settings: undefined }, "production"))).toBe("AUTH_INVALID")
    expect(accepted(authenticateKey({ key: sandboxKey, partner, settings: undefined }, "production", true)).environment).toBe("production")
  })
})

describe("a presented key", () => {
  it("unknown, and another environment's, are the same 401", () => {
    expect(codeOf(authenticateKey(undefined, "sandbox"))).toBe("AUTH_INVALID")
    const wrongBase = authenticateKey({ key: liveKey, partner, settings: undefined }, "sandbox")
    expect([codeOf(wrongBase), wrongBase instanceof Error && wrongBase.message]).toEqual(["AUTH_INVALID", "the API key is not recognised"])
  })

  it("revoked is AUTH_REVOKED, rotated is AUTH_INVALID, a suspended partner is AUTH_SUSPENDED (in that order)", () => {
    const at = (key: ApiKeyRecord, p: PartnerRecord) => codeOf(authenticateKey({ key, partner: p, settings: undefined }, "production"))
    const suspended: PartnerRecord = { ...partner, status: "suspended" }
    expect(at({ ...liveKey, status: "revoked" }, suspended)).toBe("AUTH_REVOKED")
    expect(at({ ...liveKey, status: "rotated" }, suspended)).toBe("AUTH_INVALID")
    expect(at(liveKey, suspended)).toBe("AUTH_SUSPENDED")
    expect(at(liveKey, partner)).toBe("accepted")
  })

  it("stands for its partner in its environment: the settings' markup over the partner's, the allowlist only when set", () => {
    const plain = accepted(authenticateKey({ key: liveKey, partner, settings: undefined }, "production"))
    expect(plain).toEqual({
      partnerId: "ptn_1",
      environment: "production",
      keyKind: "full",
      tier: "growth",
      markupBps: 25,
      partition: "ptn_1:production",
      credential: { kind: "api_key", last4: "2222" }
    })
    const set = accepted(authenticateKey({ key: liveKey, partner, settings: { markupBps: 40, ipAllowlist: ["10.0.0.0/8"] } }, "production"))
    expect([set.markupBps, set.ipAllowlist]).toEqual([40, ["10.0.0.0/8"]])
    expect(accepted(authenticateKey({ key: liveKey, partner, settings: { markupBps: 0, ipAllowlist: [] } }, "production"))).not.toHaveProperty("ipAllowlist")
  })

  it("a data key is a data_key credential", () => {
    const dataKey = { ...activeKey("ptn_1", "production", { raw: "pk_data_cccc3333", hash: "h-data" }, OPEN_AT), kind: "data" as const }
    expect(accepted(authenticateKey({ key: dataKey, partner, settings: undefined }, "production")).credential).toEqual({ kind: "data_key", last4: "3333" })
  })
})

describe("an access token", () => {
  const found = (t: AccessTokenRecord, key = liveKey) => ({ token: t, key, partner, settings: undefined })

  it("works strictly before it expires, on its own base only", () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (offset) => {
        const now = OPEN_AT + 900_000 + offset
        return (codeOf(authenticateToken(found(token()), "production", now)) === "accepted") === offset < 0
      })
    )
    expect(codeOf(authenticateToken(found(token({ environment: "sandbox" })), "production", OPEN_AT))).toBe("AUTH_INVALID")
    expect(codeOf(authenticateToken(undefined, "production", OPEN_AT))).toBe("AUTH_INVALID")
  })

  it("narrows its parent key to its scopes, and dies with the key", () => {
    const principal = accepted(authenticateToken(found(token()), "production", OPEN_AT))
    expect([principal.tokenScopes, principal.credential?.kind]).toEqual([["market:read"], "oauth_token"])
    expect(codeOf(authenticateToken(found(token(), { ...liveKey, status: "revoked" }), "production", OPEN_AT))).toBe("AUTH_REVOKED")
  })
})
