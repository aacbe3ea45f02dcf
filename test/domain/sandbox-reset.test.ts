/**
 * The sandbox reset (domain/sandbox/decide-reset.ts): production is 403 FORBIDDEN; a reset wipes the caller's
 * partition and seeds its master wallet with the sandbox seed, which the answer's message states; the answer carries
 * the balance the ledger posted, in USD, and when.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { MASTER } from "../../engine/domain/ledger.ts"
import { SANDBOX_SEED_CENTS } from "../../engine/domain/partners/decide-partner.ts"
import { decideReset, refuseReset, resetAnswer } from "../../engine/domain/sandbox/decide-reset.ts"
import { codeOf } from "./decider-fixtures.ts"

describe("resetting the sandbox", () => {
  it("refuses production (403) and accepts the sandbox", () => {
    expect(codeOf(refuseReset("production"))).toBe("FORBIDDEN")
    expect(refuseReset("sandbox")).toBeUndefined()
  })

  it("wipes the caller's partition and seeds its master wallet with the sandbox seed", () => {
    expect(decideReset("ptn_1:sandbox")).toEqual({ wipe: "ptn_1:sandbox", seed: { account: MASTER, cents: SANDBOX_SEED_CENTS } })
  })

  it("answers the posted balance in USD and the time, and says how much the seed is", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), fc.integer({ min: 0, max: 4_000_000_000_000 }), (cents, now) => {
        const answer = resetAnswer(cents, now)
        expect(Math.round(answer.walletBalance * 100)).toBe(cents)
        expect(answer.currency).toBe("USD")
        expect(Date.parse(answer.resetAt)).toBe(now)
      })
    )
    expect(resetAnswer(SANDBOX_SEED_CENTS, 0).message).toContain(`holds ${SANDBOX_SEED_CENTS / 100} USD`)
  })
})
