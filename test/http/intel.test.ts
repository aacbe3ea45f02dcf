/**
 * Market intelligence and company news over HTTP (D-045, D-095): newest first with the ID as tie-breaker, filters,
 * pagination across pages, one article by ID or slug, articles appearing as simulated time passes.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { weekOf } from "../../engine/domain/reference/news.ts"
import { MONDAY_OPEN } from "./harness.ts"
import { book, expectError, type PartnerEngine, partnerEngine } from "./reference-support.ts"

const newestFirst = (items: Array<any>) => {
  for (let i = 1; i < items.length; i++) {
    const [prev, cur] = [items[i - 1], items[i]]
    expect(prev.publishedAt > cur.publishedAt || (prev.publishedAt === cur.publishedAt && prev.id > cur.id), `${prev.id} before ${cur.id}`).toBe(true)
  }
}

describe("market intelligence", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists the articles published by now, newest first with the ID as tie-breaker, 20 a page", async () => {
    const first = await t.get("/market-intel")
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ count: 20, hasMore: true })
    const published = book()
      .articlesThrough(weekOf(MONDAY_OPEN))
      .filter((a) => a.publishedAt <= MONDAY_OPEN)
    const all = await t.all("/market-intel?limit=100", "articles")
    expect(all.map((a) => a.id)).toEqual(published.map((a) => a.id))
    expect(all.slice(0, 20)).toEqual(first.body.articles)
    newestFirst(all)
    // The weekly reviews of every exchange share an instant: the tie is broken by ID.
    const ties = all.filter((a, i) => i > 0 && all[i - 1].publishedAt === a.publishedAt)
    expect(ties.length).toBeGreaterThan(0)
    expect(await t.all("/market-intel?limit=7", "articles")).toEqual(all)
    const article = all.find((a) => a.category === "EARNINGS")
    expect(article).toMatchObject({ source: "Sokoni Sim Wire", imageUrl: null, url: `https://intel.example.com/market-intel/${article.slug}` })
    expect(article.body).toMatch(/Synthetic article/)
  })

  it("filters by exchange and symbol, with the cursor bound to them", async () => {
    const all = await t.all("/market-intel?limit=100", "articles")
    expect(await t.all("/market-intel?limit=100&exchange=jse", "articles")).toEqual(all.filter((a) => a.exchange === "JSE"))
    const scom = await t.all("/market-intel?limit=100&symbol=SCOM", "articles")
    expect(scom).toEqual(all.filter((a) => a.symbols.includes("SCOM.KE")))
    expect(scom.length).toBeGreaterThan(0)
    expect(await t.all("/market-intel?limit=100&symbol=SCOM.KE&exchange=NSE", "articles")).toEqual(scom)
    const page = await t.get("/market-intel?limit=2")
    expectError(await t.get(`/market-intel?limit=2&exchange=NSE&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get(`/market-intel?limit=2&symbol=SCOM.KE&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get("/market-intel?limit=101"), 400, "VALIDATION_ERROR", "limit")
    expectError(await t.get("/market-intel?limit=0"), 400, "VALIDATION_ERROR", "limit")
    expectError(await t.get("/market-intel?exchange=XYZ"), 400, "UNKNOWN_EXCHANGE", "exchange")
    expectError(await t.get("/market-intel?symbol=NOPE.KE"), 400, "VALIDATION_ERROR", "symbol")
    expectError(await t.get("/market-intel?symbol=SCOM.KE&exchange=JSE"), 400, "VALIDATION_ERROR", "symbol")
  })

  it("answers one article by ID or slug, 404 before it is published", async () => {
    const [latest] = (await t.get("/market-intel?limit=1")).body.articles
    expect((await t.get(`/market-intel/${latest.id}`)).body).toEqual(latest)
    expect((await t.get(`/market-intel/${latest.slug}`)).body).toEqual(latest)
    expectError(await t.get("/market-intel/art_nope"), 404, "NOT_FOUND", undefined, /article art_nope was not found/)
    const next = book()
      .articlesThrough(weekOf(MONDAY_OPEN) + 1)
      .filter((a) => a.publishedAt > MONDAY_OPEN)
      .at(-1)!
    expectError(await t.get(`/market-intel/${next.id}`), 404, "NOT_FOUND")
    await t.advance((next.publishedAt - MONDAY_OPEN) / 1000)
    const now = await t.get(`/market-intel/${next.slug}`)
    expect(now.body).toMatchObject({ id: next.id, publishedAt: new Date(next.publishedAt).toISOString() })
    expect((await t.get("/market-intel?limit=1")).body.articles[0].publishedAt).toBe(new Date(next.publishedAt).toISOString())
  })
})

describe("company news", () => {
  let t: PartnerEngine
  beforeEach(async () => {
    t = await partnerEngine()
  })
  afterEach(() => t.dispose())

  it("lists the company's articles with their type, newest first, filtered by type, across pages", async () => {
    const intel = await t.all("/market-intel?limit=100&symbol=SCOM.KE", "articles")
    const r = await t.get("/companies/SCOM.KE/news")
    expect(r.status).toBe(200)
    expect(r.body.symbol).toBe("SCOM.KE")
    const items = await t.all("/companies/scom/news?limit=3", "items")
    expect(items).toEqual(intel.map((a) => ({ ...a, type: a.category })))
    expect(r.body.items).toEqual(items.slice(0, 20))
    const dividends = await t.all("/companies/SCOM.KE/news?type=CORPORATE_ACTION&limit=100", "items")
    expect(dividends.length).toBeGreaterThan(0)
    expect(dividends).toEqual(items.filter((a) => a.type === "CORPORATE_ACTION"))
    expect(dividends[0].title).toMatch(/^Safaricom PLC declares a (stock )?dividend of KES \d+\.\d\d per share$/)
    const page = await t.get("/companies/SCOM.KE/news?limit=1")
    expectError(await t.get(`/companies/SCOM.KE/news?limit=1&type=NEWS&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
    expectError(await t.get(`/companies/EQTY.KE/news?limit=1&cursor=${page.body.nextCursor}`), 400, "VALIDATION_ERROR", "cursor")
  })

  it("answers the contract's errors", async () => {
    expectError(await t.get("/companies/NOPE.KE/news"), 404, "NOT_FOUND")
    expectError(await t.get("/companies/x/news"), 400, "INVALID_SYMBOL", "symbol")
    expectError(await t.get("/companies/SCOM.KE/news?type=news"), 400, "VALIDATION_ERROR", "type")
    const items = await t.all("/companies/SCOM.KE/news?limit=100", "items")
    for (const type of ["NEWS", "EARNINGS", "CORPORATE_ACTION", "MARKET_COMMENTARY", "REGULATORY", "MACRO"]) {
      expect(await t.all(`/companies/SCOM.KE/news?limit=100&type=${type}`, "items")).toEqual(items.filter((a) => a.type === type))
    }
    expectError(await t.get("/companies/SCOM.KE/news?limit=101"), 400, "VALIDATION_ERROR", "limit")
  })
})
