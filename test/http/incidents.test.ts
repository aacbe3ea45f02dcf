/**
 * Platform incidents (D-193): declared and resolved through the control API, broadcast to every active partner in
 * both environments (a suspended partner gets nothing), reflected in GET /api/v1/status and GET /sla while open.
 * Every answer is checked against the contract (partner API and control API).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { durationText, statusOfIncidents } from "../../engine/domain/incidents/decide-incident.ts"
import { eventsOf } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

describe("incidents", () => {
  let engine: ReturnType<typeof startEngine>
  beforeEach(() => {
    engine = startEngine()
  })
  afterEach(() => engine.dispose())

  const status = async () => (await engine.call("GET", "/api/v1/status", {})).body
  const sla = async (key: string) => (await engine.call("GET", "/api/v1/partner/sla", { headers: { "x-api-key": key } })).body

  it("broadcasts a declared incident to every active partner, in both environments, and shows it while open", async () => {
    const [a, b, suspended] = [await engine.newPartner(), await engine.newPartner(), await engine.newPartner()]
    expect((await engine.admin("POST", `/_sim/partners/${suspended.partnerId}/status`, { status: "suspended" })).status).toBe(200)
    const declared = await engine.admin("POST", "/_sim/incidents", { title: "Delayed fills on NSE", severity: "P1", affectedServices: ["trading"] })
    expect(declared.status).toBe(201)
    expect(declared.body).toMatchObject({ title: "Delayed fills on NSE", severity: "P1", affectedServices: ["trading"], status: "investigating" })
    const broadcast = (await eventsOf(engine)).filter((e) => e.event === "incident.declared")
    expect(broadcast.map((e) => e.partition).sort()).toEqual(
      [`${a.partnerId}:production`, `${a.partnerId}:sandbox`, `${b.partnerId}:production`, `${b.partnerId}:sandbox`].sort()
    )
    for (const e of broadcast) expect(e.data).toEqual(declared.body)

    const now = await status()
    expect(now.status).toBe("partial_outage")
    expect(now.incidents).toEqual([
      { id: declared.body.id, title: "Delayed fills on NSE", severity: "P1", status: "investigating", startedAt: declared.body.startedAt }
    ])
    expect(now.services.filter((s: { status: string }) => s.status === "degraded").map((s: { name: string }) => s.name)).toEqual(["trading"])
    const view = await sla(a.liveKey)
    expect([view.status, view.incidents.map((i: { id: string }) => i.id)]).toEqual(["partial_outage", [declared.body.id]])
    // A service is degraded while any open incident affects it, not only when every one does.
    expect((await engine.admin("POST", "/_sim/incidents", { title: "Webhook backlog", severity: "P3", affectedServices: ["webhooks"] })).status).toBe(201)
    const two = await status()
    expect(two.services.filter((s: { status: string }) => s.status === "degraded").map((s: { name: string }) => s.name)).toEqual(["trading", "webhooks"])
  })

  it("resolves with its duration on the engine clock, broadcasts that too, and the status clears", async () => {
    const partner = await engine.newPartner()
    const declared = await engine.admin("POST", "/_sim/incidents", { title: "Feed lag" })
    expect(declared.body).toMatchObject({ severity: "P2", affectedServices: ["api", "trading", "market-data", "webhooks", "stream"] })
    expect((await status()).status).toBe("degraded")
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 45 * 60 })
    const resolved = await engine.admin("POST", `/_sim/incidents/${declared.body.id}/resolve`)
    expect(resolved.status).toBe(200)
    expect(resolved.body).toMatchObject({ id: declared.body.id, title: "Feed lag", severity: "P2", status: "resolved", duration: "45m 0s" })
    const events = (await eventsOf(engine)).filter((e) => e.event === "incident.resolved")
    expect(events.map((e) => e.partition).sort()).toEqual([`${partner.partnerId}:production`, `${partner.partnerId}:sandbox`])
    expect(await status()).toMatchObject({ status: "operational", incidents: [] })
    expect((await sla(partner.liveKey)).incidents).toEqual([])
    const again = await engine.admin("POST", `/_sim/incidents/${declared.body.id}/resolve`)
    expect([again.status, again.body.error.code]).toEqual([409, "CONFLICT"])
    expect((await engine.admin("POST", "/_sim/incidents/inc_nope/resolve")).status).toBe(404)
  })

  it("refuses a declaration without a title or with an unknown severity or service, and broadcasts nothing", async () => {
    await engine.newPartner()
    for (const body of [{}, { title: "" }, { title: "x", severity: "P9" }, { title: "x", affectedServices: ["coffee"] }]) {
      const r = await engine.admin("POST", "/_sim/incidents", body)
      expect(r.status, JSON.stringify(body)).toBe(400)
    }
    expect((await eventsOf(engine)).filter((e) => e.event === "incident.declared")).toEqual([])
  })
})

describe("incident arithmetic (pure)", () => {
  it("writes durations as the spec does", () => {
    expect(durationText(12_000)).toBe("12s")
    expect(durationText(45 * 60_000)).toBe("45m 0s")
    expect(durationText((2 * 3600 + 5 * 60 + 30) * 1000 + 999)).toBe("2h 5m 30s")
  })
  it("takes the worst open severity for the overall status", () => {
    expect(statusOfIncidents([])).toBe("operational")
    expect(statusOfIncidents([{ severity: "P3" }, { severity: "P2" }])).toBe("degraded")
    expect(statusOfIncidents([{ severity: "P2" }, { severity: "P1" }])).toBe("partial_outage")
    expect(statusOfIncidents([{ severity: "P1" }, { severity: "P0" }])).toBe("major_outage")
  })
})
