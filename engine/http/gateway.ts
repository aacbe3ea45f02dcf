/**
 * The gateway: every HTTP request enters here. It picks the surface from the path (production base, sandbox base,
 * status, control API), runs the guard pipeline in the order the design fixes (maintenance > auth > rate limit >
 * sandbox force headers > idempotency > handler), renders every failure in the spec's envelope, and records the
 * exchange in the trace. It owns that order and nothing else: each guard and handler lives in its own module.
 *
 * Why not HttpApiMiddleware: the same API is mounted under two bases, maintenance must answer before routing, and
 * idempotency must capture and replay whole responses; one explicit pipeline says all of that in one place (E-001).
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { HttpServerResponse as Response } from "effect/http"
import { PartnerService } from "../app/partners.ts"
import { CurrentPrincipal, type Environment, type Principal } from "../app/principal.ts"
import { fail } from "../domain/errors.ts"
import type { TradingService } from "../app/trading.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import type { Scheduler } from "../sim/scheduler.ts"
import { Trace } from "../sim/trace.ts"
import { handleControl } from "./control.ts"
import { errorResponse, renderCause } from "./errors.ts"
import { apiKeyFrom } from "./guards/credentials.ts"
import { checkKey, fingerprintOf, Idempotency, MUTATING_METHODS } from "./guards/idempotency.ts"
import { Maintenance } from "./guards/maintenance.ts"
import { limitFor, RateLimiter, rateHeaders } from "./guards/rate-limit.ts"
import { forcedFailure, forcedHeaders } from "./guards/sandbox-force.ts"
import { PartnerApiRoutes } from "./handlers.ts"

export const BASES: ReadonlyArray<{ readonly prefix: string; readonly environment: Environment }> = [
  { prefix: "/api/sandbox/v1/partner", environment: "sandbox" },
  { prefix: "/api/v1/partner", environment: "production" }
]
export const SANDBOX_ROOT = "/api/sandbox/v1"
export const STATUS_PATH = "/api/v1/status"
export const DOCS_PATH = "/docs"
/** The rendered contract (npm run docs:api), served at /docs when it has been built. */
const API_REFERENCE = join(import.meta.dirname, "..", "..", "docs", "api", "index.html")

type ControlDeps = PartnerService | TradingService | EngineClock | Scheduler | Trace

export interface GatewayOptions {
  /** Admin bearer token of the control API; undefined disables `/_sim` (not a simulation). */
  readonly adminToken: string | undefined
}

/** The public status document (contract ServiceStatus, D-014). Incidents and maintenance windows come later. */
const statusBody = (now: number) => ({
  status: "operational",
  version: "1",
  timestamp: isoAt(now),
  maintenance: null,
  services: ["api", "trading", "market-data", "webhooks", "stream"].map((name) => ({ name, status: "operational" })),
  incidents: []
})

const bodyTextOf = (response: HttpServerResponse.HttpServerResponse): string | undefined => {
  const body = response.body
  if (body._tag === "Uint8Array") return new TextDecoder().decode(body.body)
  if (body._tag === "Empty") return ""
  return undefined // streams are passed through untouched
}

const parseOrText = (text: string | undefined): unknown => {
  if (text === undefined || text === "") return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

const withHeaders = (response: HttpServerResponse.HttpServerResponse, headers: Record<string, string>) => Response.setHeaders(response, headers)

export class Gateway extends Context.Service<
  Gateway,
  { readonly handle: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<HttpServerResponse.HttpServerResponse> }
>()("sokoni/Gateway") {
  static readonly make = (options: GatewayOptions) =>
    Effect.gen(function* () {
      const partnerApp = yield* HttpRouter.toHttpEffect(PartnerApiRoutes)
      const partners = yield* PartnerService
      const clock = yield* EngineClock
      const trace = yield* Trace
      const maintenance = yield* Maintenance
      const limiter = yield* RateLimiter
      const idempotency = yield* Idempotency
      const context = yield* Effect.context<ControlDeps>()
      const apiReference = existsSync(API_REFERENCE) ? readFileSync(API_REFERENCE, "utf8") : undefined

      const callPartnerApi = (principal: Principal, method: string, rest: string, search: string, headers: Record<string, string>, body: string) => {
        const inner = HttpServerRequest.fromWeb(
          new Request(`http://sokoni.local${rest}${search}`, { method, headers, ...(body === "" || method === "GET" ? {} : { body }) })
        )
        return partnerApp.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, inner),
          Effect.provideService(CurrentPrincipal, principal),
          Effect.scoped,
          Effect.catchCause(renderCause)
        )
      }

      /** Guards and handler for one partner request; failures are returned as envelope responses. */
      const partnerPipeline = Effect.fn("Gateway.partner")(function* (
        environment: Environment,
        method: string,
        rest: string,
        search: string,
        headers: Record<string, string>,
        body: string
      ) {
        const now = yield* clock.now
        const down = yield* maintenance.check(method, now)
        if (down !== undefined) return errorResponse(down.failure, { "retry-after": String(down.retryAfter) })

        const raw = apiKeyFrom(headers)
        if (raw === undefined) return errorResponse(fail("AUTH_MISSING", "send your API key as `Authorization: Bearer <key>` or `x-api-key: <key>`"))
        const principal = yield* partners.authenticate(raw, environment)

        const decision = yield* limiter.take(`${principal.partnerId}:${environment}`, limitFor(principal.tier, environment), now)
        const limitHeaders = rateHeaders(decision)
        if (!decision.allowed) {
          const message = `rate limit exceeded: tier ${environment === "sandbox" ? "sandbox" : principal.tier}, ${decision.limit} requests per minute, resets in ${decision.retryAfterSeconds} s`
          return errorResponse(fail("RATE_LIMITED", message, { limit: decision.limit }), { ...limitHeaders, "retry-after": String(decision.retryAfterSeconds) })
        }
        const respond = (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
          effect.pipe(
            Effect.catchCause(renderCause),
            Effect.map((r) => withHeaders(r, limitHeaders))
          )

        if (environment === "sandbox") {
          const forced = forcedFailure(headers)
          if (forced !== undefined) return withHeaders(errorResponse(forced, forcedHeaders(forced)), limitHeaders)
        }
        if (!MUTATING_METHODS.has(method)) return yield* respond(callPartnerApi(principal, method, rest, search, headers, body))

        const key = headers["idempotency-key"]
        const keyProblem = checkKey(key)
        if (keyProblem !== undefined || key === undefined)
          return withHeaders(errorResponse(keyProblem ?? fail("MISSING_IDEMPOTENCY_KEY", "missing")), limitHeaders)
        const fingerprint = fingerprintOf(method, rest + search, body)
        return yield* respond(
          Effect.gen(function* () {
            const outcome = yield* idempotency.begin(principal.partition, key, fingerprint, now)
            if (outcome._tag === "Replay") {
              return Response.text(outcome.record.body, {
                status: outcome.record.status,
                contentType: "application/json",
                headers: { ...outcome.record.headers, "idempotent-replayed": "true" }
              })
            }
            return yield* callPartnerApi(principal, method, rest, search, headers, body).pipe(
              Effect.tap((response) => {
                const text = bodyTextOf(response)
                // 5xx answers are not stored: the spec says such a request is safe to resend with the same key.
                if (response.status >= 500 || text === undefined) return Effect.void
                return idempotency.complete(principal.partition, key, { fingerprint, status: response.status, headers: {}, body: text, storedAt: now })
              }),
              Effect.ensuring(outcome.release)
            )
          })
        )
      })

      const route = (
        request: HttpServerRequest.HttpServerRequest,
        url: URL,
        body: string
      ): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, ControlDeps> => {
        const path = url.pathname.replace(/\/+$/, "") || "/"
        const method = request.method.toUpperCase()
        const headers = request.headers as Record<string, string>
        if (path === DOCS_PATH && method === "GET") {
          return Effect.succeed(
            apiReference === undefined
              ? errorResponse(fail("NOT_FOUND", "the API reference is not built: run npm run docs:api"))
              : Response.text(apiReference, { contentType: "text/html; charset=utf-8" })
          )
        }
        if (path === STATUS_PATH && method === "GET") {
          return Effect.map(clock.now, (now) => Response.jsonUnsafe(statusBody(now)))
        }
        if (path === "/_sim" || path.startsWith("/_sim/")) {
          if (options.adminToken === undefined) return Effect.succeed(errorResponse(fail("NOT_FOUND", "the control API exists only in simulation mode")))
          const token = /^Bearer\s+(\S+)$/i.exec(headers.authorization ?? "")?.[1]
          if (token === undefined) return Effect.succeed(errorResponse(fail("AUTH_MISSING", "the control API needs `Authorization: Bearer <admin token>`")))
          if (token !== options.adminToken) return Effect.succeed(errorResponse(fail("AUTH_INVALID", "wrong admin token")))
          return handleControl(method, path, body)
        }
        for (const base of BASES) {
          if (path === base.prefix || path.startsWith(`${base.prefix}/`)) {
            return partnerPipeline(base.environment, method, path.slice(base.prefix.length) || "/", url.search, headers, body)
          }
        }
        if (path.startsWith(`${SANDBOX_ROOT}/`)) {
          return Effect.succeed(errorResponse(fail("NOT_FOUND", `${path} is not simulated yet (sandbox register and reset arrive with the accounts issue)`)))
        }
        return Effect.succeed(
          errorResponse(fail("NOT_FOUND", `no route ${method} ${path}: partner routes live under /api/v1/partner and /api/sandbox/v1/partner`))
        )
      }

      const handle = (request: HttpServerRequest.HttpServerRequest) =>
        Effect.gen(function* () {
          const url = new URL(request.url, "http://sokoni.local")
          const body = yield* request.text.pipe(Effect.catch(() => Effect.succeed("")))
          const response = yield* route(request, url, body).pipe(Effect.catchCause(renderCause))
          if (!url.pathname.startsWith("/_sim/trace")) {
            yield* trace.record({
              kind: "http",
              method: request.method,
              path: url.pathname + url.search,
              request: parseOrText(body),
              status: response.status,
              response: parseOrText(bodyTextOf(response))
            })
          }
          return response
        }).pipe(Effect.provideContext(context))

      return Gateway.of({ handle })
    })

  static readonly layer = (options: GatewayOptions) => Layer.effect(Gateway, Gateway.make(options))
}
