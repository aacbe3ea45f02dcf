/**
 * Sub-account lifecycle through the partner and control APIs: close (blockers, no-op), freeze and unfreeze (partner
 * and compliance), KYC assertions and compliance overrides, devices; each change's event, and no event for a no-op.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"
import { eventWatcher, partnerOf, storeDocs } from "./accounts-kit.ts"

describe("sub-account lifecycle", () => {
  let engine: ReturnType<typeof startEngine>
  let p: Awaited<ReturnType<typeof partnerOf>>
  let events: ReturnType<typeof eventWatcher>
  let id: string
  beforeEach(async () => {
    engine = startEngine()
    p = await partnerOf(engine)
    id = (await p.createUser("sandbox", { externalId: "life-1" })).subAccountId
    events = eventWatcher(engine)
    await events()
  })
  afterEach(() => engine.dispose())

  const names = async () => (await events()).map((e) => e.event)

  describe("DELETE /users/{userId}", () => {
    it("soft-closes, emits account.closed once, and keeps the account readable", async () => {
      const r = await p.sb("DELETE", `/users/${id}`)
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ subAccountId: id, status: "closed" })
      const evs = await events()
      expect(evs.map((e) => e.event)).toEqual(["account.closed"])
      expect(evs[0]?.data).toEqual({ subAccountId: id, externalId: "life-1", status: "closed", closedAt: "2026-11-23T08:00:00.000Z" })
      expect(evs[0]?.partition).toBe(p.partition("sandbox"))
      const again = await p.sb("DELETE", `/users/${id}`)
      expect(again.status).toBe(200)
      expect(again.body.status).toBe("closed")
      expect(await names()).toEqual([])
      expect((await p.sb("GET", `/users/${id}`)).body.status).toBe("closed")
    })

    it("closes a frozen account", async () => {
      await p.sb("POST", `/users/${id}/freeze`)
      expect((await p.sb("DELETE", `/users/${id}`)).body.status).toBe("closed")
    })

    it("refuses with 409 while the wallet holds cash, then closes once it is withdrawn", async () => {
      await p.deposit(id, 3)
      const blocked = await p.sb("DELETE", `/users/${id}`)
      expect(blocked.status).toBe(409)
      expect(blocked.body.error.code).toBe("CONFLICT")
      expect(blocked.body.error.message).toContain("NON_ZERO_BALANCE")
      expect(await names()).toEqual(["deposit.confirmed"])
      await p.sb("POST", `/users/${id}/withdraw`, { amount: 3 })
      expect((await p.sb("DELETE", `/users/${id}`)).status).toBe(200)
    })

    it("a closed account refuses every change with 403 but stays readable", async () => {
      await p.sb("DELETE", `/users/${id}`)
      await events()
      for (const [method, path, body] of [
        ["POST", `/users/${id}/freeze`, undefined],
        ["POST", `/users/${id}/unfreeze`, undefined],
        ["POST", `/users/${id}/kyc`, { kycStatus: "PENDING" }],
        ["POST", `/users/${id}/deposit`, { amount: 1 }],
        ["POST", `/users/${id}/withdraw`, { amount: 1 }],
        ["POST", `/users/${id}/devices`, { platform: "ios", pushToken: "token-123456" }],
        ["DELETE", `/users/${id}/devices/dev_x`, undefined]
      ] as const) {
        const r = await p.sb(method, path, body)
        expect(r.status, `${method} ${path}`).toBe(403)
        expect(r.body.error.code).toBe("FORBIDDEN")
        expect(r.body.error.message).toContain("closed")
      }
      expect(await names()).toEqual([])
      expect((await p.sb("GET", `/users/${id}/devices`)).status).toBe(200)
      expect((await p.sb("GET", `/users/${id}/transactions`)).status).toBe(200)
    })

    it("answers 404 for an unknown id", async () => {
      expect((await p.sb("DELETE", "/users/usr_nope")).status).toBe(404)
    })
  })

  describe("freeze and unfreeze", () => {
    it("freezes with account.frozen {frozen: true, frozenBy: partner}, a second freeze is a no-op", async () => {
      const r = await p.sb("POST", `/users/${id}/freeze`, { reason: "chargeback" })
      expect(r.status).toBe(200)
      expect(r.body.status).toBe("frozen")
      const evs = await events()
      expect(evs.map((e) => [e.event, e.data])).toEqual([["account.frozen", { subAccountId: id, externalId: "life-1", frozen: true, frozenBy: "partner" }]])
      expect((await p.sb("POST", `/users/${id}/freeze`)).body.status).toBe("frozen")
      expect(await names()).toEqual([])
    })

    it("unfreezes with account.frozen {frozen: false, unfrozenBy: partner}; unfreezing an active account is a no-op", async () => {
      expect((await p.sb("POST", `/users/${id}/unfreeze`)).body.status).toBe("active")
      expect(await names()).toEqual([])
      await p.sb("POST", `/users/${id}/freeze`)
      await events()
      const r = await p.sb("POST", `/users/${id}/unfreeze`, {})
      expect(r.body.status).toBe("active")
      expect((await events()).map((e) => e.data)).toEqual([{ subAccountId: id, externalId: "life-1", frozen: false, unfrozenBy: "partner" }])
    })

    it("a frozen account keeps KYC assertions and reads, and refuses money moves with 403", async () => {
      await p.deposit(id, 10)
      await p.sb("POST", `/users/${id}/freeze`)
      expect((await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "PENDING" })).status).toBe(200)
      for (const path of ["deposit", "withdraw"]) {
        const r = await p.sb("POST", `/users/${id}/${path}`, { amount: 1 })
        expect(r.status).toBe(403)
        expect(r.body.error).toMatchObject({ code: "FORBIDDEN" })
        expect(r.body.error.message).toContain("frozen")
      }
      expect((await p.sb("GET", `/users/${id}`)).body.walletBalance).toBe(10)
    })

    it("a compliance freeze cannot be lifted by the partner; compliance lifts it", async () => {
      const frozen = await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: true, reason: "AML review" })
      expect(frozen.status).toBe(200)
      expect(frozen.body.status).toBe("frozen")
      expect((await events()).map((e) => e.data)).toEqual([{ subAccountId: id, externalId: "life-1", frozen: true, frozenBy: "compliance" }])
      const refused = await p.sb("POST", `/users/${id}/unfreeze`)
      expect(refused.status).toBe(403)
      expect(refused.body.error.message).toContain("compliance")
      // the partner's own freeze of a compliance-frozen account changes nothing
      expect((await p.sb("POST", `/users/${id}/freeze`)).body.status).toBe("frozen")
      expect(await names()).toEqual([])
      const lifted = await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: false })
      expect(lifted.body.status).toBe("active")
      expect((await events()).map((e) => e.data)).toEqual([{ subAccountId: id, externalId: "life-1", frozen: false, unfrozenBy: "compliance" }])
    })

    it("compliance lifts a partner freeze too; closed accounts and unknown ids are refused", async () => {
      await p.sb("POST", `/users/${id}/freeze`)
      expect((await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: false })).body.status).toBe("active")
      await p.sb("DELETE", `/users/${id}`)
      const closed = await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: true })
      expect(closed.status).toBe(403)
      expect((await engine.admin("POST", "/_sim/users/usr_nope/freeze", { frozen: true })).status).toBe(404)
      expect((await engine.admin("POST", `/_sim/users/${id}/freeze`, {})).body.error).toMatchObject({ code: "MISSING_PARAM", param: "frozen" })
    })

    it("keeps the reason of the last freeze or unfreeze with the account (for the audit log)", async () => {
      const reason = async () => {
        const docs = await storeDocs(engine, "subAccounts", p.partition("sandbox"))
        return (docs.find((d) => d.id === id)?.body as { statusReason: string | null } | undefined)?.statusReason
      }
      expect(await reason()).toBeNull()
      await p.sb("POST", `/users/${id}/freeze`, { reason: "chargeback" })
      expect(await reason()).toBe("chargeback")
      await p.sb("POST", `/users/${id}/unfreeze`)
      expect(await reason()).toBeNull()
      await engine.admin("POST", `/_sim/users/${id}/freeze`, { frozen: true, reason: "AML" })
      expect(await reason()).toBe("AML")
    })

    it("takes a reason of at most 500 characters", async () => {
      const r = await p.sb("POST", `/users/${id}/freeze`, { reason: "x".repeat(501) })
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "reason" })
    })
  })

  describe("POST /users/{userId}/kyc", () => {
    it("VERIFIED with a level emits kyc.updated; the identical assertion is a no-op", async () => {
      const r = await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "VERIFIED", kycLevel: "FULL", reference: "kyc-ref-1" })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ kycStatus: "VERIFIED", kycLevel: "FULL", kycRejectionCode: null, kycReviewedAt: null })
      expect((await events()).map((e) => [e.event, e.data])).toEqual([
        ["kyc.updated", { subAccountId: id, externalId: "life-1", kycStatus: "VERIFIED", kycLevel: "FULL", reference: "kyc-ref-1" }]
      ])
      await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "VERIFIED", kycLevel: "FULL", reference: "kyc-ref-1" })
      expect(await names()).toEqual([])
      // another reference is another assertion
      await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "VERIFIED", kycLevel: "FULL", reference: "kyc-ref-2" })
      expect(await names()).toEqual(["kyc.updated"])
    })

    it("REJECTED records code, reason and reviewedAt; re-asserting lifts it and clears them", async () => {
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 90 })
      const r = await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "DOC_BLURRY", rejectionReason: "Upload a sharper photo." })
      expect(r.body).toMatchObject({
        kycStatus: "REJECTED",
        kycLevel: "NONE",
        kycRejectionCode: "DOC_BLURRY",
        kycRejectionReason: "Upload a sharper photo.",
        kycReviewedAt: "2026-11-23T08:01:30.000Z"
      })
      expect((await events()).map((e) => e.data)).toEqual([
        {
          subAccountId: id,
          externalId: "life-1",
          kycStatus: "REJECTED",
          kycLevel: "NONE",
          reference: null,
          kycRejectionCode: "DOC_BLURRY",
          kycRejectionReason: "Upload a sharper photo."
        }
      ])
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 30 })
      const same = await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "REJECTED", rejectionCode: "DOC_BLURRY", rejectionReason: "Upload a sharper photo." })
      expect(same.body.kycReviewedAt).toBe("2026-11-23T08:01:30.000Z")
      expect(await names()).toEqual([])
      const lifted = await p.sb("POST", `/users/${id}/kyc`, { kycStatus: "PENDING", kycLevel: "NONE" })
      expect(lifted.body).toMatchObject({ kycStatus: "PENDING", kycLevel: "NONE", kycRejectionCode: null, kycRejectionReason: null, kycReviewedAt: null })
      expect(await names()).toEqual(["kyc.updated"])
    })

    it.each([
      [{ kycStatus: "VERIFIED" }, "MISSING_PARAM", "kycLevel"],
      [{ kycStatus: "VERIFIED", kycLevel: "NONE" }, "VALIDATION_ERROR", "kycLevel"],
      [{ kycStatus: "PENDING", kycLevel: "BASIC" }, "VALIDATION_ERROR", "kycLevel"],
      [{ kycStatus: "REJECTED", rejectionReason: "r" }, "MISSING_PARAM", "rejectionCode"],
      [{ kycStatus: "REJECTED", rejectionCode: "C" }, "MISSING_PARAM", "rejectionReason"],
      [{ kycStatus: "PENDING", rejectionCode: "C" }, "VALIDATION_ERROR", "rejectionCode"],
      [{ kycStatus: "PENDING", rejectionReason: "r" }, "VALIDATION_ERROR", "rejectionReason"],
      [{ kycStatus: "NONE" }, "VALIDATION_ERROR", "kycStatus"],
      [{ kycStatus: "verified", kycLevel: "BASIC" }, "VALIDATION_ERROR", "kycStatus"],
      [{}, "MISSING_PARAM", "kycStatus"],
      [{ kycStatus: "REJECTED", rejectionCode: "", rejectionReason: "r" }, "VALIDATION_ERROR", "rejectionCode"]
    ])("refuses %j with %s on %s, changing nothing", async (body, code, param) => {
      const r = await p.sb("POST", `/users/${id}/kyc`, body)
      expect(r.status).toBe(400)
      expect(r.body.error).toMatchObject({ code, param })
      expect((await p.sb("GET", `/users/${id}`)).body.kycStatus).toBe("NONE")
      expect(await names()).toEqual([])
    })

    it("compliance overrides with overriddenByAdmin, may reset to NONE, and may act on a closed account", async () => {
      const r = await engine.admin("POST", `/_sim/users/${id}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC", reference: "case-9" })
      expect(r.status).toBe(200)
      expect(r.body).toMatchObject({ subAccountId: id, kycStatus: "VERIFIED", kycLevel: "BASIC", overriddenByAdmin: true })
      expect((await events()).map((e) => e.data)).toEqual([
        { subAccountId: id, externalId: "life-1", kycStatus: "VERIFIED", kycLevel: "BASIC", reference: "case-9", overriddenByAdmin: true }
      ])
      await p.sb("DELETE", `/users/${id}`)
      await events()
      const none = await engine.admin("POST", `/_sim/users/${id}/kyc`, { kycStatus: "NONE" })
      expect(none.body).toMatchObject({ kycStatus: "NONE", kycLevel: "NONE", status: "closed", overriddenByAdmin: true })
      expect(await names()).toEqual(["kyc.updated"])
      // the same state again: no event
      await engine.admin("POST", `/_sim/users/${id}/kyc`, { kycStatus: "NONE" })
      expect(await names()).toEqual([])
      expect((await engine.admin("POST", "/_sim/users/usr_nope/kyc", { kycStatus: "NONE" })).status).toBe(404)
      expect((await engine.admin("POST", `/_sim/users/${id}/kyc`, { kycStatus: "VERIFIED" })).body.error).toMatchObject({ code: "MISSING_PARAM" })
    })
  })

  describe("devices", () => {
    it("registers, refreshes by push token, lists (token never shown) and removes", async () => {
      const r = await p.sb("POST", `/users/${id}/devices`, { platform: "ios", pushToken: "apns-token-0123456789", name: "iPhone", appVersion: "1.2.0" })
      expect(r.status).toBe(201)
      expect(r.body).toEqual({
        deviceId: r.body.deviceId,
        subAccountId: id,
        platform: "ios",
        name: "iPhone",
        pushTokenLast8: "23456789",
        appVersion: "1.2.0",
        createdAt: "2026-11-23T08:00:00.000Z",
        lastSeenAt: "2026-11-23T08:00:00.000Z"
      })
      expect(r.body.deviceId).toMatch(/^dev_/)
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 60 })
      const refreshed = await p.sb("POST", `/users/${id}/devices`, { platform: "ios", pushToken: "apns-token-0123456789" })
      expect(refreshed.body).toMatchObject({
        deviceId: r.body.deviceId,
        name: "iPhone",
        appVersion: "1.2.0",
        createdAt: "2026-11-23T08:00:00.000Z",
        lastSeenAt: "2026-11-23T08:01:00.000Z"
      })
      const renamed = await p.sb("POST", `/users/${id}/devices`, { platform: "android", pushToken: "apns-token-0123456789", name: "Pixel", appVersion: "2.0" })
      expect(renamed.body).toMatchObject({ deviceId: r.body.deviceId, platform: "android", name: "Pixel", appVersion: "2.0" })
      const second = await p.sb("POST", `/users/${id}/devices`, { platform: "web", pushToken: "web-push-abcdefgh" })
      expect(second.body).toMatchObject({ name: null, appVersion: null })
      const list = await p.sb("GET", `/users/${id}/devices`)
      expect(list.body.count).toBe(2)
      expect(list.body.devices.map((d: { deviceId: string }) => d.deviceId)).toEqual([r.body.deviceId, second.body.deviceId])
      expect(JSON.stringify(list.body)).not.toContain("apns-token-01")
      const removed = await p.sb("DELETE", `/users/${id}/devices/${r.body.deviceId}`)
      expect(removed.status).toBe(200)
      expect(removed.body).toEqual({ id: r.body.deviceId, deleted: true, message: `Device ${r.body.deviceId} removed.` })
      expect((await p.sb("GET", `/users/${id}/devices`)).body.count).toBe(1)
      const gone = await p.sb("DELETE", `/users/${id}/devices/${r.body.deviceId}`)
      expect(gone.status).toBe(404)
      expect(gone.body.error.code).toBe("NOT_FOUND")
      // a device of another sub-account of the same partner is not this one's
      const other = await p.createUser()
      expect((await p.sb("DELETE", `/users/${other.subAccountId}/devices/${second.body.deviceId}`)).status).toBe(404)
    })

    it("takes at most 20 devices (a known token still refreshes at the cap)", async () => {
      for (let i = 0; i < 20; i++) {
        expect((await p.sb("POST", `/users/${id}/devices`, { platform: "web", pushToken: `push-token-${i}` })).status).toBe(201)
      }
      const over = await p.sb("POST", `/users/${id}/devices`, { platform: "web", pushToken: "push-token-20" })
      expect(over.status).toBe(400)
      expect(over.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "pushToken", limit: 20 })
      expect((await p.sb("POST", `/users/${id}/devices`, { platform: "web", pushToken: "push-token-7" })).status).toBe(201)
      expect((await p.sb("GET", `/users/${id}/devices`)).body.count).toBe(20)
    })

    it("validates the body", async () => {
      const short = await p.sb("POST", `/users/${id}/devices`, { platform: "ios", pushToken: "1234567" })
      expect(short.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "pushToken" })
      const platform = await p.sb("POST", `/users/${id}/devices`, { platform: "symbian", pushToken: "12345678" })
      expect(platform.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "platform" })
      expect((await p.sb("GET", "/users/usr_nope/devices")).status).toBe(404)
    })
  })
})
