/**
 * CorporateActions: actions the operator raises through the control API (`POST /_sim/corporate-actions`, D-302) and
 * their effect on every partner's holders, in one transaction each: a dividend credits every holder's wallet from the
 * issuer; a split, reverse split or bonus issue rescales holdings (cash in lieu of fractions) and then the price path;
 * a suspension, resumption or delisting sets the listing's status; a rights issue entitles its holders (taken up
 * through app/corporate-actions/rights.ts); a symbol change renames the listing now or at its effective date (D-340). Every action
 * rejects the listing's open orders first where it changes what they trade (D-304).
 * Wiring, reads and dispatch: the rules are pure in domain/corporate-actions/ (decide-*.ts); the plan they answer is
 * written by write-plan.ts. Does not own the seeded schedules (domain/reference), how actions are listed
 * (app/corporate.ts), order rejection (app/trading/desk.ts), listing statuses (app/listings.ts) nor prices.
 */
import { Context, Effect, Layer } from "effect"
import type { ControlSchemas } from "../../contract/wire.ts"
import { raiseAnswer } from "../../domain/corporate-actions/answer.ts"
import { SYMBOL_CHANGE_JOB } from "../../domain/corporate-actions/decide-symbol-change.ts"
import { type RaiseInput, refuseDelisted } from "../../domain/corporate-actions/raise.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { rememberRescale } from "../../sim/durable-time.ts"
import { MarketFeed, type PinResult } from "../../sim/market-feed.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { Store, type StoreError } from "../../store/port.ts"
import { ActionPayload } from "../job-payloads.ts"
import { Listings } from "../listings.ts"
import { ReferenceData } from "../reference-data.ts"
import { symbolChangeJob } from "./symbol-change.ts"
import { Symbols } from "../symbols.ts"
import { TradingService } from "../trading/service.ts"
import { planOf } from "./plans.ts"
import { writeActionPlan } from "./write-plan.ts"

export type { RaiseInput, RaiseType } from "../../domain/corporate-actions/raise.ts"

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
    const deps = { trading, feed, symbols, book }

    yield* scheduler.register(SYMBOL_CHANGE_JOB, ActionPayload, symbolChangeJob({ symbols, clock }))

    const raise = Effect.fn("CorporateActions.raise")(function* (input: RaiseInput) {
      const instrument = yield* liftFailure(symbols.resolve(input.symbol, input.exchange))
      const actionId = yield* entropy.idHere(input.actionType === "DIVIDEND" ? "div" : "ca")
      const outcome = yield* store.transact((tx) =>
        Effect.gen(function* () {
          // A global step (E-320): the unit-change seq it takes must not interleave with any partition's fills.
          yield* tx.lockPartition("global")
          const now = yield* clock.nowHere()
          const listingStatus = yield* listings.statusIn(tx, instrument)
          const delisted = refuseDelisted(instrument, listingStatus)
          if (delisted !== undefined) return yield* Effect.fail(delisted)
          const plan = yield* planOf(deps, { tx, instrument, listingStatus, input, actionId, now })
          return yield* writeActionPlan(writers, tx, instrument, plan, now)
        })
      )
      // The price path follows a split once the holdings did; kept in the store like a pin (E-182, E-298).
      const rescale = outcome.rescale
      const repriced: PinResult | undefined = rescale === undefined ? undefined : yield* feed.rescale(instrument, rescale.ratioFrom, rescale.ratioTo)
      if (repriced !== undefined && rescale !== undefined) yield* rememberRescale(store, instrument, repriced.index, rescale.ratioFrom, rescale.ratioTo)
      return raiseAnswer({ actionType: input.actionType, actionId, instrument }, outcome, repriced, yield* clock.nowHere())
    })

    return CorporateActions.of({ raise })
  })

  static readonly layer = Layer.effect(CorporateActions, CorporateActions.make)
}
