/**
 * A partner application's states and who may move them (domain/portal/decide-application.ts): only a verified
 * identity applies; one open application at a time, a new one only after a rejection (and it keeps the identity's
 * partner); the operator reviews only a pending application; approval gives it a partner (created only when it has
 * none) and a live key rotating any earlier one; rejection touches no partner.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { activeKey, type ApiKeyRecord, KEY_PREFIX } from "../../engine/domain/partners/decide-partner.ts"
import {
  acceptApply,
  acceptReview,
  type ApplicationRecord,
  decideApply,
  decideApprove,
  decideReject,
  refuseApply
} from "../../engine/domain/portal/decide-application.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

type Status = ApplicationRecord["status"]
const STATUSES: ReadonlyArray<Status> = ["pending", "approved", "rejected"]
const input = { businessName: "Acme", email: "ops@acme.test", country: "KE" }

const application = (status: Status, partnerId: string | null = null): ApplicationRecord => ({
  applicationId: "app_1",
  uid: "uid_1",
  ...input,
  status,
  rejectionReason: status === "rejected" ? "docs" : null,
  submittedAt: OPEN_AT,
  partnerId
})
const liveKey = (n: number) => ({ raw: `${KEY_PREFIX.production}live${n}xxxx${n}${n}${n}${n}`, hash: `h-live-${n}` })

describe("applying", () => {
  it("needs a verified email", () => {
    expect(codeOf(refuseApply(false))).toBe("FORBIDDEN")
    expect(refuseApply(true)).toBeUndefined()
  })

  it("is refused exactly while a pending or approved application exists (one open application at a time)", () => {
    expect(acceptApply(undefined)).toBeUndefined()
    for (const status of STATUSES) expect(codeOf(acceptApply(application(status)))).toBe(status === "rejected" ? "accepted" : "CONFLICT")
  })

  it("files a pending application with the drawn id; after a rejection it keeps the identity's partner", () => {
    const first = decideApply(undefined, { uid: "uid_1", input }, OPEN_AT, { applicationId: "app_2" })
    expect(first.application).toEqual({
      applicationId: "app_2",
      uid: "uid_1",
      ...input,
      status: "pending",
      rejectionReason: null,
      submittedAt: OPEN_AT,
      partnerId: null
    })
    expect(first.answer).toEqual({
      message: "Application received; it is reviewed within 1-2 business days.",
      applicationId: "app_2",
      status: "pending",
      submittedAt: new Date(OPEN_AT).toISOString()
    })
    const again = decideApply(application("rejected", "ptn_sandbox"), { uid: "uid_1", input }, OPEN_AT + 1, { applicationId: "app_3" })
    expect(again.application).toMatchObject({ applicationId: "app_3", status: "pending", rejectionReason: null, partnerId: "ptn_sandbox" })
  })
})

describe("the operator's review", () => {
  it("moves only a pending application: an unknown one 404, a reviewed one 409", () => {
    expect(codeOf(acceptReview(undefined, "app_x"))).toBe("NOT_FOUND")
    for (const status of STATUSES) expect(codeOf(acceptReview(application(status), "app_1"))).toBe(status === "pending" ? "accepted" : "CONFLICT")
  })

  it("approval creates a partner only for an application without one, and issues its live key", () => {
    const plan = decideApprove({ application: application("pending"), pointer: undefined, previous: undefined }, OPEN_AT, {
      partnerId: "ptn_new",
      liveKey: liveKey(1)
    })
    expect(plan.created?.partner).toEqual({
      partnerId: "ptn_new",
      businessName: "Acme",
      email: "ops@acme.test",
      tier: "starter",
      markupBps: 0,
      createdAt: OPEN_AT,
      status: "active"
    })
    expect(plan.created?.application).toMatchObject({ status: "pending", partnerId: "ptn_new" })
    expect(plan.application).toMatchObject({ status: "approved", partnerId: "ptn_new", rejectionReason: null })
    expect(plan.rotation.key).toMatchObject({ partnerId: "ptn_new", environment: "production", kind: "full", status: "active", keyHash: "h-live-1" })
    expect(plan.rotation.pointer).toEqual({ partition: "ptn_new:production", keyHash: "h-live-1" })
    expect(plan.answer).toEqual({ applicationId: "app_1", status: "approved", partnerId: "ptn_new", liveKey: liveKey(1).raw, reason: null })
  })

  it("approval keeps the application's partner (its sandbox) and rotates a live key it already had", () => {
    const earlier: ApiKeyRecord = activeKey("ptn_sb", "production", liveKey(0), OPEN_AT - 1)
    const plan = decideApprove({ application: application("pending", "ptn_sb"), pointer: earlier.keyHash, previous: earlier }, OPEN_AT, {
      partnerId: "ptn_sb",
      liveKey: liveKey(1)
    })
    expect(plan.created).toBeUndefined()
    expect(plan.answer.partnerId).toBe("ptn_sb")
    expect(plan.rotation.retired).toEqual({ ...earlier, status: "rotated" })
  })

  it("rejection records the reason and names no partner or key", () => {
    const plan = decideReject(application("pending", "ptn_sb"), "incomplete documents")
    expect(plan.application).toMatchObject({ status: "rejected", rejectionReason: "incomplete documents", partnerId: "ptn_sb" })
    expect(plan.answer).toEqual({ applicationId: "app_1", status: "rejected", partnerId: null, liveKey: null, reason: "incomplete documents" })
  })
})

describe("an identity's applications over any sequence of commands", () => {
  type Command = "apply" | "approve" | "reject"
  // The identity's latest application, moved only by what the rules accept; a partner appears at approval and stays.
  it("never has two open applications, approves at most once, and never loses its partner", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom<Command>("apply", "approve", "reject"), { maxLength: 30 }), (commands) => {
        let latest: ApplicationRecord | undefined
        let approvals = 0
        let n = 0
        for (const command of commands) {
          n += 1
          if (command === "apply") {
            const refused = acceptApply(latest)
            expect(refused === undefined).toBe(latest === undefined || latest.status === "rejected")
            if (refused === undefined) latest = decideApply(latest, { uid: "uid_1", input }, OPEN_AT + n, { applicationId: `app_${n}` }).application
            continue
          }
          const reviewed = acceptReview(latest, latest?.applicationId ?? "app_x")
          expect(codeOf(reviewed) === "accepted").toBe(latest?.status === "pending")
          if (codeOf(reviewed) !== "accepted" || latest === undefined) continue
          const partnerBefore = latest.partnerId
          if (command === "reject") latest = decideReject(accepted(reviewed), "no").application
          else {
            latest = decideApprove({ application: accepted(reviewed), pointer: undefined, previous: undefined }, OPEN_AT + n, {
              partnerId: `ptn_${n}`,
              liveKey: liveKey(n)
            }).application
            approvals += 1
          }
          if (partnerBefore !== null) expect(latest.partnerId).toBe(partnerBefore)
        }
        // Once approved, nothing moves the application again: no second approval, no new application.
        expect(approvals).toBeLessThanOrEqual(1)
        if (approvals === 1) expect(latest?.status).toBe("approved")
      })
    )
  })
})
