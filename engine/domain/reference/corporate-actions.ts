/**
 * Seeded corporate actions of the catalogue's listings (D-097, payload fields of D-074), a pure function of
 * (seed, instrument, origin): past capital actions (split, reverse split, bonus, rights issue), already processed
 * before the run began, so holdings and the price path never need adjusting for them; the suspension or delisting
 * that explains a SUSPENDED or DELISTED listing; and notices (GENERIC) announced over the run's first year.
 * Does not own actions raised through the control API, nor their effect on holdings (app/corporate-actions.ts).
 */
import type { Instrument } from "../instruments.ts"
import { divRound, formatScaled } from "../money.ts"
import { currencyOf } from "./companies.ts"
import { addWeekdays, DAY_MS, dayStart, drawsFor, isoDate, onWeekday, previousWeekday, refId } from "./seeded.ts"

export type ActionType = "GENERIC" | "SPLIT" | "REVERSE_SPLIT" | "BONUS" | "SUSPENSION" | "HALT" | "DELISTING" | "RIGHTS_ISSUE" | "SYMBOL_CHANGE"
export type ActionStatus = "ANNOUNCED" | "EFFECTIVE" | "COMPLETED" | "CANCELLED"

export interface ActionRecord {
  readonly actionId: string
  readonly actionType: ActionType
  readonly symbol: string
  readonly exchange: string
  readonly name: string
  readonly announcedAt: number
  /** Midnight UTC of the effective date. */
  readonly effectiveAt: number
  readonly description: string
  readonly details: Readonly<Record<string, string | number | null>>
  /** When the action was processed on holdings; null for actions with nothing to process (notices, suspensions). */
  readonly completedAt: number | null
  /** A split's, reverse split's or bonus issue's place among unit changes in commit order (Fill.seq). */
  readonly seq?: number
}

const HOUR_MS = 3_600_000
const NOTICES = ["Annual general meeting", "Board changes", "Change of registrar", "Investor briefing", "Change of auditors"] as const

/** Where an action stands at `now`, and when it last changed. */
export const actionStatus = (action: ActionRecord, now: number): { readonly status: ActionStatus; readonly updatedAt: number } => {
  if (now < action.effectiveAt) return { status: "ANNOUNCED", updatedAt: action.announcedAt }
  if (action.completedAt !== null && now >= action.completedAt) return { status: "COMPLETED", updatedAt: action.completedAt }
  return { status: "EFFECTIVE", updatedAt: Math.max(action.announcedAt, action.effectiveAt) }
}

/** The catalogue's listing status explained: the suspension or delisting, effective before the run began. */
const statusAction = (seed: number, instrument: Instrument, origin: number): ActionRecord | undefined => {
  if (instrument.listingStatus === "ACTIVE") return undefined
  const draws = drawsFor(seed, `ca-status|${instrument.symbol}`)
  const base = { symbol: instrument.symbol, exchange: instrument.exchange, name: instrument.name }
  if (instrument.listingStatus === "SUSPENDED") {
    const effectiveAt = onWeekday(dayStart(origin) - draws.between(3, 60) * DAY_MS)
    const reason = draws.pick(["Pending publication of audited results", "Regulatory review", "Pending a material announcement"])
    return {
      ...base,
      actionId: refId("ca", seed, `suspension|${instrument.symbol}`),
      actionType: "SUSPENSION",
      announcedAt: effectiveAt - 8 * HOUR_MS,
      effectiveAt,
      description: `Trading in ${instrument.symbol} suspended: ${reason.toLowerCase()}`,
      details: { reason, suspendedFrom: new Date(effectiveAt).toISOString(), expectedResumeAt: null },
      completedAt: null
    }
  }
  const effectiveAt = onWeekday(dayStart(origin) - draws.between(30, 400) * DAY_MS)
  const reason = draws.pick(["Voluntary delisting after a takeover", "Failure to meet continuing listing requirements", "Scheme of arrangement"])
  return {
    ...base,
    actionId: refId("ca", seed, `delisting|${instrument.symbol}`),
    actionType: "DELISTING",
    announcedAt: effectiveAt - draws.between(20, 60) * DAY_MS + 6 * HOUR_MS,
    effectiveAt,
    description: `${instrument.symbol} delisted: ${reason.toLowerCase()}`,
    details: { reason, lastTradingDate: isoDate(previousWeekday(effectiveAt)) },
    completedAt: effectiveAt + 18 * HOUR_MS
  }
}

/** A capital action processed between 60 and 900 days before the run began (three listings in ten have one). */
const pastCapitalAction = (seed: number, instrument: Instrument, origin: number): ActionRecord | undefined => {
  const draws = drawsFor(seed, `ca-capital|${instrument.symbol}`)
  if (instrument.assetType !== "STOCK" || !draws.chance(300)) return undefined
  const effectiveAt = onWeekday(dayStart(origin) - draws.between(60, 900) * DAY_MS)
  const announcedAt = effectiveAt - draws.between(20, 45) * DAY_MS + 6 * HOUR_MS
  const base = {
    actionId: refId("ca", seed, `capital|${instrument.symbol}`),
    symbol: instrument.symbol,
    exchange: instrument.exchange,
    name: instrument.name,
    announcedAt,
    effectiveAt,
    completedAt: effectiveAt + 18 * HOUR_MS
  }
  const kind = draws.int(10)
  if (kind < 4) {
    const to = draws.pick([2, 3, 5, 10])
    return { ...base, actionType: "SPLIT", description: `${to}-for-1 share split`, details: { ratioFrom: 1, ratioTo: to } }
  }
  if (kind < 5) {
    const from = draws.pick([2, 5, 10])
    return { ...base, actionType: "REVERSE_SPLIT", description: `1-for-${from} share consolidation`, details: { ratioFrom: from, ratioTo: 1 } }
  }
  if (kind < 8) {
    const from = draws.pick([5, 10, 20])
    return { ...base, actionType: "BONUS", description: `Bonus issue of 1 share for every ${from} held`, details: { ratioFrom: from, ratioTo: from + 1 } }
  }
  const held = draws.pick([3, 4, 5, 10])
  // Offered at a 10-40 % discount to the path's starting price, in whole cents of the local currency.
  const cents = divRound(BigInt(instrument.basePrice) * BigInt(draws.between(60, 90)), 10_000n)
  const currency = currencyOf(instrument)
  return {
    ...base,
    actionType: "RIGHTS_ISSUE",
    description: `Rights issue of 1 new share for every ${held} held at ${currency} ${formatScaled(cents, 2)}`,
    details: {
      ratioHeld: held,
      ratioEntitled: 1,
      subscriptionPrice: Number(formatScaled(cents > 0n ? cents : 1n, 2)),
      currency,
      recordDate: isoDate(effectiveAt),
      subscriptionDeadline: isoDate(addWeekdays(effectiveAt, 15))
    }
  }
}

/** A notice announced between 90 days before and 300 days after the run's start (half the listings have one). */
const notice = (seed: number, instrument: Instrument, origin: number): ActionRecord | undefined => {
  const draws = drawsFor(seed, `ca-notice|${instrument.symbol}`)
  if (!draws.chance(500)) return undefined
  const announcedAt = onWeekday(dayStart(origin) + draws.between(-90, 300) * DAY_MS) + draws.between(20, 60) * 15 * 60_000
  const title = draws.pick(NOTICES)
  const effectiveAt = onWeekday(announcedAt + draws.between(14, 45) * DAY_MS)
  return {
    actionId: refId("ca", seed, `notice|${instrument.symbol}`),
    actionType: "GENERIC",
    symbol: instrument.symbol,
    exchange: instrument.exchange,
    name: instrument.name,
    announcedAt,
    effectiveAt,
    description: `${title} of ${instrument.name} on ${isoDate(effectiveAt)}`,
    details: {},
    completedAt: null
  }
}

/** Every seeded action of one listing, announced or not yet (callers show those announced by `now`). */
export const actionsOf = (seed: number, instrument: Instrument, origin: number): ReadonlyArray<ActionRecord> =>
  [statusAction(seed, instrument, origin), pastCapitalAction(seed, instrument, origin), notice(seed, instrument, origin)].filter(
    (a): a is ActionRecord => a !== undefined
  )

/** The day a DELISTED listing stopped trading (nothing of it is scheduled from then on); undefined otherwise. */
export const delistedAt = (seed: number, instrument: Instrument, origin: number): number | undefined => {
  const action = statusAction(seed, instrument, origin)
  return action?.actionType === "DELISTING" ? action.effectiveAt : undefined
}
