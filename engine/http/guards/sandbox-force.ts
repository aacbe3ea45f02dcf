/**
 * Sandbox scenario headers (spec "Sandbox scenario simulation"): `X-Sandbox-Force-Status` forces the HTTP status,
 * `X-Sandbox-Force-Error` forces `error.code`. Pure. Only the sandbox base honours them; production ignores them.
 * A forced answer is an error envelope; a forced 2xx status without an error code is ignored (nothing to force).
 */
import { type ApiFailure, ApiFailure as Failure, ERROR_STATUS, fail, isErrorCode } from "../../domain/errors.ts"

export const forcedFailure = (headers: Readonly<Record<string, string | undefined>>): ApiFailure | undefined => {
  const rawStatus = headers["x-sandbox-force-status"]
  const rawCode = headers["x-sandbox-force-error"]?.trim().toUpperCase()
  if (rawStatus === undefined && rawCode === undefined) return undefined
  const status = rawStatus === undefined ? undefined : Number(rawStatus)
  if (status !== undefined && (!Number.isInteger(status) || status < 100 || status > 599)) {
    return fail("VALIDATION_ERROR", "X-Sandbox-Force-Status must be an HTTP status from 100 to 599")
  }
  if (rawCode !== undefined && !isErrorCode(rawCode)) {
    return fail("VALIDATION_ERROR", `X-Sandbox-Force-Error must be one of the spec's error codes (${Object.keys(ERROR_STATUS).join(", ")})`)
  }
  if (rawCode === undefined && status !== undefined && status < 400) return undefined
  const code = rawCode ?? codeForStatus(status ?? 500)
  return new Failure({ code, message: `forced by sandbox scenario header (${code})`, status: status ?? ERROR_STATUS[code] })
}

const codeForStatus = (status: number) => {
  const found = (Object.entries(ERROR_STATUS) as Array<[keyof typeof ERROR_STATUS, number]>).find(([, s]) => s === status)
  return found?.[0] ?? (status >= 500 ? "INTERNAL_ERROR" : "VALIDATION_ERROR")
}
