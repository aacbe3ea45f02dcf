/**
 * Lanes (E-404): at most `width` requests of one credential are in the engine at once, the rest start in arrival
 * order as earlier ones finish; another credential's request starts at once, and a request without one is not held.
 */
import { describe, expect, it } from "vitest"
import type { EngineRequest } from "../../engine/http/exchange.ts"
import { makeLanes } from "../../engine/http/lanes.ts"

const request = (headers: Record<string, string>): EngineRequest => ({
  method: "GET",
  path: "/api/sandbox/v1/partner/stocks",
  query: new URLSearchParams(),
  search: "",
  headers,
  body: undefined
})

describe("lanes", () => {
  it("hold a credential's requests beyond the width until earlier ones leave, in arrival order", () => {
    const lanes = makeLanes(2)
    const started: Array<string> = []
    const leaves = new Map<string, () => void>()
    const send = (name: string, headers: Record<string, string>) =>
      lanes.enter(request(headers), (leave) => {
        started.push(name)
        leaves.set(name, leave)
      })
    send("b1", { "x-api-key": "sk_sandbox_flood" })
    send("b2", { authorization: "Bearer sk_sandbox_flood" })
    send("b3", { "x-api-key": "sk_sandbox_flood" })
    send("b4", { "x-api-key": "sk_sandbox_flood" })
    // another partner, and a request with no credential, are not held behind the flood
    send("a1", { "x-api-key": "sk_sandbox_quiet" })
    send("public", {})
    expect(started).toEqual(["b1", "b2", "a1", "public"])
    leaves.get("b2")?.()
    leaves.get("b2")?.() // leaving twice frees one place only
    expect(started).toEqual(["b1", "b2", "a1", "public", "b3"])
    leaves.get("b1")?.()
    expect(started).toEqual(["b1", "b2", "a1", "public", "b3", "b4"])
  })
})
