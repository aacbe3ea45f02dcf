/**
 * Intel: market-intelligence articles (`/market-intel`, one article by ID or slug) and a company's news
 * (`/companies/{symbol}/news`), from the run's synthetic wire (domain/reference/news.ts). An article exists from its
 * publication instant; lists are newest first with the ID, descending, as tie-breaker (D-045, D-095, D-168).
 * Owns the wire shapes of Article and CompanyNewsItem and their filters. Does not own the articles' generation.
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import type { Instrument } from "../domain/instruments.ts"
import { timeKey } from "../domain/reference/book.ts"
import { ARTICLE_BASE_URL, type ArticleCategory, type ArticleRecord, SOURCE, weekOf } from "../domain/reference/news.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { checkLimit } from "./cursor.ts"
import { Symbols } from "./symbols.ts"
import { pageMeta, pageOf, scopeOf } from "./pages.ts"
import { exchangeFilter, ReferenceData, symbolFilter } from "./reference-data.ts"

export interface IntelQuery {
  readonly exchange?: string | undefined
  readonly symbol?: string | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

export interface NewsQuery {
  readonly type?: ArticleCategory | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

const articleKey = (a: ArticleRecord) => timeKey(a.publishedAt, a.id)

export const articleToWire = (a: ArticleRecord): Schemas["Article"] => ({
  id: a.id,
  slug: a.slug,
  title: a.title,
  summary: a.summary,
  body: a.body,
  url: `${ARTICLE_BASE_URL}${a.slug}`,
  imageUrl: null,
  source: SOURCE,
  author: a.author,
  symbols: [...a.symbols],
  exchange: a.exchange,
  category: a.category,
  publishedAt: isoAt(a.publishedAt)
})

export class IntelService extends Context.Service<
  IntelService,
  {
    readonly listArticles: (query: IntelQuery, partition: string) => Effect.Effect<Schemas["ArticleList"], ApiFailure>
    readonly getArticle: (idOrSlug: string) => Effect.Effect<Schemas["Article"], ApiFailure>
    readonly companyNews: (symbol: string, query: NewsQuery, partition: string) => Effect.Effect<Schemas["CompanyNewsList"], ApiFailure>
  }
>()("sokoni/IntelService") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const { book } = yield* ReferenceData
    const symbols = yield* Symbols

    /** Whether an article names the listing, under its symbol now or one it had when the article was written (D-342). */
    const mentions = (a: { readonly symbols: ReadonlyArray<string> }, instrument: Instrument) => symbols.namesOf(instrument).some((s) => a.symbols.includes(s))
    /** Articles published by `now`, newest first. */
    const published = (now: number) => book.articlesThrough(weekOf(now)).filter((a) => a.publishedAt <= now)

    const listArticles = Effect.fn("IntelService.listArticles")(function* (query: IntelQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 20, 100))
      const exchange = yield* liftFailure(exchangeFilter(query.exchange))
      const instrument = yield* liftFailure(symbolFilter(symbols.resolve, query.symbol, exchange))
      const now = yield* clock.nowHere()
      const matching = published(now).filter(
        (a) => (exchange === undefined || a.exchange === exchange) && (instrument === undefined || mentions(a, instrument))
      )
      const scope = scopeOf("market-intel", partition, [exchange, instrument?.symbol])
      const page = yield* liftFailure(pageOf(matching, articleKey, "desc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["ArticleList"] = {
        articles: page.items.map(articleToWire),
        ...pageMeta(page)
      }
      return list
    })

    const getArticle = Effect.fn("IntelService.getArticle")(function* (idOrSlug: string) {
      const now = yield* clock.nowHere()
      const found = published(now).find((a) => a.id === idOrSlug || a.slug === idOrSlug)
      if (found === undefined) return yield* Effect.fail(fail("NOT_FOUND", `article ${idOrSlug} was not found`))
      return articleToWire(found)
    })

    const companyNews = Effect.fn("IntelService.companyNews")(function* (symbol: string, query: NewsQuery, partition: string) {
      const limit = yield* liftFailure(checkLimit(query.limit, 20, 100))
      const instrument = yield* liftFailure(symbols.resolve(symbol))
      const now = yield* clock.nowHere()
      const matching = published(now).filter((a) => mentions(a, instrument) && (query.type === undefined || a.category === query.type))
      const scope = scopeOf("company-news", partition, [instrument.symbol, query.type])
      const page = yield* liftFailure(pageOf(matching, articleKey, "desc", { scope, cursor: query.cursor, limit }))
      const list: Schemas["CompanyNewsList"] = {
        symbol: instrument.symbol,
        items: page.items.map((a) => ({ ...articleToWire(a), type: a.category })),
        ...pageMeta(page)
      }
      return list
    })

    return IntelService.of({ listArticles, getArticle, companyNews })
  })

  static readonly layer = Layer.effect(IntelService, IntelService.make)
}
