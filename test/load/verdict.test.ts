/**
 * What a tier run proves (engine/load/run.ts `outcomeOf`, `describeVerdict`): a failure only on evidence, and a run
 * whose bursts never reached the limit called inconclusive with what to do, not a failure of the target's limiter; the
 * profile's thresholds (tier-profile.ts `failedThresholds`) and its HTML report.
 */
import { describe, expect, it } from "vitest"
import { Counters } from "../../engine/load/arrival.ts"
import { describeVerdict, outcomeOf, type Verdict } from "../../engine/load/run.ts"
import { failedThresholds, verdictHtml } from "../../engine/load/tier-profile.ts"

const verdict = (phases: ReadonlyArray<readonly [admitted: number, refused: number]>, rest: Partial<Verdict> = {}): Verdict => {
  const limit = 500
  const counted = phases.map(([admitted, refused], i) => ({ phase: i === 0 ? "one" : "two", admitted, refused, dropped: 0 }))
  const ok = counted.every((p) => p.admitted === limit && p.refused > 0)
  return {
    ok,
    limit,
    windowSeconds: 5,
    instances: 1,
    credentials: 1,
    phases: counted,
    unexpected: 0,
    checksPassed: 10,
    checksFailed: 0,
    failedChecks: [],
    thresholdsFailed: ok ? [] : ["admitted{phase:one}"],
    saturated: counted.every((p) => p.refused > 0),
    ...rest
  }
}

describe("a tier run's outcome", () => {
  it("passes when every burst admitted exactly the limit and met a 429", () => {
    expect(
      outcomeOf(
        verdict([
          [500, 750],
          [500, 750]
        ])
      )
    ).toBe("PASS")
  })

  it("is inconclusive when a burst met no 429 and stayed under the limit: the load fell short", () => {
    const slow = verdict([
      [176, 0],
      [436, 0]
    ])
    expect(outcomeOf(slow)).toBe("INCONCLUSIVE")
    const lines = describeVerdict("growth", slow)
    expect(lines[0]).toContain("176 admitted of limit 500 (limit not reached), 0 refused")
    expect(lines.at(-1)).toMatch(/^INCONCLUSIVE growth: .*rerun with a longer --window-seconds$/)
  })

  it("fails on more admitted than the limit, even without a 429", () => {
    expect(
      outcomeOf(
        verdict([
          [501, 0],
          [400, 0]
        ])
      )
    ).toBe("FAIL")
  })

  it("fails when a burst met a 429 with the wrong count admitted", () => {
    const short = verdict([
      [499, 700],
      [500, 700]
    ])
    expect(outcomeOf(short)).toBe("FAIL")
    expect(describeVerdict("growth", short)[0]).toContain("(WRONG)")
  })

  it("fails on a wrong status or a failed check even when the load fell short", () => {
    expect(
      outcomeOf(
        verdict(
          [
            [100, 0],
            [100, 0]
          ],
          { unexpected: 1 }
        )
      )
    ).toBe("FAIL")
    expect(
      outcomeOf(
        verdict(
          [
            [100, 0],
            [100, 0]
          ],
          { checksFailed: 2 }
        )
      )
    ).toBe("FAIL")
  })

  it("names an exact burst so, and calls one that admitted exactly the limit without a 429 inconclusive", () => {
    const exact = verdict([
      [500, 750],
      [500, 750]
    ])
    expect(describeVerdict("growth", exact)[0]).toContain("500 admitted of limit 500 (exact), 750 refused")
    // It never went over the limit, so whether the limiter would have refused is not known.
    expect(
      outcomeOf(
        verdict([
          [500, 0],
          [500, 750]
        ])
      )
    ).toBe("INCONCLUSIVE")
  })
})

describe("the tier profile's thresholds and report", () => {
  const counted = (entries: Record<string, number>) => {
    const counters = new Counters()
    for (const [name, n] of Object.entries(entries)) counters.add(name, n)
    return counters
  }
  const exact = { "admitted{phase:one}": 20, "admitted{phase:two}": 20, "refused{phase:one}": 30, "refused{phase:two}": 30 }

  it("holds when each burst admitted exactly the limit, met a 429, and nothing else went wrong", () => {
    expect(failedThresholds(counted(exact), 20)).toEqual([])
  })

  it("names each threshold that does not hold, as k6 named them", () => {
    expect(failedThresholds(counted({ ...exact, "admitted{phase:two}": 21 }), 20)).toEqual(["admitted{phase:two}"])
    expect(failedThresholds(counted({ ...exact, "refused{phase:one}": 0 }), 20)).toEqual(["refused{phase:one}"])
    expect(failedThresholds(counted({ ...exact, unexpected: 1, "checks.fails": 1 }), 20)).toEqual(["unexpected", "checks"])
    expect(failedThresholds(counted({}), 20)).toEqual(["admitted{phase:one}", "admitted{phase:two}", "refused{phase:one}", "refused{phase:two}"])
  })

  it("reports each burst in a word, the failed checks by name, and escapes what it quotes", () => {
    const html = verdictHtml(
      verdict(
        [
          [500, 750],
          [176, 0]
        ],
        { failedChecks: ["a 429 carries <Retry-After>"], checksFailed: 1 }
      )
    )
    expect(html).toContain('<td>one</td><td>500</td><td>500</td><td>750</td><td>0</td><td class="ok">exact</td>')
    expect(html).toContain('<td class="bad">limit not reached</td>')
    expect(html).toContain("1 failed (a 429 carries &lt;Retry-After&gt;)")
    expect(html).toContain("VIOLATED")
    expect(html).toContain("Latency (ms): none measured")
  })
})
