/**
 * Key management of a partner: issuing and rotating the read-only data key (`POST /api-keys/data-key`).
 * Owns: the data-key pointer of a partition and the rotation rule (one active data key; the previous one stops
 * authenticating at once, since ApiKeys is a credential collection).
 * Does not own: authentication (PartnerService) or what a data key may call (the gateway, from the contract).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EngineClock } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Store, type StoreError } from "../store/port.ts"
import { ApiKeys, KeyPointers, keyPointerId, pointKey, timeSortKey } from "./docs.ts"
import { KEY_PREFIX } from "../domain/partners/decide-partner.ts"
import { hashKey } from "./partners/credentials.ts"
import type { Principal } from "./principal.ts"

export const DATA_KEY_NOTE =
  "Read-only key for GET on the market-data families; displayed once. Only one data key is active: rotating it breaks existing installs."

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

    const rotateDataKey = Effect.fn("KeyService.rotateDataKey")(function* (principal: Principal) {
      if (principal.keyKind !== "full") return yield* Effect.fail(fail("FORBIDDEN", "a data key is issued with a full production key"))
      const now = yield* clock.now
      const raw = yield* entropy.secret(KEY_PREFIX.data)
      const keyHash = hashKey(raw)
      yield* store.transact((tx) =>
        Effect.gen(function* () {
          const previous = yield* KeyPointers.get(tx, keyPointerId(principal.partition, "data"))
          if (Option.isSome(previous)) {
            const old = yield* ApiKeys.get(tx, previous.value.keyHash)
            if (Option.isSome(old) && old.value.status === "active")
              yield* ApiKeys.put(tx, old.value.keyHash, "global", timeSortKey(old.value.createdAt, old.value.keyHash), { ...old.value, status: "rotated" })
          }
          yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(now, keyHash), {
            keyHash,
            partnerId: principal.partnerId,
            environment: principal.environment,
            kind: "data",
            status: "active",
            last4: raw.slice(-4),
            createdAt: now
          })
          yield* pointKey(tx, principal.partition, "data", keyHash)
        })
      )
      return { dataKey: raw, note: DATA_KEY_NOTE }
    })

    return KeyService.of({ rotateDataKey })
  })

  static readonly layer = Layer.effect(KeyService, KeyService.make)
}
