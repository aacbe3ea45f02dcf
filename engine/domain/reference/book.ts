/**
 * The reference book of one run: every seeded generator of engine/domain/reference applied to the catalogue, with
 * the results kept once computed (they are pure, so keeping them changes nothing but speed). Lists come sorted in
 * the order the API shows them. Visibility at an instant (announced, published) is the caller's: the book holds
 * what exists, including what is announced later. Pure: the seed, the run's start and the catalogue come in.
 */
import type { Exchange } from "../calendar.ts"
import type { Instrument } from "../instruments.ts"
import { type CompanyFacts, companyFacts, type EtfFacts, etfFacts } from "./companies.ts"
import { type ActionRecord, actionsOf, delistedAt } from "./corporate-actions.ts"
import { type DividendRecord, dividendsOf } from "./dividends.ts"
import { actionArticle, type ArticleRecord, dividendArticle, WEEK_MS, weekArticles, weekOf, weekStart } from "./news.ts"
import { type BondRecord, bondsOf, type FundRecord, fundsOf, type OpportunityRecord, opportunitiesOf } from "./offers.ts"
import { DAY_MS, dateMs } from "./seeded.ts"

/** Dividend history starts this many years before the run's year; the news wire, this many days before its start. */
export const DIVIDEND_YEARS_BACK = 3
export const NEWS_DAYS_BACK = 180

export interface ReferenceBook {
  readonly seed: number
  readonly origin: number
  readonly instruments: ReadonlyArray<Instrument>
  readonly company: (instrument: Instrument) => CompanyFacts
  readonly etf: (instrument: Instrument) => EtfFacts
  /** Every action, newest announcement first (ID descending on ties). */
  readonly actions: () => ReadonlyArray<ActionRecord>
  /** Every dividend with an ex-date up to the end of `year`, newest ex-date first (ID descending on ties). */
  readonly dividendsThrough: (year: number) => ReadonlyArray<DividendRecord>
  /** Every article published up to the end of `week` (news.ts weekOf), newest first (ID descending on ties). */
  readonly articlesThrough: (week: number) => ReadonlyArray<ArticleRecord>
  readonly bonds: () => ReadonlyArray<BondRecord>
  readonly funds: () => ReadonlyArray<FundRecord>
  readonly opportunities: () => ReadonlyArray<OpportunityRecord>
}

const memo = <A>(make: () => A): (() => A) => {
  let value: { readonly a: A } | undefined
  return () => {
    value ??= { a: make() }
    return value.a
  }
}

const byKeyDesc =
  <A>(key: (a: A) => string) =>
  (a: A, b: A) => {
    const ka = key(a)
    const kb = key(b)
    return ka < kb ? 1 : ka > kb ? -1 : 0
  }

/** Sort key of time-ordered records: the instant padded to 15 digits, then the ID. */
export const timeKey = (at: number, id: string): string => `${String(at).padStart(15, "0")}|${id}`

export const makeReferenceBook = (seed: number, origin: number, instruments: ReadonlyArray<Instrument>, exchanges: ReadonlyArray<Exchange>): ReferenceBook => {
  const companies = new Map<string, CompanyFacts>()
  const etfs = new Map<string, EtfFacts>()
  const dividendYears = new Map<string, ReadonlyArray<DividendRecord>>()
  const articleWeeks = new Map<number, ReadonlyArray<ArticleRecord>>()
  let articlesCache: { readonly week: number; readonly list: ReadonlyArray<ArticleRecord> } | undefined
  let dividendsCache: { readonly year: number; readonly list: ReadonlyArray<DividendRecord> } | undefined
  const firstYear = new Date(origin).getUTCFullYear() - DIVIDEND_YEARS_BACK
  const firstWeek = weekOf(origin - NEWS_DAYS_BACK * DAY_MS)
  const newsStart = weekStart(firstWeek)

  const actions = memo(() => instruments.flatMap((i) => actionsOf(seed, i, origin)).sort(byKeyDesc((a) => timeKey(a.announcedAt, a.actionId))))

  const yearOf = (instrument: Instrument, year: number) => {
    const key = `${instrument.symbol}|${year}`
    let list = dividendYears.get(key)
    if (list === undefined) {
      const end = delistedAt(seed, instrument, origin)
      list = dividendsOf(seed, instrument, year).filter((d) => end === undefined || dateMs(d.exDate) < end)
      dividendYears.set(key, list)
    }
    return list
  }

  const dividendsThrough = (year: number): ReadonlyArray<DividendRecord> => {
    if (dividendsCache?.year === year) return dividendsCache.list
    const list: Array<DividendRecord> = []
    for (const instrument of instruments) for (let y = firstYear; y <= year; y++) list.push(...yearOf(instrument, y))
    list.sort(byKeyDesc((d) => `${d.exDate}|${d.dividendId}`))
    dividendsCache = { year, list }
    return list
  }

  const weekOfArticles = (week: number) => {
    let list = articleWeeks.get(week)
    if (list === undefined) {
      list = weekArticles(seed, week, instruments, exchanges)
      articleWeeks.set(week, list)
    }
    return list
  }

  const articlesThrough = (week: number): ReadonlyArray<ArticleRecord> => {
    if (articlesCache?.week === week) return articlesCache.list
    const end = weekStart(week) + WEEK_MS
    const list: Array<ArticleRecord> = []
    for (let w = firstWeek; w <= week; w++) list.push(...weekOfArticles(w))
    const inWindow = (at: number) => at >= newsStart && at < end
    // Announcements are published up to 45 days before an ex-date: next year's dividends can be announced this year.
    for (const d of dividendsThrough(new Date(end).getUTCFullYear() + 1)) if (inWindow(d.announcedAt)) list.push(dividendArticle(seed, d))
    for (const a of actions()) if (inWindow(a.announcedAt)) list.push(actionArticle(seed, a))
    list.sort(byKeyDesc((a) => timeKey(a.publishedAt, a.id)))
    articlesCache = { week, list }
    return list
  }

  const cached =
    <A>(map: Map<string, A>, make: (i: Instrument) => A) =>
    (instrument: Instrument) => {
      let value = map.get(instrument.symbol)
      if (value === undefined) {
        value = make(instrument)
        map.set(instrument.symbol, value)
      }
      return value
    }

  return {
    seed,
    origin,
    instruments,
    company: cached(companies, (i) => companyFacts(seed, i)),
    etf: cached(etfs, (i) => etfFacts(seed, i)),
    actions,
    dividendsThrough,
    articlesThrough,
    bonds: memo(() => bondsOf(seed, exchanges, instruments, origin)),
    funds: memo(() => fundsOf(seed, exchanges, origin)),
    opportunities: memo(() => opportunitiesOf(seed, exchanges, origin))
  }
}
