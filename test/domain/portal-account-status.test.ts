/**
 * The account status a portal member sees (domain/partners/decide-account.ts): suspension first, then approval (active
 * once a live key exists), rejection, an active sandbox key, a pending application; the masked key only when active;
 * the workspace summary allows live only to an approved, unsuspended account; member actions need a verified email.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type AccountView, accountStatus, type ApplicationState, decideMeAction, meAnswer, refuseMe } from "../../engine/domain/partners/decide-account.ts"
import { decideBootstrap } from "../../engine/domain/partners/decide-partner.ts"
import { accepted, codeOf, OPEN_AT } from "./decider-fixtures.ts"

const plan = decideBootstrap({ businessName: "Acme", email: "ops@acme.test", tier: "starter" }, OPEN_AT, {
  partnerId: "ptn_1",
  sandboxKey: { raw: "sk_sandbox_aaaa1111", hash: "h-s" },
  liveKey: { raw: "pk_live_bbbb2222", hash: "h-l" }
})
const [sandboxKey, liveKey] = plan.keys
const application = (status: ApplicationState["status"]): ApplicationState => ({
  status,
  businessName: "Acme Ltd",
  email: "apply@acme.test",
  submittedAt: OPEN_AT,
  rejectionReason: status === "rejected" ? "incomplete" : null
})

const views = fc.record({
  application: fc.option(fc.constantFrom("pending", "approved", "rejected").map(application), { nil: undefined }),
  partner: fc.option(fc.constantFrom(plan.partner, { ...plan.partner, status: "suspended" as const }), { nil: undefined }),
  sandboxKey: fc.option(fc.constant(sandboxKey), { nil: undefined }),
  liveKey: fc.option(fc.constant(liveKey), { nil: undefined }),
  preference: fc.option(fc.constantFrom("hosted" as const, "onprem" as const), { nil: undefined })
})

describe("the account status", () => {
  it("follows the precedence suspended > approved (active with a live key) > rejected > sandbox_active > pending", () => {
    fc.assert(
      fc.property(views, (v: AccountView) => {
        const s = accountStatus(v)
        if (v.partner?.status === "suspended") return s === "suspended"
        if (v.application?.status === "approved") return s === (v.liveKey === undefined ? "approved" : "active")
        if (v.application?.status === "rejected") return s === "rejected"
        if (v.sandboxKey !== undefined) return s === "sandbox_active"
        return s === (v.application?.status === "pending" ? "pending" : "not_found")
      })
    )
  })

  it("shows the masked live key only when active, and never the key", () => {
    fc.assert(
      fc.property(views, (v) => {
        const answer = meAnswer(v, false)
        return (answer.maskedKey !== undefined) === (answer.status === "active") && !JSON.stringify(answer).includes("pk_live_bbbb2222")
      })
    )
    expect(meAnswer({ application: application("approved"), partner: plan.partner, sandboxKey, liveKey, preference: undefined }, false).maskedKey).toBe(
      "pk_live_****2222"
    )
  })

  it("the workspace allows live only to an approved, unsuspended account", () => {
    fc.assert(
      fc.property(views, (v) => {
        const answer = meAnswer(v, true)
        const allowed = v.application?.status === "approved" && v.partner?.status !== "suspended"
        return answer.environment?.liveAllowed === allowed && answer.hosted?.liveAllowed === allowed
      })
    )
  })

  it("names the partner's business before the application's", () => {
    const v = { application: application("pending"), partner: plan.partner, sandboxKey: undefined, liveKey: undefined, preference: undefined }
    expect([meAnswer(v, false).businessName, meAnswer({ ...v, partner: undefined }, false).businessName]).toEqual(["Acme", "Acme Ltd"])
  })
})

describe("member actions", () => {
  it("the workspace summary and every action need a verified email", () => {
    expect(codeOf(refuseMe(false, true))).toBe("FORBIDDEN")
    expect(refuseMe(false, false)).toBeUndefined()
    expect(codeOf(decideMeAction(false, { action: "select_environment", environment: "sandbox" }))).toBe("FORBIDDEN")
  })

  it("selecting an environment stores nothing; a deployment preference is stored", () => {
    expect(accepted(decideMeAction(true, { action: "select_environment", environment: "production" }))).toEqual({
      preference: undefined,
      answer: { action: "select_environment", path: "/dashboard/production" }
    })
    expect(accepted(decideMeAction(true, { action: "deployment_preference", deploymentPreference: "both" })).preference).toBe("both")
    expect(codeOf(decideMeAction(true, { action: "deployment_preference" }))).toBe("MISSING_PARAM")
  })
})
