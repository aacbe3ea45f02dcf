/**
 * A symbol change (domain/corporate-actions/decide-symbol-change.ts, D-340..D-342): the new ticker's form and suffix;
 * one change pending per listing; a symbol any listing has, had or is about to take is never reused; effective today
 * (applied now) or on a later date (a job at 00:00 UTC of that date, which applies it unless the listing moved on).
 */
import { describe, expect, it } from "vitest"
import { decideSymbolChange, dueSymbolChange, newSymbolFor, SYMBOL_CHANGE_JOB } from "../../engine/domain/corporate-actions/decide-symbol-change.ts"
import type { ActionRecord } from "../../engine/domain/reference/corporate-actions.ts"
import { DAY_MS, isoDate } from "../../engine/domain/reference/seeded.ts"
import { PARTITIONS, raise } from "./corporate-fixtures.ts"
import { accepted, codeOf, OPEN_AT, SCOM } from "./decider-fixtures.ts"

const state = (over: { pending?: ReadonlyArray<ActionRecord>; symbolUsed?: boolean } = {}) => ({
  instrument: SCOM,
  listingStatus: "ACTIVE" as const,
  pending: over.pending ?? [],
  symbolUsed: over.symbolUsed ?? false,
  holderCount: 2,
  partitions: PARTITIONS
})
const change = (newSymbol: string, effectiveDate?: string, over = {}) =>
  decideSymbolChange(state(over), { input: raise("SYMBOL_CHANGE", { newSymbol, effectiveDate }), newSymbol }, OPEN_AT, { actionId: "ca_sc" })

describe("the new symbol", () => {
  it("is upper-cased, carries the exchange's suffix, and differs from the symbol the listing has", () => {
    expect(newSymbolFor("safcom.ke", SCOM)).toBe("SAFCOM.KE")
    expect(codeOf(newSymbolFor("SAFCOM.NG", SCOM))).toBe("VALIDATION_ERROR")
    expect(codeOf(newSymbolFor("SAF.COM.KE", SCOM))).toBe("VALIDATION_ERROR")
    expect(codeOf(newSymbolFor(undefined, SCOM))).toBe("VALIDATION_ERROR")
    expect(codeOf(newSymbolFor(SCOM.symbol.toLowerCase(), SCOM))).toBe("VALIDATION_ERROR")
  })

  it("is refused (CONFLICT) when a listing has or had it, or a pending change takes it, or the listing has a change pending", () => {
    const pending = accepted(change("SAFCOM.KE", isoDate(OPEN_AT + DAY_MS))).action
    if (pending === undefined) throw new Error("no action")
    expect(codeOf(change("SAFCOM.KE", undefined, { symbolUsed: true }))).toBe("CONFLICT")
    expect(codeOf(change("SAFCOM.KE", undefined, { pending: [{ ...pending, details: { oldSymbol: "KCB.KE", newSymbol: "SAFCOM.KE" } }] }))).toBe("CONFLICT")
    expect(codeOf(change("OTHER.KE", undefined, { pending: [pending] }))).toBe("CONFLICT")
  })
})

describe("when it applies", () => {
  it("today: completed now, the listing renamed in the same plan, no job", () => {
    const plan = accepted(change("SAFCOM.KE"))
    expect(plan.rename).toEqual({ newSymbol: "SAFCOM.KE" })
    expect(plan.jobs).toEqual([])
    expect(plan.action).toMatchObject({ completedAt: OPEN_AT, details: { oldSymbol: SCOM.symbol, newSymbol: "SAFCOM.KE" } })
    expect(plan.outcome.accountsAffected).toBe(2)
    expect(plan.events.filter((e) => e.name === "corporateaction.symbol_changed")).toHaveLength(PARTITIONS.length)
  })

  it("a later date: announced now, a job at 00:00 UTC of that date, nothing renamed yet; a past date is refused", () => {
    const date = isoDate(OPEN_AT + 3 * DAY_MS)
    const plan = accepted(change("SAFCOM.KE", date))
    expect(plan.rename).toBeUndefined()
    expect(plan.jobs).toEqual([{ kind: SYMBOL_CHANGE_JOB, dueAt: Date.parse(`${date}T00:00:00Z`), payload: { actionId: "ca_sc" } }])
    expect(plan.action?.completedAt).toBeNull()
    expect(codeOf(change("SAFCOM.KE", isoDate(OPEN_AT - DAY_MS)))).toBe("VALIDATION_ERROR")
  })

  it("the job applies the change unless it was applied already or the listing's symbol changed since", () => {
    const action = accepted(change("SAFCOM.KE", isoDate(OPEN_AT + DAY_MS))).action
    if (action === undefined) throw new Error("no action")
    expect(dueSymbolChange(action, SCOM.symbol)).toBe("SAFCOM.KE")
    expect(dueSymbolChange(action, "OTHER.KE")).toBeUndefined()
    expect(dueSymbolChange({ ...action, completedAt: OPEN_AT }, SCOM.symbol)).toBeUndefined()
  })
})
