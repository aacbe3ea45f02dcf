/**
 * Idempotency, last guard before the handler: every authenticated POST, PATCH, PUT and DELETE that the contract does
 * not exempt needs an `Idempotency-Key` of 8-200 characters, scoped to the partner and environment (the partition); a
 * repeat within 24 h on the engine clock replays the stored status, headers and body byte for byte; the same key
 * still in flight answers 409 CONFLICT; the same key with a different request answers 422 IDEMPOTENCY_KEY_REUSED
 * (D-190, revising D-037/E-006). Request-shape failures (400 VALIDATION_ERROR and kin), 5xx and 503 answers are not
 * stored, so a corrected or repeated request runs.
 *
 * One command, one transaction (E-289): `execute` opens the store transaction in which the key's receipt is looked
 * up, the handler runs (its own `transact` calls join it), and the answer and the audit record are written; all of it
 * commits or none does. A crash at any point leaves either nothing (the retry runs) or the effect with its answer (the
 * retry replays it): there is no claim to take over and no window between effect and answer (E-075 and E-140 are
 * retired). A 5xx answer that says nothing was processed rolls the whole transaction back (`processed`).
 * `executeUnkeyed` does the same for the mutations that carry no key (the control API's, the spec's exempt ones).
 * The key is held in this process while its request runs, so a concurrent same-key request answers 409; a request in
 * another process on the same database waits for the first transaction and replays its answer.
 */
import { hash } from "node:crypto"
import { Context, Data, Effect, Layer, Option } from "effect"
import { type IdempotencyDoc, IdempotencyRecords, timeSortKey } from "../../app/docs.ts"
import { type ApiFailure, type ErrorCode, fail } from "../../domain/errors.ts"
import type { EngineResponse } from "../exchange.ts"
import { type Hint, prefetch, pruneExpired, Store, type StoreError, type Tx, transactIn } from "../../store/port.ts"

export const MUTATING_METHODS = new Set(["POST", "PATCH", "PUT", "DELETE"])
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000
/** How many answers past their 24 h a keyed command drops from its partition (E-400): more than one, to catch up. */
const ANSWERS_DROPPED_PER_COMMAND = 4

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

// One-shot `hash`: the same digest as createHash().update().digest(), without a Hash object per keyed request.
export const fingerprintOf = (method: string, path: string, body: string) => hash("sha256", `${method} ${path}\n${body}`, "hex")

/** Whether an answer is kept under its key: not 5xx (503 included), not a request-shape failure. */
export const storable = (status: number, value: unknown): boolean => {
  if (status >= 500) return false
  if (status !== 400) return true
  const code = (value as { readonly error?: { readonly code?: unknown } } | undefined)?.error?.code
  return !(typeof code === "string" && SHAPE_FAILURES.has(code))
}

/**
 * Whether an answer that is not kept still leaves the handler's writes: yes for a request-shape failure (it wrote
 * nothing) and a 502 (the upstream call was made: a webhook test's delivery record stays); no for any other 5xx, which
 * says the request was not processed (spec, Errors: 503 "safe to resend"), so its transaction rolls back (E-289).
 */
export const processed = (status: number): boolean => status < 500 || status === 502

export const IN_FLIGHT_MESSAGE = "a request with this Idempotency-Key is still in flight"
export const REUSED_MESSAGE = "this Idempotency-Key was used for a different request; use a new key for a new operation"

/**
 * The headers almost every stored answer has, kept once for all of them rather than an object per answer for 24 h
 * (E-484). Frozen: a replay copies them into its answer and nothing writes a stored answer's headers.
 */
const JSON_ONLY: Readonly<Record<string, string>> = Object.freeze({ "content-type": "application/json" })
const keptHeaders = (headers: Readonly<Record<string, string>>): Readonly<Record<string, string>> => {
  let names = 0
  for (const name in headers) if (++names > 1 || name !== "content-type") return headers
  return names === 1 && headers["content-type"] === JSON_ONLY["content-type"] ? JSON_ONLY : headers
}

/** What `execute` did: replayed the key's stored answer, or ran the command (kept its answer or rolled it back). */
export type Executed = { readonly _tag: "Replay"; readonly record: IdempotencyDoc } | { readonly _tag: "Ran"; readonly response: EngineResponse }

export interface Command<R> {
  readonly partition: string
  readonly key: string
  readonly fingerprint: string
  readonly now: number
  /** The handler: never fails, a business failure is an error answer; runs inside the command's transaction. */
  readonly run: Effect.Effect<EngineResponse, never, R>
  /** Records what a kept answer did (the audit trail), in the same transaction. */
  readonly record: (response: EngineResponse) => Effect.Effect<void, never, R>
  /** Rows `record` will read, asked when the transaction is about to lock: read with the lock (E-405). */
  readonly reads?: (() => ReadonlyArray<Hint>) | undefined
  /** The handler calls out of the engine (OUTSIDE_TRANSACTION): it runs between the lookup and the keeping instead. */
  readonly outside?: boolean | undefined
}

/**
 * Operations that are not one unit of work. A handler that waits on a call out of the engine (the webhook test's
 * delivery, up to 8 s) would stall every other writer if it held the store's write lock across it, so it runs between
 * two transactions, the receipt's lookup and the answer's keeping, as every command did before E-289. A crash between
 * them loses at most a test event's answer: a retry sends another test, which has no business effect.
 */
export const OUTSIDE_TRANSACTION: ReadonlySet<string> = new Set([
  "testWebhook",
  // The control API's clock runs every job that falls due, each in a transaction of its own (E-277); a reset builds
  // a new world (its store emptied, its layers rebuilt): neither is one unit of work.
  "advanceSimClock",
  "resetSimEngine"
])

/** An answer that is not kept: carried out of the transaction so that it rolls back. */
class NotKept extends Data.TaggedError("NotKept")<{ readonly response: EngineResponse }> {}

export class Idempotency extends Context.Service<
  Idempotency,
  {
    /** Runs `command` once per key (see the module's comment): a replay, a 409, a 422, or the command's answer. */
    readonly execute: <R>(command: Command<R>) => Effect.Effect<Executed, ApiFailure | StoreError, R>
    /**
     * A mutation with no Idempotency-Key (the control API, the spec's exempt operations): its handler and its record
     * in one transaction, rolled back whole when the answer says nothing was processed (`processed`), as `execute`.
     */
    readonly executeUnkeyed: <R>(command: Pick<Command<R>, "run" | "record">) => Effect.Effect<EngineResponse, StoreError, R>
  }
>()("sokoni/Idempotency") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    // A tree of its parts, not flat: both parts are kept anyway (the partition everywhere, the key by the audit record),
    // so the tree's 32 bytes cost less than a flat copy's 72 (E-485, measured with scripts/bench/kept-pair.ts).
    const recordId = (partition: string, key: string) => `${partition}|${key}`
    /** Keys whose request is running in this process. */
    const held = new Set<string>()

    /** The stored answer under the key, if it is live; a claim left by an older engine version counts as none. */
    const lookup = Effect.fnUntraced(function* (tx: Tx, id: string, fingerprint: string, now: number) {
      const existing = yield* IdempotencyRecords.getHere(tx, id)
      if (Option.isNone(existing)) return undefined
      const r = existing.value
      if (r.state !== undefined || now - r.storedAt >= IDEMPOTENCY_TTL_MS) return undefined
      if (r.fingerprint !== fingerprint) return yield* Effect.fail(fail("IDEMPOTENCY_KEY_REUSED", REUSED_MESSAGE))
      return r
    })

    /** Keeps the answer under the key and records it; inside the command's transaction (nested calls join it). */
    const keepIn = Effect.fnUntraced(function* <R>(tx: Tx, command: Command<R>, id: string, response: EngineResponse) {
      const record: IdempotencyDoc = {
        fingerprint: command.fingerprint,
        status: response.status,
        headers: keptHeaders(response.headers),
        body: response.body,
        storedAt: command.now
      }
      // Past 24 h on the engine clock a key is new again (lookup), so its answer need not be kept longer (E-400).
      yield* pruneExpired(tx, IdempotencyRecords.name, command.partition, command.now, ANSWERS_DROPPED_PER_COMMAND)
      yield* IdempotencyRecords.putHere(tx, id, command.partition, timeSortKey(command.now, command.key), record, command.now + IDEMPOTENCY_TTL_MS)
      yield* command.record(response)
    })
    const keep = <R>(command: Command<R>, id: string, response: EngineResponse) => store.transact((tx) => keepIn(tx, command, id, response))

    // Grouped with the partition's other queued commands where the store can (E-406): same answers, fewer commits.
    const inTransactionBody = Effect.fnUntraced(function* <R>(tx: Tx, command: Command<R>, id: string) {
      // The partition first: on PostgreSQL its lock is waited for before the transaction takes a connection, and
      // a request with the same key in another process waits here, then finds the first one's receipt (E-320).
      yield* prefetch(tx, () => [[IdempotencyRecords.name, id], ...(command.reads?.() ?? [])])
      yield* tx.lockPartition(command.partition)
      const stored = yield* lookup(tx, id, command.fingerprint, command.now)
      if (stored !== undefined) return { _tag: "Replay", record: stored } as const
      const response = yield* command.run
      if (!storable(response.status, response.value)) {
        if (!processed(response.status)) return yield* new NotKept({ response })
        return { _tag: "Ran", response } as const
      }
      // In this transaction itself, not a savepoint of it: a failure here fails the whole command, so there is nothing
      // a savepoint would keep (the mark and its copies cost every keyed command, issue 25).
      yield* keepIn(tx, command, id, response)
      return { _tag: "Ran", response } as const
    })
    const inTransaction = <R>(command: Command<R>, id: string) => transactIn(store, command.partition, (tx) => inTransactionBody(tx, command, id))

    /** Lookup, handler, keeping: three steps for a handler that calls out (OUTSIDE_TRANSACTION). */
    const aroundTransaction = Effect.fnUntraced(function* <R>(command: Command<R>, id: string) {
      const stored = yield* store.transact((tx) => lookup(tx, id, command.fingerprint, command.now))
      if (stored !== undefined) return { _tag: "Replay", record: stored } as const
      const response = yield* command.run
      if (storable(response.status, response.value)) yield* keep(command, id, response)
      return { _tag: "Ran", response } as const
    })

    const execute = Effect.fnUntraced(function* <R>(command: Command<R>) {
      const id = recordId(command.partition, command.key)
      if (held.has(id)) return yield* Effect.fail(fail("CONFLICT", IN_FLIGHT_MESSAGE))
      held.add(id)
      const executed: Executed = yield* (command.outside === true ? aroundTransaction(command, id) : inTransaction(command, id)).pipe(
        Effect.catchTag("NotKept", (notKept) => Effect.succeed({ _tag: "Ran", response: notKept.response } as const)),
        Effect.ensuring(Effect.sync(() => held.delete(id)))
      )
      return executed
    })

    const executeUnkeyed = <R>(command: Pick<Command<R>, "run" | "record">) =>
      store
        .transact(() =>
          Effect.gen(function* () {
            const response = yield* command.run
            if (!processed(response.status)) return yield* new NotKept({ response })
            yield* command.record(response)
            return response
          })
        )
        .pipe(Effect.catchTag("NotKept", (notKept) => Effect.succeed(notKept.response)))

    return Idempotency.of({ execute, executeUnkeyed })
  })

  static readonly layer = Layer.effect(Idempotency, Idempotency.make)
}
