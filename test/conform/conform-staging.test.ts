/**
 * `sokoni conform` planning for a live target without a control API (issue 23, staging mode): every run sends
 * Idempotency-Keys of its own (a target keeps its idempotency store from run to run), the rate-limit oracle runs last
 * (it spends the one window the given key has), and the trading checks read the API's market calendar and are skipped
 * with the next opening when the market is closed, rather than failing a correct target.
 */
import { describe, expect, it } from "vitest"
import { registry, runOrder } from "../../engine/conform/conform.ts"
import { ADMIN, conformAgainst, MONDAY_OPEN, startTarget } from "./conform-kit.ts"

const keysFor = async (base: string) => {
  const made = await fetch(`${base}/_sim/partners`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ businessName: "Staging Co", email: "staging@conform.test", tier: "enterprise" })
  })
  return (await made.json()) as { sandboxKey: string; liveKey: string }
}

/** A keys-only conform run that records every Idempotency-Key it sends. */
const keysOnlyRun = async (base: string, only: ReadonlyArray<string>, keys: { sandboxKey: string; liveKey: string }) => {
  const sent: Array<string> = []
  const recording: typeof fetch = (input, init) => {
    const key = new Headers(init?.headers).get("idempotency-key")
    if (key !== null) sent.push(key)
    return fetch(input, init)
  }
  const report = await conformAgainst(base, { adminToken: undefined, ...keys, only, fetch: recording })
  return { report, sent }
}

const advance = (base: string, seconds: number) =>
  fetch(`${base}/_sim/clock/advance`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ seconds })
  })

describe("conform on a live target (no control API)", () => {
  it("sends Idempotency-Keys of its own on every run: two runs in a row share none, and both pass", async () => {
    const target = await startTarget()
    try {
      const keys = await keysFor(target.base)
      const only = ["idempotency-replay", "idempotency-different-body", "scenario: alerts/production-only.yaml"]
      const first = await keysOnlyRun(target.base, only, keys)
      await advance(target.base, 1)
      const second = await keysOnlyRun(target.base, only, keys)
      for (const run of [first, second])
        expect(run.report.checks.map((c) => `${c.name.split(":")[0]} ${c.status}`)).toEqual(only.map((id) => `${id.split(":")[0]} passed`))
      expect(first.sent.length).toBeGreaterThan(3)
      expect(second.sent.filter((k) => first.sent.includes(k))).toEqual([])
      // Within a run each scenario has its own keys too: one partner serves them all.
      expect(first.sent.filter((k) => k.includes("alerts-production-only")).length).toBeGreaterThan(0)
    } finally {
      await target.stop()
    }
  })

  it("runs the rate-limit oracle last, after the scenarios; with the control API the registry's order stands", () => {
    const checks = registry()
    expect(runOrder(checks, false).at(-1)?.id).toBe("rate-limit-oracle")
    expect(runOrder(checks, false)).toHaveLength(checks.length)
    expect(runOrder(checks, true)).toEqual(checks)
  })

  it("skips the trading checks with the next opening when the API's calendar says the market is closed", async () => {
    // Saturday: NSE is closed until Monday 06:00 UTC.
    const target = await startTarget({ start: MONDAY_OPEN - 2 * 86_400_000 })
    try {
      const keys = await keysFor(target.base)
      const { report } = await keysOnlyRun(target.base, ["money-invariants", "quote-single-use", "event-agreement"], keys)
      expect(report.checks.map((c) => c.status)).toEqual(["skipped", "skipped", "skipped"])
      expect(report.checks[0]?.message).toBe(
        "needs NSE open to trade SCOM.KE: the API's market calendar says it is closed at 2026-11-21T08:00:00.000Z, next open 2026-11-23T06:00:00.000Z (GET /market/status); run conform again then"
      )
    } finally {
      await target.stop()
    }
  })

  it("runs them when the market is open", async () => {
    const target = await startTarget()
    try {
      const keys = await keysFor(target.base)
      const { report } = await keysOnlyRun(target.base, ["money-invariants", "quote-single-use"], keys)
      expect(report.checks.map((c) => `${c.name.split(":")[0]} ${c.status}`)).toEqual(["quote-single-use passed", "money-invariants passed"])
    } finally {
      await target.stop()
    }
  })
})
