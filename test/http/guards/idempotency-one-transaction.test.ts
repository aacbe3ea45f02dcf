/**
 * One command, one transaction (E-289): the receipt of an Idempotency-Key, the handler's writes, the kept answer and
 * what records it commit together. A crash before the commit leaves nothing (the retry runs, once); a crash just after
 * it leaves the effect with its answer (the retry replays, the handler does not run again); an answer that is not
 * kept takes the handler's writes with it. The same key while its request runs is 409. `storable` keeps business answers and drops 5xx, 503 and
 * request-shape failures (D-190).
 */
import { Deferred, Effect, Exit, Fiber, Option } from "effect"
import { describe, expect, it } from "vitest"
import { IdempotencyRecords } from "../../../engine/app/docs.ts"
import type { ApiFailure } from "../../../engine/domain/errors.ts"
import type { EngineResponse } from "../../../engine/http/exchange.ts"
import { type Command, Idempotency, SHAPE_FAILURES, storable } from "../../../engine/http/guards/idempotency.ts"
import { makeMemoryState, makeMemoryStoreWith } from "../../../engine/store/memory.ts"
import { type CommitFaults, noCommitFaults, Store, StoreError } from "../../../engine/store/port.ts"

const T0 = 1_800_000_000_000
const created: EngineResponse = { status: 201, headers: { "content-type": "application/json" }, body: '{"id":1}' }

/** A command that writes one document and counts its runs; `answer` is what its handler answers. */
const writing = (runs: { n: number }, key: string, answer: EngineResponse = created, fingerprint = "fp"): Command<Store> => ({
  partition: "p1:sandbox",
  key,
  fingerprint,
  now: T0,
  run: Effect.gen(function* () {
    runs.n++
    const store = yield* Store
    yield* store.transact((tx) => tx.put("effects", { id: key, partition: "p1:sandbox", sortKey: key, body: { run: runs.n } }))
    return answer
  }).pipe(Effect.orDie),
  record: () => Effect.void
})

/** One store, as a database, and an engine process on it whose commits may crash as `faults` says. */
const processOn = (state = makeMemoryState(), faults: CommitFaults = noCommitFaults) =>
  Effect.gen(function* () {
    const store = yield* makeMemoryStoreWith({ state, faults })
    const idempotency = yield* Effect.provideService(Idempotency.make, Store, store)
    const execute = <A>(command: Command<Store>) => Effect.provideService(idempotency.execute(command), Store, store) as Effect.Effect<A, unknown>
    const effect = (key: string) => store.read((tx) => tx.get("effects", key))
    const receipt = (key: string) => store.read((tx) => IdempotencyRecords.get(tx, `p1:sandbox|${key}`))
    return { execute, effect, receipt, state }
  })

const crash = (when: "before" | "after"): CommitFaults => {
  const boom = Effect.fail(new StoreError({ message: `crash ${when} commit` }))
  return when === "before" ? { beforeCommit: boom, afterCommit: Effect.void } : { beforeCommit: Effect.void, afterCommit: boom }
}

describe("one command, one transaction", () => {
  it("a crash before the commit leaves neither the effect nor the receipt; the retry runs once and is kept", async () => {
    const runs = { n: 0 }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const crashed = yield* processOn(makeMemoryState(), crash("before"))
        const first = yield* Effect.exit(crashed.execute(writing(runs, "crash-key-01")))
        const left = { effect: yield* crashed.effect("crash-key-01"), receipt: yield* crashed.receipt("crash-key-01") }
        const restarted = yield* processOn(crashed.state)
        const retry = yield* restarted.execute(writing(runs, "crash-key-01"))
        const again = yield* restarted.execute(writing(runs, "crash-key-01"))
        return { first, left, retry, again, effect: yield* restarted.effect("crash-key-01") }
      })
    )
    expect(Exit.isFailure(out.first)).toBe(true)
    expect(Option.isNone(out.left.effect) && Option.isNone(out.left.receipt)).toBe(true)
    expect(out.retry).toEqual({ _tag: "Ran", response: created })
    expect(out.again).toMatchObject({ _tag: "Replay", record: { status: 201, body: created.body, storedAt: T0 } })
    expect(runs.n).toBe(2)
    expect(Option.map(out.effect, (d) => d.body)).toEqual(Option.some({ run: 2 }))
  })

  it("a crash just after the commit leaves the effect with its answer: the retry replays it and the handler does not run", async () => {
    const runs = { n: 0 }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const crashed = yield* processOn(makeMemoryState(), crash("after"))
        const first = yield* Effect.exit(crashed.execute(writing(runs, "crash-key-02")))
        const restarted = yield* processOn(crashed.state)
        const retry = yield* restarted.execute(writing(runs, "crash-key-02"))
        return { first, retry, effect: yield* restarted.effect("crash-key-02") }
      })
    )
    expect(Exit.isFailure(out.first)).toBe(true)
    expect(out.retry).toMatchObject({ _tag: "Replay", record: { status: 201, body: created.body } })
    expect(runs.n).toBe(1)
    expect(Option.map(out.effect, (d) => d.body)).toEqual(Option.some({ run: 1 }))
  })

  it("an answer that is not kept (5xx) rolls the handler's writes back with it, and the key runs again", async () => {
    const runs = { n: 0 }
    const failed: EngineResponse = { status: 500, headers: {}, body: '{"error":{"code":"INTERNAL_ERROR","message":"m"}}' }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const engine = yield* processOn()
        const first = yield* engine.execute(writing(runs, "unkept-key-1", failed))
        const left = yield* engine.effect("unkept-key-1")
        const retry = yield* engine.execute(writing(runs, "unkept-key-1"))
        return { first, left, retry }
      })
    )
    expect(out.first).toEqual({ _tag: "Ran", response: failed })
    expect(Option.isNone(out.left)).toBe(true)
    expect(out.retry).toEqual({ _tag: "Ran", response: created })
  })

  it("the same key while its request runs is 409, nothing run; once it is done, the key replays its answer", async () => {
    const runs = { n: 0 }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* processOn()
        const inside = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const slow: Command<Store> = {
          ...writing(runs, "busy-key-001"),
          run: Effect.andThen(Deferred.succeed(inside, undefined), Effect.andThen(Deferred.await(release), writing(runs, "busy-key-001").run))
        }
        const first = yield* Effect.forkChild(a.execute(slow))
        yield* Deferred.await(inside)
        const busy = yield* Effect.flip(a.execute(writing(runs, "busy-key-001")))
        yield* Deferred.succeed(release, undefined)
        return { busy, first: yield* Fiber.join(first), again: yield* a.execute(writing(runs, "busy-key-001")) }
      })
    )
    expect(out.busy).toMatchObject({ code: "CONFLICT", message: "a request with this Idempotency-Key is still in flight" })
    expect((out.busy as ApiFailure).httpStatus).toBe(409)
    expect(out.first).toEqual({ _tag: "Ran", response: created })
    expect(out.again).toMatchObject({ _tag: "Replay" })
    expect(runs.n).toBe(1)
  })

  it("the key reused for another request is 422 IDEMPOTENCY_KEY_REUSED, nothing written; scoped by partition", async () => {
    const runs = { n: 0 }
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const engine = yield* processOn()
        yield* engine.execute(writing(runs, "reuse-key-01"))
        const reused = yield* Effect.flip(engine.execute(writing(runs, "reuse-key-01", created, "other")))
        const production = yield* engine.execute({ ...writing(runs, "reuse-key-01", created, "other"), partition: "p1:production" })
        return { reused, production }
      })
    )
    expect(out.reused).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" })
    expect((out.reused as ApiFailure).httpStatus).toBe(422)
    expect(out.production).toMatchObject({ _tag: "Ran" })
    expect(runs.n).toBe(2)
  })
})

describe("a mutation without a key (control API, exempt operations)", () => {
  it("commits its writes with its record, and rolls both back when its answer says nothing was processed", async () => {
    const out = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* makeMemoryStoreWith({})
        const idempotency = yield* Effect.provideService(Idempotency.make, Store, store)
        const recorded: Array<number> = []
        const unkeyed = (id: string, answer: EngineResponse) =>
          idempotency.executeUnkeyed({
            run: store.transact((tx) => tx.put("effects", { id, partition: "global", sortKey: id, body: {} })).pipe(Effect.as(answer), Effect.orDie),
            record: (response) =>
              store
                .transact((tx) => tx.put("records", { id, partition: "global", sortKey: id, body: { status: response.status } }))
                .pipe(
                  Effect.tap(() => Effect.sync(() => void recorded.push(response.status))),
                  Effect.orDie
                )
          })
        const ok = yield* unkeyed("kept", created)
        const failed = yield* unkeyed("undone", { status: 500, headers: {}, body: "{}" })
        const left = yield* store.read((tx) =>
          Effect.all([tx.get("effects", "kept"), tx.get("records", "kept"), tx.get("effects", "undone"), tx.get("records", "undone")])
        )
        return { ok, failed, left: left.map(Option.isSome), recorded }
      })
    )
    expect([out.ok.status, out.failed.status]).toEqual([201, 500])
    expect(out.left).toEqual([true, true, false, false])
    expect(out.recorded).toEqual([201])
  })
})

describe("storable", () => {
  const envelope = (code: string) => ({ error: { code, message: "m" } })
  it("keeps 2xx and business 4xx, drops 5xx (503 included) and request-shape failures", () => {
    expect(storable(200, { ok: true })).toBe(true)
    expect(storable(202, undefined)).toBe(true)
    expect(storable(400, envelope("INSUFFICIENT_FUNDS"))).toBe(true)
    expect(storable(404, envelope("NOT_FOUND"))).toBe(true)
    expect(storable(409, envelope("STALE_QUOTE"))).toBe(true)
    expect(storable(422, envelope("MARKET_CLOSED"))).toBe(true)
    expect(storable(499, envelope("VALIDATION_ERROR"))).toBe(true)
    expect(storable(500, envelope("INTERNAL_ERROR"))).toBe(false)
    expect(storable(503, envelope("MAINTENANCE"))).toBe(false)
    expect(storable(400, undefined)).toBe(true)
    expect(storable(400, { error: { code: 7 } })).toBe(true)
    for (const code of SHAPE_FAILURES) expect(storable(400, envelope(code)), code).toBe(false)
    expect([...SHAPE_FAILURES].sort()).toEqual([
      "BATCH_LIMIT_EXCEEDED",
      "INVALID_SYMBOL",
      "INVALID_TYPE",
      "MISSING_IDEMPOTENCY_KEY",
      "MISSING_PARAM",
      "QUOTE_REQUIRED",
      "UNKNOWN_EXCHANGE",
      "VALIDATION_ERROR"
    ])
  })
})
