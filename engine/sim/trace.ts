/**
 * Trace: the run's record, one JSON line per HTTP exchange and per committed event, in order, and its SHA-256.
 * Owns the lines and the hash. Does not own what is recorded (the gateway and the event log call `record`).
 * Two runs with the same seed and scenario must produce the same lines, byte for byte, on either store.
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer } from "effect"

export class Trace extends Context.Service<
  Trace,
  {
    readonly record: (line: Record<string, unknown>) => Effect.Effect<void>
    readonly lines: Effect.Effect<ReadonlyArray<string>>
    readonly hash: Effect.Effect<{ readonly hash: string; readonly lines: number }>
  }
>()("sokoni/Trace") {
  static readonly make = Effect.sync(() => {
    const lines: Array<string> = []
    const digest = () => {
      const h = createHash("sha256")
      for (const line of lines) h.update(`${line}\n`)
      return h.digest("hex")
    }
    return Trace.of({
      record: (line) => Effect.sync(() => void lines.push(JSON.stringify(line))),
      lines: Effect.sync(() => [...lines]),
      hash: Effect.sync(() => ({ hash: digest(), lines: lines.length }))
    })
  })

  static readonly layer = Layer.effect(Trace, Trace.make)
}
