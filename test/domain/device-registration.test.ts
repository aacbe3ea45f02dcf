/**
 * Registering a sub-account's devices (domain/accounts/decide-device.ts): a closed account registers none, at most 20
 * devices, the same push token refreshes its device (same id and creation, what the request leaves out kept), and
 * the answer never shows the push token, only its last 8 characters.
 */
import { describe, expect, it } from "vitest"
import { acceptDevice, decideDevice, type DeviceRecord, deviceToWire, MAX_DEVICES } from "../../engine/domain/accounts/decide-device.ts"
import { accepted, codeOf, OPEN_AT, subAccount } from "./decider-fixtures.ts"

const device = (n: number): DeviceRecord =>
  decideDevice("usr_1", undefined, { platform: "ios", pushToken: `token-${n}-abcdefgh`, name: `phone ${n}` }, OPEN_AT, { deviceId: `dev_${n}` })

describe("registering a device", () => {
  it("refuses a closed account", () => {
    expect(codeOf(acceptDevice(subAccount({ status: "closed" }), [], { platform: "ios", pushToken: "t-12345678" }))).toBe("FORBIDDEN")
  })

  it("takes a 20th device, refuses a 21st, but still refreshes a known one when full", () => {
    const nineteen = Array.from({ length: MAX_DEVICES - 1 }, (_, i) => device(i))
    expect(accepted(acceptDevice(subAccount(), nineteen, { platform: "web", pushToken: "new-token-1" })).same).toBeUndefined()
    const twenty = [...nineteen, device(99)]
    expect(codeOf(acceptDevice(subAccount(), twenty, { platform: "web", pushToken: "new-token-1" }))).toBe("VALIDATION_ERROR")
    expect(accepted(acceptDevice(subAccount(), twenty, { platform: "android", pushToken: device(3).pushToken })).same?.deviceId).toBe("dev_3")
  })

  it("a refresh keeps the id, creation time and name, and moves lastSeenAt", () => {
    const old = device(3)
    const refreshed = decideDevice("usr_1", old, { platform: "android", pushToken: old.pushToken }, OPEN_AT + 5_000, { deviceId: old.deviceId })
    expect(refreshed).toMatchObject({ deviceId: "dev_3", createdAt: OPEN_AT, lastSeenAt: OPEN_AT + 5_000, name: "phone 3", platform: "android" })
  })

  it("shows only the push token's last 8 characters", () => {
    const wire = deviceToWire(device(7))
    expect(wire.pushTokenLast8).toBe("abcdefgh")
    expect(JSON.stringify(wire)).not.toContain("token-7")
  })
})
