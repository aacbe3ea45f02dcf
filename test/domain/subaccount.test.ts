/**
 * Unit tests of engine/domain/subaccount.ts: the KYC assertion rules, freeze and unfreeze by partner and compliance,
 * what each status allows, closure blockers, and the wire projection.
 */
import { describe, expect, it } from "@effect/vitest"
import { ApiFailure } from "../../engine/domain/errors.ts"
import {
  blockerToWire,
  closureBlockers,
  type KycState,
  nextFreeze,
  nextKyc,
  refuseClosed,
  refuseInactive,
  refuseTrading,
  sameKyc,
  type SubAccountRecord,
  subAccountToWire
} from "../../engine/domain/subaccount.ts"

const NOW = Date.parse("2026-11-23T08:00:00.000Z")
const account: SubAccountRecord = {
  subAccountId: "usr_1",
  partition: "ptn_1:sandbox",
  externalId: "ext-1",
  uid: null,
  displayName: "A",
  email: null,
  phone: null,
  country: null,
  kycStatus: "NONE",
  kycLevel: "NONE",
  kycRejectionCode: null,
  kycRejectionReason: null,
  kycReviewedAt: null,
  kycReference: null,
  status: "active",
  frozenBy: null,
  statusReason: null,
  createdAt: NOW,
  closedAt: null
}
const failure = (value: unknown) => {
  expect(value).toBeInstanceOf(ApiFailure)
  return value as ApiFailure
}

describe("nextKyc", () => {
  it("sets VERIFIED with its level and clears the rejection fields", () => {
    const rejected: KycState = { ...account, kycStatus: "REJECTED", kycRejectionCode: "C", kycRejectionReason: "R", kycReviewedAt: NOW }
    expect(nextKyc(rejected, { kycStatus: "VERIFIED", kycLevel: "FULL", reference: "ref" }, "partner", NOW + 5)).toEqual({
      kycStatus: "VERIFIED",
      kycLevel: "FULL",
      kycRejectionCode: null,
      kycRejectionReason: null,
      kycReviewedAt: null,
      kycReference: "ref"
    })
  })

  it("sets REJECTED with its code, reason and review time, level NONE", () => {
    expect(nextKyc(account, { kycStatus: "REJECTED", rejectionCode: "C", rejectionReason: "R" }, "partner", NOW + 5)).toEqual({
      kycStatus: "REJECTED",
      kycLevel: "NONE",
      kycRejectionCode: "C",
      kycRejectionReason: "R",
      kycReviewedAt: NOW + 5,
      kycReference: null
    })
  })

  it("answers undefined for the state it already has", () => {
    expect(nextKyc(account, { kycStatus: "PENDING", kycLevel: "NONE" }, "partner", NOW)).toEqual({ ...pick(account), kycStatus: "PENDING" })
    const pending = { ...account, kycStatus: "PENDING" as const }
    expect(nextKyc(pending, { kycStatus: "PENDING" }, "partner", NOW)).toBeUndefined()
    expect(nextKyc(pending, { kycStatus: "PENDING", reference: "x" }, "partner", NOW)).toMatchObject({ kycReference: "x" })
    const rejected = { ...account, kycStatus: "REJECTED" as const, kycRejectionCode: "C", kycRejectionReason: "R", kycReviewedAt: NOW }
    expect(nextKyc(rejected, { kycStatus: "REJECTED", rejectionCode: "C", rejectionReason: "R" }, "partner", NOW + 9)).toBeUndefined()
    expect(nextKyc(rejected, { kycStatus: "REJECTED", rejectionCode: "C", rejectionReason: "R2" }, "partner", NOW + 9)).toMatchObject({
      kycReviewedAt: NOW + 9
    })
  })

  it("NONE is for compliance only", () => {
    const verified = { ...account, kycStatus: "VERIFIED" as const, kycLevel: "BASIC" as const }
    expect(failure(nextKyc(verified, { kycStatus: "NONE" }, "partner", NOW))).toMatchObject({
      code: "VALIDATION_ERROR",
      message: "kycStatus NONE cannot be asserted",
      extras: { param: "kycStatus" }
    })
    expect(nextKyc(verified, { kycStatus: "NONE" }, "compliance", NOW)).toMatchObject({ kycStatus: "NONE", kycLevel: "NONE" })
  })

  it.each([
    [{ kycStatus: "VERIFIED" }, "MISSING_PARAM", "kycLevel", "kycLevel (BASIC or FULL) is required with VERIFIED"],
    [{ kycStatus: "VERIFIED", kycLevel: "NONE" }, "VALIDATION_ERROR", "kycLevel", "VERIFIED needs kycLevel BASIC or FULL"],
    [{ kycStatus: "PENDING", kycLevel: "FULL" }, "VALIDATION_ERROR", "kycLevel", "kycLevel must be NONE or absent with PENDING"],
    [
      { kycStatus: "REJECTED", kycLevel: "BASIC", rejectionCode: "C", rejectionReason: "R" },
      "VALIDATION_ERROR",
      "kycLevel",
      "kycLevel must be NONE or absent with REJECTED"
    ],
    [{ kycStatus: "REJECTED", rejectionReason: "R" }, "MISSING_PARAM", "rejectionCode", "rejectionCode is required with REJECTED"],
    [{ kycStatus: "REJECTED", rejectionCode: "C" }, "MISSING_PARAM", "rejectionReason", "rejectionReason is required with REJECTED"],
    [{ kycStatus: "VERIFIED", kycLevel: "BASIC", rejectionCode: "C" }, "VALIDATION_ERROR", "rejectionCode", "rejectionCode is only taken with REJECTED"],
    [{ kycStatus: "PENDING", rejectionReason: "R" }, "VALIDATION_ERROR", "rejectionReason", "rejectionReason is only taken with REJECTED"]
  ] as const)("refuses %j", (assertion, code, param, message) => {
    expect(failure(nextKyc(account, assertion, "compliance", NOW))).toMatchObject({ code, message, extras: { param } })
  })

  it("sameKyc compares everything but the review time", () => {
    const a = pick(account)
    expect(sameKyc(a, { ...a, kycReviewedAt: 5 })).toBe(true)
    for (const change of [
      { kycStatus: "PENDING" },
      { kycLevel: "BASIC" },
      { kycRejectionCode: "C" },
      { kycRejectionReason: "R" },
      { kycReference: "x" }
    ] as const) {
      expect(sameKyc(a, { ...a, ...change })).toBe(false)
    }
  })
})

const pick = (s: SubAccountRecord): KycState => ({
  kycStatus: s.kycStatus,
  kycLevel: s.kycLevel,
  kycRejectionCode: s.kycRejectionCode,
  kycRejectionReason: s.kycRejectionReason,
  kycReviewedAt: s.kycReviewedAt,
  kycReference: s.kycReference
})

describe("status rules", () => {
  const frozen = { ...account, status: "frozen" as const, frozenBy: "partner" as const }
  const closed = { ...account, status: "closed" as const }

  it("closed accounts refuse changes; frozen and closed ones refuse money and trading; trading needs VERIFIED", () => {
    expect(refuseClosed(account, "x")).toBeUndefined()
    expect(refuseClosed(frozen, "x")).toBeUndefined()
    expect(failure(refuseClosed(closed, "freezing"))).toMatchObject({ code: "FORBIDDEN", message: "sub-account usr_1 is closed: freezing is not possible" })
    expect(refuseInactive(account, "a deposit")).toBeUndefined()
    expect(failure(refuseInactive(frozen, "a deposit"))).toMatchObject({ code: "FORBIDDEN", message: "sub-account usr_1 is frozen: a deposit is not allowed" })
    expect(failure(refuseInactive(closed, "a deposit")).message).toBe("sub-account usr_1 is closed: a deposit is not allowed")
    expect(failure(refuseTrading(account))).toMatchObject({ code: "KYC_REQUIRED", message: "sub-account usr_1 has kycStatus NONE: trading needs VERIFIED" })
    expect(failure(refuseTrading({ ...frozen, kycStatus: "VERIFIED" })).code).toBe("FORBIDDEN")
    expect(refuseTrading({ ...account, kycStatus: "VERIFIED", kycLevel: "BASIC" })).toBeUndefined()
  })

  it("freezes and unfreezes; the same state again is undefined; a compliance freeze resists the partner", () => {
    expect(nextFreeze(account, true, "partner")).toEqual({ ...account, status: "frozen", frozenBy: "partner" })
    expect(nextFreeze(account, true, "compliance")).toEqual({ ...account, status: "frozen", frozenBy: "compliance" })
    expect(nextFreeze(frozen, true, "compliance")).toBeUndefined()
    expect(nextFreeze(account, false, "partner")).toBeUndefined()
    expect(nextFreeze(frozen, false, "partner")).toEqual({ ...account, status: "active", frozenBy: null })
    const byCompliance = { ...account, status: "frozen" as const, frozenBy: "compliance" as const }
    expect(failure(nextFreeze(byCompliance, false, "partner"))).toMatchObject({
      code: "FORBIDDEN",
      message: "sub-account usr_1 was frozen by service compliance; only compliance can unfreeze it"
    })
    expect(nextFreeze(byCompliance, false, "compliance")).toEqual({ ...account, status: "active", frozenBy: null })
    expect(failure(nextFreeze(closed, true, "compliance")).message).toBe("sub-account usr_1 is closed: freezing is not possible")
    expect(failure(nextFreeze(closed, false, "partner")).message).toBe("sub-account usr_1 is closed: unfreezing is not possible")
  })

  it("lists what blocks a closure", () => {
    expect(closureBlockers(0, 0, 0, 0)).toEqual([])
    expect(closureBlockers(-1, 0, 0, 0)).toEqual([{ reason: "NON_ZERO_BALANCE", cents: -1, count: null }])
    expect(closureBlockers(5, 7, 1, 2)).toEqual([
      { reason: "NON_ZERO_BALANCE", cents: 5, count: null },
      { reason: "OPEN_ORDERS", cents: 7, count: 1 },
      { reason: "OPEN_POSITIONS", cents: null, count: 2 }
    ])
    expect(closureBlockers(0, 0, 1, 0)).toEqual([{ reason: "OPEN_ORDERS", cents: 0, count: 1 }])
    expect(closureBlockers(0, 3, 0, 0)).toEqual([{ reason: "OPEN_ORDERS", cents: 3, count: 0 }])
    expect(blockerToWire({ reason: "OPEN_POSITIONS", cents: null, count: 2 })).toEqual({
      currency: "USD",
      reason: "OPEN_POSITIONS",
      amount: null,
      count: 2,
      message: "the account holds positions: sell them first"
    })
    expect(blockerToWire({ reason: "OPEN_ORDERS", cents: 1234, count: 1 })).toMatchObject({
      amount: 12.34,
      message: "orders are still open: wait for them to settle or cancel them"
    })
  })

  it("projects the contract's SubAccount", () => {
    expect(subAccountToWire({ ...account, kycStatus: "REJECTED", kycReviewedAt: NOW }, 1050)).toEqual({
      subAccountId: "usr_1",
      userId: "usr_1",
      externalId: "ext-1",
      displayName: "A",
      email: null,
      kycStatus: "REJECTED",
      kycLevel: "NONE",
      kycRejectionCode: null,
      kycRejectionReason: null,
      kycReviewedAt: "2026-11-23T08:00:00.000Z",
      status: "active",
      walletBalance: 10.5,
      wallet: { currency: "USD", balance: 10.5 }
    })
  })
})
