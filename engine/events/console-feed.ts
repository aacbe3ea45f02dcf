/**
 * ConsoleFeed: what the console's live stream (`GET /_sim/console/stream`, E-383) hears besides the event log: each
 * answered request and each recorded webhook attempt, in this process. Owns nothing durable: a console that falls
 * behind loses the oldest signals (a sliding buffer), since every signal only tells the page to read the state again.
 * While no console listens, publishing builds nothing: it runs on every request.
 */
import { makeListeners } from "./listeners.ts"
import { Context, Effect, Layer, PubSub, type Scope } from "effect"

export type ConsoleSignal =
  | { readonly kind: "exchange"; readonly method: string; readonly path: string; readonly status: number }
  | { readonly kind: "delivery"; readonly deliveryId: string; readonly attempt: number; readonly outcome: string; readonly status: number | null }

/** Signals kept for a console that reads slowly; older ones are dropped first. */
export const CONSOLE_BUFFER = 1024

export class ConsoleFeed extends Context.Service<
  ConsoleFeed,
  {
    /** Publishes the signal `make` builds, only when a console listens. */
    readonly publish: (make: () => ConsoleSignal) => Effect.Effect<void>
    /** Whether a console listens now (a caller that would publish after a commit then need not book the publish). */
    readonly heard: () => boolean
    /** A subscription for as long as the scope lasts. */
    readonly subscribe: Effect.Effect<PubSub.Subscription<ConsoleSignal>, never, Scope.Scope>
  }
>()("sokoni/ConsoleFeed") {
  static readonly make = Effect.gen(function* () {
    const signals = yield* PubSub.sliding<ConsoleSignal>(CONSOLE_BUFFER)
    const { listen, heard } = makeListeners()
    return ConsoleFeed.of({
      publish: (make) => (heard() ? Effect.asVoid(PubSub.publish(signals, make())) : Effect.void),
      heard,
      subscribe: Effect.andThen(listen, PubSub.subscribe(signals))
    })
  })

  static readonly layer = Layer.effect(ConsoleFeed, ConsoleFeed.make)
}
