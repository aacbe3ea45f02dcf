/**
 * Sandbox scenario headers (spec "Sandbox scenario simulation", decision D-018): `X-Sandbox-Force-Status` forces the
 * HTTP status, `X-Sandbox-Force-Error` forces `error.code`. Pure. Honoured on the sandbox base only, after auth and
 * rate limiting; the request is not processed. A status alone takes that status's default code, a code alone its
 * own status, both are used as given. Other statuses and unknown codes answer 400 VALIDATION_ERROR.
 */
import { type ApiFailure, ApiFailure as Failure, ERROR_STATUS, type ErrorCode, fail, isErrorCode } from "../../domain/errors.ts"

/** The statuses a sandbox caller may force, with the code each answers when no code is forced (D-018). */
export const FORCEABLE_STATUS: Readonly<Record<number, ErrorCode>> = {
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

export const forcedFailure = (headers: Readonly<Record<string, string | undefined>>): ApiFailure | undefined => {
  const rawStatus = headers["x-sandbox-force-status"]?.trim()
  const rawCode = headers["x-sandbox-force-error"]?.trim().toUpperCase()
  if (rawStatus === undefined && rawCode === undefined) return undefined
  const status = rawStatus === undefined ? undefined : Number(rawStatus)
  if (status !== undefined && FORCEABLE_STATUS[status] === undefined) {
    return fail("VALIDATION_ERROR", `X-Sandbox-Force-Status must be one of ${Object.keys(FORCEABLE_STATUS).join(", ")}`, { param: "X-Sandbox-Force-Status" })
  }
  if (rawCode !== undefined && !isErrorCode(rawCode)) {
    return fail("VALIDATION_ERROR", "X-Sandbox-Force-Error must be one of the spec's error codes", { param: "X-Sandbox-Force-Error" })
  }
  const code: ErrorCode = rawCode ?? (FORCEABLE_STATUS[status ?? 500] as ErrorCode)
  return new Failure({ code, message: `forced by the X-Sandbox-Force-* request headers (${code})`, status: status ?? ERROR_STATUS[code] })
}

/** Forced 429 and 503 answers carry Retry-After like real ones. */
export const forcedHeaders = (failure: ApiFailure): Record<string, string> =>
  failure.httpStatus === 429 || failure.httpStatus === 503 ? { "retry-after": "1" } : {}
