/**
 * Issue 8 items 4-5 over HTTP, on both stores (postgres with DATABASE_URL), the gaps the audit found untested at this
 * level: the five quote errors each with its status (QUOTE_REQUIRED, QUOTE_NOT_FOUND, QUOTE_SCOPE_MISMATCH,
 * STALE_QUOTE, QUOTE_ORDER_MISMATCH), MARKET_CLOSED and a SELL beyond the holdings (422) writing nothing;
 * `executionSla` live while queued and null once the order left the queue (D-330, E-004), in the engine and in the
 * contract's examples; the filters of `GET /orders` and `GET /users/{id}/orders` (status with the aliases PROCESSING
 * and COMPLETED, symbol, inclusive from/to dates, from after to refused), newest first. Every answer is checked
 * against the contract by the harness.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { parse } from "yaml"
import { Orders, timeSortKey } from "../../engine/app/docs.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store } from "../../engine/store/port.ts"
import { eventsOf, eventWatcher, partnerOf, storeDocs, type TraceEvent, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { tagsFor } from "../support/stores.ts"

const DATABASE_URL = process.env.DATABASE_URL

type Engine = ReturnType<typeof startEngine>
const engines: Array<Engine> = []
const scopes: Array<Scope.Closeable> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
  for (const s of scopes.splice(0)) await Effect.runPromise(Scope.close(s, Exit.void))
})

const setup = async (store: "memory" | "postgres") => {
  let databaseUrl: string | undefined
  if (store === "postgres") {
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    databaseUrl = await Effect.runPromise(Scope.provide(withTemporaryDatabase(DATABASE_URL ?? ""), scope))
  }
  const engine = startEngine(databaseUrl === undefined ? {} : { store: "postgres", databaseUrl })
  engines.push(engine)
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, `rules-${store}`, 500)
  const quote = async (query: string) => {
    const r = await p.sb("GET", `/quote/${query}`)
    expect(r.status, JSON.stringify(r.body)).toBe(200)
    return r.body as { quoteId: string }
  }
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  const fill = async (orderId: string) => expect((await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {})).status).toBe(200)
  /** Everything a refused request must leave as it was: balances, orders, quotes' states. */
  const state = async () => JSON.stringify(await Promise.all(["balances", "orders", "quotes"].map((c) => storeDocs(engine, c, p.partition("sandbox")))))
  return { engine, p, id, trade, quote, advance, fill, state }
}

const expectError = (r: { status: number; body: any }, status: number, code: string) => {
  expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([status, code])
  expect(typeof r.body.error.message).toBe("string")
}

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void
const contract = parse(readFileSync(join(import.meta.dirname, "..", "..", "spec", "openapi.yaml"), "utf8")) as {
  components: { schemas: Record<string, { allOf?: Array<{ properties?: { event?: { const?: string } } }> }>; examples: Record<string, { value: any }> }
}
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: "urn:sokoni:openapi", components: contract.components })
/** The contract's envelope schema of the event `name` (its webhook payload). */
const eventSchema = (name: string) => {
  const entry = Object.entries(contract.components.schemas).find(([, x]) => x.allOf?.[1]?.properties?.event?.const === name)
  if (entry === undefined) throw new Error(`no event schema for ${name}`)
  return ajv.compile({ $ref: `urn:sokoni:openapi#/components/schemas/${entry[0]}` })
}

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && DATABASE_URL === undefined)(`trading rules (${store})`, tagsFor(store), () => {
    it("answers each of the five quote errors with its status, and none of them writes anything", async () => {
      const s = await setup(store)
      const path = `/users/${s.id}/trade`
      const before = await s.state()
      // QUOTE_REQUIRED: a MARKET order without quoteId
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1 }), 400, "QUOTE_REQUIRED")
      // QUOTE_NOT_FOUND: never issued
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_never_issued" }), 404, "QUOTE_NOT_FOUND")
      // QUOTE_SCOPE_MISMATCH: a master-account quote used on the sub-account, and the reverse
      const master = await s.quote("SCOM?side=BUY&quantity=1")
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: master.quoteId }), 403, "QUOTE_SCOPE_MISMATCH")
      const mine = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
      expectError(await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mine.quoteId }), 403, "QUOTE_SCOPE_MISMATCH")
      // QUOTE_ORDER_MISMATCH: another symbol, side or quantity than quoted
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "SELL", quantity: 1, quoteId: mine.quoteId }), 409, "QUOTE_ORDER_MISMATCH")
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 2, quoteId: mine.quoteId }), 409, "QUOTE_ORDER_MISMATCH")
      expectError(await s.p.sb("POST", path, { symbol: "EQTY", type: "BUY", quantity: 1, quoteId: mine.quoteId }), 409, "QUOTE_ORDER_MISMATCH")
      // none of the refusals used the quote up or moved money: the balances and orders are as before
      const afterRefusals = JSON.parse(await s.state()) as Array<ReadonlyArray<unknown>>
      const initial = JSON.parse(before) as Array<ReadonlyArray<unknown>>
      expect(afterRefusals[0]).toEqual(initial[0])
      expect(afterRefusals[1]).toEqual(initial[1])
      // STALE_QUOTE: used once, then again
      const used = await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mine.quoteId })
      expect(used.status).toBe(202)
      const afterUse = await s.state()
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: mine.quoteId }), 409, "STALE_QUOTE")
      // STALE_QUOTE: past its 60 s TTL unused
      const late = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
      await s.advance(60)
      const beforeLate = await s.state()
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: late.quoteId }), 409, "STALE_QUOTE")
      expect(await s.state()).toBe(beforeLate)
      expect(afterUse).not.toBe(before)
    }, 60_000)

    it("refuses a MARKET order while the exchange is closed (422 MARKET_CLOSED) and a SELL beyond the holdings (422), writing nothing", async () => {
      const s = await setup(store)
      const path = `/users/${s.id}/trade`
      // 4 units held: bought and filled
      const bought = await s.trade("BUY", 4)
      await s.fill(bought.orderId)
      const sell5 = await s.quote(`SCOM?side=SELL&quantity=5&subAccountId=${s.id}`)
      const before = await s.state()
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "SELL", quantity: 5, quoteId: sell5.quoteId }), 422, "INSUFFICIENT_HOLDINGS")
      expect(await s.state()).toBe(before)
      // a BUY beyond the wallet is 400 INSUFFICIENT_FUNDS and leaves its quote usable
      const big = await s.quote(`SCOM?side=BUY&quantity=100000&subAccountId=${s.id}`)
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 100_000, quoteId: big.quoteId }), 400, "INSUFFICIENT_FUNDS")
      const [balancesNow, ordersNow, quotesNow] = JSON.parse(await s.state()) as Array<Array<{ body: { quoteId?: string; status?: string } }>>
      const [balancesThen, ordersThen] = JSON.parse(before) as Array<unknown>
      expect([balancesNow, ordersNow]).toEqual([balancesThen, ordersThen])
      expect(quotesNow?.find((d) => d.body.quoteId === big.quoteId)?.body.status).toBe("OPEN")
      // exactly the holding sells
      const sell4 = await s.quote(`SCOM?side=SELL&quantity=4&subAccountId=${s.id}`)
      expect((await s.p.sb("POST", path, { symbol: "SCOM", type: "SELL", quantity: 4, quoteId: sell4.quoteId })).status).toBe(202)
      // NSE closes at 15:00 Nairobi (12:00Z); the test starts Monday 08:00Z. A quote issued just before the close is
      // refused just after it.
      await s.advance(4 * 3_600 - 30)
      const lastMinute = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
      await s.advance(30)
      const closed = await s.state()
      expectError(await s.p.sb("POST", path, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: lastMinute.quoteId }), 422, "MARKET_CLOSED")
      expect(await s.state()).toBe(closed)
    }, 60_000)

    it("refuses trading on a frozen or a closed sub-account (403) and on one without verified KYC (KYC_REQUIRED)", async () => {
      const s = await setup(store)
      const other = (await s.p.createUser("sandbox", { externalId: `closing-${store}` })).subAccountId
      const tryBuy = async (account: string) => {
        const q = await s.p.sb("GET", `/quote/SCOM?side=BUY&quantity=1&subAccountId=${account}`)
        expect(q.status).toBe(200)
        return s.p.sb("POST", `/users/${account}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.body.quoteId })
      }
      expectError(await tryBuy(other), 403, "KYC_REQUIRED")
      await s.p.verify(other)
      expect((await s.p.sb("DELETE", `/users/${other}`)).status).toBe(200)
      const before = await s.state()
      const closed = await tryBuy(other)
      expectError(closed, 403, "FORBIDDEN")
      expect(closed.body.error.message).toContain("closed")
      expect((await s.p.sb("POST", `/users/${s.id}/freeze`)).status).toBe(200)
      const frozen = await tryBuy(s.id)
      expectError(frozen, 403, "FORBIDDEN")
      expect(frozen.body.error.message).toContain("frozen")
      // neither refusal wrote an order or moved money (the quotes were issued: a quote is a read)
      const [balances, orders] = JSON.parse(await s.state()) as Array<unknown>
      const [balancesBefore, ordersBefore] = JSON.parse(before) as Array<unknown>
      expect([balances, orders]).toEqual([balancesBefore, ordersBefore])
    }, 60_000)

    it("scans at most 1,000 orders per request: a page can be empty with hasMore, and its cursor continues", async () => {
      const s = await setup(store)
      const mine = await s.trade("BUY", 1)
      await s.advance(1)
      // 1,001 master orders newer than the sub-account's one, stored directly (placing them would take minutes)
      const template = (await storeDocs(s.engine, "orders", s.p.partition("sandbox")))[0]?.body as OrderRecord
      const base = template.createdAt + 1_000
      await s.engine.runtime.runPromise(
        Store.use((st) =>
          st.transact((tx) =>
            Effect.forEach(
              Array.from({ length: 1001 }, (_, i) => ({
                ...template,
                orderId: `ord_bulk_${String(i).padStart(5, "0")}`,
                account: "master",
                createdAt: base + i
              })),
              (o) => Orders.put(tx, o.orderId, o.partition, timeSortKey(o.createdAt, o.orderId), o),
              { discard: true }
            )
          )
        )
      )
      const first = await s.p.sb("GET", `/users/${s.id}/orders`)
      expect(first.body).toMatchObject({ orders: [], count: 0, hasMore: true })
      const second = await s.p.sb("GET", `/users/${s.id}/orders?cursor=${first.body.nextCursor}`)
      expect(second.body).toMatchObject({ count: 1, hasMore: false, nextCursor: null })
      expect(second.body.orders[0].orderId).toBe(mine.orderId)
      // the master's list fills its page of 200 from the same scan, and says there is more
      expect((await s.p.sb("GET", "/orders?limit=200")).body).toMatchObject({ count: 200, hasMore: true })
    }, 120_000)

    it("shows executionSla live while the order is queued and null once it left the queue; bid and ask are null", async () => {
      const s = await setup(store)
      // every stock item (list, quotes, movers) carries bid and ask, always null (spec: "Always null currently")
      const items = await Promise.all(["/stocks", "/market/quotes?symbols=SCOM.KE,EQTY.KE", "/market/movers"].map((u) => s.p.sb("GET", u)))
      const rows = items.flatMap((r) => {
        expect(r.status).toBe(200)
        return (r.body.stocks ?? r.body.data ?? r.body.movers ?? r.body.gainers ?? []) as Array<Record<string, unknown>>
      })
      expect(rows.length).toBeGreaterThanOrEqual(3)
      for (const row of rows) expect([row.bid, row.ask], String(row.symbol)).toEqual([null, null])
      const placed = await s.trade("BUY", 2)
      const get = async (orderId: string) => ((await s.p.sb("GET", `/users/${s.id}/orders`)).body.orders as Array<any>).find((o) => o.orderId === orderId)
      expect(placed.executionSla).toMatchObject({
        queuedAt: "2026-11-23T08:00:00.000Z",
        deadlineAt: "2026-11-23T08:05:00.000Z",
        elapsedSeconds: 0,
        breached: false
      })
      await s.advance(301)
      expect((await get(placed.orderId)).executionSla).toMatchObject({ elapsedSeconds: 301, breached: true })
      await s.fill(placed.orderId)
      const filled = await get(placed.orderId)
      expect([filled.status, filled.executionSla]).toEqual(["FILLED", null])
      const rejected = await s.trade("BUY", 1)
      expect(
        (
          await s.engine.admin("POST", `/_sim/desk/orders/${rejected.orderId}/reject`, {
            rejectionCode: "LIQUIDITY_UNAVAILABLE",
            rejectionReason: "no liquidity"
          })
        ).status
      ).toBe(200)
      expect((await get(rejected.orderId)).executionSla).toBeNull()
      const cancelled = await s.trade("BUY", 1)
      expect((await s.p.sb("DELETE", `/orders/${cancelled.orderId}`)).status).toBe(200)
      expect((await get(cancelled.orderId)).executionSla).toBeNull()
    }, 60_000)

    it("announces quote.expired once, at the 60 s TTL of an unused quote, in the contract's payload; a used quote never", async () => {
      const s = await setup(store)
      const watch = eventWatcher(s.engine)
      await watch()
      const unused = await s.quote(`SCOM?side=BUY&quantity=3&subAccountId=${s.id}`)
      const byCash = (await s.p.sb("GET", `/quote/SCOM?side=BUY&cashValue=5&subAccountId=${s.id}`)).body
      const used = await s.quote(`SCOM?side=BUY&quantity=1&subAccountId=${s.id}`)
      expect((await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: used.quoteId })).status).toBe(202)
      await s.advance(59.999)
      expect((await watch()).filter((e) => e.event === "quote.expired")).toEqual([])
      await s.advance(0.001)
      await s.advance(120)
      const expired = (await watch()).filter((e) => e.event === "quote.expired") as Array<TraceEvent & { eventId: string; timestamp: string }>
      expect(expired.map((e) => [e.data.quoteId, e.timestamp])).toEqual([
        [unused.quoteId, "2026-11-23T08:01:00.000Z"],
        [byCash.quoteId, "2026-11-23T08:01:00.000Z"]
      ])
      // a cashValue quote's payload carries its cash and the units it showed
      expect(expired[1]?.data).toMatchObject({ cashValue: 5, quantity: byCash.quantity, exchange: "NSE" })
      expect(byCash.quantity).toBeGreaterThan(0)
      expect(expired[0]?.data).toMatchObject({
        symbol: "SCOM.KE",
        subAccountId: s.id,
        side: "BUY",
        quantity: 3,
        cashValue: null,
        expiresAt: "2026-11-23T08:01:00.000Z"
      })
      const validate = eventSchema("quote.expired")
      const e = expired[0] as TraceEvent & { eventId: string; timestamp: string }
      const body = { eventId: e.eventId, event: e.event, timestamp: e.timestamp, data: e.data, isSandbox: true }
      expect(validate(body), ajv.errorsText(validate.errors)).toBe(true)
      const cash = expired[1] as TraceEvent & { eventId: string; timestamp: string }
      expect(
        validate({ eventId: cash.eventId, event: cash.event, timestamp: cash.timestamp, data: cash.data, isSandbox: true }),
        ajv.errorsText(validate.errors)
      ).toBe(true)
      expect(validate({ ...body, data: { quoteId: unused.quoteId } })).toBe(false)
    }, 60_000)

    it("every event of a trading day validates against the contract's envelope schema of its name", async () => {
      const s = await setup(store)
      await s.p.credit("sandbox", 200)
      // sub-account: filled BUY, partly filled then filled SELL, rejected BUY, cancelled BUY and SELL
      const bought = await s.trade("BUY", 20)
      await s.fill(bought.orderId)
      const sold = await s.trade("SELL", 10)
      expect((await s.engine.admin("POST", `/_sim/desk/orders/${sold.orderId}/fill`, { quantity: 4 })).status).toBe(200)
      await s.fill(sold.orderId)
      const rejected = await s.trade("BUY", 1)
      const reason = { rejectionCode: "LIQUIDITY_UNAVAILABLE", rejectionReason: "no liquidity" }
      expect((await s.engine.admin("POST", `/_sim/desk/orders/${rejected.orderId}/reject`, reason)).status).toBe(200)
      for (const side of ["BUY", "SELL"] as const) {
        const open = await s.trade(side, 2)
        expect((await s.p.sb("DELETE", `/orders/${open.orderId}`)).status).toBe(200)
      }
      // master account: a filled BUY and a rejected one
      for (const decide of ["fill", "reject"] as const) {
        const q = await s.quote("SCOM?side=BUY&quantity=3")
        const placed = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: q.quoteId })
        expect(placed.status).toBe(202)
        expect((await s.engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/${decide}`, decide === "fill" ? {} : reason)).status).toBe(200)
      }
      // an unused quote expires
      await s.quote(`SCOM?side=SELL&quantity=1&subAccountId=${s.id}`)
      await s.advance(5 * 3_600)
      const events = await eventsOf(s.engine)
      const names = new Set(events.map((e) => e.event))
      for (const name of [
        "order.pending",
        "order.filled",
        "trade.settled",
        "order.rejected",
        "trade.rejected",
        "order.cancelled",
        "deposit.confirmed",
        "kyc.updated",
        "wallet.credited",
        "quote.expired"
      ])
        expect(names.has(name), name).toBe(true)
      for (const e of events as Array<TraceEvent & { eventId: string; timestamp: string }>) {
        const validate = eventSchema(e.event)
        const body = { eventId: e.eventId, event: e.event, timestamp: e.timestamp, data: e.data, isSandbox: true }
        expect(validate(body), `${e.event}: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(e.data)}`).toBe(true)
      }
      // master orders say so and name no sub-account (spec: subAccountId omitted for master, accountType only there)
      const masterPending = events.filter((e) => e.event === "order.pending" && e.data.accountType !== undefined)
      expect(masterPending).toHaveLength(2)
      for (const e of masterPending) expect("subAccountId" in e.data).toBe(false)
    }, 60_000)

    it("charges 0.75% plus the partner's markupBps on the gross, and shows the FX of the order both ways round", async () => {
      const s = await setup(store)
      expect((await s.p.sb("PATCH", "/settings", { markupBps: 150 })).status).toBe(200)
      const walletBefore = Math.round((await s.p.sb("GET", `/users/${s.id}`)).body.walletBalance * 100)
      const q = await s.p.sb("GET", `/quote/SCOM?side=BUY&quantity=300&subAccountId=${s.id}`)
      expect(q.status).toBe(200)
      const placed = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "BUY", quantity: 300, quoteId: q.body.quoteId })
      expect(placed.status).toBe(202)
      const o = placed.body
      // gross in USD cents of 300 units at priceAtOrder KES, fxRateAtOrder KES per USD; fees each rounded to the cent
      const gross = Math.round((300 * o.priceAtOrder * 100) / o.fxRateAtOrder)
      const base = Math.round((gross * 75) / 10_000)
      const markup = Math.round((gross * 150) / 10_000)
      expect(markup).toBeGreaterThan(base)
      expect([o.baseFee, o.partnerMarkupFee, o.fee, o.totalAmount].map((x: number) => Math.round(x * 100))).toEqual([
        base,
        markup,
        base + markup,
        gross + base + markup
      ])
      expect([q.body.estimatedGross, q.body.estimatedFee, q.body.estimatedTotal].map((x: number) => Math.round(x * 100))).toEqual([
        gross,
        base + markup,
        gross + base + markup
      ])
      // the wallet paid exactly totalAmount
      const walletAfter = Math.round((await s.p.sb("GET", `/users/${s.id}`)).body.walletBalance * 100)
      expect(walletBefore - walletAfter).toBe(gross + base + markup)
      // FX: the local price in USD at the order's rate; fxConversion from USD to KES at that same rate
      expect(o.usdPriceAtOrder).toBeCloseTo(o.priceAtOrder / o.fxRateAtOrder, 4)
      expect([o.currency, o.localCurrency]).toEqual(["USD", "KES"])
      expect(o.fxConversion).toEqual({ fromCurrency: "USD", toCurrency: "KES", rate: o.fxRateAtOrder, source: o.fxSource, asOf: o.fxRateAsOf })
      // a SELL of the filled units receives gross - fee
      await s.fill(o.orderId)
      const sq = await s.quote(`SCOM?side=SELL&quantity=300&subAccountId=${s.id}`)
      const sell = (await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "SCOM", type: "SELL", quantity: 300, quoteId: sq.quoteId })).body
      const sellGross = Math.round((300 * sell.priceAtOrder * 100) / sell.fxRateAtOrder)
      const sellFee = Math.round((sellGross * 75) / 10_000) + Math.round((sellGross * 150) / 10_000)
      expect([Math.round(sell.fee * 100), Math.round(sell.totalAmount * 100)]).toEqual([sellFee, sellGross - sellFee])
      const beforeProceeds = Math.round((await s.p.sb("GET", `/users/${s.id}`)).body.walletBalance * 100)
      await s.fill(sell.orderId)
      const afterProceeds = Math.round((await s.p.sb("GET", `/users/${s.id}`)).body.walletBalance * 100)
      expect(afterProceeds - beforeProceeds).toBe(sellGross - sellFee)
    }, 60_000)

    it("filters GET /orders and GET /users/{id}/orders by status (aliases included), symbol and inclusive dates, newest first", async () => {
      const s = await setup(store)
      const list = async (base: string, query: string) => {
        const r = await s.p.sb("GET", `${base}?${query}`)
        expect(r.status, JSON.stringify(r.body)).toBe(200)
        return (r.body.orders as Array<{ orderId: string }>).map((o) => o.orderId)
      }
      const userBase = `/users/${s.id}/orders`
      // Monday: a filled SCOM order, then a pending one; Tuesday: a pending EQTY order
      const filled = await s.trade("BUY", 1)
      await s.fill(filled.orderId)
      await s.advance(60)
      const pending = await s.trade("BUY", 1)
      await s.advance(86_400)
      const eq = await s.quote(`EQTY?side=BUY&quantity=1&subAccountId=${s.id}`)
      const eqty = await s.p.sb("POST", `/users/${s.id}/trade`, { symbol: "EQTY", type: "BUY", quantity: 1, quoteId: eq.quoteId })
      expect(eqty.status).toBe(202)
      const eqtyId = eqty.body.orderId as string
      expect(await list(userBase, "")).toEqual([eqtyId, pending.orderId, filled.orderId])
      expect(await list(userBase, "status=PENDING")).toEqual([eqtyId, pending.orderId])
      expect(await list(userBase, "status=PROCESSING")).toEqual([eqtyId, pending.orderId])
      expect(await list(userBase, "status=COMPLETED")).toEqual([filled.orderId])
      expect(await list(userBase, "status=FILLED")).toEqual([filled.orderId])
      expect(await list(userBase, "status=CANCELLED")).toEqual([])
      expect(await list(userBase, "symbol=SCOM")).toEqual([pending.orderId, filled.orderId])
      expect(await list(userBase, "symbol=eqty.ke")).toEqual([eqtyId])
      // dates are UTC days, both ends inclusive; a timestamp bound is exact
      expect(await list(userBase, "from=2026-11-24")).toEqual([eqtyId])
      expect(await list(userBase, "to=2026-11-23")).toEqual([pending.orderId, filled.orderId])
      expect(await list(userBase, "from=2026-11-23&to=2026-11-23")).toEqual([pending.orderId, filled.orderId])
      expect(await list(userBase, "from=2026-11-23T08:00:30Z")).toEqual([eqtyId, pending.orderId])
      expect(await list(userBase, "from=2026-11-25")).toEqual([])
      const reversed = await s.p.sb("GET", `${userBase}?from=2026-11-24&to=2026-11-23`)
      expectError(reversed, 400, "VALIDATION_ERROR")
      // pages: limit 1 walks the three orders newest first; limits and cursors out of range or foreign are 400
      const page1 = (await s.p.sb("GET", `${userBase}?limit=1`)).body
      const page2 = (await s.p.sb("GET", `${userBase}?limit=1&cursor=${page1.nextCursor}`)).body
      const page3 = (await s.p.sb("GET", `${userBase}?limit=2&cursor=${page2.nextCursor}`)).body
      expect([page1, page2, page3].map((pg) => [pg.orders.map((o: { orderId: string }) => o.orderId), pg.count, pg.hasMore])).toEqual([
        [[eqtyId], 1, true],
        [[pending.orderId], 1, true],
        [[filled.orderId], 1, false]
      ])
      expect(page3.nextCursor).toBeNull()
      for (const [query, param] of [
        ["limit=0", "limit"],
        ["limit=201", "limit"],
        ["cursor=not-a-cursor", "cursor"],
        ["status=DONE", "status"],
        ["from=2026-13-01", "from"]
      ] as const) {
        const r = await s.p.sb("GET", `${userBase}?${query}`)
        expectError(r, 400, r.body?.error?.code === "INVALID_TYPE" ? "INVALID_TYPE" : "VALIDATION_ERROR")
        expect(r.body.error.param ?? r.body.error.params, query).toEqual(param)
      }
      // a cursor of the sub-account's list does not page the master's
      expectError(await s.p.sb("GET", `/orders?cursor=${page1.nextCursor}`), 400, "VALIDATION_ERROR")
      // the master account's list has the same filters over its own orders only
      const master = await s.quote("SCOM?side=BUY&quantity=1")
      await s.p.credit("sandbox", 100)
      const mine = await s.p.sb("POST", "/trade", { symbol: "SCOM", type: "BUY", quantity: 1, quoteId: master.quoteId })
      expect(mine.status).toBe(202)
      expect(await list("/orders", "")).toEqual([mine.body.orderId])
      expect(await list("/orders", "status=PROCESSING&symbol=SCOM.KE&from=2026-11-24")).toEqual([mine.body.orderId])
      expect(await list("/orders", "status=COMPLETED")).toEqual([])
    }, 60_000)
  })
}

describe("the contract's Order examples (D-330)", () => {
  it("show executionSla only on orders still in the desk's queue", () => {
    const orders = Object.entries(contract.components.examples).filter(([, e]) => typeof e.value?.canonicalStatus === "string" && "executionSla" in e.value)
    expect(orders.length).toBeGreaterThanOrEqual(4)
    for (const [name, e] of orders) {
      const queued = e.value.canonicalStatus === "PENDING" || e.value.canonicalStatus === "PARTIALLY_FILLED"
      expect(e.value.executionSla === null, name).toBe(!queued)
    }
  })
})
