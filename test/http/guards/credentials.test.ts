/**
 * Reading the API key: Bearer (any case, surrounding spaces) or x-api-key (trimmed); nothing otherwise; two different
 * keys refused (E-314).
 */
import { describe, expect, it } from "vitest"
import { ApiFailure } from "../../../engine/domain/errors.ts"
import { apiKeyFrom } from "../../../engine/http/guards/credentials.ts"

describe("apiKeyFrom", () => {
  it("reads a Bearer token in any case with trailing spaces", () => {
    expect(apiKeyFrom({ authorization: "Bearer pk_abc" })).toBe("pk_abc")
    expect(apiKeyFrom({ authorization: "bearer   pk_abc  " })).toBe("pk_abc")
    expect(apiKeyFrom({ authorization: "BEARER pk_abc" })).toBe("pk_abc")
  })

  it("refuses two different keys with AUTH_INVALID, and takes the same key in both", () => {
    const both = apiKeyFrom({ authorization: "Bearer one", "x-api-key": "two" })
    expect(both).toBeInstanceOf(ApiFailure)
    expect((both as ApiFailure).code).toBe("AUTH_INVALID")
    expect(apiKeyFrom({ authorization: "Bearer one", "x-api-key": " one " })).toBe("one")
    // Keys are compared exactly: a case difference is another key.
    expect(apiKeyFrom({ authorization: "Bearer one", "x-api-key": "ONE" })).toBeInstanceOf(ApiFailure)
  })

  it("falls back to x-api-key when Authorization is not a Bearer token", () => {
    expect(apiKeyFrom({ authorization: "Basic dXNlcg==", "x-api-key": "two" })).toBe("two")
    expect(apiKeyFrom({ authorization: "Bearer a b", "x-api-key": "two" })).toBe("two")
    expect(apiKeyFrom({ authorization: "Bearer", "x-api-key": "two" })).toBe("two")
    expect(apiKeyFrom({ authorization: "xBearer k", "x-api-key": "two" })).toBe("two")
  })

  it("trims x-api-key and treats a blank one as missing", () => {
    expect(apiKeyFrom({ "x-api-key": "  pk_x  " })).toBe("pk_x")
    expect(apiKeyFrom({ "x-api-key": "   " })).toBeUndefined()
    expect(apiKeyFrom({ "x-api-key": "" })).toBeUndefined()
    expect(apiKeyFrom({})).toBeUndefined()
    expect(apiKeyFrom({ authorization: "Basic x" })).toBeUndefined()
  })
})
