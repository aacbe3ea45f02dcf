/**
 * Using a quote (domain/trading/decide-quote.ts): a quote is single use, lives 60 s, belongs to the key and account
 * it was issued to, and binds the side and size it names; a quote issued before a symbol change binds the listing.
 */
import { describe, expect, it } from "vitest"
import { acceptQuote, type QuoteUse, usedQuote } from "../../engine/domain/trading/decide-quote.ts"
import { codeOf, OPEN_AT, PARTITION, quote, SCOM } from "./decider-fixtures.ts"

const use = (over: Partial<QuoteUse> = {}): QuoteUse => ({
  quoteId: "qt_1",
  partition: PARTITION,
  account: "master",
  symbol: SCOM.symbol,
  side: "BUY",
  quantity: 10,
  cashValue: undefined,
  ...over
})

describe("using a quote", () => {
  it("accepts an open quote of the same key and account before its expiry", () => {
    expect(acceptQuote(quote(), SCOM.symbol, use(), OPEN_AT)).toEqual(quote())
  })

  it("refuses a quote never issued, or issued to another key, as QUOTE_NOT_FOUND", () => {
    expect(codeOf(acceptQuote(undefined, "", use(), OPEN_AT))).toBe("QUOTE_NOT_FOUND")
    expect(codeOf(acceptQuote(quote({ partition: "ptn_other|sandbox" }), SCOM.symbol, use(), OPEN_AT))).toBe("QUOTE_NOT_FOUND")
  })

  it("refuses a quote issued for another account as QUOTE_SCOPE_MISMATCH", () => {
    expect(codeOf(acceptQuote(quote({ account: "usr_2" }), SCOM.symbol, use(), OPEN_AT))).toBe("QUOTE_SCOPE_MISMATCH")
  })

  it("is single use: a used quote is STALE_QUOTE, even with expiry ignored", () => {
    const used = usedQuote(quote())
    expect(used.status).toBe("USED")
    expect(codeOf(acceptQuote(used, SCOM.symbol, use(), OPEN_AT))).toBe("STALE_QUOTE")
    expect(codeOf(acceptQuote(used, SCOM.symbol, use(), OPEN_AT, true))).toBe("STALE_QUOTE")
  })

  it("expires at its expiresAt exactly, and when its expiry job marked it", () => {
    const q = quote()
    expect(codeOf(acceptQuote(q, SCOM.symbol, use(), q.expiresAt - 1))).toBe("accepted")
    expect(codeOf(acceptQuote(q, SCOM.symbol, use(), q.expiresAt))).toBe("STALE_QUOTE")
    expect(codeOf(acceptQuote(quote({ status: "EXPIRED" }), SCOM.symbol, use(), OPEN_AT))).toBe("STALE_QUOTE")
  })

  it("binds what it names: symbol, side, quantity or cashValue, and names the field that differs", () => {
    const mismatch = (q: ReturnType<typeof quote>, u: QuoteUse) => {
      const r = acceptQuote(q, q.symbol, u, OPEN_AT)
      return codeOf(r) === "QUOTE_ORDER_MISMATCH" ? (r as { extras?: { param?: string } }).extras?.param : codeOf(r)
    }
    expect(mismatch(quote(), use({ symbol: "EQTY.KE" }))).toBe("symbol")
    expect(mismatch(quote({ side: "SELL" }), use())).toBe("side")
    expect(mismatch(quote({ quantity: 5 }), use())).toBe("quantity")
    expect(mismatch(quote({ cashValue: 10_000 }), use({ quantity: undefined, cashValue: 20_000 }))).toBe("cashValue")
    expect(mismatch(quote({ side: "BUY", quantity: 10 }), use())).toBe("accepted")
  })

  it("issued before a symbol change, it binds the listing under its new symbol (D-343)", () => {
    const old = quote({ symbol: "OLD.KE" })
    expect(codeOf(acceptQuote(old, SCOM.symbol, use(), OPEN_AT))).toBe("accepted")
    expect(codeOf(acceptQuote(old, "OLD.KE", use(), OPEN_AT))).toBe("QUOTE_ORDER_MISMATCH")
  })
})
