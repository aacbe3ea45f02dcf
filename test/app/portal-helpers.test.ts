/**
 * Pure helpers of the portal modules: allowlist entries (isCidr), trace redaction of credentials, the client
 * credentials of POST /oauth/token, and the seed-derived signing key of the simulated identity provider.
 */
import { describe, expect, it } from "vitest"
import { bearerOf, signingKeyOf } from "../../engine/app/identity.ts"
import { scopesOf } from "../../engine/app/portal.ts"
import { isCidr } from "../../engine/domain/cidr.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { mayHoldSecret, redactSecrets, redactText } from "../../engine/http/redact.ts"
import { credentialsOf } from "../../engine/http/routes/portal.ts"
import type { EngineRequest } from "../../engine/http/exchange.ts"

const request = (headers: Record<string, string>, body?: string): EngineRequest => ({
  method: "POST",
  path: "/api/v1/partner/oauth/token",
  query: new URLSearchParams(),
  search: "",
  headers,
  body
})

describe("isCidr", () => {
  it.each(["10.0.0.0/8", "0.0.0.0/0", "255.255.255.255", "192.168.1.7/32", "2001:db8::/32", "::1", "fe80::1/128"])("accepts %s", (entry) => {
    expect(isCidr(entry)).toBe(true)
  })
  it.each(["256.0.0.1", "10.0.0.0/33", "10.0.0/8", "2001:db8::/129", "hello", "", "10.0.0.0/8/1", "10.0.0.0/", "10.0.0.0/x", "1.2.3.4.5", "abc", "::/1234"])(
    "refuses %s",
    (entry) => {
      expect(isCidr(entry)).toBe(false)
    }
  )
})

describe("redaction", () => {
  it("masks every key kind to its prefix and last 4, wherever it sits", () => {
    expect(redactText("key sk_sandbox_abcdef123456 and pk_live_zzzz9876")).toBe("key sk_sandbox_…3456 and pk_live_…9876")
    expect(redactText("pk_data_aaaa1111 svc_oauth_bbbb2222")).toBe("pk_data_…1111 svc_oauth_…2222")
    expect(redactSecrets({ a: ["pk_live_abcd1234"], b: 3, c: null, pk_live_keyasname1: true })).toEqual({
      a: ["pk_live_…1234"],
      b: 3,
      c: null,
      "pk_live_…ame1": true
    })
    expect(redactSecrets("plain")).toBe("plain")
  })
  it("tells which texts may hold a credential", () => {
    for (const t of ["sk_sandbox_", "pk_live_", "pk_data_", "svc_oauth_"]) expect(mayHoldSecret(`x ${t}y`)).toBe(true)
    expect(mayHoldSecret("pk_test_x sk_live_")).toBe(false)
  })
})

describe("client credentials", () => {
  it("reads the secret from HTTP Basic before the body, and grant_type and scope from a form or JSON", () => {
    const basic = `Basic ${Buffer.from("client:pk_live_basic:with:colons").toString("base64")}`
    expect(credentialsOf(request({ authorization: basic }, JSON.stringify({ grant_type: "client_credentials", client_secret: "pk_live_body" })))).toEqual({
      grantType: "client_credentials",
      clientSecret: "pk_live_basic:with:colons",
      scope: undefined
    })
    expect(
      credentialsOf(
        request({ "content-type": "application/x-www-form-urlencoded" }, "grant_type=client_credentials&client_secret=pk_live_f&scope=market%3Aread")
      )
    ).toEqual({ grantType: "client_credentials", clientSecret: "pk_live_f", scope: "market:read" })
    expect(credentialsOf(request({}, JSON.stringify({ grant_type: 5, client_secret: "pk_live_j", scope: "a b" })))).toEqual({
      grantType: undefined,
      clientSecret: "pk_live_j",
      scope: "a b"
    })
    expect(credentialsOf(request({}))).toEqual({ grantType: undefined, clientSecret: undefined, scope: undefined })
  })
  it("refuses a Basic value without a colon, and a body that is not an object", () => {
    expect(credentialsOf(request({ authorization: `Basic ${Buffer.from("nocolon").toString("base64")}` }))).toBeInstanceOf(ApiFailure)
    expect(credentialsOf(request({}, "[1]"))).toBeInstanceOf(ApiFailure)
    expect(credentialsOf(request({}, "null"))).toBeInstanceOf(ApiFailure)
    expect(credentialsOf(request({}, "{bad"))).toBeInstanceOf(ApiFailure)
  })
})

describe("bearerOf", () => {
  it("reads the one token of `Bearer <token>`, whatever the scheme's case and however many spaces follow it", () => {
    expect(bearerOf("Bearer abc.def")).toBe("abc.def")
    expect(bearerOf("bearer abc")).toBe("abc")
    expect(bearerOf("BEARER abc")).toBe("abc")
    expect(bearerOf("Bearer  abc")).toBe("abc")
    expect(bearerOf("Bearer\tabc")).toBe("abc")
  })
  it("finds no token in a header with more after the token, anything before the scheme, another scheme, or none", () => {
    expect(bearerOf("Bearer abc def")).toBeUndefined()
    expect(bearerOf("Bearer abc ")).toBeUndefined()
    expect(bearerOf("xBearer abc")).toBeUndefined()
    expect(bearerOf(" Bearer abc")).toBeUndefined()
    expect(bearerOf("Basic abc")).toBeUndefined()
    expect(bearerOf("Bearer")).toBeUndefined()
    expect(bearerOf("Bearer ")).toBeUndefined()
    expect(bearerOf("")).toBeUndefined()
    expect(bearerOf(undefined)).toBeUndefined()
  })
})

describe("identity and scopes", () => {
  it("derives one Ed25519 key per seed", () => {
    const a = signingKeyOf(1).publicKey.export({ format: "der", type: "spki" })
    expect(signingKeyOf(1).publicKey.export({ format: "der", type: "spki" })).toEqual(a)
    expect(signingKeyOf(2).publicKey.export({ format: "der", type: "spki" })).not.toEqual(a)
    expect(signingKeyOf(1).privateKey.asymmetricKeyType).toBe("ed25519")
  })
  it("a data key holds market:read only; a full key every scope of D-017", () => {
    expect(scopesOf("data")).toEqual(["market:read"])
    expect(scopesOf("full")).toHaveLength(18)
    expect(scopesOf("full")).toContain("keys:write")
  })
})
