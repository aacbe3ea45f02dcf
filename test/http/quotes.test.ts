/**
 * Quotes: `GET /quote/{symbol}` and MarketService.issueQuote (memory store, manual clock). Over HTTP: a quote refusing
 * quantity and cashValue together (`params` names both), a cashValue that is negative, zero or has more than 2
 * decimals (param cashValue and the message a partner reads), and a cashValue too small to buy one unit; the units a
 * cashValue quote derives for a partner with a markup: BUY (and a quote with no side) fits gross + base fee + markup
 * within the cash, SELL leaves the markup out; quote.expired of a master-account quote naming no sub-account
 * (subAccountId null). Through the service API (the gateway's integer decoding already refuses these quantities over
 * HTTP, the service must refuse them too): a quantity of 0, negative, fractional or beyond the safe integers.
 */
import { Exit, Option } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { MarketService } from "../../engine/app/market.ts"
import type { QuoteQuery } from "../../engine/domain/trading/issue-quote.ts"
import type { Principal } from "../../engine/app/principal.ts"
import { quantityForCash } from "../../engine/domain/money.ts"
import { Store } from "../../engine/store/port.ts"
import { eventsOf, failureOf, SANDBOX } from "./accounts-kit.ts"
import { type Reply, startEngine } from "./harness.ts"

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

/** A sandbox partner (with `markupBps` when given) and its GET. */
const setup = async (markupBps?: number) => {
  const engine = startEngine()
  engines.push(engine)
  const created = await engine.admin("POST", "/_sim/partners", {
    businessName: "Quote Partner",
    email: "quotes@partner.test",
    ...(markupBps === undefined ? {} : { markupBps })
  })
  expect(created.status).toBe(201)
  const keys = created.body as { partnerId: string; sandboxKey: string }
  const get = (path: string) => engine.call("GET", `${SANDBOX}${path}`, { headers: { "x-api-key": keys.sandboxKey } })
  const post = (path: string, body: unknown, key: string) =>
    engine.call("POST", `${SANDBOX}${path}`, { headers: { "x-api-key": keys.sandboxKey, "idempotency-key": key }, body })
  const principal: Principal = {
    partnerId: keys.partnerId,
    environment: "sandbox",
    keyKind: "full",
    tier: "starter",
    markupBps: markupBps ?? 0,
    partition: `${keys.partnerId}:sandbox`
  }
  /** issueQuote called on the service itself, past the gateway's decoding. */
  const issueQuote = (symbol: string, query: QuoteQuery) => engine.runtime.runPromiseExit(MarketService.use((m) => m.issueQuote(principal, symbol, query)))
  return { engine, get, post, issueQuote }
}

const expectError = (r: Reply, status: number, code: string) => expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([status, code])

describe("GET /quote/{symbol}: the size asked for", () => {
  it("refuses quantity and cashValue together, naming both in params", async () => {
    const s = await setup()
    const r = await s.get("/quote/SCOM?side=BUY&quantity=1&cashValue=10")
    expectError(r, 400, "VALIDATION_ERROR")
    expect(r.body.error.params).toEqual(["quantity", "cashValue"])
    expect(r.body.error.message).toBe("give quantity or cashValue, not both")
  })

  it("refuses a cashValue that is negative, zero or has more than 2 decimals, param cashValue", async () => {
    const s = await setup()
    // -5 and 0 are refused by the contract (exclusiveMinimum 0, E-313), 1.234 by the quote's cent rule.
    for (const [cashValue, message] of [
      ["-5", "cashValue must be greater than 0, got -5"],
      ["0", "cashValue must be greater than 0, got 0"],
      ["1.234", "cashValue must be a positive USD amount with at most 2 decimals"]
    ]) {
      const r = await s.get(`/quote/SCOM?side=BUY&cashValue=${cashValue}`)
      expectError(r, 400, "VALIDATION_ERROR")
      expect(r.body.error, cashValue).toEqual({ code: "VALIDATION_ERROR", message, param: "cashValue" })
    }
  })

  it("refuses a cashValue that does not buy one unit at the current price, param cashValue", async () => {
    const s = await setup()
    // NPN.ZA trades at thousands of rand: one cent buys nothing
    const r = await s.get("/quote/NPN.ZA?side=BUY&cashValue=0.01")
    expectError(r, 400, "VALIDATION_ERROR")
    expect(r.body.error).toEqual({ code: "VALIDATION_ERROR", message: "cashValue does not buy a single unit at the current price", param: "cashValue" })
    // and one unit's worth is a quote (the refusal is about the amount, not the listing)
    expect((await s.get("/quote/NPN.ZA?side=BUY&cashValue=5000")).status).toBe(200)
  })
})

describe("GET /quote/{symbol}: the units a cashValue buys, with a partner markup", () => {
  const MARKUP = 1000
  /** The units the quote shows for `cash` USD on `side`, and what the quote's own price and rate give with and without markup. */
  const derived = async (s: Awaited<ReturnType<typeof setup>>, side: string | undefined, cash: number) => {
    const r = await s.get(`/quote/SCOM?cashValue=${cash}${side === undefined ? "" : `&side=${side}`}`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    const price4 = Math.round(r.body.price * 10_000)
    const rate6 = Math.round(r.body.fxRate * 1_000_000)
    return {
      body: r.body,
      withMarkup: quantityForCash(cash * 100, price4, rate6, MARKUP),
      withoutMarkup: quantityForCash(cash * 100, price4, rate6, 0)
    }
  }

  it("BUY and a quote with no side: gross + base fee + markup fit in the cash", async () => {
    const s = await setup(MARKUP)
    for (const side of ["BUY", undefined]) {
      const q = await derived(s, side, 100)
      // the markup really costs units here, so the two counts tell the rules apart
      expect(q.withMarkup).toBeLessThan(q.withoutMarkup)
      expect(q.body.quantity, String(side)).toBe(q.withMarkup)
      expect(q.body.cashValue).toBe(100)
      expect(q.body.estimatedTotal).toBeLessThanOrEqual(100)
    }
  })

  it("SELL: the units the cash is worth before the markup (a SELL pays no markup out of the cash)", async () => {
    const s = await setup(MARKUP)
    const q = await derived(s, "SELL", 100)
    expect(q.withMarkup).toBeLessThan(q.withoutMarkup)
    expect(q.body.quantity).toBe(q.withoutMarkup)
    expect(q.body.side).toBe("SELL")
  })
})

describe("MarketService.issueQuote: quantities the gateway's decoding refuses", () => {
  it("refuses a quantity of 0, negative, fractional or beyond the safe integers, param quantity", async () => {
    const s = await setup()
    for (const quantity of [0, -3, 1.5, 2 ** 53]) {
      expect(failureOf(await s.issueQuote("SCOM", { side: "BUY", quantity })), String(quantity)).toEqual({
        code: "VALIDATION_ERROR",
        message: "quantity must be a whole number above 0",
        param: "quantity"
      })
    }
    // the same call with a whole quantity is a quote
    expect(Exit.isSuccess(await s.issueQuote("SCOM", { side: "BUY", quantity: 2 }))).toBe(true)
  })
})

describe("quote.expired", () => {
  it("of a quote for the master account names no sub-account (subAccountId null)", async () => {
    const s = await setup()
    const quote = await s.get("/quote/SCOM?side=BUY&quantity=2")
    expect(quote.status).toBe(200)
    expect(quote.body.subAccountId).toBeNull()
    expect((await s.engine.admin("POST", "/_sim/clock/advance", { seconds: 61 })).status).toBe(200)
    const expired = (await eventsOf(s.engine)).filter((e) => e.event === "quote.expired")
    expect(expired.map((e) => e.data)).toEqual([
      expect.objectContaining({ quoteId: quote.body.quoteId, symbol: "SCOM.KE", exchange: "NSE", subAccountId: null, quantity: 2 })
    ])
  })
})

describe("a quote's expiry job", () => {
  it("is booked with the quote and deleted when the quote is used: a used quote leaves no job behind", async () => {
    const s = await setup()
    const pending = () => s.engine.runtime.runPromise(Store.use((store) => store.read((tx) => tx.nextJob)))
    const quote = await s.get("/quote/SCOM?side=BUY&quantity=2")
    expect(quote.status).toBe(200)
    const booked = await pending()
    expect(Option.map(booked, (j) => [j.kind, j.payload])).toEqual(Option.some(["quote.expire", { quoteId: quote.body.quoteId }]))
    const trade = await s.post("/trade", { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: quote.body.quoteId }, "expiry-job-01")
    expect(trade.status).toBe(202)
    const after = await pending()
    expect(Option.exists(after, (j) => j.kind === "quote.expire")).toBe(false)
    expect(Option.map(after, (j) => j.seq)).not.toEqual(Option.map(booked, (j) => j.seq))
  })
})
