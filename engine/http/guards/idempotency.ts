/**
 * Idempotency, last guard before the handler: every authenticated POST, PATCH, PUT and DELETE that the contract does
 * not exempt needs an `Idempotency-Key` of 8-200 characters, scoped to the partner and environment (the partition); a
 * repeat within 24 h on the engine clock replays the stored status, headers and body byte for byte; the same key
 * still in flight answers 409 CONFLICT; the same key with a different request answers 422 IDEMPOTENCY_KEY_REUSED
 * (D-190, revising D-037/E-006). Request-shape failures (400 VALIDATION_ERROR and kin), 5xx and 503 answers are not
 * stored, so a corrected or repeated request runs.
 *
 * Owns the records AND the in-flight claims, both in the store (E-075): a claim is a record in state `in_flight`,
 * committed in its own transaction before the handler runs, so every engine process on one database sees it; the
 * holder completes it with the answer or releases it. A claim older than IN_FLIGHT_TAKEOVER_MS is treated as left by
 * a crashed process and may be taken over. Does not own the fingerprint's inputs (the gateway's) nor the answer.
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { type IdempotencyDoc, IdempotencyRecords, timeSortKey } from "../../app/docs.ts"
import { type ApiFailure, type ErrorCode, fail } from "../../domain/errors.ts"
import { Store, type StoreError } from "../../store/port.ts"

export const MUTATING_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"])
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** An in-flight claim older than this (engine clock) is presumed orphaned by a crashed process (E-075). */
export const IN_FLIGHT_TAKEOVER_MS = 60_000

/** Request-shape failures: the request as sent can never succeed, so the client must change it; not stored (E-076). */
export const SHAPE_FAILURES: ReadonlySet<string> = new Set<ErrorCode>([
  "VALIDATION_ERROR",
  "MISSING_PARAM",
  "INVALID_TYPE",
  "INVALID_SYMBOL",
  "UNKNOWN_EXCHANGE",
  "BATCH_LIMIT_EXCEEDED",
  "QUOTE_REQUIRED",
  "MISSING_IDEMPOTENCY_KEY"
])

export const checkKey = (key: string | undefined): ApiFailure | undefined => {
  if (key === undefined || key === "")
    return fail("MISSING_IDEMPOTENCY_KEY", "this request changes state and needs an Idempotency-Key header (8-200 characters)")
  if (key.length < 8 || key.length > 200) return fail("VALIDATION_ERROR", "Idempotency-Key must be 8 to 200 characters", { param: "Idempotency-Key" })
  return undefined
}

export const fingerprintOf = (method: string, path: string, body: string) => createHash("sha256").update(`${method} ${path}\n${body}`).digest("hex")

/** Whether an answer is kept under its key: not 5xx (503 included), not a request-shape failure. */
export const storable = (status: number, value: unknown): boolean => {
  if (status >= 500) return false
  if (status !== 400) return true
  const code = (value as { readonly error?: { readonly code?: unknown } } | undefined)?.error?.code
  return !(typeof code === "string" && SHAPE_FAILURES.has(code))
}

export const IN_FLIGHT_MESSAGE = "a request with this Idempotency-Key is still in flight"
export const REUSED_MESSAGE = "this Idempotency-Key was used for a different request; use a new key for a new operation"

export type IdempotencyOutcome =
  | {
      readonly _tag: "Proceed"
      /** Gives the key up (nothing stored): the next request with it runs. */
      readonly release: Effect.Effect<void>
      /** Stores the answer under the key, if this claim still holds it. */
      readonly finish: (record: IdempotencyDoc) => Effect.Effect<void, StoreError>
    }
  | { readonly _tag: "Replay"; readonly record: IdempotencyDoc }

export class Idempotency extends Context.Service<
  Idempotency,
  {
    readonly begin: (partition: string, key: string, fingerprint: string, now: number) => Effect.Effect<IdempotencyOutcome, ApiFailure | StoreError>
    /** Stores a record unconditionally (the answer of a request that held the key). */
    readonly complete: (partition: string, key: string, record: IdempotencyDoc) => Effect.Effect<void, StoreError>
  }
>()("sokoni/Idempotency") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const recordId = (partition: string, key: string) => `${partition}|${key}`
    const put = (tx: Parameters<Parameters<typeof store.transact>[0]>[0], partition: string, key: string, record: IdempotencyDoc) =>
      IdempotencyRecords.put(tx, recordId(partition, key), partition, timeSortKey(record.storedAt, key), record)

    /** Replaces the claim `claim` of the key by `next`, unless another request has taken the key over since. */
    const settle = (partition: string, key: string, claim: number, next: IdempotencyDoc) =>
      store.transact((tx) =>
        Effect.gen(function* () {
          const current = yield* IdempotencyRecords.get(tx, recordId(partition, key))
          if (Option.isSome(current) && current.value.state === "in_flight" && current.value.claim === claim) yield* put(tx, partition, key, next)
        })
      )

    const begin = Effect.fn("Idempotency.begin")(function* (partition: string, key: string, fingerprint: string, now: number) {
      const id = recordId(partition, key)
      // One write transaction: on postgres it holds the store's advisory lock, so the check and the claim are atomic
      // across every engine process on the database, and the claim is committed before the handler runs.
      const claimed = yield* store.transact((tx) =>
        Effect.gen(function* () {
          const existing = yield* IdempotencyRecords.get(tx, id)
          if (Option.isSome(existing)) {
            const r = existing.value
            if (r.state === undefined && now - r.storedAt < IDEMPOTENCY_TTL_MS) {
              if (r.fingerprint !== fingerprint) return yield* Effect.fail(fail("IDEMPOTENCY_KEY_REUSED", REUSED_MESSAGE))
              return { _tag: "Replay", record: r } as const
            }
            if (r.state === "in_flight" && now - r.storedAt < IN_FLIGHT_TAKEOVER_MS) return yield* Effect.fail(fail("CONFLICT", IN_FLIGHT_MESSAGE))
          }
          const claim = yield* tx.nextSeq("idempotency-claims")
          const marker: IdempotencyDoc = { fingerprint, status: 0, headers: {}, body: "", storedAt: now, state: "in_flight", claim }
          yield* put(tx, partition, key, marker)
          return { _tag: "Claimed", marker } as const
        })
      )
      if (claimed._tag === "Replay") return claimed
      const { marker } = claimed
      const claim = marker.claim as number
      const outcome: IdempotencyOutcome = {
        _tag: "Proceed",
        release: settle(partition, key, claim, { ...marker, state: "released" }).pipe(
          Effect.catchCause((cause) => Effect.logError("could not release an Idempotency-Key (it frees itself after the takeover delay)", cause))
        ),
        finish: (record) => settle(partition, key, claim, record)
      }
      return outcome
    })

    const complete = (partition: string, key: string, record: IdempotencyDoc) => store.transact((tx) => put(tx, partition, key, record))

    return Idempotency.of({ begin, complete })
  })

  static readonly layer = Layer.effect(Idempotency, Idempotency.make)
}
