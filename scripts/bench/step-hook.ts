/**
 * Counting the effect runtime's steps (effect-steps.ts, week-steps.ts): each primitive a fiber evaluates is passed to
 * `onStep` before it runs, through the fiber's tracer hook (`tracerContext`, Effect's internals of 4.0). A tool for
 * deterministic measures on a busy machine, not a test.
 */
import { Effect } from "effect"

export type Primitive = Record<string, unknown>

/** The keys Effect's primitives are read by: `<prefix>/identifier`, `/args`, `/evaluate`. */
const keyOf = (suffix: string) => {
  const sample = Effect.succeed(1) as unknown as Primitive
  const keys: Array<string> = []
  for (const key in sample) keys.push(key)
  const identifier = keys.find((k) => k.endsWith("/identifier"))
  if (identifier === undefined) throw new Error("step-hook: this version of Effect names its primitives otherwise")
  return identifier.replace("/identifier", suffix)
}
const IDENTIFIER = keyOf("/identifier")
const ARGS = keyOf("/args")
const EVALUATE = keyOf("/evaluate")
const SUCCESS_CONT = keyOf("/successCont")

/**
 * A step's kind: its primitive, and the start of its function's source when it has one (an OnSuccess step's: its
 * continuation's, which tells a generator's step from a flatMap's or an onExit's).
 */
export const describeStep = (step: Primitive, width: number): string => {
  const thunk = typeof step[SUCCESS_CONT] === "function" ? step[SUCCESS_CONT] : step[ARGS]
  const source = typeof thunk === "function" ? ` ${String(thunk).replace(/\s+/g, " ").slice(0, width)}` : ""
  return `${String(step[IDENTIFIER])}${source}`
}

/** Calls `onStep` with every step every fiber evaluates from now on (fibers without a tracer of their own). */
export const installStepHook = (onStep: (step: Primitive) => void): void => {
  const hook = (step: Primitive, fiber: unknown) => {
    onStep(step)
    return (step[EVALUATE] as (fiber: unknown) => unknown).call(step, fiber)
  }
  // Every fiber's context cache is set through its prototype: the hook rides on each one that has no tracer of its own.
  const fiberPrototype = Object.getPrototypeOf(Effect.runFork(Effect.void)) as object
  Object.defineProperty(fiberPrototype, "cache", {
    configurable: true,
    get(this: { stepsCache?: unknown }) {
      return this.stepsCache
    },
    set(this: { stepsCache?: unknown }, cache: { tracerContext?: unknown }) {
      this.stepsCache = cache.tracerContext === undefined ? { ...cache, tracerContext: hook } : cache
    }
  })
}
