/**
 * `sokoni conform` without a control API against a target whose clock is two days ahead of conform's (issue 23): the
 * skew is measured from the target's answers and reported once at the top, and the quote-TTL check waits on the
 * target's own clock (about the quote's 60 s, announced with what it waits for), not the two days between the clocks.
 * Real time is the engine's manual clock here: conform's `sleep` advances it, so nothing waits on the wall clock.
 */
import { describe, expect, it } from "vitest"
import { runConform } from "../../engine/conform/conform.ts"
import { describeSkew } from "../../engine/conform/coverage.ts"
import type { PlantedDefect } from "../../engine/sim/defects.ts"
import { ADMIN, MONDAY_OPEN, startTarget } from "./conform-kit.ts"

const TWO_DAYS_MS = 2 * 86_400_000

/** A conform run with keys only; conform's clock is two days behind the target's, and its sleeps move both. */
const skewedRun = async (plantDefects: ReadonlyArray<PlantedDefect> = []) => {
  const target = await startTarget({ start: MONDAY_OPEN + TWO_DAYS_MS, plantDefects })
  try {
    const made = await fetch(`${target.base}/_sim/partners`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
      body: JSON.stringify({ businessName: "Skew Co", email: "skew@conform.test", tier: "enterprise" })
    })
    const keys = (await made.json()) as { sandboxKey: string; liveKey: string }
    let harness = MONDAY_OPEN
    const waits: Array<{ what: string; ms: number }> = []
    const report = await runConform({
      base: target.base,
      sandboxKey: keys.sandboxKey,
      liveKey: keys.liveKey,
      seed: 9,
      only: ["quote-ttl"],
      now: () => harness,
      sleep: async (ms) => {
        harness += ms
        await fetch(`${target.base}/_sim/clock/advance`, {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
          body: JSON.stringify({ seconds: Math.ceil(ms / 1000) })
        })
      },
      onWait: (what, ms) => waits.push({ what, ms })
    })
    return { report, waits }
  } finally {
    await target.stop()
  }
}

describe("conform against a target whose clock is two days ahead (no control API)", () => {
  it("reports the skew once at the top and checks the quote TTL on the target's clock within the quote's minute", async () => {
    const { report, waits } = await skewedRun()
    expect(report.notes).toEqual([
      "clock skew: the target's clock is 2 d 0 h 0 min 0 s ahead of conform's (±0 ms, from the `timestamp` of GET /api/v1/status); instants in this report are on the target's clock",
      "coverage in staging mode (keys only, no control API): 1 of 1 checks ran"
    ])
    expect(report.checks.map((c) => [c.name.split(":")[0], c.status])).toEqual([["quote-ttl", "passed"]])
    expect(waits).toHaveLength(1)
    expect(waits[0]?.what).toMatch(/^quote qt_\w+ to pass its expiresAt \S+ on the target's clock$/)
    expect(waits[0]?.ms).toBeGreaterThan(60_000)
    expect(waits[0]?.ms).toBeLessThanOrEqual(61_000)
  })

  it("still catches a target that forgets the quote's expiry", async () => {
    const { report } = await skewedRun(["quote-ttl"])
    expect(report.checks.map((c) => [c.name.split(":")[0], c.status])).toEqual([["quote-ttl", "failed"]])
  })

  it("describes a skew in words, ahead or behind", () => {
    expect(describeSkew(TWO_DAYS_MS + 3_000)).toBe("2 d 0 h 0 min 3 s ahead of")
    expect(describeSkew(-90_000)).toBe("1 min 30 s behind")
    expect(describeSkew(400)).toBe("level with (400 ms)")
  })
})
