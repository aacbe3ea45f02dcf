/**
 * Services a component captured when it was built, provided to each effect it hands out, merged into the caller's
 * context once per caller's context rather than once per effect (E-501).
 *
 * Why: `Effect.provideContext(captured)` merges `captured` into the running fiber's context each time it runs, and a
 * merge copies the whole context (every service of the engine, some sixty) into a new Map. The gateway does it for
 * every request, from callers whose context is the same object each time (the simulated week's fiber; a server's
 * fibers run in the runtime's context): about 9 µs and a Map of garbage per request, 1.7% of a 10,000-order week's
 * CPU (issue 25). Contexts are never changed in place, so the merge of the same two is the same context.
 */
import { Context } from "effect"

/** `(outer) => Context.merge(outer, captured)` for `Effect.updateContext`, the last answer kept for the same `outer`. */
export const providing = <R>(captured: Context.Context<R>) => {
  let lastOuter: unknown
  let lastMerged: unknown
  return <O>(outer: Context.Context<O>): Context.Context<O | R> => {
    if (outer !== lastOuter || lastMerged === undefined) {
      lastMerged = Context.merge(outer, captured)
      lastOuter = outer
    }
    return lastMerged as Context.Context<O | R>
  }
}
