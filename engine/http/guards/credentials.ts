/**
 * Reading the API key from a request: `Authorization: Bearer <key>` or `x-api-key: <key>` (spec Authentication 1).
 * Pure; the lookup and the environment rule are PartnerService.authenticate's.
 */
export const apiKeyFrom = (headers: Readonly<Record<string, string | undefined>>): string | undefined => {
  const auth = headers.authorization
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth)
    if (match?.[1] !== undefined) return match[1]
  }
  const key = headers["x-api-key"]?.trim()
  return key === undefined || key === "" ? undefined : key
}
