/**
 * Test harness: an in-process engine on a manual clock, with helpers to call it as a partner or as the admin.
 * Every response can be checked against the contract by the caller (see test/http/*.test.ts).
 */
import { Effect, Exit, Scope } from "effect"
import type { EngineRequest } from "../../engine/http/exchange.ts"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Outbound, type SimReceivers } from "../../engine/sim/outbound.ts"
import { CONTROL_MOUNTS, CONTROL_PATH, makeValidator } from "../../spec/validator.ts"
import { engineLog } from "../support/engine-log.ts"

/** One validator for every test file: every partner-API response is checked against spec/openapi.yaml. */
const contract = makeValidator()
/** And every control-API response against spec/control.yaml. */
const control = makeValidator(CONTROL_PATH, CONTROL_MOUNTS)

/**
 * Contract mismatches of one exchange. Forced sandbox answers are checked like any other: D-018 (revised) only
 * forces statuses the operation declares, so they validate against its own responses, headers included.
 */
export const contractProblems = (method: string, path: string, _sent: Record<string, string>, reply: Reply): Array<string> => {
  if (path.startsWith("/_sim/")) return control.check({ method, url: path, status: reply.status, headers: reply.headers, body: reply.body })
  if (path === "/docs" || contract.match(method, path) === undefined) return []
  return contract.check({ method, url: path, status: reply.status, headers: reply.headers, body: reply.body })
}

/**
 * A request as the transport hands it to the Gateway, for the tests that call the Gateway directly: `path` may hold a
 * query; `body` is the raw text; `remoteAddress` only where a test needs one (no socket, no address).
 */
export const engineRequest = (
  method: string,
  path: string,
  headers: Readonly<Record<string, string | undefined>> = {},
  body?: string,
  remoteAddress?: string
): EngineRequest => {
  const [pathname = "", search = ""] = path.split("?")
  return {
    method,
    path: pathname,
    query: new URLSearchParams(search),
    search: search === "" ? "" : `?${search}`,
    headers,
    body,
    ...(remoteAddress === undefined ? {} : { remoteAddress })
  }
}

export const ADMIN = "test-admin"
export const MONDAY_OPEN = Date.parse("2026-11-23T08:00:00.000Z")

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

export const startEngine = (
  options: {
    seed?: number
    desk?: "manual" | "auto"
    start?: number
    /** Webhook endpoints the test scripts (the engine's outbound calls go to them). */
    receivers?: SimReceivers
    /** Or a whole Outbound layer (a sender that fails on purpose). */
    outbound?: Parameters<typeof makeInProcessEngine>[0]["outbound"]
    /** Another store (postgres tests pass a temporary database's URL). */
    store?: "memory" | "postgres"
    databaseUrl?: string
    webhookSignatureHeaders?: ReadonlyArray<string>
    /** The gateway's dialect (http/dialect.ts); the spec's by default. */
    dialect?: "spec" | "public-service"
  } = {}
) => {
  // The engine's log: printed as usual, except what a test captures with `log.during` (an error it provokes on purpose).
  const log = engineLog()
  const engine = makeInProcessEngine({
    store: options.store ?? (options.databaseUrl === undefined ? "memory" : "postgres"),
    databaseUrl: options.databaseUrl,
    ...(options.receivers === undefined ? {} : { outbound: Outbound.simulated(options.receivers) }),
    ...(options.outbound === undefined ? {} : { outbound: options.outbound }),
    webhookSignatureHeaders: options.webhookSignatureHeaders,
    dialect: options.dialect,
    clock: "manual",
    start: options.start ?? MONDAY_OPEN,
    seed: options.seed ?? 1,
    desk: options.desk ?? "manual",
    adminToken: ADMIN,
    logger: log.logger
  })
  const call = async (
    method: string,
    path: string,
    init: { headers?: Record<string, string>; body?: unknown; rawBody?: string; unchecked?: boolean; remoteAddress?: string } = {}
  ): Promise<Reply> => {
    const body = init.rawBody ?? (init.body === undefined ? undefined : JSON.stringify(init.body))
    const response = await engine.fetch(
      new Request(`http://sokoni.test${path}`, {
        method,
        headers: { "content-type": "application/json", ...init.headers },
        ...(body === undefined ? {} : { body })
      }),
      init.remoteAddress
    )
    // An open event stream never ends: `call` takes its head and lets it go (test/http/stream-kit.ts reads streams).
    const streaming = response.headers.get("content-type")?.startsWith("text/event-stream") === true
    if (streaming) await response.body?.cancel()
    const text = streaming ? "" : await response.text()
    let parsed: unknown = text
    try {
      // a text answer (the ndjson trace, even of one line) stays text; an empty JSON answer is null
      const json = response.headers.get("content-type")?.startsWith("application/json") ?? true
      parsed = !json ? text : text === "" ? null : JSON.parse(text)
    } catch {
      // not JSON (the ndjson trace)
    }
    const reply = { status: response.status, headers: response.headers, body: parsed }
    // `unchecked`: only for operations the engine does not serve yet, whose 404 the contract cannot declare.
    const problems = init.unchecked === true ? [] : contractProblems(method, path, init.headers ?? {}, reply)
    if (problems.length > 0) throw new Error(`response breaks the contract:\n  ${problems.join("\n  ")}`)
    return reply
  }
  const admin = (method: string, path: string, body?: unknown) => call(method, path, { headers: { authorization: `Bearer ${ADMIN}` }, body })
  const newPartner = async () => {
    const r = await admin("POST", "/_sim/partners", { businessName: "Test Partner", email: "test@partner.test", tier: "starter" })
    if (r.status !== 201) throw new Error(`bootstrap failed: ${JSON.stringify(r.body)}`)
    return r.body as { partnerId: string; sandboxKey: string; liveKey: string }
  }
  return { call, admin, newPartner, fetch: engine.fetch, runtime: engine.runtime, dispose: engine.dispose, log }
}

/**
 * A fresh engine on `store` and how to dispose of it: postgres runs on a temporary database of its own, created on the
 * server DATABASE_URL names and dropped by `dispose`. Tests that run on both stores skip postgres without DATABASE_URL.
 */
export const engineOn = async (store: "memory" | "postgres", options: Omit<Parameters<typeof startEngine>[0] & {}, "store" | "databaseUrl"> = {}) => {
  if (store === "memory") {
    const engine = startEngine(options)
    return { engine, dispose: () => engine.dispose() }
  }
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(process.env.DATABASE_URL ?? ""), scope))
  const engine = startEngine({ ...options, store: "postgres", databaseUrl: url })
  return {
    engine,
    dispose: async () => {
      await engine.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}
