/**
 * PricePins: the operator setting a listing's exchange price (control API `PUT /_sim/market/prices/{symbol}`, D-240).
 * Owns the validation of the request and its answer; the pin itself, and when the API shows it (at the exchange's
 * next open refresh instant plus the 15-minute delay), are the MarketFeed's. Does not own quotes or history.
 */
import { Context, Effect, Layer } from "effect"
import type { ControlSchemas } from "../contract/wire.ts"
import { findExchange } from "../domain/calendar.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { parseScaled, price4ToWire } from "../domain/money.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { rememberPin } from "../sim/durable-time.ts"
import { MarketFeed } from "../sim/market-feed.ts"
import { Store, type StoreError } from "../store/port.ts"
import { Symbols } from "./symbols.ts"

/** Largest price accepted, in local units: keeps the path's integer arithmetic exact (price4 x 10^4 < 2^53). */
export const MAX_PIN_PRICE = 100_000_000

export class PricePins extends Context.Service<
  PricePins,
  { readonly setPrice: (symbol: string, price: number) => Effect.Effect<ControlSchemas["MarketPrice"], ApiFailure | StoreError> }
>()("sokoni/PricePins") {
  static readonly make = Effect.gen(function* () {
    const feed = yield* MarketFeed
    const clock = yield* EngineClock
    const symbols = yield* Symbols
    const store = yield* Store
    const setPrice = Effect.fn("PricePins.setPrice")(function* (symbol: string, price: number) {
      const instrument = yield* liftFailure(symbols.resolve(symbol))
      const price4 = parseScaled(price, 4)
      // The body's schema already refused 0 and below; what is left to refuse is precision and size.
      if (price4 === undefined || price > MAX_PIN_PRICE) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", `price must be above 0 and at most ${MAX_PIN_PRICE}, with at most 4 decimals`, { param: "price" }))
      }
      const setAt = yield* clock.nowHere()
      const pinned = yield* feed.pin(instrument, price4)
      // Kept with the request's writes, so a restarted engine's feed holds it too (E-298).
      yield* rememberPin(store, instrument, pinned.index, pinned.price)
      const answer: ControlSchemas["MarketPrice"] = {
        symbol: instrument.symbol,
        exchange: instrument.exchange,
        currency: findExchange(instrument.exchange)?.currency ?? "USD",
        price: price4ToWire(pinned.price),
        setAt: isoAt(setAt),
        effectiveAt: isoAt(pinned.effectiveAt),
        visibleFrom: isoAt(pinned.visibleFrom)
      }
      return answer
    })
    return PricePins.of({ setPrice })
  })

  static readonly layer = Layer.effect(PricePins, PricePins.make)
}
