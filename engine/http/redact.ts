/**
 * What the trace may keep of a credential: raw keys and tokens (spec: "stored only as SHA-256 hashes", "displayed
 * once") are masked to their prefix and last 4 characters before an exchange is recorded, wherever they appear in a
 * body (a register answer, an OAuth form). E-030.
 */
const SECRET = /\b(sk_sandbox_|pk_live_|pk_data_|svc_oauth_)([A-Za-z0-9]+)/g

/** Whether a body's text contains a key or token prefix (cheap, checked before walking its value). */
export const mayHoldSecret = (text: string): boolean =>
  text.includes("sk_sandbox_") || text.includes("pk_live_") || text.includes("pk_data_") || text.includes("svc_oauth_")

export const redactText = (text: string): string => text.replace(SECRET, (_all, prefix: string, rest: string) => `${prefix}…${rest.slice(-4)}`)

/** A JSON value with every string redacted (keys of objects included). */
export const redactSecrets = (value: unknown): unknown => {
  if (typeof value === "string") return redactText(value)
  if (Array.isArray(value)) return value.map(redactSecrets)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[redactText(k)] = redactSecrets(v)
    return out
  }
  return value
}
