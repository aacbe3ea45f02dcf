/**
 * `sokoni conform`'s scenario suites over the wire (issue 10, part 1c): every scenario of scenarios/ against our
 * engine over a real socket, each on an engine started at the scenario's start, and every one passes: nothing
 * skipped. Scripted webhook receivers are the control API's (E-241); a scenario that needs a world of its own
 * (`ownTarget`, `dated`) runs after the target starts over at its start (E-243). On one engine past a scenario's start
 * it runs whole weeks later (a target's clock never goes back). Without a control API the control steps, the
 * receivers and the worlds of their own are skipped and reported with their reasons, as they are against a target
 * that cannot start over. Each scenario's timeline (requests, events, deliveries on the engine clock) is kept.
 */
import { relative } from "node:path"
import { describe, expect, it } from "vitest"
import { scenarioFiles } from "../../engine/conform/scenario-checks.ts"
import { loadScenario, shiftScenario } from "../../scenarios/runner.ts"
import { adminUrl, withDatabase } from "../http/node-server-kit.ts"
import { conformAgainst, startTarget } from "./conform-kit.ts"
import { onPostgres } from "../support/stores.ts"

const DIR = `${import.meta.dirname}/../../scenarios`
const FILES = scenarioFiles().map((f) => relative(`${import.meta.dirname}/../../scenarios`, f))

/** `sokoni conform` with a partner's keys and no admin token (a target whose control API we do not have). */
const conformWithKeysOnly = async (base: string, only: ReadonlyArray<string>) => {
  const made = await fetch(`${base}/_sim/partners`, {
    method: "POST",
    headers: { authorization: "Bearer conform-admin", "content-type": "application/json" },
    body: JSON.stringify({ businessName: "Keys Only", email: "keys@conform.test", tier: "starter" })
  }).then((r) => r.json() as Promise<{ sandboxKey: string; liveKey: string }>)
  return conformAgainst(base, { adminToken: undefined, sandboxKey: made.sandboxKey, liveKey: made.liveKey, only })
}

describe("sokoni conform: scenario suites over the wire", () => {
  it.each(FILES)(
    "runs scenarios/%s over the wire on an engine at its start",
    async (file) => {
      const scenario = await loadScenario(`${DIR}/${file}`)
      const target = await startTarget({ start: Date.parse(scenario.start), desk: scenario.desk ?? "manual" })
      try {
        const report = await conformAgainst(target.base, { only: [`scenario: ${file}`] })
        expect(report.checks).toHaveLength(1)
        const [check] = report.checks
        const fresh = scenario.ownTarget !== undefined || scenario.dated !== undefined
        expect(check?.status, check?.message).toBe("passed")
        expect(check?.message).toBe(`${scenario.name}: ${scenario.steps.length} steps passed${fresh ? " (on a fresh world: POST /_sim/reset)" : ""}`)
        // The timeline starts at the scenario's start on the engine clock and has a request row per step.
        expect(check?.timeline?.[0]?.at).toBe(scenario.start)
        expect(check?.timeline?.filter((t) => t.kind === "request" || t.kind === "clock")).toHaveLength(scenario.steps.length)
        if (scenario.steps.some((s) => (s.expect?.events?.length ?? 0) > 0)) expect(check?.timeline?.some((t) => t.kind === "event")).toBe(true)
        // What the scripted receivers got is in the timeline as deliveries.
        if (scenario.steps.some((s) => (s.expect?.received?.length ?? 0) > 0)) expect(check?.timeline?.some((t) => t.kind === "delivery")).toBe(true)
      } finally {
        await target.stop()
      }
    },
    60_000
  )

  it("the coverage table shows a replaced order as seen, staying WORKING, once a scenario replaces one", async () => {
    const target = await startTarget()
    try {
      const report = await conformAgainst(target.base, { only: ["scenario: expiry/replaced-then-filled.yaml"] })
      expect(report.checks.map((c) => c.status)).toEqual(["passed"])
      const order = (report.coverage?.transitions ?? []).filter((t) => t.machine === "order")
      expect(order.find((t) => t.event === "order.replaced")).toEqual({
        machine: "order",
        transition: "WORKING -> replaced (stays WORKING)",
        event: "order.replaced",
        seen: true
      })
      // the scenario neither rejects nor cancels an order: those stay unseen
      expect(order.filter((t) => !t.seen).map((t) => t.event)).toEqual(["order.rejected", "order.cancelled"])
    } finally {
      await target.stop()
    }
  })

  it("moves a scenario whose start the target's clock has passed by whole weeks, instants in its steps with it", async () => {
    const target = await startTarget({ start: Date.parse("2026-11-23T09:00:00.000Z") })
    try {
      const report = await conformAgainst(target.base, {
        only: ["scenario: alerts/pinned-price-after-delay.yaml", "scenario: settlement/market-buy-settles.yaml"]
      })
      expect(report.checks.map((c) => `${c.status} ${c.message}`)).toEqual([expect.stringMatching(/^passed /), expect.stringMatching(/^passed /)])
      // The first ran a week later (the target was past 08:00), the second a week after that (the first moved the clock).
      expect(report.checks.map((c) => c.timeline?.[0]?.at)).toEqual(["2026-11-30T08:00:00.000Z", "2026-12-07T08:00:00.000Z"])
    } finally {
      await target.stop()
    }
  })

  it("shifts instants and dates by whole days, keeping their written precision", () => {
    const shifted = shiftScenario(
      {
        name: "x",
        start: "2026-11-23T08:00:00.000Z",
        steps: [
          {
            request: "GET /x?from=2026-11-23&at=2026-11-23T08:05:00Z",
            advance: { to: "2026-11-23T08:15:00.000Z" },
            expect: { body: { on: "2026-11-24", n: 2026 } }
          }
        ]
      },
      7 * 86_400_000
    )
    expect(shifted.start).toBe("2026-11-30T08:00:00.000Z")
    expect(shifted.steps[0]).toEqual({
      request: "GET /x?from=2026-11-30&at=2026-11-30T08:05:00Z",
      advance: { to: "2026-11-30T08:15:00.000Z" },
      expect: { body: { on: "2026-12-01", n: 2026 } }
    })
  })

  it("without a control API, skips a scenario whose steps need it, naming each need; one that needs none runs", async () => {
    const target = await startTarget({ start: Date.parse("2026-11-23T08:00:00.000Z") })
    try {
      const report = await conformWithKeysOnly(target.base, ["scenario: stream/production-cap.yaml", "scenario: alerts/production-only.yaml"])
      const byName = new Map(report.checks.map((c) => [c.name, c]))
      const capped = byName.get("scenario: stream/production-cap.yaml")
      expect(capped?.status).toBe("skipped")
      expect(capped?.message).toMatch(
        /its later steps rest on its clock, desk or price steps, which need the control API; it needs a partner of its own \(its tier, a seeded wallet\), which only the control API makes \(--admin-token/
      )
      expect(byName.get("scenario: alerts/production-only.yaml")?.status).toBe("passed")
    } finally {
      await target.stop()
    }
  })

  it("without a control API, reports why receivers and worlds of their own are skipped", async () => {
    const target = await startTarget({ start: Date.parse("2026-11-23T08:00:00.000Z") })
    try {
      const report = await conformWithKeysOnly(target.base, [
        "scenario: webhook-retries/timeout-8s.yaml",
        "scenario: corporate-actions/split-doubles-holdings.yaml"
      ])
      expect(report.checks.map((c) => [c.name, c.status])).toEqual([
        ["scenario: webhook-retries/timeout-8s.yaml", "skipped"],
        ["scenario: corporate-actions/split-doubles-holdings.yaml", "skipped"]
      ])
      expect(report.checks[0]?.message).toMatch(/it scripts webhook receivers, which need the control API \(--admin-token/)
      expect(report.checks[1]?.message).toMatch(/it needs a target of its own: .*--admin-token/)
    } finally {
      await target.stop()
    }
  })

  it("against a target that cannot start over, skips the worlds of their own with the reason (the rest runs)", async () => {
    const target = await startTarget({ start: Date.parse("2026-11-23T08:00:00.000Z") })
    try {
      // A control API without POST /_sim/reset, as an engine of an earlier version has.
      const older: typeof fetch = async (input, init) =>
        String(input).endsWith("/_sim/reset")
          ? new Response(JSON.stringify({ error: { code: "NOT_FOUND", message: "no route" } }), { status: 404 })
          : fetch(input, init)
      const report = await conformAgainst(target.base, {
        fetch: older,
        only: ["scenario: market-clock/christmas-midnight.yaml", "scenario: webhook-retries/timeout-8s.yaml"]
      })
      const byName = new Map(report.checks.map((c) => [c.name, c]))
      expect(byName.get("scenario: webhook-retries/timeout-8s.yaml")?.status).toBe("passed")
      const dated = byName.get("scenario: market-clock/christmas-midnight.yaml")
      expect(dated?.status).toBe("skipped")
      expect(dated?.message).toMatch(/tied to its date: .*, and the target cannot start over \(POST \/_sim\/reset answered 404/)
    } finally {
      await target.stop()
    }
  })
})

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined
    ? "sokoni conform: receivers and fresh worlds on postgres (skipped: set DATABASE_URL)"
    : "sokoni conform: receivers and fresh worlds on postgres",
  onPostgres,
  () => {
    it("runs scripted-receiver scenarios and, after a reset that empties the tables, the worlds of their own", async () => {
      await withDatabase(adminUrl ?? "", async (url) => {
        const target = await startTarget({ store: "postgres", databaseUrl: url })
        try {
          const only = [
            "scenario: webhook-retries/retry-5-then-delivered.yaml",
            "scenario: webhook-retries/signature-receiver-side.yaml",
            "scenario: corporate-actions/dividend-credits-wallet.yaml",
            "scenario: market-clock/christmas-midnight.yaml"
          ]
          const report = await conformAgainst(target.base, { only })
          expect(report.checks.map((c) => [c.name, c.status, c.status === "passed" ? "" : c.message])).toEqual(only.map((name) => [name, "passed", ""]))
        } finally {
          await target.stop()
        }
      })
    }, 120_000)
  }
)
