/**
 * The trace's variants: complete (scenario runs), a ring of the last N lines and off (a long `serve`), and a file
 * that receives every line as NDJSON while `lines`/`hash` answer from the inner trace.
 */
import { createHash } from "node:crypto"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Cause, Effect, Exit, type Layer } from "effect"
import { lastFieldJson, Trace, TraceFileError } from "../../engine/sim/trace.ts"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")
const ndjson = (lines: ReadonlyArray<string>) => lines.map((l) => `${l}\n`).join("")
const entry = (n: number) => ({ kind: "event", n, at: "2026-11-23T08:00:00.000Z" })
const recordN = (count: number) =>
  Trace.use((trace) =>
    Effect.forEach(
      Array.from({ length: count }, (_, i) => entry(i)),
      (line) => trace.record(line),
      { discard: true }
    )
  )
const snapshot = Trace.use((trace) => Effect.all({ lines: trace.lines, hash: trace.hash }))

const dir = mkdtempSync(join(tmpdir(), "sokoni-trace-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => join(dir, `trace-${++files}.jsonl`)

describe("Trace.layer (complete)", () => {
  it.effect("keeps every line in order and hashes the NDJSON bytes", () =>
    Effect.gen(function* () {
      yield* recordN(5)
      const { lines, hash } = yield* snapshot
      assert.deepStrictEqual(
        lines,
        [0, 1, 2, 3, 4].map((n) => JSON.stringify(entry(n)))
      )
      assert.deepStrictEqual(hash, { hash: sha256(ndjson(lines)), lines: 5 })
    }).pipe(Effect.provide(Trace.layer))
  )
})

describe("Trace.layer's hash, kept as lines come", () => {
  it.effect("asked between records, it is each time the hash of every line so far; linesFrom reads from a position", () =>
    Effect.gen(function* () {
      const hashes: Array<string> = []
      for (let n = 0; n < 4; n++) {
        yield* Trace.use((trace) => trace.record(entry(n)))
        hashes.push((yield* Trace.use((trace) => trace.hash)).hash)
      }
      const all = [0, 1, 2, 3].map((n) => JSON.stringify(entry(n)))
      assert.deepStrictEqual(
        hashes,
        [1, 2, 3, 4].map((k) => sha256(ndjson(all.slice(0, k))))
      )
      assert.deepStrictEqual(yield* Trace.use((trace) => trace.linesFrom(2)), all.slice(2))
      assert.deepStrictEqual(yield* Trace.use((trace) => trace.linesFrom(9)), [])
    }).pipe(Effect.provide(Trace.layer))
  )
})

describe("Trace.layerHashed", () => {
  it.effect("keeps no line, shows each to its observer, and hashes as Trace.layer does", () => {
    const seen: Array<unknown> = []
    return Effect.gen(function* () {
      yield* recordN(3)
      const { lines, hash } = yield* snapshot
      const complete = yield* Effect.provide(Effect.andThen(recordN(3), snapshot), Trace.layer)
      assert.deepStrictEqual(lines, [])
      assert.deepStrictEqual(hash, complete.hash)
      assert.deepStrictEqual(seen, [0, 1, 2].map(entry))
    }).pipe(Effect.provide(Trace.layerHashed((line) => seen.push(line))))
  })
})

describe("Trace.layerRing", () => {
  it.effect("before it fills, equals the complete trace (not partial)", () =>
    Effect.gen(function* () {
      const complete = yield* Effect.provide(Effect.andThen(recordN(3), snapshot), Trace.layer)
      const ring = yield* Effect.provide(Effect.andThen(recordN(3), snapshot), Trace.layerRing(3))
      assert.deepStrictEqual(ring.lines, complete.lines)
      assert.deepStrictEqual(ring.hash, { ...complete.hash, dropped: 0, partial: false })
    })
  )

  it.effect("keeps the last N lines in order, hashes them and says how many were dropped", () =>
    Effect.gen(function* () {
      yield* recordN(8)
      const { lines, hash } = yield* snapshot
      assert.deepStrictEqual(
        lines,
        [5, 6, 7].map((n) => JSON.stringify(entry(n)))
      )
      assert.deepStrictEqual(hash, { hash: sha256(ndjson(lines)), lines: 3, dropped: 5, partial: true })
      // Positions count the dropped lines: from 6 is the last two; from before the ring, what it keeps.
      assert.deepStrictEqual(yield* Trace.use((trace) => trace.linesFrom(6)), lines.slice(1))
      assert.deepStrictEqual(yield* Trace.use((trace) => trace.linesFrom(0)), lines)
    }).pipe(Effect.provide(Trace.layerRing(3)))
  )

  it.effect("a ring of one keeps the last line", () =>
    Effect.gen(function* () {
      yield* recordN(4)
      assert.deepStrictEqual(yield* Trace.use((t) => t.lines), [JSON.stringify(entry(3))])
    }).pipe(Effect.provide(Trace.layerRing(1)))
  )

  it.effect("refuses a capacity that is not a positive integer", () =>
    Effect.gen(function* () {
      for (const capacity of [0, -1, 1.5, Number.NaN]) {
        const exit = yield* Effect.exit(Effect.provide(snapshot, Trace.layerRing(capacity)))
        assert.isTrue(Exit.isFailure(exit), `capacity ${capacity}`)
      }
    })
  )
})

describe("Trace.layerOff", () => {
  it.effect("keeps nothing and counts what it dropped", () =>
    Effect.gen(function* () {
      yield* recordN(4)
      const { lines, hash } = yield* snapshot
      assert.deepStrictEqual(lines, [])
      assert.deepStrictEqual(hash, { hash: sha256(""), lines: 0, dropped: 4, partial: true })
    }).pipe(Effect.provide(Trace.layerOff))
  )
})

describe("Trace.layerFile", () => {
  it.effect("writes every line as NDJSON, flushed when the scope closes; the file hashes like the complete trace", () =>
    Effect.gen(function* () {
      const path = freshFile()
      const complete = yield* Effect.provide(Effect.andThen(recordN(2000), snapshot), Trace.layer)
      const inner = yield* Effect.provide(Effect.andThen(recordN(2000), snapshot), Trace.layerFile(path))
      const text = readFileSync(path, "utf8")
      assert.strictEqual(text, ndjson(complete.lines))
      assert.strictEqual(sha256(text), complete.hash.hash)
      // The default inner trace keeps nothing.
      assert.deepStrictEqual(inner.lines, [])
      assert.strictEqual(inner.hash.dropped, 2000)
    })
  )

  it.effect("passes each line to the inner trace, which answers lines and hash", () =>
    Effect.gen(function* () {
      const path = freshFile()
      const ring = yield* Effect.provide(Effect.andThen(recordN(5), snapshot), Trace.layerFile(path, Trace.layerRing(2)))
      assert.deepStrictEqual(
        ring.lines,
        [3, 4].map((n) => JSON.stringify(entry(n)))
      )
      assert.deepStrictEqual(ring.hash.dropped, 3)
      assert.strictEqual(readFileSync(path, "utf8").split("\n").length, 6)
    })
  )

  it.effect("streams lines while the scope is open", () =>
    Effect.gen(function* () {
      const path = freshFile()
      yield* Effect.gen(function* () {
        yield* recordN(3)
        let text = ""
        // The write is the OS's: poll until the lines are there, up to 30 s of real time (a failure bound only: a
        // loaded machine can take many event-loop turns).
        const deadline = performance.now() + 30_000
        while (text.split("\n").length < 4 && performance.now() < deadline) {
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
          text = readFileSync(path, "utf8")
        }
        assert.strictEqual(text, ndjson([0, 1, 2].map((n) => JSON.stringify(entry(n)))))
      }).pipe(Effect.provide(Trace.layerFile(path, Trace.layer)))
    })
  )

  it.effect("appends to an existing file, never truncates it", () =>
    Effect.gen(function* () {
      const path = freshFile()
      writeFileSync(path, '{"before":true}\n')
      yield* Effect.provide(recordN(1), Trace.layerFile(path))
      yield* Effect.provide(recordN(1), Trace.layerFile(path))
      assert.strictEqual(readFileSync(path, "utf8"), `{"before":true}\n${ndjson([JSON.stringify(entry(0)), JSON.stringify(entry(0))])}`)
    })
  )

  it.effect("fails to build with TraceFileError when the file cannot be opened", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(Effect.provide(recordN(1), Trace.layerFile(join(dir, "missing", "trace.jsonl"))))
      assert.instanceOf(error, TraceFileError)
      assert.include(error.message, "missing")
    })
  )

  it.effect.skipIf(!existsSync("/dev/full"))("a write error makes the next record a defect, and the scope still closes", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(
        Effect.gen(function* () {
          yield* recordN(1)
          // The failed write comes back from the thread pool in real time (not the TestClock), sooner or later on a
          // busy machine: record again until a record dies, for at most 30 s (a failure bound; then the test fails).
          const deadline = performance.now() + 30_000
          while (performance.now() < deadline) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
            yield* recordN(1)
          }
        }).pipe(Effect.provide(Trace.layerFile("/dev/full")))
      )
      assert.isTrue(Exit.hasDies(exit))
      assert.include(String(Cause.squash((exit as Exit.Failure<unknown, unknown>).cause)), "/dev/full")
    })
  )

  it.effect("keeps the layer interface: a complete inner trace is a drop-in for Trace.layer", () =>
    Effect.gen(function* () {
      const layer: Layer.Layer<Trace, TraceFileError> = Trace.layerFile(freshFile(), Trace.layer)
      const { lines, hash } = yield* Effect.provide(Effect.andThen(recordN(2), snapshot), layer)
      assert.deepStrictEqual(hash, { hash: sha256(ndjson(lines)), lines: 2 })
    })
  )
})

describe("a line whose last field is given as JSON text (E-349)", () => {
  it.effect("is written with the same bytes JSON.stringify writes for the line, on every variant", () =>
    Effect.gen(function* () {
      const answer = { orderId: "ord_1", price: "12.50", nested: { a: [1, "two", null] }, text: 'quote " and \\ and é' }
      const plain = { kind: "http", method: "POST", path: "/trade?x=1", request: null, status: 202, response: answer }
      const given = { ...plain, [lastFieldJson]: JSON.stringify(answer) }
      for (const layer of [Trace.layer, Trace.layerRing(4)]) {
        const lines = yield* Effect.provide(
          Trace.use((trace) => Effect.andThen(trace.record(given), trace.lines)),
          layer
        )
        assert.deepStrictEqual(lines, [JSON.stringify(plain)])
      }
      const alone = yield* Effect.provide(
        Trace.use((trace) => Effect.andThen(trace.record({ response: answer, [lastFieldJson]: JSON.stringify(answer) }), trace.lines)),
        Trace.layer
      )
      assert.deepStrictEqual(alone, [JSON.stringify({ response: answer })])
    })
  )
})
