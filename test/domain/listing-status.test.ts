/**
 * The listing's status set by the operator (domain/corporate-actions/decide-listing.ts, D-302, D-304): a delisted
 * listing takes no further action; a suspension needs a listing not suspended and a resumption time after now; a
 * resumption completes the suspension in force under its own actionId; a delisting is final and dated today at the
 * exchange. Each is announced to every active partition.
 */
import { describe, expect, it } from "vitest"
import { acceptDelisting, acceptSuspension, decideDelisting, decideResumption, decideSuspension } from "../../engine/domain/corporate-actions/decide-listing.ts"
import { type ListingStatus, refuseDelisted } from "../../engine/domain/corporate-actions/raise.ts"
import { PARTITIONS, raise } from "./corporate-fixtures.ts"
import { accepted, codeOf, OPEN_AT, SCOM } from "./decider-fixtures.ts"

const listing = (listingStatus: ListingStatus) => ({ instrument: SCOM, listingStatus, partitions: PARTITIONS })
const iso = (ms: number) => new Date(ms).toISOString()

describe("a delisted listing", () => {
  it("refuses every further action (CONFLICT); any other status takes them", () => {
    expect(codeOf(refuseDelisted(SCOM, "DELISTED"))).toBe("CONFLICT")
    expect(refuseDelisted(SCOM, "SUSPENDED")).toBeUndefined()
  })
})

describe("suspension", () => {
  it("refuses a listing already suspended, and a resumption time not after now", () => {
    expect(codeOf(acceptSuspension(listing("SUSPENDED"), raise("SUSPENSION"), OPEN_AT))).toBe("CONFLICT")
    expect(codeOf(acceptSuspension(listing("ACTIVE"), raise("SUSPENSION", { expectedResumeAt: iso(OPEN_AT) }), OPEN_AT))).toBe("VALIDATION_ERROR")
    expect(codeOf(acceptSuspension(listing("ACTIVE"), raise("SUSPENSION", { expectedResumeAt: "soon" }), OPEN_AT))).toBe("VALIDATION_ERROR")
  })

  it("suspends the listing under a new action, in force (not completed), with the orders it rejected", () => {
    const input = raise("SUSPENSION", { expectedResumeAt: iso(OPEN_AT + 3_600_000) })
    const ok = accepted(acceptSuspension(listing("ACTIVE"), input, OPEN_AT))
    expect(ok.rejectReason).toBe(`trading in ${SCOM.symbol} is suspended: Regulatory review`)
    const plan = decideSuspension({ ...listing("ACTIVE"), ordersRejected: ["ord_1"] }, { input, accepted: ok }, OPEN_AT, { actionId: "ca_s" })
    expect(plan.listing).toEqual({ status: "SUSPENDED", actionId: "ca_s" })
    expect(plan.action).toMatchObject({
      actionType: "SUSPENSION",
      completedAt: null,
      details: { suspendedFrom: iso(OPEN_AT), expectedResumeAt: iso(OPEN_AT + 3_600_000) }
    })
    expect(plan.outcome).toMatchObject({ listingStatus: "SUSPENDED", ordersRejected: ["ord_1"] })
    expect(plan.events.map((e) => e.name)).toEqual(PARTITIONS.flatMap(() => ["corporateaction.suspension", "corporateaction.declared"]))
  })
})

describe("resumption", () => {
  const suspended = () => {
    const input = raise("SUSPENSION", { reason: "Audit" })
    const ok = accepted(acceptSuspension(listing("ACTIVE"), input, OPEN_AT))
    const action = decideSuspension({ ...listing("ACTIVE"), ordersRejected: [] }, { input, accepted: ok }, OPEN_AT, { actionId: "ca_s" }).action
    if (action === undefined) throw new Error("no suspension")
    return action
  }

  it("refuses a listing not suspended, or one with no suspension in force (CONFLICT)", () => {
    expect(codeOf(decideResumption({ ...listing("ACTIVE"), suspension: suspended() }, raise("RESUMPTION"), OPEN_AT))).toBe("CONFLICT")
    expect(codeOf(decideResumption({ ...listing("SUSPENDED"), suspension: undefined }, raise("RESUMPTION"), OPEN_AT))).toBe("CONFLICT")
  })

  it("completes the suspension in force under its actionId, the listing ACTIVE again, the resumption time now", () => {
    const later = OPEN_AT + 7_200_000
    const plan = accepted(decideResumption({ ...listing("SUSPENDED"), suspension: suspended() }, raise("RESUMPTION"), later))
    expect(plan.listing).toEqual({ status: "ACTIVE", actionId: "ca_s" })
    expect(plan.action).toMatchObject({ actionId: "ca_s", completedAt: later, details: { reason: "Audit", expectedResumeAt: iso(later) } })
    expect(plan.events[0]?.data).toMatchObject({ actionId: "ca_s", reason: "Audit", suspendedFrom: iso(OPEN_AT), expectedResumeAt: iso(later) })
    expect(plan.outcome.listingStatus).toBe("ACTIVE")
  })
})

describe("delisting", () => {
  it("delists for good, its last trading date today at the exchange, counting the holders who keep their units", () => {
    const input = raise("DELISTING")
    expect(acceptDelisting(SCOM, input).rejectReason).toBe(`${SCOM.symbol} is delisted: Voluntary delisting`)
    const plan = decideDelisting({ ...listing("ACTIVE"), ordersRejected: ["ord_2"], holderCount: 3 }, input, OPEN_AT, { actionId: "ca_d" })
    expect(plan.listing).toEqual({ status: "DELISTED", actionId: "ca_d" })
    expect(plan.action).toMatchObject({ completedAt: OPEN_AT, details: { reason: "Voluntary delisting", lastTradingDate: iso(OPEN_AT).slice(0, 10) } })
    expect(plan.outcome).toMatchObject({ listingStatus: "DELISTED", accountsAffected: 3, ordersRejected: ["ord_2"] })
    expect(plan.holdings).toEqual([])
  })
})
