/**
 * Price alerts' rules (domain/alerts/decide-alert.ts): only a full key creates or deletes, the threshold and the
 * exchange are checked, at most 200 are active, a new alert is ARMED with its first look at the next refresh, and an
 * evaluation fires `price.alert` once for a one-shot alert (then stops looking) and re-arms a repeating one.
 */
import { describe, expect, it } from "vitest"
import { alertThreshold, decideCreateAlert, decideEvaluation, fullKeyOnly, refuseMoreAlerts } from "../../engine/domain/alerts/decide-alert.ts"
import { fail } from "../../engine/domain/errors.ts"
import { unlistedSymbol } from "../../engine/domain/alerts/decide-alert.ts"
import { codeOf, OPEN_AT, PARTITION, SCOM } from "./decider-fixtures.ts"

const input = (over: { repeat?: boolean; threshold?: number; exchange?: string } = {}) => ({
  symbol: "SCOM",
  exchange: over.exchange ?? "NSE",
  condition: "above" as const,
  threshold: over.threshold ?? 20,
  repeat: over.repeat
})

const created = (repeat: boolean) =>
  decideCreateAlert(
    { partition: PARTITION, input: input({ repeat }), instrument: SCOM, threshold: 200_000, currency: "KES" },
    180_000,
    OPEN_AT,
    OPEN_AT + 900_000,
    {
      alertId: "alt_1"
    }
  )

describe("creating an alert", () => {
  it("needs a full key; an unknown symbol is a 400; the exchange must be the listing's; the threshold positive", () => {
    expect(codeOf(fullKeyOnly("restricted", "creating a price alert"))).toBe("FORBIDDEN")
    expect(fullKeyOnly("full", "creating a price alert")).toBeUndefined()
    expect(unlistedSymbol(fail("NOT_FOUND", "x"), input()).code).toBe("VALIDATION_ERROR")
    expect(codeOf(alertThreshold(input({ exchange: "JSE" }), SCOM))).toBe("VALIDATION_ERROR")
    expect(codeOf(alertThreshold(input({ threshold: 0.00001 }), SCOM))).toBe("VALIDATION_ERROR")
    expect(alertThreshold(input({ threshold: 20.5 }), SCOM)).toBe(205_000)
  })

  it("allows 200 active alerts, not 201", () => {
    expect(refuseMoreAlerts(199)).toBeUndefined()
    expect(codeOf(refuseMoreAlerts(200))).toBe("VALIDATION_ERROR")
  })

  it("is ARMED, remembers the price seen, and first looks at the next refresh", () => {
    const plan = created(false)
    expect(plan.alert).toMatchObject({ state: "ARMED", lastPrice: 180_000, triggerCount: 0, deleted: false })
    expect(plan.job).toEqual({ dueAt: OPEN_AT + 900_000, alertId: "alt_1" })
    expect(plan.answer).toMatchObject({ alertId: "alt_1", threshold: 20, lastPriceLocal: 18 })
  })
})

describe("evaluating an alert", () => {
  const later = OPEN_AT + 900_000
  it("without a price captured in session, only looks again", () => {
    expect(decideEvaluation(created(false).alert, undefined, later, later + 900_000)).toEqual({ job: { dueAt: later + 900_000, alertId: "alt_1" } })
  })

  it("a one-shot alert fires once, DISARMED, and stops looking", () => {
    const plan = decideEvaluation(created(false).alert, { price: 200_000, asOf: later - 900_000 }, later, later + 900_000)
    expect(plan.updated).toMatchObject({ state: "DISARMED", triggerCount: 1, lastTriggeredAt: later })
    expect(plan.event).toMatchObject({ name: "price.alert", data: { state: "DISARMED", price: 20, triggerCount: 1 } })
    expect(plan.job).toBeUndefined()
  })

  it("a repeating alert fires, stays TRIGGERED without firing again, and re-arms when the price falls back", () => {
    const fired = decideEvaluation(created(true).alert, { price: 200_000, asOf: later }, later, later + 1)
    expect(fired.updated?.state).toBe("TRIGGERED")
    const still = decideEvaluation(fired.updated ?? created(true).alert, { price: 210_000, asOf: later }, later, later + 1)
    expect(still.event).toBeUndefined()
    const rearmed = decideEvaluation(still.updated ?? created(true).alert, { price: 190_000, asOf: later }, later, later + 1)
    expect(rearmed.updated?.state).toBe("ARMED")
    expect(rearmed.job).toBeDefined()
  })
})
