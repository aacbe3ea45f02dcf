/**
 * The in-process harness of the bench's scripts (in-process-pair.ts, pg-roundtrips.ts): requests put straight to an
 * engine host's `handle` (no sockets), and an enterprise partner with a funded sandbox wallet and the first symbol.
 */
import type { makeEngineHost } from "../../engine/http/engine-host.ts"
import type { EngineRequest, EngineResponse } from "../../engine/http/exchange.ts"
import { Trace } from "../../engine/sim/trace.ts"

export const ADMIN = "bench-admin"
export const SANDBOX = "/api/sandbox/v1/partner"

type Host = Awaited<ReturnType<typeof makeEngineHost>>

/**
 * The bench's engine: a manual clock at a Monday's open, seed 1, a manual desk, no rate limits, and the trace `serve`
 * keeps (its last 1,000 lines), so what a pair allocates and keeps is what it costs the served engine; `store` its own.
 */
export const benchHostConfig = (store: { readonly store: "memory" } | { readonly store: "postgres"; readonly databaseUrl: string }) =>
  ({
    ...store,
    clock: "manual",
    start: Date.parse("2026-11-23T10:00:00.000Z"),
    seed: 1,
    desk: "manual",
    adminToken: ADMIN,
    rateLimit: "off",
    trace: Trace.layerRing(1000)
  }) as Parameters<typeof makeEngineHost>[0]
export type Call = (method: string, target: string, headers: Record<string, string>, body?: unknown) => Promise<EngineResponse>

/** `call(method, "path?query", headers, body)`: one request to the host, its answer. */
export const callerOf =
  (host: Host): Call =>
  (method, target, headers, body) =>
    new Promise<EngineResponse>((resolve) => {
      const q = target.indexOf("?")
      const search = q === -1 ? "" : target.slice(q)
      const request: EngineRequest = {
        method,
        path: q === -1 ? target : target.slice(0, q),
        query: new URLSearchParams(search),
        search,
        headers: { "content-type": "application/json", ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
        remoteAddress: "127.0.0.1"
      }
      host.handle(request, resolve)
    })

export const json = (response: EngineResponse) =>
  JSON.parse(typeof response.body === "string" ? response.body : Buffer.from(response.body as Uint8Array).toString()) as Record<string, unknown>

/** An enterprise partner (made through the control API, its sandbox wallet credited) and the first listed symbol. */
export const benchPartner = async (call: Call): Promise<{ readonly key: Record<string, string>; readonly symbol: string }> => {
  const admin = { authorization: `Bearer ${ADMIN}` }
  const partner = json(await call("POST", "/_sim/partners", admin, { businessName: "Bench", email: "bench@sokoni.test", tier: "enterprise" }))
  await call("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, admin, { environment: "sandbox", amount: 1_000_000 })
  const key = { "x-api-key": partner.sandboxKey as string }
  const symbol = (json(await call("GET", `${SANDBOX}/stocks`, key)).stocks as Array<{ symbol: string }>)[0]!.symbol
  return { key, symbol }
}
