/**
 * Who is listening to a PubSub, counted: publishing to one nobody reads still costs some ten steps of the effect
 * runtime per message, so the event log and the console feed publish only while `heard()` (E-430).
 */
import { Effect, type Scope } from "effect"

export interface Listeners {
  /** Held by a subscriber for as long as its scope is open: counted in at once, counted out when the scope closes. */
  readonly listen: Effect.Effect<void, never, Scope.Scope>
  readonly heard: () => boolean
}

export const makeListeners = (): Listeners => {
  let listening = 0
  const listen = Effect.acquireRelease(
    Effect.sync(() => {
      listening++
    }),
    () =>
      Effect.sync(() => {
        listening--
      })
  )
  return { listen, heard: () => listening > 0 }
}
