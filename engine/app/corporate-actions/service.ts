/**
 * CorporateActions: actions the operator raises through the control API (`POST /_sim/corporate-actions`, D-302) and
 * their effect on every partner's holders, in one transaction each: a dividend credits every holder's wallet from the
 * issuer; a split, reverse split or bonus issue rescales holdings (cash in lieu of fractions) and then the price path;
 * a suspension, resumption or delisting sets the listing's status; a rights issue entitles its holders (taken up
 * through app/rights.ts); a symbol change renames the listing now or at its effective date (D-340). Every action
 * rejects the listing's open orders first where it changes what they trade (D-304).
 * Wiring, reads and dispatch: the rules are pure in domain/corporate-actions/ (decide-*.ts); the plan they answer is
 * written by write-plan.ts. Does not own the seeded schedules (domain/reference), how actions are listed
 * (app/corporate.ts), order rejection (app/trading/desk.ts), listing statuses (app/listings.ts) nor prices.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlSchemas } from "../../contract/wire.ts"
import { raiseAnswer } from "../../domain/corporate-actions/answer.ts"
import { decideDividend } from "../../domain/corporate-actions/decide-dividend.ts"
import { acceptDelisting, acceptSuspension, decideDelisting, decideResumption, decideSuspension } from "../../domain/corporate-actions/decide-listing.ts"
import { decideRightsIssue } from "../../domain/corporate-actions/decide-rights.ts"
import { acceptSplit, decideSplit, type SplitType } from "../../domain/corporate-actions/decide-split.ts"
import { decideSymbolChange, newSymbolFor, SYMBOL_CHANGE_JOB } from "../../domain/corporate-actions/decide-symbol-change.ts"
import type { ActionPlan } from "../../domain/corporate-actions/plan.ts"
import { type ListingStatus, type RaiseInput, REJECT_DELISTED, REJECT_SPLIT, REJECT_SUSPENDED, refuseDelisted } from "../../domain/corporate-actions/raise.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import type { Instrument } from "../../domain/instruments.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { rememberRescale } from "../../sim/durable-time.ts"
import { MarketFeed, type PinResult } from "../../sim/market-feed.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { SimActions, UNIT_CHANGES } from "../docs.ts"
import { holdersOf, partnerPartitions } from "../holders.ts"
import { ActionPayload } from "../job-payloads.ts"
import { Listings } from "../listings.ts"
import { ReferenceData } from "../reference-data.ts"
import { symbolChangeJob } from "../symbol-change.ts"
import { Symbols } from "../symbols.ts"
import { TradingService } from "../trading/service.ts"
import { writeActionPlan } from "./write-plan.ts"

export type { RaiseInput, RaiseType } from "../../domain/corporate-actions/raise.ts"

/** What every action's rule is given besides its own state: the transaction, the listing, its status, the action's id, now. */
interface Raised {
  readonly tx: Tx
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  readonly input: RaiseInput
  readonly actionId: string
  readonly now: number
}

type Planning = Effect.Effect<ActionPlan, ApiFailure | StoreError>

export class CorporateActions extends Context.Service<
  CorporateActions,
  {
    readonly raise: (input: RaiseInput) => Effect.Effect<ControlSchemas["CorporateActionResult"], ApiFailure | StoreError>
  }
>()("sokoni/CorporateActions") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog
    const feed = yield* MarketFeed
    const listings = yield* Listings
    const trading = yield* TradingService
    const { book } = yield* ReferenceData
    const symbols = yield* Symbols
    const scheduler = yield* Scheduler
    const writers = { events, scheduler, listings, symbols }

    yield* scheduler.register(SYMBOL_CHANGE_JOB, ActionPayload, symbolChangeJob({ symbols, clock }))

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

    const split = (r: Raised, actionType: SplitType): Planning =>
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

    const suspension = ({ tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
      Effect.gen(function* () {
        const state = { instrument, listingStatus, partitions: yield* audience(tx) }
        const accepted = yield* liftFailure(acceptSuspension(state, input, now))
        const ordersRejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_SUSPENDED, accepted.rejectReason)
        return decideSuspension({ ...state, ordersRejected }, { input, accepted }, now, { actionId })
      })

    /** The suspension in force: the last one raised here, else the seeded one that explains a SUSPENDED listing. */
    const suspensionInForce = (tx: ReadTx, instrument: Instrument) =>
      Effect.gen(function* () {
        // raised under any symbol the listing had (D-342); seeded under its catalogue symbol (its id)
        const raised = (yield* SimActions.list(tx, "global", { limit: 100_000, order: "desc" })).find(
          (a) => symbols.listingOf(a.symbol)?.id === instrument.id && a.actionType === "SUSPENSION" && a.completedAt === null
        )
        return raised ?? book.actions().find((a) => a.symbol === instrument.id && a.actionType === "SUSPENSION")
      })

    const resumption = ({ tx, instrument, listingStatus, input, now }: Raised): Planning =>
      Effect.gen(function* () {
        const suspended = listingStatus === "SUSPENDED" ? yield* suspensionInForce(tx, instrument) : undefined
        return yield* liftFailure(decideResumption({ instrument, listingStatus, suspension: suspended, partitions: yield* audience(tx) }, input, now))
      })

    const delisting = ({ tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
      Effect.gen(function* () {
        const ordersRejected = yield* trading.rejectOpenIn(tx, instrument.symbol, REJECT_DELISTED, acceptDelisting(instrument, input).rejectReason)
        const holderCount = (yield* holdersOf(tx, instrument.symbol)).length
        return decideDelisting({ instrument, listingStatus, partitions: yield* audience(tx), ordersRejected, holderCount }, input, now, { actionId })
      })

    const symbolChange = ({ tx, instrument, listingStatus, input, actionId, now }: Raised): Planning =>
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

    const planOf = (r: Raised): Planning => {
      switch (r.input.actionType) {
        case "DIVIDEND":
          return dividend(r)
        case "SPLIT":
        case "REVERSE_SPLIT":
        case "BONUS":
          return split(r, r.input.actionType)
        case "SUSPENSION":
          return suspension(r)
        case "RESUMPTION":
          return resumption(r)
        case "DELISTING":
          return delisting(r)
        case "SYMBOL_CHANGE":
          return symbolChange(r)
        case "RIGHTS_ISSUE":
          return rightsIssue(r)
      }
    }

    const raise = Effect.fn("CorporateActions.raise")(function* (input: RaiseInput) {
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange))
      const actionId = yield* entropy.id(input.actionType === "DIVIDEND" ? "div" : "ca")
      const outcome = yield* store.transact((tx) =>
        Effect.gen(function* () {
          // A global step (E-320): the unit-change seq it takes must not interleave with any partition's fills.
          yield* tx.lockPartition("global")
          const now = yield* clock.now
          const listingStatus = yield* listings.statusIn(tx, instrument)
          const delisted = refuseDelisted(instrument, listingStatus)
          if (delisted !== undefined) return yield* Effect.fail(delisted)
          const plan = yield* planOf({ tx, instrument, listingStatus, input, actionId, now })
          return yield* writeActionPlan(writers, tx, instrument, plan, now)
        })
      )
      // The price path follows a split once the holdings did; kept in the store like a pin (E-182, E-298).
      const rescale = outcome.rescale
      const repriced: PinResult | undefined = rescale === undefined ? undefined : yield* feed.rescale(instrument, rescale.ratioFrom, rescale.ratioTo)
      if (repriced !== undefined && rescale !== undefined) yield* rememberRescale(store, instrument, repriced.index, rescale.ratioFrom, rescale.ratioTo)
      return raiseAnswer({ actionType: input.actionType, actionId, instrument }, outcome, repriced, yield* clock.now)
    })

    return CorporateActions.of({ raise })
  })

  static readonly layer = Layer.effect(CorporateActions, CorporateActions.make)
}
