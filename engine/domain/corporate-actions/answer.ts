/**
 * The operator's answer to a raised action (the control API's CorporateActionResult): the action as recorded (a
 * resumption answers the suspension it ends, same actionId as its events), or for a dividend its terms, with who was
 * affected and, after a split, when the rescaled price path takes effect and shows. Pure.
 */
import type { ControlSchemas } from "../../contract/wire.ts"
import type { Instrument } from "../instruments.ts"
import { centsToWire, price4ToWire } from "../money.ts"
import { dayStart, isoDate } from "../reference/seeded.ts"
import type { Outcome } from "./plan.ts"
import type { RaiseType } from "./raise.ts"

const isoAt = (ms: number): string => new Date(ms).toISOString()

/** The price path's rescale after a split (sim/market-feed.ts PinResult): when it takes effect, when it is visible. */
export interface Repriced {
  readonly effectiveAt: number
  readonly visibleFrom: number
}

export const raiseAnswer = (
  command: { readonly actionType: RaiseType; readonly actionId: string; readonly instrument: Instrument },
  outcome: Outcome,
  repriced: Repriced | undefined,
  now: number
): ControlSchemas["CorporateActionResult"] => {
  const { instrument } = command
  const a = outcome.action
  const d = outcome.dividend
  return {
    actionId: a?.actionId ?? command.actionId,
    actionType: command.actionType,
    symbol: instrument.symbol,
    exchange: instrument.exchange,
    name: instrument.name,
    description: a?.description ?? `Dividend of ${d?.currency ?? ""} ${d === undefined ? "" : price4ToWire(d.perShare)} per share paid`,
    effectiveDate: isoDate(a?.effectiveAt ?? dayStart(now)),
    listingStatus: outcome.listingStatus,
    details: a === undefined ? { dividendPerShare: d === undefined ? null : price4ToWire(d.perShare), currency: d?.currency ?? null } : { ...a.details },
    accountsAffected: outcome.accountsAffected,
    ordersRejected: [...outcome.ordersRejected],
    totalUsdPaid: outcome.totalUsdCents === null ? null : centsToWire(outcome.totalUsdCents),
    priceEffectiveAt: repriced === undefined ? null : isoAt(repriced.effectiveAt),
    priceVisibleFrom: repriced === undefined ? null : isoAt(repriced.visibleFrom)
  }
}
