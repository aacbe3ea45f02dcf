/**
 * Every mutation the contract names has an audit action (D-260): a new partner operation without a row would be
 * logged under its bare operationId, so this fails until it is named. Pure: reads the generated catalogue.
 */
import { describe, expect, it } from "vitest"
import { PARTNER_ACTIONS, PORTAL_ACTIONS, tokenSubject } from "../../engine/domain/audit/actions.ts"
import { PARTNER_OPERATIONS } from "../../engine/contract/catalogue.gen.ts"

/** Mutations deliberately not audited: no partner yet (apply) or no member behind the call (client secret). */
const NOT_AUDITED = ["applyForPartnerAccess", "issueOAuthToken"]

describe("audit actions", () => {
  const mutations = PARTNER_OPERATIONS.filter((o) => o.method !== "GET")

  it("names every key-authenticated mutation of the contract", () => {
    const keyed = mutations.filter((o) => o.security.some((s) => s.startsWith("apiKey") || s.startsWith("oauth")))
    expect(keyed.map((o) => o.operationId).filter((id) => PARTNER_ACTIONS[id] === undefined)).toEqual([])
  })

  it("names every ID-token mutation that belongs to a partner", () => {
    const portal = mutations.filter((o) => !o.security.some((s) => s.startsWith("apiKey") || s.startsWith("oauth")) && o.security.length > 0)
    expect(portal.map((o) => o.operationId).filter((id) => PORTAL_ACTIONS[id] === undefined && !NOT_AUDITED.includes(id))).toEqual([])
  })

  it("reads the member from an ID token's claims, and nothing from anything else", () => {
    const claims = Buffer.from(JSON.stringify({ sub: "member-1", iss: "x" })).toString("base64url")
    expect(tokenSubject(`Bearer eyJhbGciOiJFZERTQSJ9.${claims}.sig`)).toBe("member-1")
    expect(tokenSubject("Bearer sk_sandbox_abc")).toBeUndefined()
    expect(tokenSubject(undefined)).toBeUndefined()
    expect(tokenSubject("Bearer a.bm90IGpzb24.c")).toBeUndefined()
  })

  const tokenOf = (claims: unknown) => `eyJhbGciOiJFZERTQSJ9.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.sig`

  it("takes the token only from a whole `Bearer <token>` header, however many spaces separate them", () => {
    const token = tokenOf({ sub: "member-2" })
    expect(tokenSubject(`Bearer   ${token}`)).toBe("member-2")
    expect(tokenSubject(`bearer ${token}`)).toBe("member-2")
    expect(tokenSubject(`NotBearer ${token}`)).toBeUndefined()
    expect(tokenSubject(`Bearer ${token} trailing`)).toBeUndefined()
  })

  it("names no member for an empty or non-text subject, and at most 128 characters of a long one", () => {
    expect(tokenSubject(`Bearer ${tokenOf({ sub: "" })}`)).toBeUndefined()
    expect(tokenSubject(`Bearer ${tokenOf({ sub: ["member-3"] })}`)).toBeUndefined()
    expect(tokenSubject(`Bearer ${tokenOf({ sub: 42 })}`)).toBeUndefined()
    expect(tokenSubject(`Bearer ${tokenOf(null)}`)).toBeUndefined()
    expect(tokenSubject(`Bearer ${tokenOf({ sub: "m".repeat(200) })}`)).toBe("m".repeat(128))
  })
})
