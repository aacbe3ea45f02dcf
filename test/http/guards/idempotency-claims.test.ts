/**
 * Idempotency claims in the store (E-075) and what is kept (D-190): a claim is visible to a second service on the same
 * store (as another process would be), is taken over only after IN_FLIGHT_TAKEOVER_MS, and only its holder settles
 * it; released keys run again; `storable` keeps business answers and drops 5xx, 503 and request-shape failures.
 */
import { Effect, Option } from "effect"
import { describe, expect, it } from "vitest"
import { IdempotencyRecords } from "../../../engine/app/docs.ts"
import type { ApiFailure } from "../../../engine/domain/errors.ts"
import { IN_FLIGHT_TAKEOVER_MS, Idempotency, type IdempotencyOutcome, SHAPE_FAILURES, storable } from "../../../engine/http/guards/idempotency.ts"
import { makeMemoryStore } from "../../../engine/store/memory.ts"
import { Store } from "../../../engine/store/port.ts"

const T0 = 1_800_000_000_000
const answer = (fingerprint: string, storedAt: number) => ({
  fingerprint,
  status: 201,
  headers: { "content-type": "application/json" },
  body: '{"id":1}',
  storedAt
})

/** Two Idempotency services on one store: two engine processes on one database. */
const twoProcesses = <A, E>(f: (a: Idempotency["Service"], b: Idempotency["Service"], store: Store["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      const a = yield* Effect.provideService(Idempotency.make, Store, store)
      const b = yield* Effect.provideService(Idempotency.make, Store, store)
      return yield* f(a, b, store)
    })
  )

const proceed = (o: IdempotencyOutcome) => {
  if (o._tag !== "Proceed") throw new Error("expected Proceed")
  return o
}

describe("idempotency claims", () => {
  it("a claim made by one process is a 409 for the other until it is finished, then a replay there", async () => {
    const out = await twoProcesses((a, b, store) =>
      Effect.gen(function* () {
        const first = proceed(yield* a.begin("p1", "claim-0001", "fp", T0))
        const marker = yield* store.read((tx) => IdempotencyRecords.get(tx, "p1|claim-0001"))
        const busy = yield* Effect.flip(b.begin("p1", "claim-0001", "fp", T0 + IN_FLIGHT_TAKEOVER_MS - 1))
        yield* first.finish(answer("fp", T0))
        const replay = yield* b.begin("p1", "claim-0001", "fp", T0 + 5)
        return { marker: Option.getOrUndefined(marker), busy, replay }
      })
    )
    expect(out.marker).toMatchObject({ state: "in_flight", fingerprint: "fp", storedAt: T0, claim: 1 })
    expect(out.busy).toMatchObject({ code: "CONFLICT", message: "a request with this Idempotency-Key is still in flight" })
    expect((out.busy as ApiFailure).httpStatus).toBe(409)
    expect(out.replay).toEqual({ _tag: "Replay", record: answer("fp", T0) })
  })

  it("a claim older than the takeover delay is taken over; the late holder can then neither finish nor release it", async () => {
    const out = await twoProcesses((a, b, store) =>
      Effect.gen(function* () {
        const stale = proceed(yield* a.begin("p1", "claim-0002", "fp", T0))
        const taker = proceed(yield* b.begin("p1", "claim-0002", "fp", T0 + IN_FLIGHT_TAKEOVER_MS))
        yield* stale.finish(answer("stale", T0))
        yield* stale.release
        const still = yield* store.read((tx) => IdempotencyRecords.get(tx, "p1|claim-0002"))
        const busy = yield* Effect.flip(a.begin("p1", "claim-0002", "fp", T0 + IN_FLIGHT_TAKEOVER_MS + 1))
        yield* taker.finish(answer("fp", T0 + IN_FLIGHT_TAKEOVER_MS))
        const done = yield* store.read((tx) => IdempotencyRecords.get(tx, "p1|claim-0002"))
        return { still: Option.getOrUndefined(still), busy, done: Option.getOrUndefined(done) }
      })
    )
    expect(out.still).toMatchObject({ state: "in_flight", claim: 2, storedAt: T0 + IN_FLIGHT_TAKEOVER_MS })
    expect(out.busy).toMatchObject({ code: "CONFLICT" })
    expect(out.done).toEqual(answer("fp", T0 + IN_FLIGHT_TAKEOVER_MS))
  })

  it("a released key runs again, with any request; a record past 24 h is claimed afresh", async () => {
    const out = await twoProcesses((a, b) =>
      Effect.gen(function* () {
        const first = proceed(yield* a.begin("p1", "claim-0003", "fp", T0))
        yield* first.release
        const again = yield* b.begin("p1", "claim-0003", "other", T0 + 1)
        return { again }
      })
    )
    expect(out.again._tag).toBe("Proceed")
  })

  it("the key reused for another request is 422 IDEMPOTENCY_KEY_REUSED; scoped by partition", async () => {
    const out = await twoProcesses((a, b) =>
      Effect.gen(function* () {
        yield* proceed(yield* a.begin("p1:sandbox", "claim-0004", "fp", T0)).finish(answer("fp", T0))
        const reused = yield* Effect.flip(b.begin("p1:sandbox", "claim-0004", "other", T0 + 1))
        const production = yield* b.begin("p1:production", "claim-0004", "other", T0 + 1)
        return { reused, production }
      })
    )
    expect(out.reused).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" })
    expect((out.reused as ApiFailure).httpStatus).toBe(422)
    expect(out.production._tag).toBe("Proceed")
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
