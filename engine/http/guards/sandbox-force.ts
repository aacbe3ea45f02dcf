/**
 * Sandbox scenario headers (spec "Sandbox scenario simulation", decision D-018): `X-Sandbox-Force-Status` forces the
 * HTTP status, `X-Sandbox-Force-Error` forces `error.code`. Pure. Honoured on the sandbox only, after auth and rate
 * limiting; the request is not processed. A forced status must be an error status the operation declares in the
 * contract, so every forced answer is one the contract allows (D-018 revised); a code alone answers with its own
 * status, which must be declared too. Anything else answers 400 VALIDATION_ERROR naming what can be forced here.
 */
import { type ApiFailure, ApiFailure as Failure, ERROR_STATUS, type ErrorCode, fail, isErrorCode } from "../../domain/errors.ts"

/** The code a forced status answers with when no code is forced (D-018). */
export const DEFAULT_CODE: Readonly<Record<number, ErrorCode>> = {
  400: "VALIDATION_ERROR",
  401: "AUTH_INVALID",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  422: "MARKET_CLOSED",
  429: "RATE_LIMITED",
  500: "INTERNAL_ERROR",
  502: "WEBHOOK_TEST_FAILED",
  503: "SERVICE_UNAVAILABLE"
}

/** `declared`: the statuses the operation's contract lists. */
export const forcedFailure = (headers: Readonly<Record<string, string | undefined>>, declared: ReadonlyArray<number>): ApiFailure | undefined => {
  const rawStatus = headers["x-sandbox-force-status"]?.trim()
  const rawCode = headers["x-sandbox-force-error"]?.trim()
  if (rawStatus === undefined && rawCode === undefined) return undefined
  const forceable = declared.filter((s) => s >= 400 && DEFAULT_CODE[s] !== undefined)
  const status = rawStatus === undefined ? undefined : Number(rawStatus)
  if (status !== undefined && !forceable.includes(status)) {
    return fail("VALIDATION_ERROR", `X-Sandbox-Force-Status must be one of ${forceable.join(", ")} on this operation`, {
      param: "X-Sandbox-Force-Status",
      allowedStatuses: forceable
    })
  }
  if (rawCode !== undefined && !isErrorCode(rawCode)) {
    return fail("VALIDATION_ERROR", "X-Sandbox-Force-Error must be one of the contract's error codes (upper case)", { param: "X-Sandbox-Force-Error" })
  }
  const code: ErrorCode = rawCode ?? (DEFAULT_CODE[status ?? 500] as ErrorCode)
  const finalStatus = status ?? ERROR_STATUS[code]
  if (!forceable.includes(finalStatus)) {
    return fail(
      "VALIDATION_ERROR",
      `${code} answers ${finalStatus}, which this operation does not declare; also send X-Sandbox-Force-Status (${forceable.join(", ")})`,
      {
        param: "X-Sandbox-Force-Error"
      }
    )
  }
  return new Failure({ code, message: `forced by the X-Sandbox-Force-* request headers (${code})`, status: finalStatus })
}

/** Forced 429 and 503 answers carry Retry-After like real ones. */
export const forcedHeaders = (failure: ApiFailure): Record<string, string> =>
  failure.httpStatus === 429 || failure.httpStatus === 503 ? { "retry-after": "1" } : {}
