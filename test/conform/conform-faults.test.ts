/**
 * `sokoni conform --faults FILE` against our engine: the plan is put on the target before the checks, a check that
 * meets an injected fault judges that answer as any other (an injected 503 is a declared answer), the report's notes
 * say what each rule injected and how conform's client answered, and the target is left without a plan.
 */
import { describe, expect, it } from "vitest"
import { contractChecks } from "../../engine/conform/contract-checks.ts"
import { ADMIN, conformAgainst, startTarget } from "./conform-kit.ts"

describe("conform --faults", () => {
  it("runs the checks under the plan, reports what was injected, and clears it", async () => {
    const target = await startTarget()
    try {
      const check = contractChecks().find((c) => c.id === "answers-within-contract" && c.operation === "listStocks")
      if (check === undefined) throw new Error("no answers-within-contract check of listStocks")
      const report = await conformAgainst(target.base, {
        only: [check.name],
        faults: { rules: [{ fault: "503", operations: ["listStocks"], every: 1 }] }
      })
      const ran = report.checks.find((c) => c.name === check.name)
      // The injected 503 is an answer the contract declares (the envelope, Retry-After): the check judges it so.
      expect(ran?.status).toBe("passed")
      expect(report.notes).toContain("fault plan rule 0 (503): matched 1, injected 1")
      expect(report.notes).toContain("faults met: 1; retried 0, 0 with the same Idempotency-Key, 0 before Retry-After")
      const after = await fetch(`${target.base}/_sim/faults`, { headers: { authorization: `Bearer ${ADMIN}` } })
      expect((await after.json()).rules).toEqual([])
    } finally {
      await target.stop({ idleLingerMs: 0 })
    }
  })
})
