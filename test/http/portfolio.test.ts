/**
 * GET /portfolio and GET /users/{userId}/portfolio (D-027): cash, reserved cash and positions valued at the delayed
 * price, with expectations computed here from the orders' own answers and the stock list at the same instant.
 * Every answer is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { costBasisOf, valuePosition } from "../../engine/app/portfolio.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { partnerOf, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

const cents = (x: number) => Math.round(x * 100)

describe("portfolios", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let id: string
  let trade: Awaited<ReturnType<typeof tradingAccount>>["trade"]
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    ;({ id, trade } = await tradingAccount(p, "holder-1"))
  })
  afterEach(() => engine.dispose())
  const portfolio = async () => {
    const r = await p.sb("GET", `/users/${id}/portfolio`)
    expect(r.status).toBe(200)
    return r.body
  }

  it("starts with the deposited cash and no positions", async () => {
    expect(await portfolio()).toMatchObject({
      accountType: "SUB_ACCOUNT",
      subAccountId: id,
      externalId: "holder-1",
      cashBalance: 100,
      reservedCash: 0,
      holdings: [],
      totalMarketValueUsd: 0
    })
  })

  it("values a filled position at the delayed USD price, with its average cost and unrealised P&L", async () => {
    const order = await trade("BUY", 10)
    expect((await portfolio()).reservedCash).toBe(order.totalAmount)
    await engine.admin("POST", `/_sim/desk/orders/${order.orderId}/fill`, {})
    // let the price move so the P&L is not trivially zero
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 2 * 900 })
    const body = await portfolio()
    const item = (await p.sb("GET", "/stocks?limit=200")).body.stocks.find((s: { symbol: string }) => s.symbol === "SCOM.KE")
    const marketValue = Math.round(10 * item.usdPrice * 100)
    const averageCost = Math.round((cents(order.totalAmount) * 100) / 10) / 10_000
    expect(body.cashBalance).toBe((10_000 - cents(order.totalAmount)) / 100)
    expect(body.reservedCash).toBe(0)
    expect(body.holdings).toEqual([
      {
        symbol: "SCOM.KE",
        exchange: "NSE",
        name: item.name,
        currency: "KES",
        quantity: 10,
        availableQuantity: 10,
        averageCostUsd: averageCost,
        lastPrice: item.price,
        usdPrice: item.usdPrice,
        marketValueUsd: marketValue / 100,
        unrealizedPnlUsd: (marketValue - Math.round(10 * averageCost * 100)) / 100,
        asOf: item.asOf
      }
    ])
    expect(body.totalMarketValueUsd).toBe(marketValue / 100)
  })

  it("shows units reserved by an open SELL as unavailable", async () => {
    const bought = await trade("BUY", 10)
    await engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})
    await trade("SELL", 4)
    const [holding] = (await portfolio()).holdings
    expect([holding.quantity, holding.availableQuantity]).toEqual([10, 6])
  })

  it("answers the master account's portfolio", async () => {
    const r = await p.sb("GET", "/portfolio")
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ accountType: "MASTER", subAccountId: null, externalId: null, cashBalance: 100_000 - 100, holdings: [] })
  })

  it("answers 404 for an unknown sub-account, another partner's and the other environment's", async () => {
    expect((await p.sb("GET", "/users/usr_nope/portfolio")).status).toBe(404)
    const other = await partnerOf(engine)
    const foreign = await other.sb("GET", `/users/${id}/portfolio`)
    expect([foreign.status, foreign.body.error.code]).toEqual([404, "NOT_FOUND"])
    expect((await p.call("production", "GET", `/users/${id}/portfolio`)).status).toBe(404)
  })
})

describe("valuation (pure)", () => {
  const fill = (quantity: number, gross: number, fee: number) => ({ reportId: "r", quantity, price: 1, gross, fee, at: 0 })
  const order = (account: string, side: "BUY" | "SELL", symbol: string, fills: ReadonlyArray<ReturnType<typeof fill>>) =>
    ({ account, side, symbol, fills }) as unknown as OrderRecord

  it("averages the cost of BUY fills only, per symbol and account", () => {
    const basis = costBasisOf(
      [
        order("usr_1", "BUY", "A", [fill(2, 100, 1), fill(1, 52, 1)]),
        order("usr_1", "SELL", "A", [fill(3, 999, 9)]),
        order("usr_2", "BUY", "A", [fill(5, 5, 5)]),
        order("usr_1", "BUY", "B", [])
      ],
      "usr_1"
    )
    expect(basis.get("A")).toEqual({ cents: 154, units: 3 })
    expect(basis.has("B")).toBe(false)
  })

  it("applies a split to the fills before it: by time, then by commit order within an instant, else fills first", () => {
    const at = (t: number, seq?: number) => ({ reportId: "r", quantity: 2, price: 1, gross: 100, fee: 0, at: t, ...(seq === undefined ? {} : { seq }) })
    const split = (t: number, seq?: number) => ({ symbol: "A", at: t, ratioFrom: 1, ratioTo: 2, ...(seq === undefined ? {} : { seq }) })
    const basis = (fills: ReadonlyArray<ReturnType<typeof at>>, adjustment: ReturnType<typeof split>) =>
      costBasisOf([order("usr_1", "BUY", "A", fills as never)], "usr_1", [adjustment]).get("A")
    // 2 units, then a 1:2 split (4), then 2 more: 6 units for 200 cents; 2 + 2 split together: 8.
    expect(basis([at(1), at(3)], split(2))).toEqual({ cents: 200, units: 6 })
    expect(basis([at(5, 1), at(5, 3)], split(5, 2))).toEqual({ cents: 200, units: 6 })
    expect(basis([at(5, 3), at(5, 1)], split(5, 2))).toEqual({ cents: 200, units: 6 })
    expect(basis([at(5, 1), at(5, 2)], split(5, 3))).toEqual({ cents: 200, units: 8 })
    // Records from before the commit order was kept: a fill of the split's instant counts as before it.
    expect(basis([at(5), at(5, 9)], split(5))).toEqual({ cents: 200, units: 8 })
    // Time wins over commit order.
    expect(basis([at(4, 9), at(6, 1)], split(5, 5))).toEqual({ cents: 200, units: 6 })
  })

  it("rounds market value, average cost and P&L half away from zero", () => {
    // 3 units at 0.3333 USD: 0.9999 USD -> 1.00; cost 154 cents / 3 units = 0.51333 -> 0.5133
    expect(valuePosition(3, 0.3333, { cents: 154, units: 3 })).toEqual({ marketValueCents: 100, averageCost4: 5133, unrealizedCents: 100 - 154 })
    expect(valuePosition(3, null, { cents: 154, units: 3 })).toEqual({ marketValueCents: null, averageCost4: 5133, unrealizedCents: null })
    expect(valuePosition(3, 0.5, undefined)).toEqual({ marketValueCents: 150, averageCost4: null, unrealizedCents: null })
  })
})
