/**
 * Survivors of the mutation run on engine/app/offers.ts (batch of 2026-11-27): what a partner reads that the other
 * offer tests did not pin. The exact messages of the country and currency filter refusals of /funds and /assets (a
 * partner reads them to fix the query), a fund's yield (null only for an equity fund), an ETF's detail path under
 * /etfs (GET /stocks answers an ETF too, so following the path does not tell), and a treasury bill classed as
 * TREASURY_BILL in the directory while every other bond is a BOND.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { INSTRUMENTS } from "../../engine/domain/instruments.ts"
import { book, expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

let t: PartnerEngine
beforeEach(async () => {
  t = await partnerEngine()
})
afterEach(() => t.dispose())

const COUNTRY_MESSAGE = "country must be an ISO 3166-1 alpha-2 code (upper case)"
const CURRENCY_MESSAGE = "currency must be an ISO 4217 code (upper case)"

describe("filter refusals name the expected form", () => {
  it("GET /funds: a country or currency not in upper-case ISO form", async () => {
    const country = await t.get("/funds?country=ke")
    expectError(country, 400, "VALIDATION_ERROR", "country")
    expect(country.body.error.message).toBe(COUNTRY_MESSAGE)
    const currency = await t.get("/funds?currency=kes")
    expectError(currency, 400, "VALIDATION_ERROR", "currency")
    expect(currency.body.error.message).toBe(CURRENCY_MESSAGE)
  })

  it("GET /assets: a country or currency not in upper-case ISO form", async () => {
    const country = await t.get("/assets?country=Kenya")
    expectError(country, 400, "VALIDATION_ERROR", "country")
    expect(country.body.error.message).toBe(COUNTRY_MESSAGE)
    const currency = await t.get("/assets?currency=usd")
    expectError(currency, 400, "VALIDATION_ERROR", "currency")
    expect(currency.body.error.message).toBe(CURRENCY_MESSAGE)
  })
})

describe("fund facts", () => {
  it("a fund's yield is its yield in percent; only an equity fund has none", async () => {
    const funds = (await t.get("/funds?limit=200")).body.funds as Array<any>
    const records = new Map(
      book()
        .funds()
        .map((f) => [f.fundId, f])
    )
    expect(funds.some((f) => f.fundType !== "EQUITY")).toBe(true)
    for (const f of funds) {
      const yieldBps = records.get(f.fundId)?.yieldBps
      expect(f.yieldPct, f.fundId).toBe(f.fundType === "EQUITY" ? null : (yieldBps as number) / 100)
    }
  })
})

describe("the asset directory", () => {
  it("an ETF's detail path is under /etfs, a stock's under /stocks", async () => {
    const etfs = await t.all("/assets?limit=200&assetClass=ETF", "assets")
    expect(etfs.map((a) => a.assetId).sort()).toEqual(
      INSTRUMENTS.filter((i) => i.assetType === "ETF")
        .map((i) => i.symbol)
        .sort()
    )
    for (const a of etfs) expect(a.detailPath).toBe(`/etfs/${a.assetId}`)
    const stocks = await t.all("/assets?limit=200&assetClass=STOCK", "assets")
    expect(stocks.length).toBeGreaterThan(0)
    for (const a of stocks) expect(a.detailPath).toBe(`/stocks/${a.assetId}`)
  })

  it("treasury bills are TREASURY_BILL and every other bond is a BOND", async () => {
    const bonds = book().bonds()
    const bills = bonds.filter((b) => b.instrumentType === "TREASURY_BILL").map((b) => b.bondId)
    const others = bonds.filter((b) => b.instrumentType !== "TREASURY_BILL").map((b) => b.bondId)
    expect(bills.length).toBeGreaterThan(0)
    expect(others.length).toBeGreaterThan(0)
    const listed = async (assetClass: string) => (await t.all(`/assets?limit=200&assetClass=${assetClass}`, "assets")).map((a) => a.assetId).sort()
    expect(await listed("TREASURY_BILL")).toEqual([...bills].sort())
    expect(await listed("BOND")).toEqual([...others].sort())
  })
})
