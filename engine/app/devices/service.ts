/**
 * Devices: the push-notification targets of a sub-account (D-028): list, register (or refresh by push token),
 * remove. Owns the device documents, listed per sub-account in its child partition; a removed device moves to the
 * child partition `…/removed` (the store keeps no deletes; a sandbox reset wipes both). Push tokens are stored and
 * never returned (only their last 8 characters). The registration rules are pure in domain/accounts/decide-device.ts.
 * Does not own sending notifications.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { acceptDevice, decideDevice, type DeviceInput, deviceToWire, MAX_DEVICES } from "../../domain/accounts/decide-device.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { refuseClosed } from "../../domain/subaccount.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { accountPartition, Devices, timeSortKey } from "../docs.ts"
import type { Principal } from "../principal.ts"

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
          const devices = (yield* devicesOf(tx, principal.partition, id)).map(deviceToWire)
          const answer: Schemas["DeviceList"] = { devices, count: devices.length }
          return answer
        })
      )
    })

    const register = Effect.fn("DeviceService.register")(function* (principal: Principal, id: string, input: DeviceInput) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          const now = yield* clock.nowHere()
          const { same } = yield* liftFailure(acceptDevice(s, yield* devicesOf(tx, principal.partition, id), input))
          // The same push token is the same device: refreshed, not added (a new device's id is drawn only here).
          const device = decideDevice(id, same, input, now, { deviceId: same?.deviceId ?? (yield* entropy.idHere("dev")) })
          yield* Devices.put(tx, device.deviceId, accountPartition(principal.partition, id), timeSortKey(device.createdAt, device.deviceId), device)
          return deviceToWire(device)
        })
      )
    })

    const remove = Effect.fn("DeviceService.remove")(function* (principal: Principal, id: string, deviceId: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          yield* liftFailure(refuseClosed(s, "removing a device"))
          const home = accountPartition(principal.partition, id)
          const found = yield* Devices.getDoc(tx, deviceId)
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
