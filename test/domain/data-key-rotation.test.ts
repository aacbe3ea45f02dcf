/**
 * Issuing the read-only data key (domain/partners/rotate-data-key.ts): only a full key's caller may (a data key is
 * 403 FORBIDDEN); the new key is an active data key of the caller's partner and environment, shown once with its note;
 * the pointer moves to it; the previous data key becomes `rotated` only while it was active (a revoked or already
 * rotated key keeps its status), so at most one data key per partition is ever active.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ApiKeyRecord } from "../../engine/domain/partners/decide-partner.ts"
import { DATA_KEY_NOTE, refuseDataKey, rotateDataKey } from "../../engine/domain/partners/rotate-data-key.ts"
import { codeOf, OPEN_AT } from "./decider-fixtures.ts"

const PARTITION = "ptn_1:production"
const state = (previous: ApiKeyRecord | undefined) => ({ partnerId: "ptn_1", environment: "production" as const, partition: PARTITION, previous })
const drawn = (n: number) => ({ raw: `dk_live_${String(n).padStart(8, "0")}`, hash: `h${n}` })

describe("who may ask for a data key", () => {
  it("a full key's caller; a data key's is 403 FORBIDDEN", () => {
    expect(refuseDataKey("full")).toBeUndefined()
    expect(codeOf(refuseDataKey("data"))).toBe("FORBIDDEN")
  })
})

describe("issuing a data key", () => {
  it("gives an active data key of the caller, shown once with the note, and points the partition at it", () => {
    const rotation = rotateDataKey(state(undefined), OPEN_AT, drawn(1234))
    expect(rotation.key).toEqual({
      keyHash: "h1234",
      partnerId: "ptn_1",
      environment: "production",
      kind: "data",
      status: "active",
      last4: "1234",
      createdAt: OPEN_AT
    })
    expect(rotation.pointer).toEqual({ partition: PARTITION, keyHash: "h1234" })
    expect(rotation.answer).toEqual({ dataKey: "dk_live_00001234", note: DATA_KEY_NOTE })
    expect(rotation.retired).toBeUndefined()
  })

  it("rotates the previous key only while it is active", () => {
    const previous = rotateDataKey(state(undefined), OPEN_AT - 1, drawn(1)).key
    expect(rotateDataKey(state(previous), OPEN_AT, drawn(2)).retired).toEqual({ ...previous, status: "rotated" })
    expect(rotateDataKey(state({ ...previous, status: "revoked" }), OPEN_AT, drawn(2)).retired).toBeUndefined()
    expect(rotateDataKey(state({ ...previous, status: "rotated" }), OPEN_AT, drawn(2)).retired).toBeUndefined()
  })

  it("leaves one active data key however many times it is rotated, the last one drawn", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), (times) => {
        const keys = new Map<string, ApiKeyRecord>()
        let pointer: string | undefined
        for (let n = 1; n <= times; n++) {
          const rotation = rotateDataKey(state(pointer === undefined ? undefined : keys.get(pointer)), OPEN_AT + n, drawn(n))
          if (rotation.retired !== undefined) keys.set(rotation.retired.keyHash, rotation.retired)
          keys.set(rotation.key.keyHash, rotation.key)
          pointer = rotation.pointer.keyHash
        }
        const active = [...keys.values()].filter((k) => k.status === "active")
        expect(active.map((k) => k.keyHash)).toEqual([`h${times}`])
        expect(pointer).toBe(`h${times}`)
      })
    )
  })
})
