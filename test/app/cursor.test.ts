/**
 * Cursors and scanned pages (engine/app/cursor.ts): a cursor is opaque and only valid for the scope (partition,
 * list and filters) it was issued for; a page examines at most the scan limit and says whether more may follow.
 */
import { describe, expect, it } from "vitest"
import { checkLimit, decodeCursor, encodeCursor, scanPage } from "../../engine/app/cursor.ts"
import { ApiFailure } from "../../engine/domain/errors.ts"
import type { Doc } from "../../engine/store/port.ts"

const docs = (keys: ReadonlyArray<string>): ReadonlyArray<Doc> =>
  keys.map((k) => ({ id: k, partition: "p", sortKey: k, body: { k, even: Number(k) % 2 === 0 } }))
const even = (b: unknown) => (b as { even: boolean }).even

describe("cursors", () => {
  it("round-trips within its scope and is refused in any other, or when it is not a cursor", () => {
    const c = encodeCursor("users|ptn_1:sandbox|open|", "0001|usr_1")
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeCursor("users|ptn_1:sandbox|open|", c)).toBe("0001|usr_1")
    for (const [scope, cursor] of [
      ["users|ptn_1:production|open|", c],
      ["users|ptn_2:sandbox|open|", c],
      ["users|ptn_1:sandbox|ALL|", c],
      ["users|ptn_1:sandbox|open|", "not-a-cursor"],
      ["users|ptn_1:sandbox|open|", Buffer.from(JSON.stringify({ s: "x" })).toString("base64url")],
      ["users|ptn_1:sandbox|open|", Buffer.from(JSON.stringify({ s: 1, k: 2 })).toString("base64url")],
      ["users|ptn_1:sandbox|open|", Buffer.from("null").toString("base64url")]
    ] as const) {
      const r = decodeCursor(scope, cursor)
      expect(r).toBeInstanceOf(ApiFailure)
      expect(r).toMatchObject({ code: "VALIDATION_ERROR", extras: { param: "cursor" } })
    }
  })

  it("checks limits against the default and the maximum", () => {
    expect(checkLimit(undefined, 100, 200)).toBe(100)
    expect(checkLimit(1, 100, 200)).toBe(1)
    expect(checkLimit(200, 100, 200)).toBe(200)
    for (const bad of [0, 201, 1.5])
      expect(checkLimit(bad, 100, 200)).toMatchObject({ code: "VALIDATION_ERROR", message: "limit must be a whole number from 1 to 200" })
  })
})

describe("scanPage", () => {
  it("fills a page and points at the last document examined", () => {
    expect(scanPage(docs(["1", "2", "3", "4", "5", "6"]), 2, 10, even)).toEqual({
      items: [docs(["2"])[0]?.body, docs(["4"])[0]?.body],
      lastKey: "4",
      hasMore: true
    })
  })

  it("a page that ends on the last document has no more", () => {
    expect(scanPage(docs(["1", "2", "3", "4"]), 2, 10, even)).toEqual({
      items: [
        { k: "2", even: true },
        { k: "4", even: true }
      ],
      lastKey: "4",
      hasMore: false
    })
    expect(scanPage(docs([]), 2, 10, even)).toEqual({ items: [], lastKey: undefined, hasMore: false })
  })

  it("stops at the scan limit: a short or empty page with more to come", () => {
    // 3 examined (the scan limit), the 4th only tells that more exist
    expect(scanPage(docs(["1", "3", "5", "7"]), 2, 3, even)).toEqual({ items: [], lastKey: "5", hasMore: true })
    expect(scanPage(docs(["1", "3", "5"]), 2, 3, even)).toEqual({ items: [], lastKey: "5", hasMore: false })
    expect(scanPage(docs(["1", "2", "3", "4"]), 5, 3, even)).toEqual({ items: [{ k: "2", even: true }], lastKey: "3", hasMore: true })
  })
})
