/**
 * Platform incidents (domain/incidents/decide-incident.ts): a declared incident is `investigating` from now, P2 and
 * every service unless given; it is heard in both environments of every partner not suspended, in the partners'
 * order, with the answer as payload; only an open incident resolves (404 unknown, 409 resolved), with its duration
 * written as the spec writes it; open incidents imply the worst severity's status.
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  ALL_SERVICES,
  type BroadcastPartner,
  broadcastPartitions,
  decideDeclare,
  decideResolve,
  durationText,
  type IncidentRecord,
  statusOfIncidents
} from "../../engine/domain/incidents/decide-incident.ts"
import { accepted, codeOf } from "./decider-fixtures.ts"

const NOW = Date.parse("2026-11-23T10:00:00.000Z")
const partners: ReadonlyArray<BroadcastPartner> = [
  { partnerId: "ptn_a" },
  { partnerId: "ptn_b", status: "suspended" },
  { partnerId: "ptn_c", status: "active" }
]
const declared = (over: Partial<IncidentRecord> = {}): IncidentRecord => ({
  ...decideDeclare(partners, { title: "Feed lag" }, NOW, { incidentId: "inc_1" }).incident,
  ...over
})

describe("declaring an incident", () => {
  it("records it investigating from now, P2 on every service unless the operator says otherwise", () => {
    expect(declared()).toEqual({
      id: "inc_1",
      title: "Feed lag",
      severity: "P2",
      affectedServices: [...ALL_SERVICES],
      status: "investigating",
      startedAt: NOW,
      resolvedAt: null
    })
    const given = decideDeclare([], { title: "Down", severity: "P0", affectedServices: ["trading"] }, NOW, { incidentId: "inc_2" })
    expect([given.incident.severity, given.incident.affectedServices]).toEqual(["P0", ["trading"]])
  })

  it("tells both environments of every partner not suspended, partner by partner, what it answers", () => {
    const plan = decideDeclare(partners, { title: "Feed lag" }, NOW, { incidentId: "inc_1" })
    expect(plan.events.map((e) => [e.partition, e.name])).toEqual([
      ["ptn_a:sandbox", "incident.declared"],
      ["ptn_a:production", "incident.declared"],
      ["ptn_c:sandbox", "incident.declared"],
      ["ptn_c:production", "incident.declared"]
    ])
    expect(plan.events.every((e) => e.payload === plan.answer)).toBe(true)
    expect(plan.answer).toEqual({
      id: "inc_1",
      title: "Feed lag",
      severity: "P2",
      status: "investigating",
      startedAt: "2026-11-23T10:00:00.000Z",
      affectedServices: [...ALL_SERVICES]
    })
  })

  it("reaches exactly the partitions of the partners that are not suspended", () => {
    const partner = fc.record({
      partnerId: fc.stringMatching(/^ptn_[a-z0-9]{4}$/),
      status: fc.constantFrom(undefined, "active" as const, "suspended" as const)
    })
    fc.assert(
      fc.property(fc.array(partner, { maxLength: 8 }), (all) => {
        const reached = broadcastPartitions(all)
        const active = all.filter((p) => p.status !== "suspended")
        expect(reached).toHaveLength(2 * active.length)
        expect(reached).toEqual(active.flatMap((p) => [`${p.partnerId}:sandbox`, `${p.partnerId}:production`]))
      })
    )
  })
})

describe("resolving an incident", () => {
  it("resolves an open one now, with how long it lasted", () => {
    const plan = accepted(decideResolve(partners, declared(), "inc_1", NOW + (2 * 3600 + 5 * 60 + 30) * 1000))
    expect(plan.incident).toMatchObject({ status: "resolved", resolvedAt: NOW + 7_530_000, startedAt: NOW })
    expect(plan.answer).toEqual({
      id: "inc_1",
      title: "Feed lag",
      severity: "P2",
      status: "resolved",
      resolvedAt: "2026-11-23T12:05:30.000Z",
      duration: "2h 5m 30s"
    })
    expect(plan.events.map((e) => e.name)).toEqual(Array(4).fill("incident.resolved"))
  })

  it("refuses an unknown incident (404) and one already resolved (409)", () => {
    expect(codeOf(decideResolve(partners, undefined, "inc_9", NOW))).toBe("NOT_FOUND")
    expect(codeOf(decideResolve(partners, declared({ status: "resolved", resolvedAt: NOW }), "inc_1", NOW))).toBe("CONFLICT")
  })
})

describe("what incidents imply", () => {
  it("writes a duration as hours, minutes and seconds, leading zeros dropped, never negative", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400_000_000 }), (ms) => {
        const total = Math.floor(ms / 1000)
        const parts = durationText(ms).match(/^(?:(\d+)h )?(?:(\d+)m )?(\d+)s$/)
        expect(parts).not.toBeNull()
        const [h, m, s] = [Number(parts?.[1] ?? 0), Number(parts?.[2] ?? 0), Number(parts?.[3])]
        expect(h * 3600 + m * 60 + s).toBe(total)
        expect(m < 60 && s < 60).toBe(true)
      })
    )
    expect(durationText(-5)).toBe("0s")
    expect(durationText(45 * 60_000)).toBe("45m 0s")
  })

  it("the worst open severity decides the status", () => {
    const severity = fc.constantFrom("P0" as const, "P1" as const, "P2" as const, "P3" as const)
    fc.assert(
      fc.property(fc.array(fc.record({ severity })), (open) => {
        const worst = open.map((i) => i.severity).sort()[0]
        const expected = worst === undefined ? "operational" : worst === "P0" ? "major_outage" : worst === "P1" ? "partial_outage" : "degraded"
        expect(statusOfIncidents(open)).toBe(expected)
      })
    )
  })
})
