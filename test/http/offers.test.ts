/**
 * Bonds, funds, opportunities and the asset directory over HTTP (D-047, D-048, D-049, D-099): filters and their
 * aliases, windows opening and closing with the clock, a fund NAV that follows the exchange's delayed prices, a fund's
 * yield (null only for an equity fund), the directory's order, classes (a treasury bill TREASURY_BILL, every other bond
 * a BOND) and detail paths (an ETF's under /etfs), pagination across pages and the contract's errors, the country
 * and currency refusals naming the form expected.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { INSTRUMENTS } from "../../engine/domain/instruments.ts"
import { divRound, parseScaled } from "../../engine/domain/money.ts"
import { MONDAY_OPEN } from "./harness.ts"
import { book, expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

const ids = (items: Array<any>, key: string) => items.map((x) => x[key])
// The contract's patterns refuse these (E-313): the message quotes the pattern and the value.
const COUNTRY_MESSAGE = (got: string) => `country must be text matching the pattern ^[A-Z]{2}$, got "${got}"`
const CURRENCY_MESSAGE = (got: string) => `currency must be text matching the pattern ^[A-Z]{3}$, got "${got}"`

describe("bonds", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists bills and bonds by maturity date, across pages", async () => {
    const r = await t.get("/bonds?limit=200")
    expect(r.status).toBe(200)
    const bonds = r.body.bonds as Array<any>
    expect(ids(bonds, "bondId").sort()).toEqual(
      book()
        .bonds()
        .map((b) => b.bondId)
        .sort()
    )
    for (let i = 1; i < bonds.length; i++)
      expect(`${bonds[i - 1].maturityDate}|${bonds[i - 1].bondId}` < `${bonds[i].maturityDate}|${bonds[i].bondId}`).toBe(true)
    expect(await t.all("/bonds?limit=3", "bonds")).toEqual(bonds)
    const bill = bonds.find((b) => b.instrumentType === "TREASURY_BILL" && b.country === "KE" && b.tenorDays === 91)
    expect(bill).toMatchObject({
      name: "Kenya 91-day Treasury Bill",
      issuer: "Central Bank of Kenya",
      currency: "KES",
      isin: null,
      couponRatePct: null,
      faceValue: 100
    })
    expect(bill.minimumSubscriptionUsd).toBe(100)
    expect(bill.asOf).toBe("2026-11-23T08:00:00.000Z")
    const bond = bonds.find((b) => b.instrumentType === "GOVERNMENT_BOND" && b.country === "ZA")
    expect(bond.isin).toMatch(/^ZA\d{10}$/)
    expect(bond.couponRatePct).toBeGreaterThan(0)
    expect(bond.minimumSubscriptionUsd).toBe(1000)
    expect((await t.get(`/bonds/${bond.bondId}`)).body).toEqual(bond)
    expect(bonds.some((b) => b.instrumentType === "CORPORATE_BOND")).toBe(true)
  })

  it("filters by exchange, type (or instrumentType), country, currency and window", async () => {
    const bonds = (await t.get("/bonds?limit=200")).body.bonds as Array<any>
    const check = async (query: string, keep: (b: any) => boolean) => {
      const got = (await t.get(`/bonds?limit=200&${query}`)).body.bonds
      expect(got).toEqual(bonds.filter(keep))
      expect(got.length).toBeGreaterThan(0)
    }
    await check("exchange=JSE", (b) => b.country === "ZA")
    await check("type=TREASURY_BILL", (b) => b.instrumentType === "TREASURY_BILL")
    await check("instrumentType=GOVERNMENT_BOND", (b) => b.instrumentType === "GOVERNMENT_BOND")
    await check("type=TREASURY_BILL&instrumentType=TREASURY_BILL", (b) => b.instrumentType === "TREASURY_BILL")
    await check("country=KE", (b) => b.country === "KE")
    await check("currency=ZAR", (b) => b.currency === "ZAR")
    const status = bonds[0].status
    await check(`status=${status}`, (b) => b.status === status)
    const mismatch = await t.get("/bonds?type=TREASURY_BILL&instrumentType=CORPORATE_BOND")
    expectError(mismatch, 400, "VALIDATION_ERROR", "type", /instrumentType and type are the same filter/)
    expect(mismatch.body.error.params).toEqual(["instrumentType", "type"])
    expectError(await t.get("/bonds?country=ke"), 400, "VALIDATION_ERROR", "country", /country must be text matching the pattern \^\[A-Z\]\{2\}\$/)
    expectError(await t.get("/bonds?country=xKE"), 400, "VALIDATION_ERROR", "country")
    expectError(await t.get("/bonds?currency=KESX"), 400, "VALIDATION_ERROR", "currency", /currency must be text matching the pattern \^\[A-Z\]\{3\}\$/)
    expectError(await t.get("/bonds?currency=xKES"), 400, "VALIDATION_ERROR", "currency")
    for (const type of ["TREASURY_BILL", "GOVERNMENT_BOND", "CORPORATE_BOND", "INFRASTRUCTURE_BOND"]) {
      expect((await t.get(`/bonds?limit=200&type=${type}`)).body.bonds).toEqual(bonds.filter((b) => b.instrumentType === type))
    }
    for (const s of ["UPCOMING", "OPEN", "CLOSED"])
      expect((await t.get(`/bonds?limit=200&status=${s}`)).body.bonds).toEqual(bonds.filter((b) => b.status === s))
    expectError(await t.get("/bonds?type=BILL"), 400, "VALIDATION_ERROR", "type")
    expectError(await t.get("/bonds?status=open"), 400, "VALIDATION_ERROR", "status")
    expectError(await t.get("/bonds?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
    expectError(await t.get("/bonds?limit=0"), 400, "VALIDATION_ERROR", "limit")
    const page = await t.get("/bonds?limit=1")
    for (const other of ["exchange=NSE", "type=TREASURY_BILL", "country=KE", "currency=KES", "status=OPEN"]) {
      expectError(await t.get(`/bonds?limit=1&${other}&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    }
  })

  it("opens and closes subscription windows as time passes", async () => {
    const upcoming = book()
      .bonds()
      .filter((b) => b.opensAt > MONDAY_OPEN)
      .sort((a, b) => a.opensAt - b.opensAt)[0]!
    expect((await t.get(`/bonds/${upcoming.bondId}`)).body).toMatchObject({ status: "UPCOMING", subscriptionOpensAt: new Date(upcoming.opensAt).toISOString() })
    await t.advance((upcoming.opensAt - MONDAY_OPEN) / 1000)
    expect((await t.get(`/bonds/${upcoming.bondId}`)).body.status).toBe("OPEN")
    await t.advance((upcoming.closesAt - upcoming.opensAt) / 1000)
    expect((await t.get(`/bonds/${upcoming.bondId}`)).body).toMatchObject({
      status: "CLOSED",
      asOf: new Date(upcoming.closesAt - (upcoming.closesAt % 900_000)).toISOString()
    })
    expectError(await t.get("/bonds/bnd_nope"), 404, "NOT_FOUND", undefined, /bond bnd_nope was not found/)
  })
})

describe("funds", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists funds by name with their facts, filtered by type (or category), country, currency and status", async () => {
    const funds = (await t.get("/funds?limit=200")).body.funds as Array<any>
    const names = funds.map((f) => `${f.name}|${f.fundId}`)
    expect(names).toEqual([...names].sort())
    expect(funds.length).toBe(book().funds().length)
    expect(await t.all("/funds?limit=3", "funds")).toEqual(funds)
    const mmf = funds.find((f) => f.fundType === "MONEY_MARKET")
    expect(mmf).toMatchObject({ nav: 1, riskRating: 1 })
    expect((await t.get(`/funds/${mmf.fundId}`)).body).toEqual(mmf)
    const records = new Map(
      book()
        .funds()
        .map((f) => [f.fundId, f])
    )
    const check = async (query: string, keep: (f: any) => boolean) => {
      const got = (await t.get(`/funds?limit=200&${query}`)).body.funds
      expect(got).toEqual(funds.filter(keep))
      expect(got.length).toBeGreaterThan(0)
    }
    await check("fundType=EQUITY", (f) => f.fundType === "EQUITY")
    await check("category=BALANCED", (f) => f.fundType === "BALANCED")
    await check("category=EQUITY&fundType=EQUITY", (f) => f.fundType === "EQUITY")
    await check("country=ZA", (f) => records.get(f.fundId)?.country === "ZA")
    await check("currency=KES", (f) => f.currency === "KES")
    await check("status=OPEN", (f) => f.status === "OPEN")
    expectError(await t.get("/funds?fundType=EQUITY&category=BALANCED"), 400, "VALIDATION_ERROR", "category", /fundType and category/)
    expectError(await t.get("/funds?country=KEN"), 400, "VALIDATION_ERROR", "country")
    expectError(await t.get("/funds?country=xKE"), 400, "VALIDATION_ERROR", "country")
    expectError(await t.get("/funds?currency=kes"), 400, "VALIDATION_ERROR", "currency")
    expectError(await t.get("/funds?currency=KESX"), 400, "VALIDATION_ERROR", "currency")
    for (const type of ["MONEY_MARKET", "FIXED_INCOME", "EQUITY", "BALANCED", "REAL_ESTATE"]) {
      expect((await t.get(`/funds?limit=200&fundType=${type}`)).body.funds).toEqual(funds.filter((f) => f.fundType === type))
      expect((await t.get(`/funds?limit=200&category=${type}`)).body.funds).toEqual(funds.filter((f) => f.fundType === type))
    }
    for (const s of ["UPCOMING", "OPEN", "CLOSED"])
      expect((await t.get(`/funds?limit=200&status=${s}`)).body.funds).toEqual(funds.filter((f) => f.status === s))
    const closed = book()
      .funds()
      .filter((f) => f.closed)
    expect(closed.length).toBeGreaterThan(0)
    for (const f of closed) expect((await t.get(`/funds/${f.fundId}`)).body.status).toBe("CLOSED")
    expectError(await t.get("/funds?limit=201"), 400, "VALIDATION_ERROR", "limit")
    const page = await t.get("/funds?limit=1")
    for (const other of ["fundType=EQUITY", "country=KE", "currency=KES", "status=OPEN"]) {
      expectError(await t.get(`/funds?limit=1&${other}&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    }
    expectError(await t.get("/funds/fnd_nope"), 404, "NOT_FOUND", undefined, /fund fnd_nope was not found/)
  })

  it("values an equity fund with its exchange's delayed prices and a balanced one with half of the move", async () => {
    await t.advance(5 * 3600)
    for (const [exchange, country] of [
      ["NSE", "KE"],
      ["JSE", "ZA"]
    ] as const) {
      // Active stocks only: an ETF of the exchange (STX40.ZA) is not in the index.
      const members = INSTRUMENTS.filter((i) => i.exchange === exchange && i.assetType === "STOCK" && i.listingStatus === "ACTIVE")
      const prices = await Promise.all(members.map(async (i) => BigInt(parseScaled((await t.get(`/stocks/${i.symbol}`)).body.price, 4) as number)))
      const base = members.reduce((s, i) => s + BigInt(i.basePrice), 0n)
      const current = prices.reduce((s, p) => s + p, 0n)
      expect(current).not.toBe(base)
      for (const [type, link] of [
        ["EQUITY", 100n],
        ["BALANCED", 50n],
        ["FIXED_INCOME", 0n]
      ] as const) {
        const record = book()
          .funds()
          .find((f) => f.country === country && f.fundType === type)!
        const wire = (await t.get(`/funds/${record.fundId}`)).body
        const expected = divRound(BigInt(record.baseNav) * (100n * base + link * (current - base)), 100n * base)
        expect(BigInt(parseScaled(wire.nav, 4) as number), `${country} ${type}`).toBe(expected)
        expect(wire.navDate).toBe("2026-11-23")
      }
    }
  })

  it("dates a fund's NAV on its exchange's day of the price observation", async () => {
    // 21:05 UTC is 00:05 on the 24th in Nairobi; the delayed observation (20:45 UTC) is still the 23rd there.
    await t.advance(13 * 3600 + 5 * 60)
    const equity = book()
      .funds()
      .find((f) => f.country === "KE" && f.fundType === "EQUITY")!
    expect((await t.get(`/funds/${equity.fundId}`)).body.navDate).toBe("2026-11-23")
  })

  it("opens a launching fund on its date", async () => {
    const launching = book()
      .funds()
      .filter((f) => f.opensAt !== null)
      .sort((a, b) => a.opensAt! - b.opensAt!)[0]!
    expect((await t.get(`/funds/${launching.fundId}`)).body.status).toBe("UPCOMING")
    await t.advance((launching.opensAt! - MONDAY_OPEN) / 1000)
    expect((await t.get(`/funds/${launching.fundId}`)).body.status).toBe("OPEN")
  })

  it("refuses a country or currency not in upper-case ISO form, naming the form expected", async () => {
    const country = await t.get("/funds?country=ke")
    expectError(country, 400, "VALIDATION_ERROR", "country")
    expect(country.body.error.message).toBe(COUNTRY_MESSAGE("ke"))
    const currency = await t.get("/funds?currency=kes")
    expectError(currency, 400, "VALIDATION_ERROR", "currency")
    expect(currency.body.error.message).toBe(CURRENCY_MESSAGE("kes"))
  })

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

describe("opportunities", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists deals by name, filtered by type and window, raising money while open", async () => {
    const all = (await t.get("/opportunities?limit=200")).body.opportunities as Array<any>
    expect(all.length).toBe(book().opportunities().length)
    const names = all.map((o) => `${o.name}|${o.opportunityId}`)
    expect(names).toEqual([...names].sort())
    expect(await t.all("/opportunities?limit=1", "opportunities")).toEqual(all)
    expect((await t.get("/opportunities?opportunityType=PRE_IPO&limit=200")).body.opportunities).toEqual(all.filter((o) => o.opportunityType === "PRE_IPO"))
    expect((await t.get("/opportunities?status=UPCOMING&limit=200")).body.opportunities).toEqual(all.filter((o) => o.status === "UPCOMING"))
    const credit = all.find((o) => o.opportunityType === "PRIVATE_CREDIT")
    expect(credit.expectedReturnPct).toBeGreaterThan(0)
    expect(credit.riskDisclosureUrl).toBe(`https://docs.example.com/opportunities/${credit.opportunityId}/risk.pdf`)
    const preIpo = all.find((o) => o.opportunityType === "PRE_IPO")
    expect(preIpo).toMatchObject({ expectedReturnPct: null, tenorMonths: null })
    const record = book()
      .opportunities()
      .filter((o) => o.opensAt > MONDAY_OPEN)
      .sort((a, b) => a.opensAt - b.opensAt)[0]!
    expect((await t.get(`/opportunities/${record.opportunityId}`)).body).toMatchObject({ status: "UPCOMING", raisedUsd: null })
    await t.advance((record.opensAt + (record.closesAt - record.opensAt) / 2 - MONDAY_OPEN) / 1000)
    const half = (await t.get(`/opportunities/${record.opportunityId}`)).body
    expect(half.status).toBe("OPEN")
    expect(half.raisedUsd).toBe(Math.min(record.targetRaise, Math.floor((record.targetRaise * record.fillPermille) / 2000)) / 100)
    await t.advance((record.closesAt - record.opensAt) / 1000)
    expect((await t.get(`/opportunities/${record.opportunityId}`)).body).toMatchObject({
      status: "CLOSED",
      raisedUsd: Math.min(record.targetRaise, (record.targetRaise * record.fillPermille) / 1000) / 100,
      targetRaiseUsd: record.targetRaise / 100
    })
    expectError(await t.get("/opportunities/opp_nope"), 404, "NOT_FOUND", undefined, /opportunity opp_nope was not found/)
    const page = await t.get("/opportunities?limit=1")
    expectError(await t.get(`/opportunities?limit=1&status=OPEN&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get(`/opportunities?limit=1&opportunityType=PRE_IPO&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get("/opportunities?opportunityType=VC"), 400, "VALIDATION_ERROR", "opportunityType")
    const now = (await t.get("/opportunities?limit=200")).body.opportunities as Array<any>
    for (const type of ["PRIVATE_CREDIT", "PRE_IPO"]) {
      expect((await t.get(`/opportunities?limit=200&opportunityType=${type}`)).body.opportunities).toEqual(now.filter((o) => o.opportunityType === type))
    }
    for (const s of ["UPCOMING", "OPEN", "CLOSED"]) {
      expect((await t.get(`/opportunities?limit=200&status=${s}`)).body.opportunities).toEqual(now.filter((o) => o.status === s))
    }
    expectError(await t.get("/opportunities?limit=0"), 400, "VALIDATION_ERROR", "limit")
  })
})

describe("GET /assets", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists every listing and offer by asset class, then name, each with a detail path that answers", async () => {
    const assets = await t.all("/assets?limit=200", "assets")
    const b = book()
    expect(assets).toHaveLength(INSTRUMENTS.length + b.bonds().length + b.funds().length + b.opportunities().length)
    const order = ["STOCK", "ETF", "TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"]
    const keys = assets.map((a) => `${order.indexOf(a.assetClass)}|${a.name}|${a.assetId}`)
    expect(keys).toEqual([...keys].sort())
    expect(new Set(assets.map((a) => a.assetClass))).toEqual(new Set(order))
    expect(await t.all("/assets?limit=6", "assets")).toEqual(assets)
    // One asset of each class and status (the whole list would exceed the sandbox rate limit): every kind of path.
    const kinds = new Map(assets.map((a) => [`${a.assetClass}|${a.status}`, a]))
    expect(kinds.size).toBeGreaterThan(order.length)
    for (const a of kinds.values()) {
      const detail = await t.get(a.detailPath)
      expect(detail.status, a.detailPath).toBe(200)
      if (a.access === "trade") expect(detail.body).toMatchObject({ symbol: a.assetId, exchange: a.exchange, listingStatus: a.status })
      else expect(detail.body.status).toBe(a.status)
    }
    expect(assets.find((a) => a.assetId === "SCOM.KE")).toEqual({
      assetId: "SCOM.KE",
      assetClass: "STOCK",
      symbol: "SCOM.KE",
      name: "Safaricom PLC",
      exchange: "NSE",
      country: "KE",
      currency: "KES",
      status: "ACTIVE",
      access: "trade",
      detailPath: "/stocks/SCOM.KE"
    })
    expect(assets.find((a) => a.assetClass === "FUND")).toMatchObject({ symbol: null, exchange: null, access: "subscription" })
  })

  it("filters by class, exchange, country, currency and search", async () => {
    const assets = await t.all("/assets?limit=200", "assets")
    const check = async (query: string, keep: (a: any) => boolean) => {
      const got = await t.all(`/assets?limit=200&${query}`, "assets")
      expect(got).toEqual(assets.filter(keep))
      expect(got.length).toBeGreaterThan(0)
    }
    await check("assetClass=ETF", (a) => a.assetClass === "ETF")
    await check("assetClass=TREASURY_BILL", (a) => a.assetClass === "TREASURY_BILL")
    await check("exchange=nse", (a) => a.exchange === "NSE")
    await check("country=ZA", (a) => a.country === "ZA")
    await check("currency=USD", (a) => a.currency === "USD")
    await check("search=safari", (a) => a.assetId === "SCOM.KE")
    await check("search=stx40", (a) => a.assetId === "STX40.ZA")
    await check("search=treasury", (a) => a.name.toLowerCase().includes("treasury"))
    expectError(await t.get(`/assets?search=${"x".repeat(101)}`), 400, "VALIDATION_ERROR", "search", /at most 100/)
    // 100 characters is still a search (it finds nothing)
    expect((await t.get(`/assets?search=${"x".repeat(100)}`)).status).toBe(200)
    expectError(await t.get("/assets?assetClass=CRYPTO"), 400, "VALIDATION_ERROR", "assetClass")
    expectError(await t.get("/assets?country=Kenya"), 400, "VALIDATION_ERROR", "country")
    expectError(await t.get("/assets?currency=usd"), 400, "VALIDATION_ERROR", "currency")
    for (const assetClass of ["STOCK", "ETF", "TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"]) {
      expect(await t.all(`/assets?limit=200&assetClass=${assetClass}`, "assets")).toEqual(assets.filter((a) => a.assetClass === assetClass))
    }
    expectError(await t.get("/assets?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
    expectError(await t.get("/assets?limit=201"), 400, "VALIDATION_ERROR", "limit")
    const page = await t.get("/assets?limit=1")
    for (const other of ["assetClass=ETF", "exchange=NSE", "country=KE", "currency=KES", "search=a"]) {
      expectError(await t.get(`/assets?limit=1&${other}&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    }
  })

  it("refuses a country or currency not in upper-case ISO form, naming the form expected", async () => {
    const country = await t.get("/assets?country=Kenya")
    expectError(country, 400, "VALIDATION_ERROR", "country")
    expect(country.body.error.message).toBe(COUNTRY_MESSAGE("Kenya"))
    const currency = await t.get("/assets?currency=usd")
    expectError(currency, 400, "VALIDATION_ERROR", "currency")
    expect(currency.body.error.message).toBe(CURRENCY_MESSAGE("usd"))
  })

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
