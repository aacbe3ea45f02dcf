import { operations } from "./_util.js"

const RL = ["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]
const KEYED = new Set(["apiKeyBearer", "apiKeyHeader", "dataKeyBearer", "dataKeyHeader", "oauthClientCredentials"])
// Statuses answered after the rate limiter (D-002): 2xx and these errors carry the three headers, required. 401, 403
// and 503 are answered before it (auth failures, maintenance): the headers are optional there.
const PAST_LIMITER = new Set(["400", "404", "409", "422", "429", "500", "502"])

export default (doc) => {
  const results = []
  for (const { path, method, op } of operations(doc)) {
    const security = op.security || doc.security || []
    const keyed = security.some((req) => Object.keys(req).some((k) => KEYED.has(k)))
    for (const [status, response] of Object.entries(op.responses || {})) {
      const headers = response?.headers || {}
      const where = ["paths", path, method, "responses", status]
      if ((status === "429" || status === "503") && !headers["Retry-After"]?.required) {
        results.push({ message: `${method.toUpperCase()} ${path} ${status}: must carry a required Retry-After header.`, path: where })
      }
      if (keyed && (/^2/.test(status) || PAST_LIMITER.has(status))) {
        for (const h of RL) {
          if (headers[h]?.required !== true) {
            results.push({ message: `${method.toUpperCase()} ${path} ${status}: must carry a required ${h} header.`, path: where })
          }
        }
      }
    }
  }
  return results
}
