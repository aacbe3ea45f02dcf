/**
 * What engine/app/trading.ts (placement, listing, reading and filling orders: its first 480 lines) answers and records,
 * pinned where the mutation run found nothing checking it (memory store, manual clock). Over HTTP: the account fields
 * and the BUY-only totalCost of order.pending, order.filled's totalCost / proceeds / feeAmount / accountType,
 * order.cancelled's subAccountId and BUY-only refunded, a GTC order living past the next clock tick, the messages and
 * params of the quote, funds and holdings refusals, a quote of another partner being QUOTE_NOT_FOUND, a BUY exactly
 * within the wallet, the ids' prefixes, the ledger kinds of placements, the 1,000-record scan of GET /orders at its
 * boundaries, and the planted fee-rounding defect's arithmetic. Through the service API (where the gateway's decoding
 * already refuses the input over HTTP, the service must refuse it too): trade's quantity / cashValue checks,
 * listOrders' from / to (inclusive at the millisecond), getOrder in the sandbox, a fill price with 5 decimals.
 */
import { Effect, Exit } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Orders, timeSortKey } from "../../engine/app/docs.ts"
import type { Principal } from "../../engine/app/principal.ts"
import { TradingService } from "../../engine/app/trading.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Store } from "../../engine/store/port.ts"
import { eventWatcher, failureOf, partnerOf, storeDocs, type TraceEvent, tradingAccount } from "./accounts-kit.ts"
import { ADMIN, MONDAY_OPEN, startEngine } from "./harness.ts"

type Engine = ReturnType<typeof startEngine>
const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

const setup = async (usd = 500) => {
  const engine = startEngine()
  engines.push(engine)
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, "survivor-a", usd)
  const fill = async (orderId: string) => {
    const r = await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {})
    expect(r.status).toBe(200)
    return r.body
  }
  const quote = async (query: string) => {
    const r = await p.sb("GET", `/quote/${query}`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { quoteId: string; [k: string]: any }
  }
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  const principal = (environment: "sandbox" | "production" = "sandbox"): Principal => ({
    partnerId: p.keys.partnerId,
    environment,
    keyKind: "full",
    tier: "starter",
    markupBps: 0,
    partition: p.partition("sandbox")
  })
  /** Runs a TradingService call and answers its exit. */
  const service = <A, E>(f: (t: TradingService["Service"]) => Effect.Effect<A, E>) => engine.runtime.runPromiseExit(TradingService.use(f))
  return { engine, p, id, trade, fill, quote, advance, principal, service, watch: eventWatcher(engine) }
}

const only = (events: ReadonlyArray<TraceEvent>, name: string) => events.filter((e) => e.event === name).map((e) => e.data)

const expectError = (r: { status: number; body: any }, status: number, code: string) =>
  expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([status, code])

describe("order events name the account and the side's money", () => {
  it("order.pending: accountType MASTER on the master, subAccountId on a sub-account, totalCost only on a BUY", async () => {
    const s = await setup()
    const masterQuote = await s.quote("SCOM?side=BUY&quantity=3")
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: masterQuote.quoteId })
    expect(master.status).toBe(202)
    const bought = await s.trade("BUY", 4)
    await s.fill(bought.orderId)
    const sold = await s.trade("SELL", 2)
    const pending = only(await s.watch(), "order.pending")
    const byId = (id: string) => pending.find((d) => d.orderId === id)
    expect(byId(master.body.orderId)).toMatchObject({ accountType: "MASTER", totalCost: master.body.totalAmount })
    expect(byId(master.body.orderId)).not.toHaveProperty("subAccountId")
    expect(byId(bought.orderId)).toMatchObject({ subAccountId: s.id, totalCost: bought.totalAmount })
    expect(byId(bought.orderId)).not.toHaveProperty("accountType")
    expect(byId(sold.orderId)).toMatchObject({ subAccountId: s.id, type: "SELL" })
    expect(byId(sold.orderId)).not.toHaveProperty("totalCost")
  })

  it("order.filled: a BUY's totalCost is gross plus fee, a SELL's proceeds gross minus fee, feeAmount the fee; accountType only on the master", async () => {
    const s = await setup()
    const bought = await s.trade("BUY", 2000)
    await s.fill(bought.orderId)
    const sold = await s.trade("SELL", 1500)
    await s.fill(sold.orderId)
    const masterQuote = await s.quote("SCOM?side=BUY&quantity=200")
    const master = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 200, quoteId: masterQuote.quoteId })
    await s.fill(master.body.orderId)
    const filled = only(await s.watch(), "order.filled")
    const byId = (id: string) => filled.find((d) => d.orderId === id)
    // filled whole at the price of the order: the totals are the placement's
    expect(bought.fee).toBeGreaterThan(0)
    expect(byId(bought.orderId)).toMatchObject({ subAccountId: s.id, totalCost: bought.totalAmount, feeAmount: bought.fee })
    expect(byId(bought.orderId)).not.toHaveProperty("proceeds")
    expect(byId(bought.orderId)).not.toHaveProperty("accountType")
    expect(sold.fee).toBeGreaterThan(0)
    expect(byId(sold.orderId)).toMatchObject({ subAccountId: s.id, proceeds: sold.totalAmount, feeAmount: sold.fee })
    expect(byId(sold.orderId)).not.toHaveProperty("totalCost")
    expect(byId(master.body.orderId)).toMatchObject({ accountType: "MASTER", subAccountId: null, totalCost: master.body.totalAmount })
  })

  it("order.cancelled: subAccountId null on the master and the sub-account's id otherwise; refunded only on a BUY", async () => {
    const s = await setup()
    const bought = await s.trade("BUY", 4)
    await s.fill(bought.orderId)
    const sell = await s.p.sb("POST", `/users/${s.id}/trade`, {
      symbol: "SCOM",
      type: "SELL",
      orderType: "LIMIT",
      quantity: 2,
      limitPrice: 99,
      timeInForce: "GTC"
    })
    expect(sell.status, JSON.stringify(sell.body)).toBe(202)
    const buy = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 2, limitPrice: 0.01, timeInForce: "GTC" })
    expect(buy.status, JSON.stringify(buy.body)).toBe(202)
    expect((await s.p.sb("DELETE", `/orders/${sell.body.orderId}`)).status).toBe(200)
    expect((await s.p.sb("DELETE", `/orders/${buy.body.orderId}`)).status).toBe(200)
    const cancelled = only(await s.watch(), "order.cancelled")
    const sold = cancelled.find((d) => d.orderId === sell.body.orderId)
    expect(sold).toMatchObject({ subAccountId: s.id, type: "SELL" })
    expect(sold).not.toHaveProperty("refunded")
    expect(cancelled.find((d) => d.orderId === buy.body.orderId)).toMatchObject({ subAccountId: null, type: "BUY", refunded: buy.body.totalAmount })
  })
})

describe("resting orders", () => {
  it("a GTC order has no deadline: no expiry job, still WORKING days later", async () => {
    const s = await setup()
    const r = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", orderType: "LIMIT", quantity: 1, limitPrice: 0.01, timeInForce: "GTC" })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    expect(r.body.orderId).toMatch(/^ord_/)
    await s.advance(1)
    await s.advance(3 * 86_400)
    const listed = (await s.p.sb("GET", "/orders")).body.orders.find((o: { orderId: string }) => o.orderId === r.body.orderId)
    expect(listed.status).toBe("WORKING")
    // and no expiry job was ever scheduled for it: none ran and failed (a failing job is kept in deadJobs)
    expect(await storeDocs(s.engine, "deadJobs", "global")).toEqual([])
  })

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
})

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
    await s.advance(61)
    const stale = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mine.quoteId })
    expectError(stale, 409, "STALE_QUOTE")
    expect(stale.body.error).toMatchObject({ param: "quoteId", message: "the quote expired (60 s TTL); fetch a new one" })
    // NSE closes at 12:00Z; the test starts at 08:00Z and is at 08:01:01
    await s.advance(4 * 3_600 - 61 - 20)
    const late = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
    await s.advance(20)
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

  it("listOrders: from after to is refused, from alone or equal to to is not; both bounds include their millisecond", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 1)
    const at = Date.parse(placed.createdAt)
    const list = (query: { from?: number; to?: number }) => s.service((t) => t.listOrders(s.principal(), s.id, query))
    expect(failureOf(await list({ from: at + 1, to: at }))).toEqual({ code: "VALIDATION_ERROR", message: "from is after to", params: ["from", "to"] })
    const count = async (query: { from?: number; to?: number }) => {
      const exit = await list(query)
      if (!Exit.isSuccess(exit)) throw new Error(String(exit.cause))
      return exit.value.count
    }
    expect(await count({ from: at })).toBe(1)
    expect(await count({ from: at, to: at })).toBe(1)
    expect(await count({ to: at })).toBe(1)
    expect(await count({ from: at + 1 })).toBe(0)
    expect(await count({ to: at - 1 })).toBe(0)
  })

  it("getOrder is FORBIDDEN in the sandbox and answers the order in production", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 1)
    expect(failureOf(await s.service((t) => t.getOrder(s.principal("sandbox"), placed.orderId)))).toEqual({
      code: "FORBIDDEN",
      message: "GET /orders/{orderId} is not available in the sandbox (spec: sandbox unsupported); use GET /orders or GET /test-tools/orders"
    })
    const live = await s.service((t) => t.getOrder(s.principal("production"), placed.orderId))
    expect(Exit.isSuccess(live) && live.value.orderId).toBe(placed.orderId)
  })

  it("deskFill refuses a price with more than 4 decimals, and names its execution report exr_", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 2)
    expect(failureOf(await s.service((t) => t.deskFill(placed.orderId, { price: 0.12345 })))).toEqual({
      code: "VALIDATION_ERROR",
      message: "price must be positive with at most 4 decimals",
      param: "price"
    })
    const filled = await s.fill(placed.orderId)
    expect(filled.lastExecutionReportId).toMatch(/^exr_[0-9a-z]{16}$/)
  })
})

describe("GET /orders scans at most 1,000 records", () => {
  const bulk = async (engine: Engine, template: OrderRecord, count: number, from: number, prefix: string) =>
    engine.runtime.runPromise(
      Store.use((st) =>
        st.transact((tx) =>
          Effect.forEach(
            Array.from({ length: count }, (_, i) => ({
              ...template,
              orderId: `ord_${prefix}_${String(i).padStart(5, "0")}`,
              account: "master",
              createdAt: from + i
            })),
            (o) => Orders.put(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o),
            { discard: true }
          )
        )
      )
    )

  it("exactly 1,000 records are all looked at with no more to come; the 1,001st is left for the next page", async () => {
    const s = await setup()
    const mine = await s.trade("BUY", 1)
    const template = (await storeDocs(s.engine, "orders", s.p.partition("sandbox")))[0]?.body as OrderRecord
    // 999 master orders newer than the sub-account's: 1,000 in the partition
    await bulk(s.engine, template, 999, template.createdAt + 1_000, "a")
    expect((await s.p.sb("GET", `/users/${s.id}/orders`)).body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
    // the master's orders filtered on a symbol none has: nothing, and nothing more
    expect((await s.p.sb("GET", "/orders?symbol=EQTY")).body).toMatchObject({ count: 0, hasMore: false, nextCursor: null })
    // one more: the sub-account's order is the 1,001st, beyond this scan
    await bulk(s.engine, template, 1, template.createdAt + 5_000, "b")
    const first = await s.p.sb("GET", `/users/${s.id}/orders`)
    expect(first.body).toMatchObject({ orders: [], count: 0, hasMore: true })
    const second = await s.p.sb("GET", `/users/${s.id}/orders?cursor=${first.body.nextCursor}`)
    expect(second.body.orders.map((o: { orderId: string }) => o.orderId)).toEqual([mine.orderId])
  }, 30_000)
})

describe("the planted fee-rounding defect (sim/defects.ts, test only)", () => {
  it("rounds the base fee up to the next cent; BUY total gross plus fee, escrowed; SELL total gross minus fee, nothing escrowed", async () => {
    const engine = makeInProcessEngine({
      store: "memory",
      clock: "manual",
      start: MONDAY_OPEN,
      seed: 1,
      desk: "manual",
      adminToken: ADMIN,
      plantDefects: ["fee-rounding"]
    })
    engines.push(engine)
    let n = 0
    const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const r = await engine.fetch(
        new Request(`http://sokoni.test${path}`, {
          method,
          headers: { "content-type": "application/json", ...(method === "GET" ? {} : { "idempotency-key": `planted-${++n}` }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      const text = await r.text()
      return { status: r.status, body: r.headers.get("content-type")?.startsWith("application/json") === true ? JSON.parse(text) : text }
    }
    const admin = (method: string, path: string, body?: unknown) => call(method, path, { authorization: `Bearer ${ADMIN}` }, body)
    const partner = await admin("POST", "/_sim/partners", { businessName: "Planted", email: "p@planted.test", tier: "starter", markupBps: 50 })
    expect(partner.status).toBe(201)
    const key = { "x-api-key": partner.body.sandboxKey as string }
    const partition = `${partner.body.partnerId}:sandbox`
    const wallet = async () => {
      const docs = await engine.runtime.runPromise(Store.use((st) => st.read((tx) => tx.list("balances", { partition, limit: 1000, order: "asc" }))))
      return (docs.map((d) => d.body as { account: string; cents: number }).find((b) => b.account === "wallet:master") as { cents: number }).cents
    }
    const place = async (side: "BUY" | "SELL", quantity: number) => {
      const q = await call("GET", `/api/sandbox/v1/partner/quote/SCOM?side=${side}&quantity=${quantity}`, key)
      expect(q.status).toBe(200)
      const r = await call("POST", "/api/sandbox/v1/partner/trade", key, { symbol: "SCOM", type: side, quantity, quoteId: q.body.quoteId })
      expect(r.status, JSON.stringify(r.body)).toBe(202)
      return r.body
    }
    const pendingOf = async (orderId: string) => {
      const trace = String((await admin("GET", "/_sim/trace")).body)
      const events = trace
        .split("\n")
        .filter((l) => l.includes('"kind":"event"'))
        .map((l) => JSON.parse(l) as TraceEvent)
      return events.find((e) => e.event === "order.pending" && e.data.orderId === orderId)?.data
    }
    const cents = (usd: number) => Math.round(usd * 100)
    const roundedUp = (gross: number) => Number((BigInt(gross) * 75n + 9_999n) / 10_000n)

    const before = await wallet()
    const buy = await place("BUY", 7_001)
    const buyPending = await pendingOf(buy.orderId)
    const gross = cents(buyPending.gross)
    // a base fee with a fraction of a cent, and a markup: the rounding and the sum both show
    expect((gross * 75) % 10_000).not.toBe(0)
    expect(cents(buy.partnerMarkupFee)).toBeGreaterThan(0)
    expect(cents(buy.baseFee)).toBe(roundedUp(gross))
    expect(cents(buy.fee)).toBe(roundedUp(gross) + cents(buy.partnerMarkupFee))
    expect(cents(buy.totalAmount)).toBe(gross + cents(buy.fee))
    expect(buyPending.totalCost).toBe(buy.totalAmount)
    expect(before - (await wallet())).toBe(cents(buy.totalAmount))
    expect((await admin("POST", `/_sim/desk/orders/${buy.orderId}/fill`, {})).status).toBe(200)

    const afterBuy = await wallet()
    const sell = await place("SELL", 5_001)
    const sellGross = cents((await pendingOf(sell.orderId)).gross)
    expect(cents(sell.baseFee)).toBe(roundedUp(sellGross))
    expect(cents(sell.totalAmount)).toBe(sellGross - cents(sell.fee))
    // a SELL escrows nothing: placing and rejecting it leaves the wallet as it was
    expect(await wallet()).toBe(afterBuy)
    expect((await admin("POST", `/_sim/desk/orders/${sell.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "planted" })).status).toBe(200)
    expect(await wallet()).toBe(afterBuy)
  })
})
