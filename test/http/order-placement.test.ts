/**
 * Placing an order: what is refused, with which code, field and message, and what is booked (memory store, manual
 * clock). A MARKET order: the quote refusals (QUOTE_REQUIRED, QUOTE_SCOPE_MISMATCH, QUOTE_ORDER_MISMATCH, STALE_QUOTE
 * from the quote's expiresAt on even before its expiry job ran, MARKET_CLOSED), another partner's quote being
 * QUOTE_NOT_FOUND, a quote naming no side or no amount (a cashValue buys what the same cash quote derives, the markup
 * paid within the cash on a BUY only; too small for a unit is refused), a BUY exactly within the wallet and its ord_
 * id. A resting order: the wallet and the free units it may take, its escrow booked as ORDER_PLACED / ORDER_ESCROW,
 * the bounds of its fields (a quantity, a GTD date after now and at most 366 days ahead, both ends exact). A symbol
 * another process changed is NOT_FOUND at the committed check. Through the service API (the gateway's decoding already
 * refuses these over HTTP, the service must refuse them too): exactly one of quantity or cashValue, a whole quantity
 * above 0, a positive cashValue in cents. Every answer is checked against the contract by the harness.
 */
import { Exit } from "effect"
import { describe, expect, it } from "vitest"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Store } from "../../engine/store/port.ts"
import { failureOf, freshTraders, partnerOf, storeDocs } from "./accounts-kit.ts"
import { MONDAY_OPEN } from "./harness.ts"

/** A fresh engine per test, its partner's trading sub-account funded with `usd` (default 500); accounts-kit.ts. */
const setup = freshTraders(500)

const expectError = (r: { status: number; body: any }, status: number, code: string) =>
  expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([status, code])
const errorOf = (r: { status: number; body: any }) => [r.status, r.body.error?.code, r.body.error?.param ?? null]

describe("MARKET order checks", () => {
  it("names the field and says why in each quote refusal", async () => {
    const s = await setup()
    const path = `/users/${s.id}/trade`
    const required = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1 })
    expectError(required, 400, "QUOTE_REQUIRED")
    expect(required.body.error.param).toBe("quoteId")
    const master = await s.quote("SCOM?side=BUY&quantity=1")
    const scope = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: master.quoteId })
    expectError(scope, 403, "QUOTE_SCOPE_MISMATCH")
    expect(scope.body.error).toMatchObject({
      param: "quoteId",
      message: "the quote was issued for another account: fetch it with the subAccountId you trade on"
    })
    const mine = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const mismatch = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: mine.quoteId })
    expectError(mismatch, 409, "QUOTE_ORDER_MISMATCH")
    expect(mismatch.body.error).toMatchObject({ param: "quantity", message: "the quote does not match the order's quantity" })
    await s.advance({ seconds: 61 })
    const stale = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mine.quoteId })
    expectError(stale, 409, "STALE_QUOTE")
    expect(stale.body.error).toMatchObject({ param: "quoteId", message: "the quote expired (60 s TTL); fetch a new one" })
    // NSE closes at 12:00Z; the test starts at 08:00Z and is at 08:01:01
    await s.advance({ seconds: 4 * 3_600 - 61 - 20 })
    const late = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    await s.advance({ seconds: 20 })
    const closed = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: late.quoteId })
    expectError(closed, 422, "MARKET_CLOSED")
    expect(closed.body.error.message).toMatch(/^NSE is closed at 2026-11-23T12:0/)
  })

  it("a quote is stale from its expiresAt on, even before its expiry job has run (a polling scheduler runs it late)", async () => {
    const s = await setup()
    const q = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    const expiresAt = Date.parse(q.expiresAt as string)
    // the clock alone moves to the instant of expiry: the quote.expire job due then has not run, the quote is still OPEN
    await s.engine.runtime.runPromise(EngineClock.use((c) => c.moveTo(expiresAt)))
    const quotes = await storeDocs(s.engine, "quotes", s.p.partition("sandbox"))
    expect(quotes.map((d) => (d.body as { status: string }).status)).toEqual(["OPEN"])
    const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.quoteId })
    expectError(r, 409, "STALE_QUOTE")
    expect(r.body.error.message).toBe("the quote expired (60 s TTL); fetch a new one")
  })

  it("a quote issued to another partner is QUOTE_NOT_FOUND and places nothing", async () => {
    const s = await setup()
    const other = await partnerOf(s.engine)
    const theirs = await other.sb("GET", "/quote/SCOM?side=BUY&quantity=1")
    expect(theirs.status).toBe(200)
    const r = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: theirs.body.quoteId })
    expectError(r, 404, "QUOTE_NOT_FOUND")
    expect((await s.p.sb("GET", "/orders")).body.count).toBe(0)
  })

  it("a quote that names no side binds no side: a BUY on it is accepted", async () => {
    const s = await setup(100)
    const q = await s.p.sb("GET", `/quote/SCOM?quantity=3&subAccountId=${s.id}`)
    expect(q.status).toBe(200)
    const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: q.body.quoteId })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
  })

  it("on a quote that binds no amount, a cashValue buys the whole units it covers, and one too small for a unit is refused", async () => {
    const s = await setup()
    const path = `/users/${s.id}/trade`
    const small = await s.quote(`SCOM?side=BUY&subAccountId=${s.id}`)
    const tooSmall = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", cashValue: 0.05, quoteId: small.quoteId })
    expectError(tooSmall, 400, "VALIDATION_ERROR")
    expect(tooSmall.body.error).toMatchObject({ param: "cashValue", message: "cashValue does not buy a single unit at the quoted price" })
    const open = await s.quote(`SCOM?side=BUY&subAccountId=${s.id}`)
    const bought = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", cashValue: 10, quoteId: open.quoteId })
    expect(bought.status, JSON.stringify(bought.body)).toBe(202)
    // SCOM is about 0.14 USD a unit with fees: 10 USD buys dozens, never more than 10 USD's worth
    expect(bought.body.quantity).toBeGreaterThan(50)
    expect(bought.body.totalAmount).toBeLessThanOrEqual(10)
    expect(bought.body.totalAmount + 0.14 * 1.01).toBeGreaterThan(10)
  })

  it("a cashValue order on a quote that names no amount buys what the same cash quote would derive: a BUY pays the partner's markup within its cash, a SELL does not", async () => {
    const s = await setup(100)
    expect((await s.p.sb("PATCH", "/settings", { markupBps: 200 })).status).toBe(200)
    const bought = await s.trade("BUY", 200)
    await s.fill(bought.orderId)
    for (const side of ["BUY", "SELL"] as const) {
      // the cash quote derives the quantity; a quote naming no amount leaves it to the order's cashValue
      const cash = await s.p.sb("GET", `/quote/SCOM?side=${side}&cashValue=20&subAccountId=${s.id}`)
      const open = await s.p.sb("GET", `/quote/SCOM?side=${side}&subAccountId=${s.id}`)
      expect([cash.status, open.status]).toEqual([200, 200])
      expect(open.body.price).toBe(cash.body.price)
      const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: side, cashValue: 20, quoteId: open.body.quoteId })
      expect(r.status, JSON.stringify(r.body)).toBe(202)
      expect(cash.body.quantity).toBeGreaterThan(0)
      expect(r.body.quantity).toBe(cash.body.quantity)
    }
  })

  it("a BUY whose total is exactly the wallet's balance is accepted, and its id is an ord_ id", async () => {
    const s = await setup()
    const probe = await s.trade("BUY", 7)
    const exact = (await s.p.createUser("sandbox", { externalId: "exact-funds" })).subAccountId
    await s.p.verify(exact)
    await s.p.deposit(exact, probe.totalAmount)
    const q = await s.quote(`SCOM?side=BUY&quantity=7&subAccountId=${exact}`)
    const r = await s.p.sb("POST", `/users/${exact}/trade`, { symbol: "SCOM", type: "BUY", quantity: 7, quoteId: q.quoteId })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body.totalAmount).toBe(probe.totalAmount)
    expect(r.body.orderId).toMatch(/^ord_[0-9a-z]{16}$/)
  })
})

describe("placing a resting order", () => {
  it("refuses a resting BUY beyond the wallet and a resting SELL beyond the free units, saying how much there is", async () => {
    const s = await setup(5)
    const big = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 1000, limitPrice: 1 })
    expectError(big, 400, "INSUFFICIENT_FUNDS")
    expect(big.body.error.message).toMatch(/^the order needs [\d.]+ USD and the wallet holds 5 USD$/)
    const bought = await s.trade("BUY", 4)
    await s.fill(bought.orderId)
    const first = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "SELL", orderType: "LIMIT", quantity: 2, limitPrice: 99 })
    expect(first.status).toBe(202)
    const beyond = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "SELL", orderType: "LIMIT", quantity: 3, limitPrice: 99 })
    expectError(beyond, 422, "INSUFFICIENT_HOLDINGS")
    // 4 held, 2 reserved by the first SELL
    expect(beyond.body.error.message).toBe("the account holds 2 free units of SCOM.KE")
    const q = await s.quote(`SCOM?side=SELL&quantity=3&subAccountId=${s.id}`)
    const market = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "SELL", quantity: 3, quoteId: q.quoteId })
    expectError(market, 422, "INSUFFICIENT_HOLDINGS")
    expect(market.body.error.message).toBe("the account holds 2 free units of SCOM.KE")
  })

  it("records a resting BUY's escrow as ORDER_PLACED: an ORDER_ESCROW transaction of the sub-account", async () => {
    const s = await setup()
    const restingBuy = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 100, limitPrice: 10 })
    expect(restingBuy.status).toBe(202)
    const journal = (await storeDocs(s.engine, "journal", s.p.partition("sandbox"))).map((d) => d.body as { kind: string; orderId: string | null })
    expect(journal.filter((e) => e.orderId === restingBuy.body.orderId).map((e) => e.kind)).toEqual(["ORDER_PLACED"])
    const txns = (await s.p.sb("GET", `/users/${s.id}/transactions`)).body
    const escrow = (txns.transactions as Array<{ orderId?: string; type: string; description: string }>).filter((t) => t.orderId === restingBuy.body.orderId)
    expect(escrow.map((t) => [t.type, t.description])).toEqual([["ORDER_ESCROW", `Escrow for BUY SCOM.KE (order ${restingBuy.body.orderId})`]])
  })

  it("needs a quantity; a GTD date must be after now and at most 366 days ahead (both ends exact)", async () => {
    const s = await setup(100)
    await s.pin(25)
    const base = { type: "BUY", orderType: "LIMIT", limitPrice: 1 }
    const noQuantity = await s.place(base)
    expect(errorOf(noQuantity)).toEqual([400, "VALIDATION_ERROR", "quantity"])
    expect(noQuantity.body.error.message).toBe("a LIMIT order needs a quantity")
    const cash = await s.place({ ...base, cashValue: 5 })
    expect(errorOf(cash)).toEqual([400, "VALIDATION_ERROR", "cashValue"])
    expect(cash.body.error.message).toMatch(/takes a quantity, not a cashValue/)
    const noLimit = await s.place({ type: "BUY", orderType: "LIMIT", quantity: 1 })
    expect(noLimit.body.error.message).toMatch(/LIMIT order needs a limitPrice/)
    const stopOnLimit = await s.place({ ...base, quantity: 1, stopPrice: 2 })
    expect(stopOnLimit.body.error.message).toMatch(/LIMIT order takes no stopPrice/)
    const gtd = (expiresAt?: string) => s.place({ ...base, quantity: 1, timeInForce: "GTD", ...(expiresAt === undefined ? {} : { expiresAt }) })
    const missing = await gtd()
    expect(errorOf(missing)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(missing.body.error.message).toMatch(/GTD order needs expiresAt/)
    expect((await gtd("next week")).body.error.message).toMatch(/expiresAt must be a date-time with a time zone/)
    const atNow = await gtd("2026-11-23T08:00:00Z")
    expect(errorOf(atNow)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(atNow.body.error.message).toMatch(/in the future/)
    const tooFar = await gtd(new Date(Date.parse("2026-11-23T08:00:00Z") + 366 * 86_400_000 + 1000).toISOString())
    expect(errorOf(tooFar)).toEqual([400, "VALIDATION_ERROR", "expiresAt"])
    expect(tooFar.body.error.message).toMatch(/at most 366 days/)
    // the ends themselves: one second after now, and exactly 366 days ahead
    expect((await gtd("2026-11-23T08:00:01Z")).status).toBe(202)
    expect((await gtd(new Date(Date.parse("2026-11-23T08:00:00Z") + 366 * 86_400_000).toISOString())).status).toBe(202)
    const dated = await s.place({ ...base, quantity: 1, expiresAt: "2026-11-25T00:00:00Z" })
    expect(dated.body.error.message).toMatch(/only with timeInForce GTD/)
  })
})

describe("a symbol changed by another process", () => {
  it("is NOT_FOUND at the committed check though this process still resolves the old symbol, and nothing is placed", async () => {
    const s = await setup()
    // another process committed SCOM.KE -> SAFCOM.KE: the store has it, this process's copy does not (no afterCommit here)
    await s.engine.runtime.runPromise(
      Store.use((st) =>
        st.transact((tx) =>
          tx.put("symbols", {
            id: "SCOM.KE",
            partition: "global",
            sortKey: "SCOM.KE",
            body: { listingId: "SCOM.KE", symbol: "SAFCOM.KE", formerSymbols: ["SCOM.KE"], actionId: "ca_elsewhere", effectiveAt: MONDAY_OPEN }
          })
        )
      )
    )
    const r = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 1, limitPrice: 10 })
    expectError(r, 404, "NOT_FOUND")
    expect(r.body.error.message).toBe("symbol SCOM was not found: it changed to SAFCOM.KE")
    expect((await s.p.sb("GET", `/users/${s.id}/orders`)).body.count).toBe(0)
  })
})

describe("the service refuses what the gateway's decoding would", () => {
  it("trade: exactly one of quantity or cashValue, a whole quantity above 0, a positive cashValue in cents", async () => {
    const s = await setup()
    const q = await s.quote("SCOM?side=BUY&quantity=1")
    const trade = (input: Record<string, unknown>) =>
      s.service((t) => t.trade(s.principal(), "master", { symbol: "SCOM", type: "BUY", quoteId: q.quoteId, ...input }))
    const both = { code: "VALIDATION_ERROR", message: "give exactly one of quantity or cashValue", params: ["quantity", "cashValue"] }
    expect(failureOf(await trade({}))).toEqual(both)
    expect(failureOf(await trade({ quantity: 1, cashValue: 5 }))).toEqual(both)
    const quantity = { code: "VALIDATION_ERROR", message: "quantity must be a whole number above 0", param: "quantity" }
    for (const bad of [0, -1, 1.5]) expect(failureOf(await trade({ quantity: bad })), String(bad)).toEqual(quantity)
    const cash = { code: "VALIDATION_ERROR", message: "cashValue must be a positive USD amount with at most 2 decimals", param: "cashValue" }
    for (const bad of [0, -5, 1.005]) expect(failureOf(await trade({ cashValue: bad })), String(bad)).toEqual(cash)
    // the quote is still usable: none of the refusals got to it
    expect(Exit.isSuccess(await trade({ quantity: 1 }))).toBe(true)
  })
})
