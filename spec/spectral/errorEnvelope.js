import { operations, flatten } from "./_util.js"

export default (doc) => {
  const results = []
  for (const { path, method, op } of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses || {})) {
      if (!/^[45]/.test(status)) continue
      const where = ["paths", path, method, "responses", status]
      const content = response?.content || {}
      const media = content["application/json"]
      if (!media?.schema || Object.keys(content).length !== 1) {
        results.push({ message: `${method.toUpperCase()} ${path} ${status}: must be application/json with the error envelope only.`, path: where })
        continue
      }
      const top = flatten(media.schema)
      const inner = top.properties.error ? flatten(top.properties.error) : null
      const ok =
        top.required.includes("error") &&
        inner?.properties.code &&
        inner.properties.message &&
        inner.required.includes("code") &&
        inner.required.includes("message")
      if (!ok)
        results.push({ message: `${method.toUpperCase()} ${path} ${status}: schema is not the error envelope { error: { code, message } }.`, path: where })
    }
  }
  return results
}
