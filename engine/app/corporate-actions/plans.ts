/**
 * Each corporate action's state, loaded in the action's transaction, and its rule asked (domain/corporate-actions/):
 * the listing's holders, the active partitions that hear of it, and what the action needs besides (the price before a
 * split, the suspension in force, the symbol changes pending). Where the rule says so, the listing's open orders are
 * rejected through the trading desk before the state is read (D-304).
 * Owns: loading each action's state. Does not own the rules, the transaction (service.ts) nor writing (write-plan.ts).
 */
import { Effect, Option } from "effect"
import { decideDividend } from "../../domain/corporate-actions/decide-dividend.ts"
import { acceptDelisting, acceptSuspension, decideDelisting, decideResumption, decideSuspension } from "../../domain/corporate-actions/decide-listing.ts"
import { decideRightsIssue } from "../../domain/corporate-actions/decide-rights.ts"
import { acceptSplit, decideSplit, type SplitType } from "../../domain/corporate-actions/decide-split.ts"
import { decideSymbolChange, newSymbolFor } from "../../domain/corporate-actions/decide-symbol-change.ts"
import type { ActionPlan } from "../../domain/corporate-actions/plan.ts"
import { type ListingStatus, type RaiseInput, REJECT_DELISTED, REJECT_SPLIT, REJECT_SUSPENDED } from "../../domain/corporate-actions/raise.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import type { Instrument } from "../../domain/instruments.ts"
import type { ReferenceBook } from "../../domain/reference/book.ts"
import type { MarketFeed } from "../../sim/market-feed.ts"
import type { ReadTx, StoreError, Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { SimActions, UNIT_CHANGES } from "../docs.ts"
import type { Symbols } from "../symbols.ts"
import type { TradingService } from "../trading/service.ts"
import { holdersOf, partnerPartitions } from "./holders.ts"

/** What every action's rule is given besides its own state: the transaction, the listing, its status, the action's id, now. */
export interface Raised {
  readonly tx: Tx
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  readonly input: RaiseInput
  readonly actionId: string
  readonly now: number
}

/** The services an action's state is read through. */
export interface PlanDeps {
  readonly trading: TradingService["Service"]
  readonly feed: MarketFeed["Service"]
  readonly symbols: Symbols["Service"]
  readonly book: ReferenceBook
}

type Planning = Effect.Effect<ActionPlan, ApiFailure | StoreError>

/** Active partners' partitions: who hears of an action. */
const audience = (tx: ReadTx) => partnerPartitions(tx, false)

const dividend = ({ tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
  Effect.gen(function* () {
    const holders = []
    for (const h of yield* holdersOf(tx, instrument.symbol)) {
      const sub = h.account === "master" ? Option.none() : yield* Effect.option(findSubAccount(tx, h.partition, h.account))
      holders.push({ ...h, externalId: Option.getOrNull(Option.map(sub, (s) => s.externalId)) })
    }
    return yield* liftFailure(decideDividend({ instrument, listingStatus, holders }, input, now, { dividendId: actionId }))
  })

const split = ({ trading, feed }: PlanDeps, r: Raised, actionType: SplitType): Planning =>
  Effect.gen(function* () {
    const { tx, instrument } = r
    const accepted = yield* liftFailure(acceptSplit(instrument, actionType, r.input))
    const ordersRejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_SPLIT, accepted.rejectReason)
    // Read after the rejection: the rejected SELL orders' reserved units are released.
    const price = (yield* feed.observe(instrument, r.now)).price
    const state = {
      instrument,
      listingStatus: r.listingStatus,
      ordersRejected,
      price,
      holders: yield* holdersOf(tx, instrument.symbol),
      partitions: yield* audience(tx)
    }
    return decideSplit(state, accepted, r.now, { actionId: r.actionId, unitChangeSeq: yield* tx.nextId(UNIT_CHANGES) })
  })

const suspension = ({ trading }: PlanDeps, { tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
  Effect.gen(function* () {
    const state = { instrument, listingStatus, partitions: yield* audience(tx) }
    const accepted = yield* liftFailure(acceptSuspension(state, input, now))
    const ordersRejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_SUSPENDED, accepted.rejectReason)
    return decideSuspension({ ...state, ordersRejected }, { input, accepted }, now, { actionId })
  })

/** The suspension in force: the last one raised here, else the seeded one that explains a SUSPENDED listing. */
const suspensionInForce = ({ symbols, book }: PlanDeps, tx: ReadTx, instrument: Instrument) =>
  Effect.gen(function* () {
    // raised under any symbol the listing had (D-342); seeded under its catalogue symbol (its id)
    const raised = (yield* SimActions.list(tx, "global", { limit: 100_000, order: "desc" })).find(
      (a) => symbols.listingOf(a.symbol)?.id === instrument.id && a.actionType === "SUSPENSION" && a.completedAt === null
    )
    return raised ?? book.actions().find((a) => a.symbol === instrument.id && a.actionType === "SUSPENSION")
  })

const resumption = (deps: PlanDeps, { tx, instrument, listingStatus, input, now }: Raised): Planning =>
  Effect.gen(function* () {
    const suspended = listingStatus === "SUSPENDED" ? yield* suspensionInForce(deps, tx, instrument) : undefined
    return yield* liftFailure(decideResumption({ instrument, listingStatus, suspension: suspended, partitions: yield* audience(tx) }, input, now))
  })

const delisting = ({ trading }: PlanDeps, { tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
  Effect.gen(function* () {
    const ordersRejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_DELISTED, acceptDelisting(instrument, input).rejectReason)
    const holderCount = (yield* holdersOf(tx, instrument.symbol)).length
    return decideDelisting({ instrument, listingStatus, partitions: yield* audience(tx), ordersRejected, holderCount }, input, now, { actionId })
  })

const symbolChange = ({ symbols }: PlanDeps, { tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
  Effect.gen(function* () {
    const newSymbol = yield* liftFailure(newSymbolFor(input.newSymbol, instrument))
    const pending = (yield* SimActions.list(tx, "global", { limit: 100_000, order: "asc" })).filter(
      (a) => a.actionType === "SYMBOL_CHANGE" && a.completedAt === null
    )
    const state = {
      instrument,
      listingStatus,
      pending,
      symbolUsed: yield* symbols.usedIn(tx, newSymbol),
      holderCount: (yield* holdersOf(tx, instrument.symbol)).length,
      partitions: yield* audience(tx)
    }
    return yield* liftFailure(decideSymbolChange(state, { input, newSymbol }, now, { actionId }))
  })

const rightsIssue = ({ tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
  Effect.gen(function* () {
    const state = { instrument, listingStatus, holders: yield* holdersOf(tx, instrument.symbol), partitions: yield* audience(tx) }
    return yield* liftFailure(decideRightsIssue(state, input, now, { actionId }))
  })

/** The plan of the action `r.input` names: its state loaded (the open orders rejected first where it says), its rule asked. */
export const planOf = (deps: PlanDeps, r: Raised): Planning => {
  switch (r.input.actionType) {
    case "DIVIDEND":
      return dividend(r)
    case "SPLIT":
    case "REVERSE_SPLIT":
    case "BONUS":
      return split(deps, r, r.input.actionType)
    case "SUSPENSION":
      return suspension(deps, r)
    case "RESUMPTION":
      return resumption(deps, r)
    case "DELISTING":
      return delisting(deps, r)
    case "SYMBOL_CHANGE":
      return symbolChange(deps, r)
    case "RIGHTS_ISSUE":
      return rightsIssue(r)
  }
}
