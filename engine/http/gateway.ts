/**
 * The gateway: every request enters here, from the Node server or the in-process `fetch`. It finds the surface
 * (partner bases, sandbox root, public `/api/v1`, control API), matches a declared route, and runs the guards in the
 * order the design fixes: maintenance > (per source IP for operations without a key) > auth > rate limit > sandbox
 * force > faults > decode (read in the engine's dialect, http/dialect.ts) > idempotency > handler. Every failure leaves in the spec's envelope; a 5xx is never stored under an
 * Idempotency-Key; the exchange goes to the trace (exchange-trace.ts). It owns that order and nothing else: each guard, decoder and handler lives in its own module.
 */
import { Context, Effect, Layer } from "effect"
import { PARTNER_OPERATIONS } from "../contract/catalogue.gen.ts"
import { AuditTrail, type Observed } from "../app/audit.ts"
import { PartnerService } from "../app/partners/service.ts"
import { type Environment, type Principal, scopeAllows } from "../app/principal.ts"
import { addressAllowed } from "../domain/cidr.ts"
import { ApiFailure, fail } from "../domain/errors.ts"
import { ConsoleFeed } from "../events/console-feed.ts"
import { EngineClock } from "../sim/clock.ts"
import { Trace } from "../sim/trace.ts"
import { isFailure } from "./body.ts"
import { Dialect, type DialectNote } from "./dialect.ts"
import { type EngineRequest, type EngineResponse, errorResponse, jsonResponse, withHeaders } from "./exchange.ts"
import { makeExchangeTrace, observes } from "./exchange-trace.ts"
import { providing } from "./provided-context.ts"
import { apiKeyFrom } from "./guards/credentials.ts"
import { checkKey, fingerprintOf, Idempotency, MUTATING_METHODS, OUTSIDE_TRANSACTION } from "./guards/idempotency.ts"
import { Maintenance } from "./guards/maintenance.ts"
import { injectFault } from "./guards/faults.ts"
import { Faults } from "../sim/faults.ts"
import { limitFor, RateLimiter, rateHeaders, SOURCE_IP_LIMIT, sourceBucket } from "./guards/rate-limit.ts"
import { forcedFailure, forcedHeaders } from "./guards/sandbox-force.ts"
import { RawBody, type Mount, type Route, StreamBody, WithStatus } from "./route.ts"
import { makeRouter } from "./router.ts"

export const BASES: ReadonlyArray<{ readonly prefix: string; readonly environment: Environment }> = [
  { prefix: "/api/sandbox/v1/partner", environment: "sandbox" },
  { prefix: "/api/v1/partner", environment: "production" }
]
export const SANDBOX_ROOT = "/api/sandbox/v1"
export const PUBLIC_ROOT = "/api/v1"
export const CONTROL_ROOT = "/_sim"
/** Largest total of header names and values accepted (Node's own limit is set to the same in node-server.ts). */
export const MAX_HEADER_BYTES = 16 * 1024

export interface GatewayOptions {
  /** Admin bearer token of the control API; undefined disables `/_sim` (not a simulation). */
  readonly adminToken: string | undefined
}

interface Located {
  readonly mount: Mount
  readonly environment: Environment
  readonly rest: string
}

// The prefixes with their slash, made once (locate runs on every request).
const BASES_WITH_SLASH = BASES.map((base) => ({ ...base, slashed: `${base.prefix}/` }))
const SANDBOX_ROOT_SLASH = `${SANDBOX_ROOT}/`
const PUBLIC_ROOT_SLASH = `${PUBLIC_ROOT}/`
const CONTROL_ROOT_SLASH = `${CONTROL_ROOT}/`

/** Which surface a path belongs to, and the path within it. */
export const locate = (path: string): Located | undefined => {
  for (const base of BASES_WITH_SLASH) {
    if (path === base.prefix || path.startsWith(base.slashed))
      return { mount: "partner", environment: base.environment, rest: path.slice(base.prefix.length) || "/" }
  }
  if (path.startsWith(SANDBOX_ROOT_SLASH)) return { mount: "sandboxRoot", environment: "sandbox", rest: path.slice(SANDBOX_ROOT.length) }
  if (path.startsWith(PUBLIC_ROOT_SLASH)) return { mount: "public", environment: "production", rest: path.slice(PUBLIC_ROOT.length) }
  if (path === CONTROL_ROOT || path.startsWith(CONTROL_ROOT_SLASH)) return { mount: "control", environment: "sandbox", rest: path }
  return undefined
}

const headerBytes = (headers: Readonly<Record<string, string | undefined>>) => {
  let total = 0
  // for-in, not Object.entries: this runs on every request and should not allocate.
  for (const name in headers) total += name.length + (headers[name]?.length ?? 0)
  return total
}

/** Operations the contract names that this engine does not serve yet: answered 404 with a clear message. */
const contractRouters = new Map(
  (["partner", "sandboxRoot", "public"] as const).map((mount) => [
    mount,
    makeRouter(PARTNER_OPERATIONS.filter((o) => o.mount === mount).map((o) => ({ method: o.method, path: o.path, operationId: o.operationId })))
  ])
)

export type RouteServices<Routes> = Routes extends ReadonlyArray<Route<infer R>> ? R : never

export class Gateway extends Context.Service<Gateway, { readonly handle: (request: EngineRequest) => Effect.Effect<EngineResponse> }>()("sokoni/Gateway") {
  static readonly make = <R>(options: GatewayOptions, routes: ReadonlyArray<Route<R>>) =>
    Effect.gen(function* () {
      const context = yield* Effect.context<
        R | PartnerService | EngineClock | Trace | RateLimiter | Maintenance | Idempotency | AuditTrail | Dialect | Faults | ConsoleFeed
      >()
      const partners = yield* PartnerService
      const clock = yield* EngineClock
      const limiter = yield* RateLimiter
      const maintenance = yield* Maintenance
      const idempotency = yield* Idempotency
      const audit = yield* AuditTrail
      const faults = yield* Faults
      // Consulted where the dialects differ: the legacy root, the body decoded, a missing key (http/dialect.ts).
      const dialect = yield* Dialect
      // The trace line and the console's notice of each exchange (exchange-trace.ts).
      const { traced } = makeExchangeTrace(yield* Trace, yield* ConsoleFeed)
      const routers = new Map<Mount, ReturnType<typeof makeRouter<Route<R>>>>()
      for (const mount of ["partner", "sandboxRoot", "public", "control"] as const) routers.set(mount, makeRouter(routes.filter((r) => r.mount === mount)))

      const notRouted = (request: EngineRequest, where: Located): EngineResponse => {
        const known = contractRouters.get(where.mount as "partner")?.find(request.method, where.rest) ?? { _tag: "NotFound" as const }
        if (known._tag === "Found")
          return errorResponse(
            fail("NOT_FOUND", `${known.route.operationId} (${request.method} ${known.route.path}) is in the contract but not simulated yet: see the README`)
          )
        const allowed = routers.get(where.mount)?.find(request.method, where.rest)
        if (allowed?._tag === "MethodNotAllowed" || known._tag === "MethodNotAllowed") {
          const allow = allowed?._tag === "MethodNotAllowed" ? allowed.allow : known._tag === "MethodNotAllowed" ? known.allow : []
          // The catalogue has no 405 code; the spec's "unlisted codes are those in Errors" makes it a 404 (E-015).
          return errorResponse(fail("NOT_FOUND", `${request.method} is not an operation of ${request.path}; it takes ${allow.join(", ")}`), {
            allow: allow.join(", ")
          })
        }
        return errorResponse(
          fail("NOT_FOUND", `no route ${request.method} ${request.path}: partner routes live under /api/v1/partner and /api/sandbox/v1/partner`)
        )
      }

      const success = (route: Route<R>, value: unknown): EngineResponse =>
        value instanceof RawBody
          ? { status: route.successStatus, headers: { "content-type": value.contentType }, body: value.text }
          : value instanceof WithStatus
            ? jsonResponse(value.status, value.body)
            : value instanceof StreamBody
              ? {
                  status: route.successStatus,
                  headers: { ...value.headers, "content-type": value.contentType },
                  body: "",
                  value: value.contentType,
                  stream: value.chunks
                }
              : jsonResponse(route.successStatus, value)

      /** Runs the handler; business failures become envelopes, anything else a 500 that is logged, never stored. */
      /** A keyed command's rows read with its lock: the audit record's, then the handler's own (E-472). */
      const readsWith = (route: Route<R>, input: Parameters<Route<R>["run"]>[0], principal: Principal) => () => [
        ...audit.reads(principal.partition),
        ...(route.readsAhead?.(input, principal, context) ?? [])
      ]
      const invoke = (route: Route<R>, input: Parameters<Route<R>["run"]>[0], principal: Principal | undefined, request: EngineRequest) =>
        route.run(input, principal, request).pipe(
          Effect.map((value) => success(route, value)),
          Effect.catchCause((cause) => {
            const failure = cause.reasons.flatMap((r) => (r._tag === "Fail" && r.error instanceof ApiFailure ? [r.error] : []))[0]
            if (failure !== undefined)
              return Effect.succeed(errorResponse(failure, failure.retryAfter === undefined ? {} : { "retry-after": String(failure.retryAfter) }))
            return Effect.logError(`unexpected failure in ${route.operationId}`, cause).pipe(
              Effect.as(errorResponse(fail("INTERNAL_ERROR", "unexpected failure; safe to retry with the same Idempotency-Key")))
            )
          })
        )

      /** Observes a command's answer inside its transaction (E-289); marked, so `handle` does not observe it again. */
      const recordIn = (seen: Observed, request: EngineRequest) => (response: EngineResponse) => {
        seen.audited = true
        return audit.observe(request, seen, response)
      }

      const noPrincipal: Effect.Effect<Principal | undefined> = Effect.succeed(undefined)
      // A function that returns the partner service's effect, not a generator of its own: it runs on every request,
      // where a generator's three steps are measurable (issue 25), as a span per call was (docs/performance.md).
      const authenticate = (request: EngineRequest, auth: Route<R>["auth"], where: Located) => {
        // ID tokens and client secrets are verified by the operation itself (portalRoute): no partner key here.
        if (auth === "none" || auth === "idToken" || auth === "clientSecret") return noPrincipal
        if (auth === "admin") {
          const token = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1]
          if (token === undefined) return Effect.fail(fail("AUTH_MISSING", "the control API needs `Authorization: Bearer <admin token>`"))
          if (token !== options.adminToken) return Effect.fail(fail("AUTH_INVALID", "wrong admin token"))
          return noPrincipal
        }
        const raw = apiKeyFrom(request.headers)
        if (raw instanceof ApiFailure) return Effect.fail(raw)
        if (raw === undefined) return Effect.fail(fail("AUTH_MISSING", "send your API key as `Authorization: Bearer <key>` or `x-api-key: <key>`"))
        return partners.authenticate(raw, where.environment)
      }

      /** The shared windows unreachable is a dependency outage: 503 with Retry-After, nothing processed (E-077). */
      const windowsDown = (error: unknown) =>
        Effect.as(
          Effect.logError("rate-limit windows unavailable", error),
          errorResponse(fail("SERVICE_UNAVAILABLE", "the service is briefly unavailable; nothing was processed, retry shortly"), { "retry-after": "1" })
        )

      const serve = Effect.fnUntraced(function* (request: EngineRequest, seen: Observed, notes: Array<DialectNote>) {
        if (headerBytes(request.headers) > MAX_HEADER_BYTES)
          return errorResponse(new ApiFailure({ code: "VALIDATION_ERROR", message: `request headers exceed ${MAX_HEADER_BYTES} bytes`, status: 431 }))
        const where = locate(request.path)
        if (where === undefined || (where.mount === "control" && options.adminToken === undefined)) {
          return errorResponse(
            fail("NOT_FOUND", where === undefined ? `no route ${request.method} ${request.path}` : "the control API exists only in simulation mode")
          )
        }
        const matched = routers.get(where.mount)?.find(request.method, where.rest)
        // The contract decides which operation a path is (`/orders/blotter` is getOrderBlotter, not getOrder with
        // orderId "blotter"), even when only the parameterised one is served yet.
        const meant = contractRouters.get(where.mount as "partner")?.find(request.method, where.rest)
        const found = matched?._tag === "Found" && !(meant?._tag === "Found" && meant.route.operationId !== matched.route.operationId) ? matched : undefined
        // Off the partner bases an unknown path answers at once; on them the caller is authenticated and counted
        // first, as every keyed answer carries the rate-limit headers (D-002).
        if (found === undefined && where.mount !== "partner") return notRouted(request, where)
        const route = found?.route
        // What the audit and usage hook will need once the exchange is answered (app/audit.ts).
        seen.route = route
        seen.params = found?.params
        const now = yield* clock.nowHere()
        seen.at = now
        if (where.mount !== "control") {
          const down = yield* maintenance.check(request.method, now, route?.operationId)
          if (down !== undefined) return errorResponse(down.failure, { "retry-after": String(down.retryAfter) })
        }
        // No partner key, no partner bucket: these operations are limited per source IP before their credentials are
        // checked (a token endpoint counts failed guesses too), with no X-RateLimit headers (D-321).
        if (route !== undefined && where.mount !== "control" && (route.auth === "none" || route.auth === "idToken" || route.auth === "clientSecret")) {
          const taken = yield* Effect.result(limiter.take(sourceBucket(request.remoteAddress, route.operationId), SOURCE_IP_LIMIT, now))
          if (taken._tag === "Failure") return yield* windowsDown(taken.failure)
          if (!taken.success.allowed) {
            const seconds = taken.success.retryAfterSeconds
            const message = `rate limit exceeded: tier source-ip, ${SOURCE_IP_LIMIT} requests per minute, resets in ${seconds} s`
            return errorResponse(fail("RATE_LIMITED", message, { limit: SOURCE_IP_LIMIT }), { "retry-after": String(seconds) })
          }
        }
        const principal = yield* authenticate(request, route?.auth ?? "apiKey", where)
        seen.principal = principal
        // Every keyed answer is counted and carries the rate-limit headers (D-002), refusals included.
        let limitHeaders: Record<string, string> = {}
        if (principal !== undefined) {
          const taken = yield* Effect.result(limiter.take(`${principal.partnerId}:${where.environment}`, limitFor(principal.tier, where.environment), now))
          if (taken._tag === "Failure") return yield* windowsDown(taken.failure)
          const decision = taken.success
          limitHeaders = rateHeaders(decision)
          if (!decision.allowed) {
            const tier = where.environment === "sandbox" ? "sandbox" : principal.tier
            const message = `rate limit exceeded: tier ${tier}, ${decision.limit} requests per minute, resets in ${decision.retryAfterSeconds} s`
            return errorResponse(fail("RATE_LIMITED", message, { limit: decision.limit }), {
              ...limitHeaders,
              "retry-after": String(decision.retryAfterSeconds)
            })
          }
        }
        if (route === undefined || found === undefined) return withHeaders(notRouted(request, where), limitHeaders)
        if (route.mount === "partner" && !route.environments.includes(where.environment)) {
          const message = `${route.operationId} is not available in the ${where.environment} environment (spec: ${where.environment} unsupported)`
          return errorResponse(fail("FORBIDDEN", message), limitHeaders)
        }
        if (principal?.keyKind === "data" && (!route.dataKeyAllowed || request.method !== "GET")) {
          return errorResponse(fail("FORBIDDEN", "data keys are read-only: GET on the market-data families only"), limitHeaders)
        }
        if (principal?.ipAllowlist !== undefined && !addressAllowed(request.remoteAddress, principal.ipAllowlist)) {
          const message = `requests from ${request.remoteAddress ?? "an unknown address"} are outside the partner's ipAllowlist (GET /settings)`
          return errorResponse(fail("FORBIDDEN", message), limitHeaders)
        }
        if (principal !== undefined && !scopeAllows(principal, route.scopes)) {
          const message = `the access token's scopes do not include ${route.scopes.join(" or ")}, which ${route.operationId} needs`
          return errorResponse(fail("FORBIDDEN", message), limitHeaders)
        }
        const respond = (response: EngineResponse) => withHeaders(response, limitHeaders)
        if (where.environment === "sandbox" && where.mount !== "control") {
          const forced = forcedFailure(request.headers, route.statuses)
          if (forced !== undefined) return respond(errorResponse(forced, forcedHeaders(forced)))
        }
        // A fault plan (docs/faults.md) decides before the command runs, so an injected answer writes nothing.
        if (where.mount !== "control" && faults.busy()) {
          const injected = yield* injectFault(faults, { operationId: route.operationId, declared: route.statuses, request, principal, now })
          if (injected !== undefined) return respond(injected)
        }
        // Asked before decoding, so a request the spec refuses for its body is also told about its missing key.
        const keyless =
          route.idempotent && principal !== undefined && request.headers["idempotency-key"] === undefined && dialect.keyless(route.operationId, notes)
        const input = route.decode(dialect.adapt(route.operationId, request, notes), found.params)
        if (isFailure(input)) return respond(errorResponse(input))
        if (!route.idempotent || principal === undefined || keyless) {
          if (!MUTATING_METHODS.has(request.method) || OUTSIDE_TRANSACTION.has(route.operationId))
            return respond(yield* invoke(route, input, principal, request))
          // A mutation without a key is one transaction too: its writes and its audit record (E-289).
          const unkeyed = idempotency.executeUnkeyed({
            run: Effect.suspend(() => invoke(route, input, principal, request)),
            record: recordIn(seen, request)
          })
          return respond(yield* unkeyed)
        }

        const key = request.headers["idempotency-key"]
        const keyProblem = checkKey(key)
        if (keyProblem !== undefined || key === undefined) return respond(errorResponse(keyProblem ?? fail("MISSING_IDEMPOTENCY_KEY", "missing")))
        const fingerprint = fingerprintOf(request.method, where.rest + request.search, request.body ?? "")
        // One transaction: the receipt, the handler's writes, the kept answer and its audit record (E-289).
        const executed = yield* Effect.result(
          idempotency.execute({
            partition: principal.partition,
            key,
            fingerprint,
            now,
            run: Effect.suspend(() => invoke(route, input, principal, request)),
            outside: OUTSIDE_TRANSACTION.has(route.operationId),
            record: recordIn(seen, request),
            reads: route.readsAhead === undefined ? () => audit.reads(principal.partition) : readsWith(route, input, principal)
          })
        )
        if (executed._tag === "Failure") {
          if (executed.failure instanceof ApiFailure) return respond(errorResponse(executed.failure))
          return yield* Effect.fail(executed.failure)
        }
        const outcome = executed.success
        if (outcome._tag === "Ran") return respond(outcome.response)
        const r = outcome.record
        return respond({ status: r.status, headers: { "content-type": "application/json", ...r.headers, "idempotent-replayed": "true" }, body: r.body })
      })

      // Made once: this runs on every request, and a closure made per request is garbage per request.
      const failed = (failure: ApiFailure | { readonly _tag: string }) =>
        failure instanceof ApiFailure
          ? Effect.succeed(errorResponse(failure))
          : Effect.logError("store failure in the gateway", failure).pipe(Effect.as(errorResponse(fail("INTERNAL_ERROR", "unexpected failure; safe to retry"))))

      /**
       * What follows every answer, in order: its audit record (a kept command's was written in its own transaction,
       * E-289), its trace line, the dialect's notes. One continuation that chains only what applies: three taps made
       * and ran a step or more each even when they had nothing to do (issue 25).
       */
      const after = (sent: EngineRequest, request: EngineRequest, seen: Observed, notes: Array<DialectNote>) => (response: EngineResponse) => {
        let work: Effect.Effect<void> = seen.audited === true ? Effect.void : audit.observe(request, seen, response)
        if (!observes(request)) work = work === Effect.void ? traced(sent, request, response) : Effect.andThen(work, traced(sent, request, response))
        if (notes.length > 0) work = Effect.andThen(work, dialect.report(notes, request, seen.principal, response.status))
        return work === Effect.void ? Effect.succeed(response) : Effect.as(work, response)
      }

      // The gateway's services, given to each request without a copy of the caller's context when it holds them (E-501).
      const withServices = providing(context)
      const handle = (sent: EngineRequest): Effect.Effect<EngineResponse> => {
        const seen: Observed = {}
        const notes: Array<DialectNote> = []
        const request = dialect.enter(sent, notes)
        return serve(request, seen, notes).pipe(Effect.catch(failed), Effect.flatMap(after(sent, request, seen, notes)), Effect.updateContext(withServices))
      }

      return Gateway.of({ handle })
    })

  static readonly layer = <R>(options: GatewayOptions, routes: ReadonlyArray<Route<R>>) => Layer.effect(Gateway, Gateway.make(options, routes))
}
