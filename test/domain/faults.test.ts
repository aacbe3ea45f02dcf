/**
 * The pure rules of fault plans (engine/domain/faults.ts): when a rule fires (every Nth; a probability of 0 never, of
 * 1 always, whatever the draw), when it heals, and how a plan is checked (a YAML `fault: 503` is read as "503"; a
 * field of another fault, both `every` and `probability`, unknown operations and fields are refused, naming where).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type FaultRule, fires, healsAt, isPlanProblem, parsePlan } from "../../engine/domain/faults.ts"

const KNOWN = new Set(["placeTrade", "getQuote"])

describe("fires", () => {
  it("a probability of 0 never fires and of 1 always does, whatever the draw and the count", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 0, max: 2 ** 32 - 1 }), (count, draw) => {
        expect(fires({ fault: "503", probability: 0 }, count, draw)).toBe(false)
        expect(fires({ fault: "503", probability: 1 }, count, draw)).toBe(true)
      })
    )
  })

  it("every N fires on the Nth, 2Nth, ... and on nothing between", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 500 }), (every, upTo) => {
        const rule: FaultRule = { fault: "500", every }
        const fired = Array.from({ length: upTo }, (_, i) => i + 1).filter((count) => fires(rule, count, 0))
        expect(fired).toEqual(Array.from({ length: Math.floor(upTo / every) }, (_, i) => (i + 1) * every))
      })
    )
  })

  it("heals healAfterSeconds after the plan was set, or never", () => {
    expect(healsAt({ fault: "cut", afterMessages: 5, healAfterSeconds: 60 }, 1_000)).toBe(61_000)
    expect(healsAt({ fault: "cut", afterMessages: 5 }, 1_000)).toBeUndefined()
  })
})

describe("parsePlan", () => {
  it("reads a YAML plan's numeric fault as its string", () => {
    expect(parsePlan({ seed: 7, rules: [{ fault: 503, operations: ["placeTrade"], every: 3 }] }, KNOWN)).toEqual({
      seed: 7,
      rules: [{ fault: "503", operations: ["placeTrade"], every: 3 }]
    })
  })

  it("refuses what a rule cannot mean, naming where", () => {
    const problemAt = (raw: unknown) => {
      const parsed = parsePlan(raw, KNOWN)
      return isPlanProblem(parsed) ? parsed.param : "accepted"
    }
    expect(problemAt({ rules: [{ fault: "drop", operations: ["placeTrade"] }] })).toBe("rules[0].operations")
    expect(problemAt({ rules: [{ fault: "503", every: 0 }] })).toBe("rules[0].every")
    expect(problemAt({ rules: [{ fault: "503", probability: 1.5 }] })).toBe("rules[0].probability")
    expect(problemAt({ rules: [{ fault: "cut" }] })).toBe("rules[0].afterMessages")
    expect(problemAt({ rules: [{ fault: "teapot" }] })).toBe("rules[0].fault")
    expect(problemAt({ rules: [{ fault: "500", colour: "red" }] })).toBe("rules[0].colour")
    expect(problemAt({ rules: [], extra: 1 })).toBe("extra")
    expect(problemAt({ seed: -1, rules: [] })).toBe("seed")
    expect(problemAt({ rules: [{ fault: "503", operations: ["getQuote"], every: 2, retryAfterSeconds: 3, healAfterSeconds: 0 }] })).toBe("accepted")
  })
})
