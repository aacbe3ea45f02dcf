/**
 * The fault guard (docs/faults.md): one step of the gateway's pipeline, after authentication and the rate limit and
 * before the request is decoded or run. It asks the plan in force (sim/faults.ts) what this request meets: added
 * latency (a wait on the engine clock), then possibly an answer in place of running it: 429 or 503 with Retry-After,
 * 500, or a timeout (the socket held with no answer, then hung up). Because the decision comes before the command, an
 * injected answer never leaves state half-written: no receipt is stored under the Idempotency-Key, so a retry with the
 * same key runs exactly once (the spec says so of every 503). It also notes how a client answers a fault it met.
 */
import { Effect } from "effect"
import type { Principal } from "../../app/principal.ts"
import { fail } from "../../domain/errors.ts"
import type { Faults, RequestFault } from "../../sim/faults.ts"
import { type EngineRequest, type EngineResponse, errorResponse } from "../exchange.ts"
import { fingerprintOf } from "./idempotency.ts"

/** What a timeout fault answers after its hold: nothing, the connection closed (the trace says 504, E-372). */
export const HUNG_UP: EngineResponse = { status: 504, headers: {}, body: "", hangUp: true }

const AFTER = "the request was not processed; retry it unchanged with the same Idempotency-Key"

const answerOf = (answer: NonNullable<RequestFault["answer"]>, operationId: string): EngineResponse | undefined => {
  switch (answer.fault) {
    case "429":
      return errorResponse(fail("RATE_LIMITED", `rate limit exceeded (an injected fault on ${operationId}); ${AFTER} after Retry-After`), {
        "retry-after": String(answer.retryAfterSeconds ?? 1)
      })
    case "503":
      return errorResponse(
        fail("SERVICE_UNAVAILABLE", `a downstream dependency is unavailable (an injected fault on ${operationId}); ${AFTER} after Retry-After`),
        {
          "retry-after": String(answer.retryAfterSeconds ?? 1)
        }
      )
    case "500":
      return errorResponse(fail("INTERNAL_ERROR", `unexpected failure (an injected fault on ${operationId}); ${AFTER}`))
    default:
      return undefined
  }
}

/** The fault this request meets, already waited out: an answer to send instead of running it, or undefined to run it. */
export const injectFault = (
  faults: Faults["Service"],
  input: {
    readonly operationId: string
    readonly declared: ReadonlyArray<number>
    readonly request: EngineRequest
    readonly principal: Principal | undefined
    readonly now: number
  }
): Effect.Effect<EngineResponse | undefined> =>
  Effect.gen(function* () {
    const { operationId, request, principal, now } = input
    const key = request.headers["idempotency-key"]
    const fingerprint = fingerprintOf(request.method, request.path + request.search, request.body ?? "")
    if (principal !== undefined) yield* faults.observe({ partition: principal.partition, idempotencyKey: key, fingerprint, now })
    const fault = yield* faults.forRequest({ operationId, declared: input.declared, partnerId: principal?.partnerId, now })
    if (fault === undefined) return undefined
    if (fault.latencyMs > 0) yield* faults.wait(fault.latencyMs)
    const answer = fault.answer
    if (answer === undefined) return undefined
    if (principal !== undefined)
      yield* faults.met({
        partnerId: principal.partnerId,
        operationId,
        method: request.method,
        fault: answer.fault,
        retryAfterSeconds: "retryAfterSeconds" in answer ? (answer.retryAfterSeconds ?? null) : null,
        idempotencyKey: key ?? null,
        partition: principal.partition,
        fingerprint
      })
    if (answer.fault !== "timeout") return answerOf(answer, operationId)
    yield* faults.wait(answer.holdMs)
    return HUNG_UP
  })
