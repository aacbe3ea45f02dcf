import { operations, allParameters } from "./_util.js"

const MUTATIONS = new Set(["post", "put", "patch", "delete"])

export default (doc, options) => {
  const exempt = new Set(options?.exempt || [])
  const skip = options?.skipPathPrefixes || []
  const results = []
  for (const { path, method, op, item } of operations(doc)) {
    if (!MUTATIONS.has(method) || skip.some((s) => path.startsWith(s))) continue
    const where = ["paths", path, method]
    const key = allParameters(item, op).find((p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key")
    const isExempt = exempt.has(`${method} ${path}`)
    if (isExempt) {
      if (key) results.push({ message: `${method.toUpperCase()} ${path} is exempt and must not declare Idempotency-Key.`, path: where })
      if (op["x-idempotency-exempt"] !== true)
        results.push({ message: `${method.toUpperCase()} ${path} is exempt: mark it x-idempotency-exempt: true.`, path: where })
      continue
    }
    if (op["x-idempotency-exempt"]) {
      results.push({ message: `${method.toUpperCase()} ${path} is not on the spec's exempt list.`, path: where })
    }
    if (!key) {
      results.push({ message: `${method.toUpperCase()} ${path} must declare the Idempotency-Key header.`, path: where })
      continue
    }
    const s = key.schema || {}
    if (key.required !== true || s.minLength !== 8 || s.maxLength !== 200) {
      results.push({ message: `${method.toUpperCase()} ${path}: Idempotency-Key must be required, minLength 8, maxLength 200.`, path: where })
    }
  }
  return results
}
