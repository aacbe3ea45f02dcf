/**
 * What the trading dispatchers are wired with: the seams (store, clock, generator, desk, scheduler, feed, events)
 * and the listing services. Owns: collecting them once for TradingService.make. Does not own any rule.
 */
import { Effect } from "effect"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { PlantedDefects } from "../../sim/defects.ts"
import { ExecutionDesk } from "../../sim/desk.ts"
import { MarketFeed } from "../../sim/market-feed.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { Store } from "../../store/port.ts"
import { Listings } from "../listings.ts"
import { Symbols } from "../symbols.ts"

export const tradingDeps = Effect.gen(function* () {
  return {
    store: yield* Store,
    clock: yield* EngineClock,
    // TEST ONLY (sim/defects.ts, E-190): empty unless `serve --plant-defect` named fee-rounding or quote-ttl.
    planted: yield* PlantedDefects,
    entropy: yield* Entropy,
    events: yield* EventLog,
    desk: yield* ExecutionDesk,
    scheduler: yield* Scheduler,
    feed: yield* MarketFeed,
    listings: yield* Listings,
    symbols: yield* Symbols
  }
})

export type TradingDeps = Effect.Success<typeof tradingDeps>
