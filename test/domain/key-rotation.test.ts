/**
 * Rotating a partner's full key (domain/partners/rotate-key.ts) and sandbox registration, which issues or rotates the
 * sandbox key (domain/partners/decide-register.ts): the new key is the only active one the pointer names, the previous
 * active key becomes `rotated`, a revoked one stays revoked, and only the first registration creates a partner and
 * seeds the sandbox wallet. Who may register: an identity whose application is not rejected, of an active partner.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type ApiKeyRecord, KEY_PREFIX, type PartnerRecord, SANDBOX_SEED_CENTS } from "../../engine/domain/partners/decide-partner.ts"
import { acceptRegister, decideRegister, registerAnswer } from "../../engine/domain/partners/decide-register.ts"
import { fullKeyPrefix, rotateFullKey } from "../../engine/domain/partners/rotate-key.ts"
import type { ApplicationRecord } from "../../engine/domain/portal/decide-application.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const drawn = (n: number) => ({ raw: `${KEY_PREFIX.sandbox}k${n}abcdefgh${String(n).padStart(4, "0")}`, hash: `h-${n}` })

describe("rotating a full key", () => {
  it("the prefix follows the environment's base", () => {
    expect(fullKeyPrefix("sandbox")).toBe(KEY_PREFIX.sandbox)
    expect(fullKeyPrefix("production")).toBe(KEY_PREFIX.production)
  })

  it("a first key: active, pointed at, nothing retired, not a rotation; the raw key is never part of the record", () => {
    const r = rotateFullKey({ partnerId: "ptn_1", environment: "sandbox", pointer: undefined, previous: undefined }, OPEN_AT, drawn(1))
    expect(r.key).toEqual({ keyHash: "h-1", partnerId: "ptn_1", environment: "sandbox", kind: "full", status: "active", last4: "0001", createdAt: OPEN_AT })
    expect(r.pointer).toEqual({ partition: "ptn_1:sandbox", keyHash: "h-1" })
    expect(r.retired).toBeUndefined()
    expect(r.existed).toBe(false)
    expect(JSON.stringify(r.key)).not.toContain(r.raw)
  })

  it("a revoked previous key stays revoked; a pointer to a key no longer stored still counts as a rotation", () => {
    const revoked: ApiKeyRecord = {
      ...rotateFullKey({ partnerId: "ptn_1", environment: "sandbox", pointer: undefined, previous: undefined }, 0, drawn(0)).key,
      status: "revoked"
    }
    const r = rotateFullKey({ partnerId: "ptn_1", environment: "sandbox", pointer: "h-0", previous: revoked }, OPEN_AT, drawn(1))
    expect(r.retired).toBeUndefined()
    expect(r.existed).toBe(true)
    expect(rotateFullKey({ partnerId: "ptn_1", environment: "sandbox", pointer: "h-gone", previous: undefined }, OPEN_AT, drawn(1)).existed).toBe(true)
  })

  it("after any number of rotations exactly one key is active, the newest, and the pointer names it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 20 }), fc.constantFrom("sandbox" as const, "production" as const), (rotations, environment) => {
        const keys = new Map<string, ApiKeyRecord>()
        let pointer: string | undefined
        for (let n = 1; n <= rotations; n++) {
          const r = rotateFullKey(
            { partnerId: "ptn_1", environment, pointer, previous: pointer === undefined ? undefined : keys.get(pointer) },
            OPEN_AT + n,
            drawn(n)
          )
          expect(r.existed).toBe(n > 1)
          if (r.retired !== undefined) keys.set(r.retired.keyHash, r.retired)
          keys.set(r.key.keyHash, r.key)
          pointer = r.pointer.keyHash
        }
        const active = [...keys.values()].filter((k) => k.status === "active")
        expect(active.map((k) => k.keyHash)).toEqual([`h-${rotations}`])
        expect(pointer).toBe(`h-${rotations}`)
        expect([...keys.values()].filter((k) => k.status === "rotated")).toHaveLength(rotations - 1)
      })
    )
  })
})

const application = (status: ApplicationRecord["status"], partnerId: string | null): ApplicationRecord => ({
  applicationId: "app_1",
  uid: "uid_1",
  businessName: "Acme",
  email: "ops@acme.test",
  country: "KE",
  status,
  rejectionReason: null,
  submittedAt: OPEN_AT - 10,
  partnerId
})
const partner = (status?: "active" | "suspended"): PartnerRecord => ({
  partnerId: "ptn_1",
  businessName: "Acme",
  email: "ops@acme.test",
  tier: "starter",
  markupBps: 0,
  createdAt: 0,
  ...(status === undefined ? {} : { status })
})

describe("who may register", () => {
  it("an identity without an application, or with a rejected one, is refused", () => {
    expect(codeOf(acceptRegister({ application: undefined, partner: undefined }))).toBe("FORBIDDEN")
    expect(codeOf(acceptRegister({ application: application("rejected", null), partner: undefined }))).toBe("FORBIDDEN")
  })

  it("a pending or approved application may register; once it has a partner, that partner must exist and be active", () => {
    for (const status of ["pending", "approved"] as const) {
      expect(codeOf(acceptRegister({ application: application(status, null), partner: undefined }))).toBe("accepted")
      expect(codeOf(acceptRegister({ application: application(status, "ptn_1"), partner: partner() }))).toBe("accepted")
      expect(codeOf(acceptRegister({ application: application(status, "ptn_1"), partner: partner("active") }))).toBe("accepted")
      expect(codeOf(acceptRegister({ application: application(status, "ptn_1"), partner: partner("suspended") }))).toBe("AUTH_SUSPENDED")
      expect(codeOf(acceptRegister({ application: application(status, "ptn_1"), partner: undefined }))).toBe("FORBIDDEN")
    }
  })
})

describe("registering", () => {
  const names = { businessName: "Acme Sandbox", email: "sb@acme.test" }

  it("the first registration creates the partner as the request names it and seeds the sandbox wallet", () => {
    const app = accepted(acceptRegister({ application: application("pending", null), partner: undefined }))
    const plan = decideRegister({ application: app, pointer: undefined, previous: undefined }, names, OPEN_AT, { partnerId: "ptn_9", sandboxKey: drawn(1) })
    expect(plan.created?.partner).toMatchObject({ partnerId: "ptn_9", ...names, tier: "starter", status: "active", createdAt: OPEN_AT })
    expect(plan.created?.application).toMatchObject({ applicationId: "app_1", status: "pending", partnerId: "ptn_9" })
    expect(plan.seed).toEqual({ partition: "ptn_9:sandbox", cents: SANDBOX_SEED_CENTS })
    expect(registerAnswer(plan.rotation, SANDBOX_SEED_CENTS)).toEqual({
      message: "Sandbox account created.",
      apiKey: drawn(1).raw,
      walletBalance: 100000,
      currency: "USD",
      existing: false
    })
  })

  it("a later registration rotates the key, creates nothing and seeds nothing", () => {
    const first = decideRegister({ application: application("approved", "ptn_1"), pointer: undefined, previous: undefined }, names, OPEN_AT, {
      partnerId: "ptn_1",
      sandboxKey: drawn(1)
    })
    const again = decideRegister({ application: application("approved", "ptn_1"), pointer: "h-1", previous: first.rotation.key }, names, OPEN_AT + 1, {
      partnerId: "ptn_1",
      sandboxKey: drawn(2)
    })
    expect(first.created).toBeUndefined()
    expect(again.created).toBeUndefined()
    expect(again.seed).toBeUndefined()
    expect(again.rotation.retired).toEqual({ ...first.rotation.key, status: "rotated" })
    expect(registerAnswer(again.rotation, 4_250)).toMatchObject({
      message: "Sandbox key rotated; the previous key no longer works.",
      walletBalance: 42.5,
      existing: true
    })
  })
})
