/**
 * The idempotency guard as a unit: the key's length bounds (7/8/200/201), the fingerprint of method, path with
 * query, and body, replay within 24 h and not at 24 h, 422 for a different request (the key in flight:
 * idempotency-one-transaction.test.ts); the
 * exempt list is exactly the spec's (Authentication 7), in the contract and in the served routes.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import type { ApiFailure } from "../../../engine/domain/errors.ts"
import type { EngineResponse } from "../../../engine/http/exchange.ts"
import { checkKey, fingerprintOf, IDEMPOTENCY_TTL_MS, Idempotency, MUTATING_METHODS } from "../../../engine/http/guards/idempotency.ts"
import { PARTNER_OPERATIONS } from "../../../engine/contract/catalogue.gen.ts"
import { ROUTES } from "../../../engine/http/routes/index.ts"
import { MemoryStoreLayer } from "../../../engine/store/memory.ts"

const T0 = 1_800_000_000_000
const run = <A, E>(effect: Effect.Effect<A, E, Idempotency>) =>
  Effect.runPromise(effect.pipe(Effect.provide(Idempotency.layer.pipe(Layer.provide(MemoryStoreLayer)))))

describe("checkKey", () => {
  it("asks for a key when it is missing or empty", () => {
    for (const key of [undefined, ""]) {
      const f = checkKey(key) as ApiFailure
      expect(f.code).toBe("MISSING_IDEMPOTENCY_KEY")
      expect(f.httpStatus).toBe(400)
      expect(f.message).toContain("Idempotency-Key")
    }
  })

  it("accepts 8 to 200 characters and refuses 7 and 201", () => {
    expect(checkKey("a".repeat(8))).toBeUndefined()
    expect(checkKey("a".repeat(200))).toBeUndefined()
    for (const n of [1, 7, 201, 500]) {
      const f = checkKey("k".repeat(n)) as ApiFailure
      expect(f.code).toBe("VALIDATION_ERROR")
      expect(f.message).toBe("Idempotency-Key must be 8 to 200 characters")
      expect(f.extras).toEqual({ param: "Idempotency-Key" })
    }
  })
})

describe("fingerprintOf", () => {
  it("is the sha256 of method, path and body, and changes with each", () => {
    const base = fingerprintOf("POST", "/trade?x=1", '{"a":1}')
    expect(base).toMatch(/^[0-9a-f]{64}$/)
    expect(fingerprintOf("POST", "/trade?x=1", '{"a":1}')).toBe(base)
    expect(fingerprintOf("PUT", "/trade?x=1", '{"a":1}')).not.toBe(base)
    expect(fingerprintOf("POST", "/trade?x=2", '{"a":1}')).not.toBe(base)
    expect(fingerprintOf("POST", "/trade?x=1", '{"a":2}')).not.toBe(base)
    // the separator keeps method/path from running into the body
    expect(fingerprintOf("POST", "/a", "b")).not.toBe(fingerprintOf("POST", "/a\nb", ""))
  })

  it("knows the mutating methods", () => {
    expect([...MUTATING_METHODS].sort()).toEqual(["DELETE", "PATCH", "POST", "PUT"])
  })
})

describe("the exempt list", () => {
  /** Spec Authentication 7: "Exempt: sandbox register and reset, partner apply, upgrade-request, session, oauth/token,
   * and the portal `POST /me` actions." */
  const SPEC_EXEMPT = [
    "applyForPartnerAccess",
    "createPortalSession",
    "issueOAuthToken",
    "performMeAction",
    "registerSandbox",
    "requestUpgrade",
    "resetSandbox"
  ]

  it("the contract exempts exactly the spec's seven operations, and every other partner mutation needs the key", () => {
    const mutations = PARTNER_OPERATIONS.filter((o) => MUTATING_METHODS.has(o.method))
    expect(
      mutations
        .filter((o) => o.idempotencyExempt)
        .map((o) => o.operationId)
        .sort()
    ).toEqual(SPEC_EXEMPT)
    expect(mutations.length).toBeGreaterThan(20)
  })

  it("the served routes honour it: only those seven mutate without an Idempotency-Key", () => {
    const keyless = ROUTES.filter((r) => r.mount !== "control" && MUTATING_METHODS.has(r.method) && !r.idempotent).map((r) => r.operationId)
    expect(keyless.sort()).toEqual(SPEC_EXEMPT)
  })
})

describe("Idempotency service", () => {
  const answer = (n: number): EngineResponse => ({ status: 202, headers: {}, body: `{"n":${n}}` })
  /** Runs the command under `key` at `now`; its handler answers `n`. */
  const at = (idem: Idempotency["Service"], partition: string, key: string, fingerprint: string, now: number, n: number) =>
    idem.execute({ partition, key, fingerprint, now, run: Effect.succeed(answer(n)), record: () => Effect.void })

  it("replays a kept answer within 24 h and forgets it at 24 h", async () => {
    const out = await run(
      Effect.gen(function* () {
        const idem = yield* Idempotency
        const first = yield* at(idem, "p1", "key-0002", "fp", T0, 1)
        const justBefore = yield* at(idem, "p1", "key-0002", "fp", T0 + IDEMPOTENCY_TTL_MS - 1, 2)
        const atTtl = yield* at(idem, "p1", "key-0002", "fp", T0 + IDEMPOTENCY_TTL_MS, 3)
        return { first, justBefore, atTtl }
      })
    )
    expect(IDEMPOTENCY_TTL_MS).toBe(86_400_000)
    expect(out.first).toEqual({ _tag: "Ran", response: answer(1) })
    expect(out.justBefore).toEqual({ _tag: "Replay", record: { fingerprint: "fp", status: 202, headers: {}, body: '{"n":1}', storedAt: T0 } })
    expect(out.atTtl).toEqual({ _tag: "Ran", response: answer(3) })
  })

  it("answers 422 IDEMPOTENCY_KEY_REUSED for the same key with a different request (D-190), and not after 24 h", async () => {
    const out = await run(
      Effect.gen(function* () {
        const idem = yield* Idempotency
        yield* at(idem, "p1", "key-0003", "fp-a", T0, 1)
        const conflict = yield* Effect.flip(at(idem, "p1", "key-0003", "fp-b", T0 + 1000, 2))
        const later = yield* at(idem, "p1", "key-0003", "fp-b", T0 + IDEMPOTENCY_TTL_MS, 3)
        const otherKey = yield* at(idem, "p1", "key-0004", "fp-b", T0 + 1000, 4)
        const otherPartition = yield* at(idem, "p2", "key-0003", "fp-b", T0 + 1000, 5)
        return { conflict, later, otherKey, otherPartition }
      })
    )
    expect(out.conflict).toMatchObject({ code: "IDEMPOTENCY_KEY_REUSED" })
    expect((out.conflict as ApiFailure).message).toContain("different request")
    expect((out.conflict as ApiFailure).httpStatus).toBe(422)
    expect([out.later._tag, out.otherKey._tag, out.otherPartition._tag]).toEqual(["Ran", "Ran", "Ran"])
  })
})
