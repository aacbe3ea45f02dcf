/**
 * Seeded dividend schedules (D-050, D-096): each listing has a policy (none, annual or semi-annual, a yield) drawn
 * from (seed, symbol), and each year's dividends are a pure function of (seed, symbol, year): amount, ex-date,
 * record and payment dates, announcement, and the rare withdrawal. Where a dividend stands (status, calendarStage)
 * follows from the exchange's local date. Pure. Does not own paying holders (`dividend.paid`: app/corporate-actions.ts).
 */
import type { Instrument } from "../instruments.ts"
import { divRound, type Price4 } from "../money.ts"
import { currencyOf } from "./companies.ts"
import { addWeekdays, DAY_MS, dateMs, drawsFor, isoDate, onWeekday, refId } from "./seeded.ts"

export interface DividendRecord {
  readonly dividendId: string
  readonly symbol: string
  readonly exchange: string
  readonly name: string
  /** Amount per share in 1/10000 of the local currency (whole cents). */
  readonly perShare: Price4
  readonly currency: string
  readonly type: "CASH" | "STOCK"
  readonly announcedAt: number
  readonly exDate: string
  readonly recordDate: string
  readonly paymentDate: string
  /** The day the issuer withdrew it (before its ex-date), or null. */
  readonly cancelledOn: string | null
}

export type DividendStatus = "DECLARED" | "PAID" | "CANCELLED"
export type CalendarStage = "ANNOUNCED" | "EX_DATE_PASSED" | "RECORD_DATE_PASSED" | "PAYMENT_DATE_PASSED" | "PAID" | "CANCELLED"

interface Policy {
  /** Payments a year: 0, 1 or 2. */
  readonly perYear: number
  /** Yearly yield on the path's starting price, basis points. */
  readonly yieldBps: number
  /** Month (1-12) of the first payment's ex-date. */
  readonly month: number
}

const policyOf = (seed: number, instrument: Instrument): Policy => {
  const draws = drawsFor(seed, `div-policy|${instrument.symbol}`)
  const roll = draws.int(100)
  // ETFs and a quarter of the stocks pay nothing; the rest pay once or twice a year.
  const perYear = instrument.assetType !== "STOCK" || roll < 25 ? 0 : roll < 70 ? 1 : 2
  return { perYear, yieldBps: draws.between(150, 900), month: draws.between(1, 6) }
}

/** The dividends of one listing whose ex-date falls in `year` (announced or not yet). */
export const dividendsOf = (seed: number, instrument: Instrument, year: number): ReadonlyArray<DividendRecord> => {
  const policy = policyOf(seed, instrument)
  const out: Array<DividendRecord> = []
  for (let k = 0; k < policy.perYear; k++) {
    const draws = drawsFor(seed, `dividend|${instrument.symbol}|${year}|${k}`)
    const month = policy.month + k * 6
    const exAt = onWeekday(dateMs(`${year}-${String(month).padStart(2, "0")}-${String(draws.between(3, 26)).padStart(2, "0")}`))
    const recordAt = addWeekdays(exAt, 1)
    const paymentAt = onWeekday(recordAt + draws.between(10, 40) * DAY_MS)
    // The year's amount varies by up to 20 % around the policy; rounded to whole cents, at least one cent.
    const bps = BigInt(policy.yieldBps * draws.between(80, 120))
    const cents = divRound(BigInt(instrument.basePrice) * bps, 100n * 10_000n * 100n * BigInt(policy.perYear))
    out.push({
      dividendId: refId("div", seed, `${instrument.symbol}|${year}|${k}`),
      symbol: instrument.symbol,
      exchange: instrument.exchange,
      name: instrument.name,
      perShare: Number(cents > 0n ? cents : 1n) * 100,
      currency: currencyOf(instrument),
      type: draws.chance(30) ? "STOCK" : "CASH",
      announcedAt: exAt - draws.between(21, 45) * DAY_MS + draws.between(24, 40) * 15 * 60_000,
      exDate: isoDate(exAt),
      recordDate: isoDate(recordAt),
      paymentDate: isoDate(paymentAt),
      cancelledOn: draws.chance(40) ? isoDate(exAt - 5 * DAY_MS) : null
    })
  }
  return out
}

/**
 * Where a dividend stands on `today` (the exchange's local date): withdrawn from its cancellation day; PAID from its
 * payment date (the issuer pays on the day; crediting holders happens for dividends raised through the control API, app/corporate-actions.ts); before that, the
 * last of its dates that has passed. PAYMENT_DATE_PASSED (paid late) is never produced by seeded dividends.
 */
export const dividendStage = (d: DividendRecord, today: string): { readonly status: DividendStatus; readonly calendarStage: CalendarStage } => {
  if (d.cancelledOn !== null && today >= d.cancelledOn) return { status: "CANCELLED", calendarStage: "CANCELLED" }
  if (today >= d.paymentDate) return { status: "PAID", calendarStage: "PAID" }
  if (today >= d.recordDate) return { status: "DECLARED", calendarStage: "RECORD_DATE_PASSED" }
  if (today >= d.exDate) return { status: "DECLARED", calendarStage: "EX_DATE_PASSED" }
  return { status: "DECLARED", calendarStage: "ANNOUNCED" }
}
