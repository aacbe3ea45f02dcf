/**
 * The engine host's hand-over on `POST /_sim/reset` (E-242), driven directly: a request that arrives while the world
 * is being replaced waits and is answered by the new world; a new world that cannot be built makes the reset answer
 * 503 SERVICE_UNAVAILABLE, and the next request builds it again (with the reset's plan).
 */
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import type { EngineRequest, EngineResponse } from "../../engine/http/exchange.ts"
import { Trace } from "../../engine/sim/trace.ts"
import { config } from "./node-server-kit.ts"

const request = (method: string, path: string, body?: unknown): EngineRequest => ({
  method,
  path,
  query: new URLSearchParams(),
  search: "",
  headers: { authorization: "Bearer t", "content-type": "application/json" },
  body: body === undefined ? undefined : JSON.stringify(body),
  remoteAddress: "127.0.0.1"
})
const bodyOf = (response: EngineResponse) => JSON.parse(response.body) as Record<string, any>
const AT = "2026-12-24T20:30:00.000Z"

describe("engine host", () => {
  it("a request arriving during the hand-over waits for the new world", async () => {
    let during: Promise<EngineResponse> | undefined
    let builds = 0
    const counted = Layer.effect(
      Trace,
      Effect.suspend(() => {
        builds += 1
        return Trace.make
      })
    )
    const host = await makeEngineHost(
      { ...config, trace: counted },
      {
        // Called while the old world is still up and the gate closed: a request now must not reach the old world.
        beforeReset: async () => {
          during = new Promise((resolve) => host.handle(request("GET", "/_sim/clock"), resolve))
        }
      }
    )
    try {
      const reset = await new Promise<EngineResponse>((resolve) => host.handle(request("POST", "/_sim/reset", { at: AT }), resolve))
      expect([reset.status, bodyOf(reset)]).toEqual([200, { now: AT, seed: 1, mode: "manual" }])
      const clock = await during
      expect(clock === undefined ? undefined : bodyOf(clock)).toEqual({ now: AT, mode: "manual" })
      // Two worlds, the first and the new one: the waiting request built none of its own.
      expect(builds).toBe(2)
    } finally {
      await host.stop()
    }
  })

  it("a new world that cannot be built: the reset answers 503, the next request builds it again", async () => {
    let builds = 0
    // The trace layer of the second world fails (as a database that went away would); the third builds.
    const flaky = Layer.effect(
      Trace,
      Effect.suspend(() => (++builds === 2 ? Effect.fail(new Error("the trace file's disk is full")) : Trace.make))
    )
    const host = await makeEngineHost({ ...config, trace: flaky })
    try {
      const reset = await new Promise<EngineResponse>((resolve) => host.handle(request("POST", "/_sim/reset", { at: AT }), resolve))
      expect(reset.status).toBe(503)
      expect(reset.headers["retry-after"]).toBe("1")
      expect(bodyOf(reset).error).toMatchObject({ code: "SERVICE_UNAVAILABLE", message: expect.stringContaining("disk is full") })
      const clock = await new Promise<EngineResponse>((resolve) => host.handle(request("GET", "/_sim/clock"), resolve))
      expect([clock.status, bodyOf(clock)]).toEqual([200, { now: AT, mode: "manual" }])
      expect(builds).toBe(3)
    } finally {
      await host.stop()
    }
  })
})
