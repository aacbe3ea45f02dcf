/**
 * Trace: the run's record, one JSON line per HTTP exchange and per committed event, in order, and its SHA-256.
 * Owns the lines and the hash. Does not own what is recorded (the gateway and the event log call `record`).
 * Two runs with the same seed and scenario must produce the same lines, byte for byte, on either store.
 *
 * How much is kept is the caller's choice:
 * - `Trace.layer`: every line, in memory (scenario runs: the hash is of the whole run);
 * - `Trace.layerRing(n)`: the last n lines (a long-running `serve`); `hash` is of the kept lines and says so
 *   (`partial`, `dropped`);
 * - `Trace.layerOff`: keeps nothing; `hash` counts what it dropped;
 * - `Trace.layerFile(path, inner)`: appends each line to a file (NDJSON) as it is recorded and passes it on to
 *   `inner` (by default `layerOff`), which answers `lines` and `hash`.
 */
import { createHash } from "node:crypto"
import { close, createWriteStream, fsync, open, type WriteStream } from "node:fs"
import { Context, Data, Effect, Layer } from "effect"

/** The trace's hash: of every line recorded, or (`partial: true`) of the `lines` kept after `dropped` were let go. */
export interface TraceHash {
  readonly hash: string
  readonly lines: number
  /** Present on bounded traces (ring, off): lines recorded but no longer kept. */
  readonly dropped?: number
  /** Present on bounded traces: true when `hash` does not cover the whole run. */
  readonly partial?: boolean
}

export class TraceFileError extends Data.TaggedError("TraceFileError")<{ readonly path: string; readonly cause: unknown }> {
  override get message() {
    return `cannot write the trace to ${this.path}: ${String((this.cause as Error)?.message ?? this.cause)}`
  }
}

/** How many characters of lines `makeHashed` gathers before it feeds them to the hash. */
const HASH_CHUNK = 64 * 1024

const sha256 = (lines: Iterable<string>) => {
  const h = createHash("sha256")
  for (const line of lines) h.update(`${line}\n`)
  return h.digest("hex")
}

/**
 * A line's last field already in JSON: `{ ...fields, response: value, [lastFieldJson]: text }` where `text` is exactly
 * `JSON.stringify(value)` (an answer's body, serialised once for the wire). The line is then written with that text
 * instead of serialising the answer a second time: the same bytes, as `JSON.stringify` writes keys in insertion order
 * and skips symbol keys (E-349).
 */
export const lastFieldJson: unique symbol = Symbol("sokoni/trace/lastFieldJson")

/** The NDJSON bytes of one recorded line (the same bytes the hash covers). */
const serialise = (line: Record<string, unknown>): string => {
  const text = (line as { [lastFieldJson]?: unknown })[lastFieldJson]
  if (typeof text !== "string") return JSON.stringify(line)
  const keys = Object.keys(line)
  const last = keys[keys.length - 1]
  if (last === undefined || keys.length < 2) return JSON.stringify(line)
  const head: Record<string, unknown> = {}
  for (let i = 0; i < keys.length - 1; i++) head[keys[i] as string] = line[keys[i] as string]
  const start = JSON.stringify(head)
  return `${start.slice(0, -1)}${start.length > 2 ? "," : ""}${JSON.stringify(last)}:${text}}`
}

export class Trace extends Context.Service<
  Trace,
  {
    readonly record: (line: Record<string, unknown>) => Effect.Effect<void>
    readonly lines: Effect.Effect<ReadonlyArray<string>>
    /**
     * The lines kept from position `from` on, positions counted over the whole run (dropped lines included), so a
     * reader that remembers where it stopped reads only what came since: a scenario step, not the whole trace.
     */
    readonly linesFrom: (from: number) => Effect.Effect<ReadonlyArray<string>>
    readonly hash: Effect.Effect<TraceHash>
  }
>()("sokoni/Trace") {
  /**
   * Keeps every line (scenario runs). The hash is kept incrementally: lines not yet hashed are fed to a running
   * SHA-256 when the hash is asked for, and a copy of it is digested. A scenario asks after every step; hashing the
   * whole trace each time made a run quadratic in its steps (issue 25).
   */
  static readonly make = Effect.sync(() => {
    const lines: Array<string> = []
    const running = createHash("sha256")
    let hashed = 0
    return Trace.of({
      record: (line) => Effect.sync(() => void lines.push(serialise(line))),
      lines: Effect.sync(() => [...lines]),
      linesFrom: (from) => Effect.sync(() => lines.slice(Math.max(0, from))),
      hash: Effect.sync(() => {
        for (; hashed < lines.length; hashed++) running.update(`${lines[hashed]}\n`)
        return { hash: running.copy().digest("hex"), lines: lines.length }
      })
    })
  })

  /**
   * Keeps the last `capacity` lines (at least 1) in a ring; older lines are counted in `dropped`. Lines are kept as
   * the values recorded and serialised only when read: a serve answering thousands of requests a second would
   * otherwise serialise every answer a second time for a trace nobody may read (docs/performance.md). Recorded values
   * are never mutated afterwards (answers and events are built fresh), so the text read is the text of the moment.
   */
  static readonly makeRing = (capacity: number) =>
    Effect.sync(() => {
      if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`trace ring capacity must be a positive integer, got ${capacity}`)
      const ring: Array<Record<string, unknown>> = []
      let next = 0 // where the next line goes once the ring is full
      let dropped = 0
      const kept = () => (ring.length < capacity ? [...ring] : [...ring.slice(next), ...ring.slice(0, next)]).map(serialise)
      return Trace.of({
        record: (line) =>
          Effect.sync(() => {
            if (ring.length < capacity) ring.push(line)
            else {
              ring[next] = line
              next = (next + 1) % capacity
              dropped += 1
            }
          }),
        lines: Effect.sync(kept),
        // The kept lines start at position `dropped`; `kept()` is at most `capacity` lines, so this is bounded.
        linesFrom: (from) => Effect.sync(() => kept().slice(Math.max(0, from - dropped))),
        hash: Effect.sync(() => ({ hash: sha256(kept()), lines: ring.length, dropped, partial: dropped > 0 }))
      })
    })

  /**
   * Keeps no line but hashes every one as it comes (a long simulated run): `hash` is the one `Trace.layer` gives for
   * the same run, in constant memory. `observe` sees each line recorded (the simulated week counts events with it).
   */
  static readonly makeHashed = (observe?: (line: Record<string, unknown>) => void) =>
    Effect.sync(() => {
      const running = createHash("sha256")
      let count = 0
      // Lines are fed to the hash some 64 KB at a time, not one by one: a call into the hash per line cost a long
      // week about 1% of its CPU. The hash of the same bytes is the same however they are split.
      let pending = ""
      const flush = () => {
        running.update(pending)
        pending = ""
      }
      return Trace.of({
        record: (line) =>
          Effect.sync(() => {
            pending += `${serialise(line)}\n`
            if (pending.length >= HASH_CHUNK) flush()
            count += 1
            observe?.(line)
          }),
        lines: Effect.succeed([]),
        linesFrom: () => Effect.succeed([]),
        hash: Effect.sync(() => {
          flush()
          return { hash: running.copy().digest("hex"), lines: count }
        })
      })
    })

  /** Keeps nothing; counts what it was given. */
  static readonly makeOff = Effect.sync(() => {
    let dropped = 0
    return Trace.of({
      record: () =>
        Effect.sync(() => {
          dropped += 1
        }),
      lines: Effect.succeed([]),
      linesFrom: () => Effect.succeed([]),
      hash: Effect.sync(() => ({ hash: sha256([]), lines: 0, dropped, partial: dropped > 0 }))
    })
  })

  /**
   * Appends every line to `path` (created if missing, never truncated) through one write stream, in record order,
   * and passes it on to the `Trace` in context. No fsync per line: the stream's buffer goes to the file as the event
   * loop allows, and the scope's close waits for it, fsyncs once and closes the file. A write error after opening is
   * a defect of the next `record` (the file the caller asked for must not silently stop growing).
   */
  static readonly makeFile = (path: string) =>
    Effect.gen(function* () {
      const inner = yield* Trace
      const { stream } = yield* Effect.acquireRelease(openAppend(path), closeSynced)
      let failure: unknown
      stream.on("error", (error) => {
        failure ??= error
      })
      return Trace.of({
        record: (line) =>
          Effect.suspend(() => {
            if (failure !== undefined) return Effect.die(new TraceFileError({ path, cause: failure }))
            stream.write(`${serialise(line)}\n`)
            return inner.record(line)
          }),
        lines: inner.lines,
        linesFrom: inner.linesFrom,
        hash: inner.hash
      })
    })

  static readonly layer = Layer.effect(Trace, Trace.make)
  static readonly layerRing = (capacity: number) => Layer.effect(Trace, Trace.makeRing(capacity))
  static readonly layerOff = Layer.effect(Trace, Trace.makeOff)
  static readonly layerHashed = (observe?: (line: Record<string, unknown>) => void) => Layer.effect(Trace, Trace.makeHashed(observe))
  /** The file trace over `inner` (what `lines` and `hash` answer from; by default nothing is kept in memory). */
  static readonly layerFile = <E = never, R = never>(path: string, inner: Layer.Layer<Trace, E, R> = Trace.layerOff as Layer.Layer<Trace, E, R>) =>
    Layer.effect(Trace, Trace.makeFile(path)).pipe(Layer.provide(inner))
}

const openAppend = (path: string) =>
  Effect.callback<{ readonly fd: number; readonly stream: WriteStream }, TraceFileError>((resume) => {
    open(path, "a", (cause, fd) => {
      if (cause) return resume(Effect.fail(new TraceFileError({ path, cause })))
      resume(Effect.succeed({ fd, stream: createWriteStream("", { fd, autoClose: false }) }))
    })
  })

/** Waits for the buffered lines, fsyncs once, closes the file. */
const closeSynced = ({ fd, stream }: { readonly fd: number; readonly stream: WriteStream }) =>
  Effect.callback<void>((resume) => {
    const done = () => close(fd, () => resume(Effect.void))
    if (stream.errored) return done()
    stream.end(() => fsync(fd, done))
  })
