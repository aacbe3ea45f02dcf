/**
 * Issuing a quote and its expiry (domain/trading/issue-quote.ts): one of quantity or cashValue, a cashValue quote
 * binds the whole units it buys (BUY within cash including the fee), a quote lives 60 s, and its expiry marks an
 * OPEN quote EXPIRED and announces it while a used one is left alone.
 */
import { describe, expect, it } from "vitest"
import * as fc from "fast-check"
import { ApiFailure } from "../../engine/domain/errors.ts"
import { fees, grossCents } from "../../engine/domain/money.ts"
import { usedQuote } from "../../engine/domain/trading/decide-quote.ts"
import { decideQuote, decideQuoteExpiry, derivedUnits, QUOTE_TTL_SECONDS, quoteTerms } from "../../engine/domain/trading/issue-quote.ts"
import { accepted, codeOf, NSE, OPEN_AT, PARTITION, SCOM } from "./decider-fixtures.ts"

const PRICE = 180_000

describe("a quote request", () => {
  it("refuses both quantity and cashValue, a fractional quantity and a cashValue with more than 2 decimals", () => {
    expect(codeOf(quoteTerms({ quantity: 1, cashValue: 10 }, NSE))).toBe("VALIDATION_ERROR")
    expect(codeOf(quoteTerms({ quantity: 1.5 }, NSE))).toBe("VALIDATION_ERROR")
    expect(codeOf(quoteTerms({ cashValue: 10.001 }, NSE))).toBe("VALIDATION_ERROR")
    expect(accepted(quoteTerms({ cashValue: 10.01 }, NSE)).cashValue).toBe(1_001)
  })

  it("a cashValue that buys no whole unit is refused", () => {
    expect(codeOf(derivedUnits(accepted(quoteTerms({ cashValue: 0.01 }, NSE)), PRICE, 0))).toBe("VALIDATION_ERROR")
  })

  it("a cashValue BUY quote binds units whose gross + fee fit the cash, one more would not (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 100, max: 100_000_000 }), fc.integer({ min: 0, max: 200 }), (cents, markupBps) => {
        const terms = accepted(quoteTerms({ cashValue: cents / 100, side: "BUY" }, NSE))
        const units = derivedUnits(terms, PRICE, markupBps)
        if (units instanceof ApiFailure) return
        const cost = (n: number) => grossCents(n, PRICE, terms.rate) + fees(grossCents(n, PRICE, terms.rate), markupBps).fee
        expect(units).not.toBeNull()
        expect(cost(units ?? 0)).toBeLessThanOrEqual(cents)
        expect(cost((units ?? 0) + 1)).toBeGreaterThan(cents)
      })
    )
  })
})

describe("issuing", () => {
  const terms = accepted(quoteTerms({ quantity: 10, side: "BUY" }, NSE))
  const plan = decideQuote(terms, { partition: PARTITION, markupBps: 0 }, SCOM, { price: PRICE, derived: null }, OPEN_AT, { quoteId: "qt_9" })

  it("is OPEN for 60 s at the observed price, with its expiry job at the TTL", () => {
    expect(plan.quote).toMatchObject({ quoteId: "qt_9", status: "OPEN", issuedAt: OPEN_AT, expiresAt: OPEN_AT + QUOTE_TTL_SECONDS * 1000, price: PRICE })
    expect(plan.expiryJob).toEqual({ dueAt: OPEN_AT + 60_000, quoteId: "qt_9" })
    expect(plan.answer).toMatchObject({ quoteId: "qt_9", quantity: 10, ttlSeconds: 60, singleUse: true, marketStatus: "OPEN", subAccountId: null })
  })

  it("its expiry marks it EXPIRED and announces quote.expired; a used quote is left alone", () => {
    const expiry = decideQuoteExpiry(plan.quote, "NSE")
    expect(expiry?.quote.status).toBe("EXPIRED")
    expect(expiry?.event).toMatchObject({ name: "quote.expired", data: { quoteId: "qt_9", exchange: "NSE", quantity: 10, subAccountId: null } })
    expect(decideQuoteExpiry(usedQuote(plan.quote), "NSE")).toBeUndefined()
    expect(decideQuoteExpiry(undefined, "NSE")).toBeUndefined()
  })
})
