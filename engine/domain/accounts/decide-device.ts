/**
 * A sub-account's devices (D-028) as pure rules: registering is refused on a closed account and past 20 devices;
 * the same push token is the same device (refreshed, not added, keeping what the request leaves out); removing is
 * refused on a closed account. The dispatcher (app/devices/service.ts) draws a new device's id only once it is
 * accepted as new (E-350) and writes the device.
 * Owns: these rules and the Device answer. Does not own storing devices nor sending notifications.
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { refuseClosed, type SubAccountRecord } from "../subaccount.ts"

/** Most devices one sub-account may have (D-028). */
export const MAX_DEVICES = 20

/** A push-notification device of a sub-account (D-028; app/docs.ts Devices): the token is kept, only its last 8 characters are shown. */
export interface DeviceRecord {
  readonly deviceId: string
  readonly subAccountId: string
  readonly platform: "ios" | "android" | "web"
  readonly name: string | null
  readonly pushToken: string
  readonly appVersion: string | null
  readonly createdAt: number
  readonly lastSeenAt: number | null
}

export interface DeviceInput {
  readonly platform: DeviceRecord["platform"]
  readonly pushToken: string
  readonly name?: string | undefined
  readonly appVersion?: string | undefined
}

const isoAt = (ms: number) => new Date(ms).toISOString()

/** The Device as the spec shows it: the push token never, only its last 8 characters. */
export const deviceToWire = (d: DeviceRecord): Schemas["Device"] => ({
  deviceId: d.deviceId,
  subAccountId: d.subAccountId,
  platform: d.platform,
  name: d.name,
  pushTokenLast8: d.pushToken.slice(-8),
  appVersion: d.appVersion,
  createdAt: isoAt(d.createdAt),
  lastSeenAt: d.lastSeenAt === null ? null : isoAt(d.lastSeenAt)
})

/**
 * Whether a registration is accepted: the account is not closed, and the token is already a device of it (that
 * device, to refresh) or there is room for one more (undefined: a new device).
 */
export const acceptDevice = <D extends DeviceRecord>(
  s: SubAccountRecord,
  devices: ReadonlyArray<D>,
  input: DeviceInput
): { readonly same: D | undefined } | ApiFailure => {
  const closed = refuseClosed(s, "registering a device")
  if (closed !== undefined) return closed
  const same = devices.find((d) => d.pushToken === input.pushToken)
  if (same === undefined && devices.length >= MAX_DEVICES) {
    return fail("VALIDATION_ERROR", `a sub-account has at most ${MAX_DEVICES} devices: remove one first`, { param: "pushToken", limit: MAX_DEVICES })
  }
  return { same }
}

/** The device after a registration: a refreshed one keeps its id, creation time and what the request leaves out. */
export const decideDevice = (
  subAccountId: string,
  same: DeviceRecord | undefined,
  input: DeviceInput,
  now: number,
  ids: { readonly deviceId: string }
): DeviceRecord => ({
  deviceId: ids.deviceId,
  subAccountId,
  platform: input.platform,
  name: input.name ?? same?.name ?? null,
  pushToken: input.pushToken,
  appVersion: input.appVersion ?? same?.appVersion ?? null,
  createdAt: same?.createdAt ?? now,
  lastSeenAt: now
})
