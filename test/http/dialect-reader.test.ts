/**
 * How the gateway reads a request in each dialect (http/dialect.ts, E-361..E-368), without an engine: which paths are
 * the legacy sandbox root's, how a {status, level} KYC body is read, which mutations may come without a key, which
 * headers signatures go out under. Every reading leaves a note, in both dialects; only `public-service` changes the
 * request.
 */
import { describe, expect, it } from "vitest"
import { type DialectNote, legacyOperation, publicKycBody, readerFor, signatureHeadersFor } from "../../engine/http/dialect.ts"
import { engineRequest } from "./harness.ts"

describe("the legacy sandbox root (facts 1.2)", () => {
  it("names the partner operation a bare-root path means, and leaves the root's own operations and the partner base alone", () => {
    expect(legacyOperation("GET", "/api/sandbox/v1/stocks")).toEqual({ rest: "/stocks", operationId: "listStocks", template: "/stocks" })
    expect(legacyOperation("GET", "/api/sandbox/v1/users/usr_1/orders")?.operationId).toBe("listSubAccountOrders")
    expect(legacyOperation("POST", "/api/sandbox/v1/register")).toBeUndefined()
    expect(legacyOperation("POST", "/api/sandbox/v1/reset")).toBeUndefined()
    expect(legacyOperation("GET", "/api/sandbox/v1/partner/stocks")).toBeUndefined()
    expect(legacyOperation("GET", "/api/sandbox/v1/no-such-thing")).toBeUndefined()
    expect(legacyOperation("GET", "/api/v1/stocks")).toBeUndefined()
  })

  it("is served as the partner base under public-service only; both dialects note it", () => {
    for (const [name, path] of [
      ["public-service", "/api/sandbox/v1/partner/stocks"],
      ["spec", "/api/sandbox/v1/stocks"]
    ] as const) {
      const notes: Array<DialectNote> = []
      expect(readerFor({ name, signatureHeaders: [] }).enter(engineRequest("GET", "/api/sandbox/v1/stocks"), notes).path).toBe(path)
      expect(notes.map((n) => [n.kind, n.operation])).toEqual([["dialect.legacy-sandbox-root", "listStocks"]])
    }
  })
})

describe("the KYC body {status, level} (facts 6.1, 6.2)", () => {
  it("reads status and level as the contract's fields, upper-cased, and drops what the contract does not know", () => {
    expect(publicKycBody(JSON.stringify({ status: "verified", level: "basic", reference: "r1", provider: "x", verifiedAt: "t" }))).toEqual({
      kycStatus: "VERIFIED",
      kycLevel: "BASIC",
      reference: "r1"
    })
  })

  it("leaves a contract body, a body without status and a body that is not a JSON object untouched", () => {
    expect(publicKycBody(JSON.stringify({ kycStatus: "VERIFIED", status: "x" }))).toBeUndefined()
    expect(publicKycBody(JSON.stringify({ level: "BASIC" }))).toBeUndefined()
    expect(publicKycBody("[1]")).toBeUndefined()
    expect(publicKycBody("{nope")).toBeUndefined()
    expect(publicKycBody(undefined)).toBeUndefined()
  })
})

describe("a mutation without Idempotency-Key (facts 15.1)", () => {
  it("runs unkeyed under public-service except deposit, withdraw and trade; spec refuses; only the relaxable ones are noted", () => {
    for (const name of ["spec", "public-service"] as const) {
      const reader = readerFor({ name, signatureHeaders: [] })
      const notes: Array<DialectNote> = []
      expect(["createSubAccount", "createWebhook", "cancelOrder"].map((op) => reader.keyless(op, notes))).toEqual([true, true, true].map(() => name !== "spec"))
      expect(["depositToSubAccount", "withdrawFromSubAccount", "placeTrade", "placeSubAccountTrade"].map((op) => reader.keyless(op, notes))).toEqual([
        false,
        false,
        false,
        false
      ])
      expect(notes.map((n) => n.operation)).toEqual(["createSubAccount", "createWebhook", "cancelOrder"])
    }
  })
})

describe("the webhook signature header (facts 11.2)", () => {
  it("adds x-mystocks-signature once under public-service, and only what was asked for under spec", () => {
    expect(signatureHeadersFor("public-service", undefined)).toEqual(["x-mystocks-signature"])
    expect(signatureHeadersFor("public-service", ["X-Mystocks-Signature", "x-other"])).toEqual(["x-mystocks-signature", "x-other"])
    expect(signatureHeadersFor("spec", undefined)).toEqual([])
    expect(signatureHeadersFor("spec", ["x-mystocks-signature"])).toEqual(["x-mystocks-signature"])
  })
})
