/**
 * A split, reverse split or bonus issue raised by the operator (D-303, D-304): the listing's open orders are rejected
 * first (they were priced before the change), then every holding is rescaled by ratioTo/ratioFrom, whole units only,
 * and the fraction left is paid in cash at the price before the change. Two steps around the rejection, which the
 * dispatcher runs with the trading desk: `acceptSplit` (the ratios, the wording, the rejection's reason) and
 * `decideSplit` (the holdings after the rejection released their reserved units). Pure.
 * Owns: those rules and the split's record and event. Does not own the arithmetic (domain/corporate.ts), rejecting
 * orders (app/trading/desk.ts) nor the price path's rescale (sim/market-feed.ts).
 */
import { findExchange } from "../calendar.ts"
import { cashInLieuCents, splitUnits } from "../corporate.ts"
import type { ApiFailure } from "../errors.ts"
import { rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { ISSUER, transfer, walletAccount } from "../ledger.ts"
import type { Price4 } from "../money.ts"
import type { ActionRecord } from "../reference/corporate-actions.ts"
import { actionOf, announcements } from "./action-record.ts"
import { type ActionPlan, type Credit, emptyPlan, type Holder } from "./plan.ts"
import { invalid, type ListingStatus, type RaiseInput, wholeRatio } from "./raise.ts"

export type SplitType = "SPLIT" | "REVERSE_SPLIT" | "BONUS"

/** A split whose terms hold: `ratioFrom` old units become `ratioTo` new ones. */
export interface AcceptedSplit {
  readonly actionType: SplitType
  readonly ratioFrom: number
  readonly ratioTo: number
  /** The action in words: its description unless the operator gave one, and the wording of its notices. */
  readonly what: string
  readonly description: string
  /** Why the listing's open orders are rejected (code REJECT_SPLIT). */
  readonly rejectReason: string
}

/** The split's ratios, checked against its type: a split and a bonus add units, a reverse split removes them. */
export const acceptSplit = (instrument: Instrument, actionType: SplitType, input: RaiseInput): AcceptedSplit | ApiFailure => {
  const ratioFrom = wholeRatio(input.ratioFrom, "ratioFrom")
  if (typeof ratioFrom !== "number") return ratioFrom
  const ratioTo = wholeRatio(input.ratioTo, "ratioTo")
  if (typeof ratioTo !== "number") return ratioTo
  const reverse = actionType === "REVERSE_SPLIT"
  if (reverse ? ratioTo >= ratioFrom : ratioTo <= ratioFrom) {
    return invalid("ratioTo", `a ${actionType} needs ratioTo ${reverse ? "below" : "above"} ratioFrom`)
  }
  const what =
    actionType === "SPLIT"
      ? `${ratioTo}-for-${ratioFrom} share split`
      : reverse
        ? `${ratioTo}-for-${ratioFrom} share consolidation`
        : `Bonus issue: ${ratioTo} shares for every ${ratioFrom} held`
  return {
    actionType,
    ratioFrom,
    ratioTo,
    what,
    description: input.description ?? what,
    rejectReason: `${what} of ${instrument.symbol}: place the order again at the adjusted price`
  }
}

export interface SplitState {
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  /** The orders rejected by the action (acceptSplit's reason), before the holders were read. */
  readonly ordersRejected: ReadonlyArray<string>
  /** The listing's price before the change (an old unit's), for cash in lieu. */
  readonly price: Price4
  readonly holders: ReadonlyArray<Holder>
  /** Active partners' partitions: who hears of the action. */
  readonly partitions: ReadonlyArray<string>
}

/** Every holding rescaled (reserved units with it, never above the units held), cash for each fraction, the action completed now. */
export const decideSplit = (
  state: SplitState,
  split: AcceptedSplit,
  now: number,
  ids: { readonly actionId: string; readonly unitChangeSeq: number }
): ActionPlan => {
  const { instrument, price } = state
  const { ratioFrom, ratioTo } = split
  const rate = rateFor(findExchange(instrument.exchange)?.currency ?? "USD") ?? 1_000_000
  const holdings: Array<Holder> = []
  const credits: Array<Credit> = []
  for (const h of state.holders) {
    const after = splitUnits(h.holding.quantity, ratioFrom, ratioTo)
    // Reserved units belong to open SELL orders, rejected first: nothing is reserved any more.
    const reserved = splitUnits(h.holding.reserved, ratioFrom, ratioTo).units
    holdings.push({
      partition: h.partition,
      account: h.account,
      holding: { symbol: instrument.symbol, quantity: after.units, reserved: Math.min(reserved, after.units) }
    })
    const cents = after.fraction === 0 ? 0 : cashInLieuCents(after.fraction, ratioTo, price, rate)
    if (cents > 0) {
      const description = `Cash in lieu of ${after.fraction}/${ratioFrom} of a ${instrument.symbol} share (${split.what})`
      credits.push({
        partition: h.partition,
        entry: { kind: "CASH_IN_LIEU", postings: transfer(ISSUER, walletAccount(h.account), cents), at: now, description, reference: ids.actionId }
      })
    }
  }
  const action: ActionRecord = {
    ...actionOf(instrument, ids.actionId, split.actionType, now, split.description, { ratioFrom, ratioTo }, true),
    seq: ids.unitChangeSeq
  }
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    holdings,
    credits,
    action,
    events: announcements(state.partitions, "corporateaction.split", action, { ratioFrom, ratioTo }),
    outcome: { ...none.outcome, action, accountsAffected: state.holders.length, ordersRejected: state.ordersRejected, rescale: { ratioFrom, ratioTo } }
  }
}
