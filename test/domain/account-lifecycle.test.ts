/**
 * A sub-account's lifecycle (domain/accounts/decide-lifecycle.ts): closing is refused while something blocks it and
 * is final; a compliance freeze cannot be lifted by the partner; a KYC assertion on a closed account is refused but
 * compliance may override it; a request that changes nothing announces nothing.
 */
import { describe, expect, it } from "vitest"
import { decideClose, decideFreeze, decideKyc } from "../../engine/domain/accounts/decide-lifecycle.ts"
import { accepted, codeOf, OPEN_AT, subAccount } from "./decider-fixtures.ts"

describe("closing", () => {
  it("closes an account with nothing left and announces account.closed", () => {
    const plan = accepted(decideClose(subAccount(), [], OPEN_AT))
    expect(plan.account).toMatchObject({ status: "closed", closedAt: OPEN_AT })
    expect(plan.event).toEqual({
      name: "account.closed",
      data: { subAccountId: "usr_1", externalId: "ext-1", status: "closed", closedAt: new Date(OPEN_AT).toISOString() }
    })
  })

  it("is CONFLICT while something blocks it, naming every blocker", () => {
    const refused = decideClose(subAccount(), [{ reason: "OPEN_ORDERS" }, { reason: "NON_ZERO_BALANCE" }], OPEN_AT)
    expect(codeOf(refused)).toBe("CONFLICT")
    expect(refused instanceof Error ? refused.message : "").toContain("OPEN_ORDERS, NON_ZERO_BALANCE")
  })

  it("a closed account stays as it was: no event, whatever blocks it", () => {
    const closed = subAccount({ status: "closed", closedAt: OPEN_AT - 1 })
    expect(decideClose(closed, [{ reason: "x" }], OPEN_AT)).toEqual({ account: closed })
  })
})

describe("freezing", () => {
  it("the partner freezes with a reason and announces who froze it", () => {
    const plan = accepted(decideFreeze(subAccount(), true, "partner", "fraud check"))
    expect(plan.account).toMatchObject({ status: "frozen", frozenBy: "partner", statusReason: "fraud check" })
    expect(plan.event?.data).toMatchObject({ frozen: true, frozenBy: "partner" })
  })

  it("the partner cannot lift a compliance freeze; compliance can", () => {
    const frozen = accepted(decideFreeze(subAccount(), true, "compliance", undefined)).account
    expect(codeOf(decideFreeze(frozen, false, "partner", undefined))).toBe("FORBIDDEN")
    expect(accepted(decideFreeze(frozen, false, "compliance", undefined)).event?.data).toMatchObject({ frozen: false, unfrozenBy: "compliance" })
  })

  it("freezing a frozen account changes nothing and announces nothing", () => {
    const frozen = accepted(decideFreeze(subAccount(), true, "partner", undefined)).account
    expect(accepted(decideFreeze(frozen, true, "partner", undefined)).event).toBeUndefined()
  })
})

describe("KYC", () => {
  it("a VERIFIED assertion sets status and level and announces kyc.updated", () => {
    const plan = accepted(decideKyc(subAccount({ kycStatus: "PENDING", kycLevel: "NONE" }), { kycStatus: "VERIFIED", kycLevel: "FULL" }, "partner", OPEN_AT))
    expect(plan.account).toMatchObject({ kycStatus: "VERIFIED", kycLevel: "FULL" })
    expect(plan.event?.name).toBe("kyc.updated")
    expect(plan.event?.data).not.toHaveProperty("overriddenByAdmin")
  })

  it("refuses the partner on a closed account, but compliance overrides it, saying so", () => {
    const closed = subAccount({ status: "closed", kycStatus: "PENDING" })
    expect(codeOf(decideKyc(closed, { kycStatus: "VERIFIED", kycLevel: "BASIC" }, "partner", OPEN_AT))).toBe("FORBIDDEN")
    expect(accepted(decideKyc(closed, { kycStatus: "VERIFIED", kycLevel: "BASIC" }, "compliance", OPEN_AT)).event?.data).toMatchObject({
      overriddenByAdmin: true
    })
  })

  it("a rejection carries its code and reason", () => {
    const plan = accepted(
      decideKyc(subAccount({ kycStatus: "PENDING" }), { kycStatus: "REJECTED", rejectionCode: "DOC_EXPIRED", rejectionReason: "expired" }, "partner", OPEN_AT)
    )
    expect(plan.event?.data).toMatchObject({ kycStatus: "REJECTED", kycRejectionCode: "DOC_EXPIRED", kycRejectionReason: "expired" })
  })
})
