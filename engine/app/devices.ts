/**
 * Devices: the push-notification targets of a sub-account (D-028): list, register (or refresh by push token),
 * remove. Owns the device documents, listed per sub-account in its child partition; a removed device moves to the
 * child partition `…/removed` (the store keeps no deletes; a sandbox reset wipes both). Push tokens are stored and
 * never returned (only their last 8 characters). Does not own sending notifications.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { refuseClosed } from "../domain/subaccount.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import { findSubAccount } from "./accounts.ts"
import { accountPartition, type DeviceDoc, Devices, timeSortKey } from "./docs.ts"
import type { Principal } from "./principal.ts"

/** Most devices one sub-account may have (D-028). */
export const MAX_DEVICES = 20

export interface DeviceInput {
  readonly platform: DeviceDoc["platform"]
  readonly pushToken: string
  readonly name?: string | undefined
  readonly appVersion?: string | undefined
}

const toWire = (d: DeviceDoc): Schemas["Device"] => ({
  deviceId: d.deviceId,
  subAccountId: d.subAccountId,
  platform: d.platform,
  name: d.name,
  pushTokenLast8: d.pushToken.slice(-8),
  appVersion: d.appVersion,
  createdAt: isoAt(d.createdAt),
  lastSeenAt: d.lastSeenAt === null ? null : isoAt(d.lastSeenAt)
})

export class DeviceService extends Context.Service<
  DeviceService,
  {
    readonly list: (principal: Principal, id: string) => Effect.Effect<Schemas["DeviceList"], ApiFailure | StoreError>
    readonly register: (principal: Principal, id: string, input: DeviceInput) => Effect.Effect<Schemas["Device"], ApiFailure | StoreError>
    readonly remove: (principal: Principal, id: string, deviceId: string) => Effect.Effect<Schemas["DeleteResult"], ApiFailure | StoreError>
  }
>()("sokoni/DeviceService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy

    const devicesOf = (tx: ReadTx, partition: string, id: string) =>
      Effect.map(Devices.list(tx, accountPartition(partition, id), { limit: MAX_DEVICES, order: "asc" }), (ds) => [...ds])

    const list = Effect.fn("DeviceService.list")(function* (principal: Principal, id: string) {
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          yield* findSubAccount(tx, principal.partition, id)
          const devices = (yield* devicesOf(tx, principal.partition, id)).map(toWire)
          const answer: Schemas["DeviceList"] = { devices, count: devices.length }
          return answer
        })
      )
    })

    const register = Effect.fn("DeviceService.register")(function* (principal: Principal, id: string, input: DeviceInput) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          yield* liftFailure(refuseClosed(s, "registering a device"))
          const now = yield* clock.now
          const devices = yield* devicesOf(tx, principal.partition, id)
          const same = devices.find((d) => d.pushToken === input.pushToken)
          if (same === undefined && devices.length >= MAX_DEVICES) {
            return yield* Effect.fail(
              fail("VALIDATION_ERROR", `a sub-account has at most ${MAX_DEVICES} devices: remove one first`, { param: "pushToken", limit: MAX_DEVICES })
            )
          }
          // The same push token is the same device: refreshed, not added.
          const device: DeviceDoc = {
            deviceId: same?.deviceId ?? (yield* entropy.id("dev")),
            subAccountId: id,
            platform: input.platform,
            name: input.name ?? same?.name ?? null,
            pushToken: input.pushToken,
            appVersion: input.appVersion ?? same?.appVersion ?? null,
            createdAt: same?.createdAt ?? now,
            lastSeenAt: now
          }
          yield* Devices.put(tx, device.deviceId, accountPartition(principal.partition, id), timeSortKey(device.createdAt, device.deviceId), device)
          return toWire(device)
        })
      )
    })

    const remove = Effect.fn("DeviceService.remove")(function* (principal: Principal, id: string, deviceId: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          yield* liftFailure(refuseClosed(s, "removing a device"))
          const home = accountPartition(principal.partition, id)
          const found = yield* tx.get(Devices.name, deviceId)
          if (Option.isNone(found) || found.value.partition !== home) {
            return yield* Effect.fail(fail("NOT_FOUND", `device ${deviceId} was not found on sub-account ${id}`))
          }
          yield* tx.put(Devices.name, { ...found.value, partition: `${home}/removed` })
          const answer: Schemas["DeleteResult"] = { id: deviceId, deleted: true, message: `Device ${deviceId} removed.` }
          return answer
        })
      )
    })

    return DeviceService.of({ list, register, remove })
  })

  static readonly layer = Layer.effect(DeviceService, DeviceService.make)
}
