/**
 * The hot path's memos must be invisible: the encoded bytes of an answer are its body's UTF-8; a router that
 * remembers answers still answers every path right past its bound; a key's remembered hash is its SHA-256; a route's
 * prepared decoder decodes like decodeParams. (docs/performance.md explains why each memo exists.)
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { hashKey } from "../../engine/app/partners/credentials.ts"
import { bytesOf, jsonResponse, REMEMBERED_BODY_CHARS } from "../../engine/http/exchange.ts"
import { decodeParams, integer, optional, paramDecoder, required, text } from "../../engine/http/query.ts"
import { MAX_REMEMBERED, makeRouter } from "../../engine/http/router.ts"

describe("bytesOf", () => {
  it("is the UTF-8 of the body, multi-byte characters included, and shared by answers of the same large value", () => {
    const value = { name: "Société Générale Côte d'Ivoire", price: "1.50", notes: "é".repeat(REMEMBERED_BODY_CHARS) }
    const first = jsonResponse(200, value)
    expect(bytesOf(first).toString("utf8")).toBe(JSON.stringify(value))
    expect(bytesOf(first).length).toBe(Buffer.byteLength(JSON.stringify(value)))
    expect(bytesOf(first).length).toBeGreaterThan(first.body.length)
    expect(bytesOf(jsonResponse(201, value))).toBe(bytesOf(first))
    expect(bytesOf(jsonResponse(200, { ...value }))).not.toBe(bytesOf(first))
  })

  it("encodes a small answer afresh instead of keeping its bytes for its value (E-356)", () => {
    const value = { name: "Société Générale" }
    const first = jsonResponse(200, value)
    expect(bytesOf(first).toString("utf8")).toBe(JSON.stringify(value))
    expect(bytesOf(jsonResponse(200, value))).not.toBe(bytesOf(first))
  })

  it("encodes answers without a value (raw bodies, replays) from their text every time", () => {
    const raw = { status: 200, headers: {}, body: "é\n" }
    expect([...bytesOf(raw)]).toEqual([0xc3, 0xa9, 0x0a])
    expect(bytesOf(jsonResponse(200, 7)).toString()).toBe("7")
  })
})

describe("router memo", () => {
  const router = makeRouter([
    { method: "GET", path: "/orders/{orderId}" },
    { method: "GET", path: "/orders/blotter" }
  ])

  it("answers every path correctly past the number of answers it remembers", () => {
    for (let i = 0; i < MAX_REMEMBERED + 5; i++) {
      const m = router.find("GET", `/orders/ord_${i}`)
      expect(m._tag === "Found" && m.params.orderId).toBe(`ord_${i}`)
    }
    const again = router.find("GET", "/orders/ord_3")
    expect(again._tag === "Found" && again.params).toEqual({ orderId: "ord_3" })
    expect(router.find("GET", "/orders/blotter")).toMatchObject({ _tag: "Found", params: {} })
    expect(router.find("DELETE", "/orders/x")).toEqual({ _tag: "MethodNotAllowed", allow: ["GET"] })
    expect(router.find("GET", "/nope")).toEqual({ _tag: "NotFound" })
  })

  it("keys its memo on the method as well as the path", () => {
    const both = makeRouter([
      { method: "GET", path: "/x", name: "get" },
      { method: "POST", path: "/x", name: "post" }
    ])
    const get = both.find("GET", "/x")
    const post = both.find("POST", "/x")
    expect(get._tag === "Found" && get.route.name).toBe("get")
    expect(post._tag === "Found" && post.route.name).toBe("post")
  })
})

describe("hashKey memo", () => {
  it("is the SHA-256 hex of the key, the first time and every time after, for more keys than it remembers", () => {
    const sha = (raw: string) => createHash("sha256").update(raw).digest("hex")
    for (let i = 0; i < 10_010; i += 1) expect(hashKey(`sk_sandbox_${i}`)).toBe(sha(`sk_sandbox_${i}`))
    expect(hashKey("sk_sandbox_0")).toBe(sha("sk_sandbox_0"))
    expect(hashKey("sk_sandbox_9")).not.toBe(hashKey("sk_sandbox_8"))
  })
})

describe("paramDecoder", () => {
  it("decodes like decodeParams, in the spec's order, on every call", () => {
    const spec = { symbol: required(text), limit: optional(integer({ min: 1, max: 10 })) }
    const decode = paramDecoder(spec)
    const source = (values: Record<string, string>) => (name: string) => values[name]
    for (const values of [{ symbol: "SCOM.KE", limit: "3" }, { limit: "3" }, { symbol: "X", limit: "11" }, { symbol: "X" }]) {
      expect(decode(source(values))).toEqual(decodeParams(spec, source(values)))
    }
    expect(decode(source({ symbol: "SCOM.KE", limit: "3" }))).toEqual({ symbol: "SCOM.KE", limit: 3 })
    expect(decode(source({ symbol: "SCOM.KE" }))).toEqual({ symbol: "SCOM.KE", limit: undefined })
  })
})
