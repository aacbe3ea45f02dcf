/**
 * A stored value checked against the Schema of what the code takes it for: a document's body (app/doc-shapes.ts) or
 * a due job's payload (app/job-payloads.ts, checked by the scheduler). Owns the check and its error, nothing else.
 *
 * A check, not a transformation: a value that fits is handed on as it is (fields the Schema does not name included),
 * so nothing read is rebuilt and answers built from it keep their bytes. The guard is compiled once per Schema; the
 * slower decoder runs only on a value that does not fit, to say what is wrong with it.
 */
import { Cause, Effect, Exit, Schema, SchemaAST } from "effect"
import { plainGuardOf } from "./plain-guard.ts"
import { StoreError } from "./port.ts"

/**
 * A check of values against `shape`, without an effect: the value itself when it fits, else a StoreError saying
 * `what(name)` and why (the scheduler checks every job's payload this way: an effect per job cost two steps, E-450).
 */
export const shapeVerdict = <A>(shape: Schema.Codec<A>, what: (name: string) => string) => {
  const is = Schema.is(shape)
  // A plain guard answers true only where `Schema.is` does, at a fraction of its cost; its false is checked again (E-500).
  const plain = plainGuardOf(SchemaAST.toType(shape.ast))
  const fits = plain === undefined ? is : (value: unknown): value is A => plain(value) || is(value)
  /**
   * Values already found to fit: the memory store hands back the very object it keeps, read again and again (a
   * quote, a holding, a sub-account), and a stored value is never changed in place, so its verdict holds (E-347). A
   * value read from PostgreSQL is a new object each time and is simply checked.
   */
  const fitted = new WeakSet<object>()
  return (name: string, value: unknown): A | StoreError => {
    const remembered = typeof value === "object" && value !== null
    if (remembered && fitted.has(value)) return value as A
    if (fits(value)) {
      if (remembered) fitted.add(value)
      return value
    }
    const exit = Schema.decodeUnknownExit(shape)(value)
    const issue = Exit.isFailure(exit) ? `: ${Cause.pretty(exit.cause)}` : ""
    return new StoreError({ message: `${what(name)}${issue}` })
  }
}

/** A check of values against `shape`: a value that does not fit fails as a StoreError saying `what(name)` and why. */
export const shapeCheck = <A>(shape: Schema.Codec<A>, what: (name: string) => string) => {
  const verdict = shapeVerdict(shape, what)
  return (name: string, value: unknown): Effect.Effect<A, StoreError> => {
    const checked = verdict(name, value)
    return checked instanceof StoreError ? Effect.fail(checked) : Effect.succeed(checked)
  }
}
