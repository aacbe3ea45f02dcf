/**
 * Findings: what the engine noticed about a partner's integration that the partner should hear before the real
 * service enforces it (a request that relies on the public service's dialect, a fault it met and how it answered).
 * Recorded by the gateway's dialect, the faults middleware and any other observer; read by `GET /_sim/findings`, the
 * console and the summary `serve` prints when it stops.
 *
 * Owns: the findings of this engine, in memory (a reset starts a fresh engine and so a fresh list), deduplicated by
 * (partner, kind, operation): the first sentence is kept and a count grows. Bounded: past `FINDINGS_LIMIT` distinct
 * entries the oldest-first-seen is dropped (and counted), so a long run cannot grow without end.
 * Does not own: deciding what is a finding (the recorders do) nor any partner-visible behaviour.
 */
import { Context, Effect, Layer } from "effect"
import { EngineClock, isoAt } from "../sim/clock.ts"

/** What a recorder reports. `kind` is namespaced by its recorder, e.g. `dialect.missing-idempotency-key`, `fault.503`. */
export interface FindingInput {
  /** The partner whose request it was; null when the request carried no credential the engine could resolve. */
  readonly partner: string | null
  readonly kind: string
  /** The contract's operationId, or `METHOD /path` when the request named none. */
  readonly operation: string
  /** One sentence a partner reads: what it did and what the other side would answer. */
  readonly message: string
}

export interface Finding extends FindingInput {
  readonly count: number
  /** Engine clock, ISO-8601: when it was first and last recorded. */
  readonly firstAt: string
  readonly lastAt: string
}

export interface FindingsList {
  readonly findings: ReadonlyArray<Finding>
  /** Distinct findings dropped to keep the list bounded (0 in any ordinary run). */
  readonly dropped: number
}

/** Distinct (partner, kind, operation) entries kept per engine. */
export const FINDINGS_LIMIT = 1000

const keyOf = (f: FindingInput): string => JSON.stringify([f.partner, f.kind, f.operation])

/** The bounded, deduplicated book behind the service: plain state, no effects (the service stamps the time). */
export const makeFindingsBook = (limit = FINDINGS_LIMIT) => {
  // A Map iterates in insertion order: the first entry is the oldest first seen, the one dropped when full.
  const entries = new Map<string, Finding>()
  let dropped = 0
  const record = (input: FindingInput, at: string): void => {
    const key = keyOf(input)
    const seen = entries.get(key)
    if (seen !== undefined) {
      entries.set(key, { ...seen, count: seen.count + 1, lastAt: at })
      return
    }
    if (entries.size >= limit) {
      const oldest = entries.keys().next().value
      if (oldest !== undefined) entries.delete(oldest)
      dropped += 1
    }
    const { partner, kind, operation, message } = input
    entries.set(key, { partner, kind, operation, message, count: 1, firstAt: at, lastAt: at })
  }
  const list = (partner?: string): FindingsList => ({
    findings: [...entries.values()].filter((f) => partner === undefined || f.partner === partner),
    dropped
  })
  return { record, list }
}

export class Findings extends Context.Service<
  Findings,
  {
    readonly record: (finding: FindingInput) => Effect.Effect<void>
    /** Oldest first seen first; with `partner`, that partner's only. */
    readonly list: (partner?: string) => Effect.Effect<FindingsList>
  }
>()("sokoni/Findings") {
  static readonly make = (now: Effect.Effect<number>, limit = FINDINGS_LIMIT) =>
    Effect.sync(() => {
      const book = makeFindingsBook(limit)
      return Findings.of({
        record: (finding) => Effect.flatMap(now, (at) => Effect.sync(() => book.record(finding, isoAt(at)))),
        list: (partner) => Effect.sync(() => book.list(partner))
      })
    })

  /** One book per engine, stamped by the engine's clock. */
  static readonly layer = Layer.effect(
    Findings,
    Effect.gen(function* () {
      const clock = yield* EngineClock
      return yield* Findings.make(clock.now)
    })
  )

  /** For tests of recorders: no clock needed, every finding stamped at the epoch. */
  static readonly layerTest = Layer.effect(Findings, Findings.make(Effect.succeed(0)))
}
