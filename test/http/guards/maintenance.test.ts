/**
 * The maintenance guard as a unit, its state set through the service's Ref: off lets all through, full refuses
 * every method, read_only refuses mutations only; Retry-After from endsAt (at least 1 s) or 60 s without it; an outage
 * of every request or, with `operations`, of those operations only (D-320).
 */
import { Effect, Ref } from "effect"
import { describe, expect, it } from "vitest"
import { Maintenance, type MaintenanceState, READ_METHODS } from "../../../engine/http/guards/maintenance.ts"

const T0 = Date.parse("2026-11-23T08:00:00.000Z")
const check = (state: MaintenanceState | undefined, method: string, now = T0, operationId?: string) =>
  Effect.runSync(
    Effect.gen(function* () {
      const m = yield* Maintenance.make
      if (state !== undefined) yield* Ref.set(m.state, state)
      return yield* m.check(method, now, operationId)
    })
  )
const page = "https://status.example.com"

describe("maintenance guard", () => {
  it("starts off and lets every method through", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"]) expect(check(undefined, method)).toBeUndefined()
    const initial = Effect.runSync(Effect.flatMap(Maintenance.make, (m) => Ref.get(m.state)))
    expect(initial).toEqual({ mode: "off", endsAt: null, statusPage: page })
  })

  it("full refuses reads and writes with 503 MAINTENANCE and the spec's extras", () => {
    for (const method of ["GET", "HEAD", "OPTIONS", "POST", "DELETE"]) {
      const d = check({ mode: "full", endsAt: null, statusPage: page }, method)
      expect(d?.retryAfter).toBe(60)
      expect(d?.failure.code).toBe("MAINTENANCE")
      expect(d?.failure.httpStatus).toBe(503)
      expect(d?.failure.message).toBe("planned maintenance: the API is unavailable")
      expect(d?.failure.extras).toEqual({ mode: "full", statusPage: page })
    }
  })

  it("read_only lets GET, HEAD and OPTIONS through and refuses mutations", () => {
    expect([...READ_METHODS].sort()).toEqual(["GET", "HEAD", "OPTIONS"])
    const state: MaintenanceState = { mode: "read_only", endsAt: null, statusPage: "https://s.test" }
    for (const method of ["GET", "HEAD", "OPTIONS"]) expect(check(state, method)).toBeUndefined()
    for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
      const d = check(state, method)
      expect(d?.failure.message).toBe("planned maintenance: the API is read-only")
      expect(d?.failure.extras).toEqual({ mode: "read_only", statusPage: "https://s.test" })
      expect(d?.retryAfter).toBe(60)
    }
  })

  it("Retry-After counts whole seconds to endsAt, rounded up, never below 1", () => {
    const at = (endsAt: number, now = T0) => check({ mode: "full", endsAt, statusPage: page }, "GET", now)
    expect(at(T0 + 90_000)?.retryAfter).toBe(90)
    expect(at(T0 + 90_001)?.retryAfter).toBe(91)
    expect(at(T0 + 1)?.retryAfter).toBe(1)
    expect(at(T0)?.retryAfter).toBe(1)
    expect(at(T0 - 10_000)?.retryAfter).toBe(1)
    expect(at(T0 + 90_000)?.failure.extras).toEqual({ mode: "full", endsAt: "2026-11-23T08:01:30.000Z", statusPage: page })
  })

  it("outage: every request, or with operations only those (any method), SERVICE_UNAVAILABLE with Retry-After 30 or to endsAt", () => {
    const whole: MaintenanceState = { mode: "outage", endsAt: null, statusPage: page }
    for (const op of ["getQuote", "listStocks", undefined]) {
      const d = check(whole, "GET", T0, op)
      expect([d?.failure.code, d?.failure.httpStatus, d?.retryAfter]).toEqual(["SERVICE_UNAVAILABLE", 503, 30])
    }
    const partial: MaintenanceState = { ...whole, operations: new Set(["getQuote", "placeTrade"]) }
    expect(check(partial, "GET", T0, "getQuote")?.failure.code).toBe("SERVICE_UNAVAILABLE")
    expect(check(partial, "POST", T0, "placeTrade")?.failure.code).toBe("SERVICE_UNAVAILABLE")
    expect(check({ ...partial, endsAt: T0 + 45_000 }, "POST", T0, "placeTrade")?.retryAfter).toBe(45)
    // Everything else is served, an unknown path too (it then answers its own 404).
    for (const [method, op] of [
      ["GET", "listStocks"],
      ["POST", "createSubAccount"],
      ["GET", undefined]
    ] as const)
      expect(check(partial, method, T0, op), `${method} ${op}`).toBeUndefined()
    // The scope belongs to outages: a planned maintenance state never carries it, and off lets all through.
    expect(check({ ...partial, mode: "off" }, "GET", T0, "getQuote")).toBeUndefined()
  })
})
