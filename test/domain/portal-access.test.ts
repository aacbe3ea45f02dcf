/**
 * Short-lived access (domain/partners/decide-access.ts) and the operator's partner switches (decide-partner.ts): a
 * portal session needs an active partner with a live key, checked in a fixed order; client credentials need a current
 * production key of an active, OAuth-enabled partner, and narrow the token to scopes the key has; tokens inherit their
 * parent key and expire on the engine clock; suspension and the OAuth switch refuse an unknown partner.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  acceptClient,
  acceptSession,
  checkGrant,
  type ClientState,
  decideClientToken,
  decideOAuth,
  decideSession,
  FULL_SCOPES,
  OAUTH_TTL_SECONDS,
  SESSION_TTL_SECONDS,
  scopesOf
} from "../../engine/domain/partners/decide-access.ts"
import { activeKey, activePartner, type ApiKeyRecord, decideStatus, KEY_PREFIX, type PartnerRecord } from "../../engine/domain/partners/decide-partner.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const partner = (status?: "active" | "suspended"): PartnerRecord => ({
  partnerId: "ptn_1",
  businessName: "Acme",
  email: "ops@acme.test",
  tier: "growth",
  markupBps: 15,
  createdAt: 0,
  ...(status === undefined ? {} : { status })
})
const live = (status: ApiKeyRecord["status"] = "active"): ApiKeyRecord => ({
  ...activeKey("ptn_1", "production", { raw: `${KEY_PREFIX.production}abcd1234`, hash: "h-live" }, 0),
  status
})
const token = { raw: `${KEY_PREFIX.token}tok5678`, hash: "h-token" }

describe("a portal session", () => {
  it("is refused in order: no partner yet, partner gone, suspended, no live key, revoked key", () => {
    expect(codeOf(acceptSession({ partnerId: null, partner: partner("suspended"), key: live("revoked") }))).toBe("FORBIDDEN")
    expect(codeOf(acceptSession({ partnerId: "ptn_1", partner: undefined, key: live("revoked") }))).toBe("FORBIDDEN")
    expect(codeOf(acceptSession({ partnerId: "ptn_1", partner: partner("suspended"), key: live("revoked") }))).toBe("AUTH_SUSPENDED")
    expect(codeOf(acceptSession({ partnerId: "ptn_1", partner: partner(), key: undefined }))).toBe("FORBIDDEN")
    expect(codeOf(acceptSession({ partnerId: "ptn_1", partner: partner("active"), key: live("revoked") }))).toBe("AUTH_REVOKED")
    expect(accepted(acceptSession({ partnerId: "ptn_1", partner: partner(), key: live() }))).toEqual(live())
  })

  it("gives the member an hour's token with the full key's scopes, inheriting from the live key", () => {
    const { token: record, answer } = decideSession(live(), { uid: "uid_1", email: "m@acme.test" }, OPEN_AT, { token, sessionId: "ses_1" })
    expect(record).toEqual({
      tokenHash: "h-token",
      partnerId: "ptn_1",
      environment: "production",
      parentKeyHash: "h-live",
      kind: "full",
      scopes: FULL_SCOPES,
      expiresAt: OPEN_AT + SESSION_TTL_SECONDS * 1000
    })
    expect(answer).toMatchObject({ accessToken: token.raw, tokenType: "Bearer", expiresIn: 3600, keyType: "full", sessionId: "ses_1" })
    expect(answer.member).toMatchObject({ id: "mbr_uid_1", email: "m@acme.test", roleIds: ["owner"], status: "ACTIVE", uid: "uid_1" })
    expect(answer.permissions).toEqual([...FULL_SCOPES])
  })
})

describe("client credentials", () => {
  const state = (over: Partial<ClientState> = {}): ClientState => ({ key: live(), partner: partner(), oauthEnabled: true, ...over })

  it("checks the form before any lookup: grant_type, then the secret", () => {
    expect(codeOf(checkGrant({ grantType: undefined, clientSecret: undefined, scope: undefined }))).toBe("MISSING_PARAM")
    expect(codeOf(checkGrant({ grantType: "password", clientSecret: "s", scope: undefined }))).toBe("VALIDATION_ERROR")
    expect(codeOf(checkGrant({ grantType: "client_credentials", clientSecret: "", scope: undefined }))).toBe("MISSING_PARAM")
    expect(checkGrant({ grantType: "client_credentials", clientSecret: "s", scope: undefined })).toBe("s")
  })

  it("an unknown, rotated or sandbox key is the same 401; revoked 401 AUTH_REVOKED; then the partner, then the switch", () => {
    const sandbox = { ...live(), environment: "sandbox" as const }
    for (const key of [undefined, live("rotated"), sandbox]) expect(codeOf(acceptClient(state({ key }), undefined))).toBe("AUTH_INVALID")
    expect(codeOf(acceptClient(state({ key: live("revoked"), partner: partner("suspended"), oauthEnabled: false }), undefined))).toBe("AUTH_REVOKED")
    expect(codeOf(acceptClient(state({ partner: partner("suspended"), oauthEnabled: false }), undefined))).toBe("AUTH_SUSPENDED")
    expect(codeOf(acceptClient(state({ partner: undefined }), undefined))).toBe("FORBIDDEN")
    expect(codeOf(acceptClient(state({ oauthEnabled: false }), "root"))).toBe("FORBIDDEN")
  })

  it("grants exactly the scopes asked for when the key has them all (each once), all of them when none are asked", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...FULL_SCOPES, "root", "admin:write"), { maxLength: 6 }),
        fc.constantFrom("full" as const, "data" as const),
        (asked, kind) => {
          const allowed = scopesOf(kind)
          const result = acceptClient(state({ key: { ...live(), kind } }), asked.join(" "))
          if (asked.some((s) => !allowed.includes(s))) return codeOf(result) === "VALIDATION_ERROR"
          const { scopes } = accepted(result)
          return JSON.stringify(scopes) === JSON.stringify(asked.length === 0 ? allowed : [...new Set(asked)])
        }
      )
    )
  })

  it("the token lives 15 minutes and answers with the RFC 6749 fields", () => {
    const { token: record, answer } = decideClientToken({ key: live(), scopes: ["market:read"] }, OPEN_AT, token)
    expect(record).toMatchObject({ parentKeyHash: "h-live", scopes: ["market:read"], expiresAt: OPEN_AT + OAUTH_TTL_SECONDS * 1000 })
    expect(answer).toEqual({ access_token: token.raw, token_type: "Bearer", expires_in: 900, scope: "market:read" })
  })
})

describe("the operator's partner switches", () => {
  it("suspension and reactivation keep the partner's record otherwise; an unknown partner 404", () => {
    expect(codeOf(decideStatus(undefined, { partnerId: "ptn_x", status: "suspended" }))).toBe("NOT_FOUND")
    const suspended = accepted(decideStatus(partner(), { partnerId: "ptn_1", status: "suspended" }))
    expect(suspended.partner).toEqual({ ...partner(), status: "suspended" })
    expect(codeOf(activePartner(suspended.partner))).toBe("AUTH_SUSPENDED")
    expect(codeOf(activePartner(accepted(decideStatus(suspended.partner, { partnerId: "ptn_1", status: "active" })).partner))).toBe("accepted")
  })

  it("the OAuth switch records who and when; an unknown partner 404", () => {
    expect(codeOf(decideOAuth(undefined, { partnerId: "ptn_x", enabled: true }, OPEN_AT))).toBe("NOT_FOUND")
    expect(accepted(decideOAuth(partner(), { partnerId: "ptn_1", enabled: false }, OPEN_AT))).toEqual({
      client: { partnerId: "ptn_1", enabled: false, updatedAt: OPEN_AT },
      answer: { partnerId: "ptn_1", oauthEnabled: false }
    })
  })
})
