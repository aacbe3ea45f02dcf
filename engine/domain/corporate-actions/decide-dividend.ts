/**
 * A dividend raised by the operator (D-302, D-303): every holder of the listing on the day it is raised is credited
 * units x dividendPerShare, converted to USD at the reference rate and rounded once, from the issuer to its wallet;
 * each partner environment holding it hears one `dividend.paid` with its batch (spec: "once per batch grouped by
 * symbol"). Pure. Owns: the dividend's terms, its record, its credits and payloads. Does not own the arithmetic
 * (domain/corporate.ts) nor posting (app/ledger.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { findExchange, localDate } from "../calendar.ts"
import { dividendCents } from "../corporate.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { rateFor } from "../fx.ts"
import type { Instrument } from "../instruments.ts"
import { ISSUER, transfer, walletAccount } from "../ledger.ts"
import { type Cents, centsToWire, price4ToWire } from "../money.ts"
import type { DividendRecord } from "../reference/dividends.ts"
import { type ActionPlan, type Credit, emptyPlan, type Holder, type PartitionEvent } from "./plan.ts"
import { invalid, type ListingStatus, positivePrice4, type RaiseInput } from "./raise.ts"

/** A holder as a dividend's distribution names it: a sub-account's external id (null for the master account). */
export interface DividendHolder extends Holder {
  readonly externalId: string | null
}

export interface DividendState {
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  /** Every account holding the listing, partition by partition (app/corporate-actions/holders.ts order). */
  readonly holders: ReadonlyArray<DividendHolder>
}

type Batch = { readonly distributions: Array<Schemas["DividendDistribution"]>; cents: Cents }

/** Pays the dividend `input` names: its record (ex, record and payment date today at the exchange), one credit per holder owed a cent. */
export const decideDividend = (state: DividendState, input: RaiseInput, now: number, ids: { readonly dividendId: string }): ActionPlan | ApiFailure => {
  const { instrument, holders } = state
  const perShare = positivePrice4(input.dividendPerShare)
  if (perShare === undefined) return invalid("dividendPerShare", "a DIVIDEND needs dividendPerShare above 0, local currency, at most 4 decimals")
  const currency = findExchange(instrument.exchange)?.currency ?? "USD"
  const rate = rateFor(currency)
  if (rate === undefined) return fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`)
  const today = localDate(instrument.exchange, now)
  const dividend: DividendRecord = {
    dividendId: ids.dividendId,
    symbol: instrument.symbol,
    exchange: instrument.exchange,
    name: instrument.name,
    perShare,
    currency,
    type: "CASH",
    announcedAt: now,
    exDate: today,
    recordDate: today,
    paymentDate: today,
    cancelledOn: null
  }
  const credits: Array<Credit> = []
  const byPartition = new Map<string, Batch>()
  let total = 0
  for (const h of holders) {
    const cents = dividendCents(h.holding.quantity, perShare, rate)
    if (cents > 0) {
      const description = `Dividend on ${h.holding.quantity} ${instrument.symbol} at ${currency} ${price4ToWire(perShare)} per share`
      credits.push({
        partition: h.partition,
        entry: { kind: "DIVIDEND", postings: transfer(ISSUER, walletAccount(h.account), cents), at: now, description, reference: ids.dividendId }
      })
    }
    total += cents
    const batch = byPartition.get(h.partition) ?? { distributions: [], cents: 0 }
    batch.distributions.push({ subAccountId: h.account, externalId: h.externalId, units: h.holding.quantity, usdYield: centsToWire(cents) })
    batch.cents += cents
    byPartition.set(h.partition, batch)
  }
  const events: Array<PartitionEvent> = [...byPartition].map(([partition, { distributions, cents }]) => {
    const data: Schemas["DividendPaidData"] = {
      symbol: instrument.symbol,
      name: instrument.name,
      dividendPerShare: price4ToWire(perShare),
      currency,
      totalUsdPaid: centsToWire(cents),
      distributionCount: distributions.length,
      distributions
    }
    return { partition, name: "dividend.paid", data }
  })
  const none = emptyPlan(state.listingStatus)
  return { ...none, dividend, credits, events, outcome: { ...none.outcome, dividend, accountsAffected: holders.length, totalUsdCents: total } }
}
