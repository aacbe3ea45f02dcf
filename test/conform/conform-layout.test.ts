/**
 * Where conform sends a contract path (issue 23, part 4): under the contract's `servers` bases by default, and under
 * `--prefix` when given, with the base taken off: the contract checks, the stateful checks and the scenarios alike
 * (the scenarios used to keep the contract's bases, and failed against a mock serving the contract at its root).
 */
import { describe, expect, it } from "vitest"
import { runConform } from "../../engine/conform/conform.ts"
import { contractChecks } from "../../engine/conform/contract-checks.ts"
import { MONDAY_OPEN } from "./conform-kit.ts"

describe("conform's base path", () => {
  it("sends every request under --prefix, the contract's base taken off, scenarios included", async () => {
    const paths: Array<string> = []
    const nowhere: typeof fetch = async (input) => {
      paths.push(new URL(String(input instanceof Request ? input.url : input)).pathname)
      return new Response(JSON.stringify({ error: { code: "NOT_FOUND", message: "nothing here" } }), {
        status: 404,
        headers: { "content-type": "application/json" }
      })
    }
    const contract = contractChecks()[0]?.id ?? ""
    let layout = ""
    await runConform({
      base: "http://127.0.0.1:9",
      sandboxKey: "sk_sandbox_0123456789abcdef",
      liveKey: "pk_live_0123456789abcdef",
      seed: 1,
      prefix: "/mock/",
      only: [contract, "quote-ttl", "scenario: alerts/production-only.yaml"],
      now: () => MONDAY_OPEN,
      sleep: async () => undefined,
      fetch: nowhere,
      onStart: (info) => {
        layout = info.layout
      }
    })
    expect(layout).toBe("prefix")
    expect(paths.length).toBeGreaterThan(5)
    expect(paths.filter((p) => !p.startsWith("/mock/"))).toEqual([])
    // The scenario's production alerts and the sandbox checks alike.
    expect(paths).toContain("/mock/price-alerts")
    expect(paths).toContain("/mock/status")
  })
})
