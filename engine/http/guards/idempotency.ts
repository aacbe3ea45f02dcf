/**
 * Idempotency, last guard before the handler: every authenticated POST, PATCH, PUT and DELETE needs an
 * `Idempotency-Key` of 8-200 characters; a repeat within 24 h replays the stored response; the same key still in
 * flight answers 409; the same key with a different request answers 409 too (see decisions E-006).
 * Owns the records (in the store, per partition) and the in-flight set (in memory).
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { type IdempotencyDoc, IdempotencyRecords, timeSortKey } from "../../app/docs.ts"
import { type ApiFailure, fail } from "../../domain/errors.ts"
import { Store, type StoreError } from "../../store/port.ts"

export const MUTATING_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"])
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000

export const checkKey = (key: string | undefined): ApiFailure | undefined => {
  if (key === undefined || key === "")
    return fail("MISSING_IDEMPOTENCY_KEY", "this request changes state and needs an Idempotency-Key header (8-200 characters)")
  if (key.length < 8 || key.length > 200) return fail("VALIDATION_ERROR", "Idempotency-Key must be 8 to 200 characters", { param: "Idempotency-Key" })
  return undefined
}

export const fingerprintOf = (method: string, path: string, body: string) => createHash("sha256").update(`${method} ${path}\n${body}`).digest("hex")

export type IdempotencyOutcome =
  | { readonly _tag: "Proceed"; readonly release: Effect.Effect<void> }
  | { readonly _tag: "Replay"; readonly record: IdempotencyDoc }

export class Idempotency extends Context.Service<
  Idempotency,
  {
    readonly begin: (partition: string, key: string, fingerprint: string, now: number) => Effect.Effect<IdempotencyOutcome, ApiFailure | StoreError>
    readonly complete: (partition: string, key: string, record: IdempotencyDoc) => Effect.Effect<void, StoreError>
  }
>()("sokoni/Idempotency") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const inFlight = new Set<string>()
    const recordId = (partition: string, key: string) => `${partition}|${key}`

    const begin = Effect.fn("Idempotency.begin")(function* (partition: string, key: string, fingerprint: string, now: number) {
      const id = recordId(partition, key)
      if (inFlight.has(id)) return yield* Effect.fail(fail("CONFLICT", "a request with this Idempotency-Key is still in flight"))
      const existing = yield* store.read((tx) => IdempotencyRecords.get(tx, id))
      if (Option.isSome(existing) && now - existing.value.storedAt < IDEMPOTENCY_TTL_MS) {
        if (existing.value.fingerprint !== fingerprint) {
          return yield* Effect.fail(fail("CONFLICT", "this Idempotency-Key was used for a different request; use a new key for a new operation"))
        }
        return { _tag: "Replay", record: existing.value } as const
      }
      inFlight.add(id)
      return { _tag: "Proceed", release: Effect.sync(() => void inFlight.delete(id)) } as const
    })

    const complete = (partition: string, key: string, record: IdempotencyDoc) =>
      store.transact((tx) => IdempotencyRecords.put(tx, recordId(partition, key), partition, timeSortKey(record.storedAt, key), record))

    return Idempotency.of({ begin, complete })
  })

  static readonly layer = Layer.effect(Idempotency, Idempotency.make)
}
