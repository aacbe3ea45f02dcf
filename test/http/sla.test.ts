/**
 * GET /sla (D-098): the tier mapping (production starter/growth/enterprise -> Standard/Professional/Enterprise, the
 * sandbox Standard and not contractual), the objectives, and the status following the maintenance state. Every answer
 * is checked against the contract.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"

describe("GET /sla", () => {
  let engine: ReturnType<typeof startEngine>
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())

  const partner = async (tier: string) => {
    const r = await engine.admin("POST", "/_sim/partners", { businessName: `SLA ${tier}`, email: `${tier}@sla.test`, tier })
    expect(r.status).toBe(201)
    return r.body as { sandboxKey: string; liveKey: string }
  }
  const sla = (base: string, key: string) => engine.call("GET", `${base}/sla`, { headers: { "x-api-key": key } })

  it("maps each production tier to its SLA tier and objective; contractual in production only", async () => {
    for (const [tier, name, target] of [
      ["starter", "Standard", 99.5],
      ["growth", "Professional", 99.9],
      ["enterprise", "Enterprise", 99.95]
    ] as const) {
      const keys = await partner(tier)
      const live = await sla("/api/v1/partner", keys.liveKey)
      expect(live.status).toBe(200)
      expect(live.body).toMatchObject({ tier: name, uptimeTargetPct: target, contractual: true, status: "operational", uptimePct30d: null, incidents: [] })
      const sandbox = await sla("/api/sandbox/v1/partner", keys.sandboxKey)
      expect(sandbox.body).toMatchObject({ tier: "Standard", uptimeTargetPct: 99.5, contractual: false })
    }
  })

  it("lists every tier and the market-data and execution objectives", async () => {
    const keys = await partner("growth")
    const body = (await sla("/api/v1/partner", keys.liveKey)).body
    expect(body.tiers).toEqual([
      { name: "Standard", uptimeTargetPct: 99.5 },
      { name: "Professional", uptimeTargetPct: 99.9 },
      { name: "Enterprise", uptimeTargetPct: 99.95 }
    ])
    expect([body.measurementWindowDays, body.dataRefreshTargetSeconds, body.dataDelaySeconds, body.executionTargetSeconds]).toEqual([30, 900, 900, 300])
  })

  it("says degraded with the maintenance's status page while the service is read-only", async () => {
    const keys = await partner("starter")
    const set = await engine.admin("PUT", "/_sim/maintenance", { mode: "read_only", statusPage: "https://status.acme.test" })
    expect(set.status).toBe(200)
    const body = (await sla("/api/v1/partner", keys.liveKey)).body
    expect([body.status, body.statusPage]).toEqual(["degraded", "https://status.acme.test"])
  })

  it("needs a key", async () => {
    const r = await engine.call("GET", "/api/v1/partner/sla", {})
    expect(r.status).toBe(401)
  })
})
