/**
 * Reading the API key from a request: `Authorization: Bearer <key>` or `x-api-key: <key>` (spec Authentication 1:
 * "Both carry the same key"). Two different keys are refused, 401 AUTH_INVALID (E-314): which one the caller meant
 * cannot be known, and answering for either would act for a partner the other header did not name.
 * Pure; the lookup and the environment rule are PartnerService.authenticate's.
 */
import { type ApiFailure, fail } from "../../domain/errors.ts"

const bearerOf = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined) return undefined
  return /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1]
}

/** The key the request presents, undefined when it presents none, or AUTH_INVALID when its two headers disagree. */
export const apiKeyFrom = (headers: Readonly<Record<string, string | undefined>>): string | ApiFailure | undefined => {
  const bearer = bearerOf(headers.authorization)
  const header = headers["x-api-key"]?.trim()
  const other = header === undefined || header === "" ? undefined : header
  if (bearer !== undefined && other !== undefined && bearer !== other)
    return fail("AUTH_INVALID", "Authorization and x-api-key carry different keys; send one key, in either header or the same in both")
  return bearer ?? other
}
