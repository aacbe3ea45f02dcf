/**
 * Rendering failures as the spec's error envelope `{ error: { code, message, ...extras } }` with the right status.
 * Owns the mapping from anything that can go wrong in a request (our ApiFailure, schema decode errors, unknown
 * routes, unparsable bodies, defects) to one response. Never lets a 500 carry internals.
 */
import { Cause, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { ApiFailure, fail } from "../domain/errors.ts"

export const errorResponse = (failure: ApiFailure, headers: Record<string, string> = {}) =>
  HttpServerResponse.jsonUnsafe({ error: { code: failure.code, message: failure.message, ...(failure.extras ?? {}) } }, { status: failure.httpStatus, headers })

const tagOf = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && "_tag" in value && typeof value._tag === "string" ? value._tag : undefined

/** Schema issue messages are long; the first line says what and where, which is what a caller needs. */
const firstLine = (text: string) => (text.split("\n")[0] ?? text).replace(/\s+/g, " ").trim()
const paramOf = (text: string) => /at \["([^"]+)"\]/.exec(text)?.[1]

/** Classifies one failure or defect from the HTTP pipeline into an ApiFailure (undefined = unexpected). */
export const classify = (value: unknown): ApiFailure | undefined => {
  if (value instanceof ApiFailure) return value
  const tag = tagOf(value)
  if (tag === "HttpApiSchemaError" || tag === "SchemaError") {
    const e = value as { kind?: string; cause?: { message?: string }; message?: string }
    const message = firstLine(e.cause?.message ?? e.message ?? "invalid request")
    const where = e.kind === undefined ? "request" : e.kind.toLowerCase()
    const param = paramOf(message)
    const extras = param === undefined ? undefined : { param }
    if (/Missing key/i.test(message)) return fail("MISSING_PARAM", `${where}: ${message}`, extras)
    return fail("VALIDATION_ERROR", `${where}: ${message}`, extras)
  }
  if (tag === "HttpServerError") {
    const reason = (value as { reason?: { _tag?: string } }).reason
    if (reason?._tag === "RouteNotFound") return fail("NOT_FOUND", "no such route: check the method, the base path and the spelling")
    if (reason?._tag === "RequestParseError") return fail("VALIDATION_ERROR", "the request body is not valid JSON")
  }
  return undefined
}

/** Turns a failed pipeline into an envelope response; unexpected causes become 500 INTERNAL_ERROR and are logged. */
export const renderCause = (cause: Cause.Cause<unknown>) => {
  for (const reason of cause.reasons) {
    const value = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    const failure = classify(value)
    if (failure !== undefined) return Effect.succeed(errorResponse(failure))
  }
  return Effect.logError("unexpected failure while handling a request", cause).pipe(
    Effect.as(errorResponse(fail("INTERNAL_ERROR", "unexpected failure; safe to retry with the same Idempotency-Key")))
  )
}
