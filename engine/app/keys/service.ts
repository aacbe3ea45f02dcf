/**
 * Key management of a partner: issuing and rotating the read-only data key (`POST /api-keys/data-key`), as a
 * dispatcher. A data-key caller is refused before anything is drawn; the key is drawn and hashed before the
 * transaction, which reads the partition's data-key pointer and the key it names, asks the rule
 * (domain/partners/rotate-data-key.ts) and writes its plan: the retired key, the new key, then the pointer.
 * Owns: the transaction and the keys' storage for it. Does not own the rotation rule, authentication
 * (PartnerService) or what a data key may call (the gateway, from the contract).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { KEY_PREFIX } from "../../domain/partners/decide-partner.ts"
import { type DataKeyRotation, refuseDataKey, rotateDataKey } from "../../domain/partners/rotate-data-key.ts"
import type { ApiFailure } from "../../domain/errors.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { ApiKeys, KeyPointers, keyPointerId, pointKey, timeSortKey } from "../docs.ts"
import { hashKey } from "../partners/credentials.ts"
import type { Principal } from "../principal.ts"

/** The data key the partition's pointer names, if it is still stored. */
const previousDataKey = (tx: ReadTx, partition: string) =>
  Effect.gen(function* () {
    const pointer = yield* KeyPointers.get(tx, keyPointerId(partition, "data"))
    if (Option.isNone(pointer)) return undefined
    return Option.getOrUndefined(yield* ApiKeys.get(tx, pointer.value.keyHash))
  })

/** The rotation's writes: the retired key, the new key, then the pointer (in "global" with the keys). */
const putRotation = (tx: Tx, rotation: DataKeyRotation) =>
  Effect.gen(function* () {
    const { retired, key } = rotation
    if (retired !== undefined) yield* ApiKeys.put(tx, retired.keyHash, "global", timeSortKey(retired.createdAt, retired.keyHash), retired)
    yield* ApiKeys.put(tx, key.keyHash, "global", timeSortKey(key.createdAt, key.keyHash), key)
    yield* pointKey(tx, rotation.pointer.partition, "data", rotation.pointer.keyHash)
  })

export class KeyService extends Context.Service<
  KeyService,
  {
    readonly rotateDataKey: (principal: Principal) => Effect.Effect<Schemas["DataKeyResponse"], ApiFailure | StoreError>
  }
>()("sokoni/KeyService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy

    const rotate = Effect.fn("KeyService.rotateDataKey")(function* (principal: Principal) {
      const refused = refuseDataKey(principal.keyKind)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const now = yield* clock.nowHere()
      // Drawn once the caller may have a key, where the service always drew it (E-350).
      const raw = yield* entropy.secret(KEY_PREFIX.data)
      const key = { raw, hash: hashKey(raw) }
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const previous = yield* previousDataKey(tx, principal.partition)
          const rotation = rotateDataKey(
            { partnerId: principal.partnerId, environment: principal.environment, partition: principal.partition, previous },
            now,
            key
          )
          yield* putRotation(tx, rotation)
          return rotation.answer
        })
      )
    })

    return KeyService.of({ rotateDataKey: rotate })
  })

  static readonly layer = Layer.effect(KeyService, KeyService.make)
}
