/**
 * Helpers of the gateway tests (gateway-pipeline.test.ts, gateway-guards.test.ts): an engine on the memory store and a
 * manual clock whose Gateway is called directly with an EngineRequest (no socket, so no remote address), with the
 * admin calls, the maintenance state set through its Ref, the trace's lines, gateways built on other routes or on a
 * rate limiter or idempotency store that went away, a data key written straight into the store, and the engine's log
 * (test/support/engine-log.ts: what a test provokes on purpose is captured, not printed); and the
 * assertions on an answer's error envelope and on the absence of the X-RateLimit-* headers.
 */
import { Effect, ManagedRuntime, Ref } from "effect"
import { expect } from "vitest"
import { ApiKeys, timeSortKey } from "../../engine/app/docs.ts"
import { hashKey } from "../../engine/app/partners/credentials.ts"
import { Gateway } from "../../engine/http/gateway.ts"
import { Idempotency } from "../../engine/http/guards/idempotency.ts"
import { Maintenance } from "../../engine/http/guards/maintenance.ts"
import { RateLimiter } from "../../engine/http/guards/rate-limit.ts"
import type { Route } from "../../engine/http/route.ts"
import { ROUTES, type RouteServices } from "../../engine/http/routes/index.ts"
import { engineLayer } from "../../engine/runtime.ts"
import { Trace } from "../../engine/sim/trace.ts"
import { Store } from "../../engine/store/port.ts"
import { engineLog } from "../support/engine-log.ts"
import { ADMIN, engineRequest, MONDAY_OPEN } from "./harness.ts"

export const SANDBOX = "/api/sandbox/v1/partner"
export const PROD = "/api/v1/partner"

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly json: any
}

export const makeEngine = (adminToken: string | undefined = ADMIN) => {
  // Printed as usual, except what a test captures with `log.during` (an error it provokes on purpose).
  const log = engineLog()
  const runtime = ManagedRuntime.make(
    engineLayer({ store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken, logger: log.logger })
  )
  let gateway: Gateway["Service"] | undefined
  const send = async (method: string, path: string, headers: Record<string, string | undefined> = {}, body?: string, via?: Gateway["Service"]) => {
    const request = engineRequest(method, path, headers, body)
    if (gateway === undefined) gateway = await runtime.runPromise(Gateway.use((g) => Effect.succeed(g)))
    const g = via ?? gateway
    const r = await runtime.runPromise(g.handle(request))
    let json: any
    try {
      json = JSON.parse(r.body)
    } catch {
      json = undefined
    }
    return { status: r.status, headers: r.headers, body: r.body, json } satisfies Answer
  }
  const admin = (method: string, path: string, body?: unknown) =>
    send(method, path, { authorization: `Bearer ${ADMIN}` }, body === undefined ? undefined : JSON.stringify(body))
  const newPartner = async (tier = "starter") => {
    const r = await admin("POST", "/_sim/partners", { businessName: "Gate Partner", email: "g@p.test", tier })
    if (r.status !== 201) throw new Error(r.body)
    return r.json as { partnerId: string; sandboxKey: string; liveKey: string }
  }
  const advance = (seconds: number) => admin("POST", "/_sim/clock/advance", { seconds })
  const setMaintenance = (mode: "off" | "full" | "read_only", endsAt: number | null = null) =>
    runtime.runPromise(Maintenance.use((m) => Ref.set(m.state, { mode, endsAt, statusPage: "https://status.test" })))
  const traceLines = async () => (await runtime.runPromise(Trace.use((t) => t.lines))).map((l) => JSON.parse(l))
  const build = (routes: ReadonlyArray<Route<RouteServices>>, options: { adminToken: string | undefined } = { adminToken: ADMIN }) =>
    runtime.runPromise(Gateway.make(options, routes))
  /** A gateway of every route whose rate limiter or idempotency store is `replaced` (a backend that went away). */
  const buildOn = (replaced: { readonly limiter?: RateLimiter["Service"]; readonly idempotency?: Idempotency["Service"] }) =>
    runtime.runPromise(
      Effect.gen(function* () {
        const limiter = replaced.limiter ?? (yield* RateLimiter)
        const idempotency = replaced.idempotency ?? (yield* Idempotency)
        return yield* Gateway.make({ adminToken: ADMIN }, ROUTES).pipe(
          Effect.provideService(RateLimiter, limiter),
          Effect.provideService(Idempotency, idempotency)
        )
      })
    )
  const dataKey = async (partnerId: string) => {
    const raw = "pk_data_test_0123456789abcdef"
    const keyHash = hashKey(raw)
    await runtime.runPromise(
      Store.use((store) =>
        store.transact((tx) =>
          ApiKeys.put(tx, keyHash, "global", timeSortKey(MONDAY_OPEN, keyHash), {
            keyHash,
            partnerId,
            environment: "production",
            kind: "data",
            status: "active",
            last4: raw.slice(-4),
            createdAt: MONDAY_OPEN
          })
        )
      )
    )
    return raw
  }
  return { send, admin, newPartner, advance, setMaintenance, traceLines, build, buildOn, dataKey, log, dispose: () => runtime.dispose() }
}

export const expectError = (a: Answer, status: number, code: string, message?: string) => {
  expect(a.status).toBe(status)
  expect(a.json?.error?.code).toBe(code)
  if (message !== undefined) expect(a.json.error.message).toBe(message)
}
export const noRateHeaders = (a: Answer) => {
  expect(a.headers["x-ratelimit-limit"]).toBeUndefined()
  expect(a.headers["x-ratelimit-remaining"]).toBeUndefined()
  expect(a.headers["x-ratelimit-reset"]).toBeUndefined()
}
