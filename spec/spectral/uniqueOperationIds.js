import { operations } from "./_util.js"

export default (doc) => {
  const seen = new Map()
  const results = []
  for (const section of ["paths", "webhooks"]) {
    for (const { path, method, op } of operations(doc, section)) {
      const id = op.operationId
      if (!id) continue
      if (seen.has(id)) results.push({ message: `operationId ${id} is used twice (also at ${seen.get(id)}).`, path: [section, path, method, "operationId"] })
      else seen.set(id, `${section} ${method.toUpperCase()} ${path}`)
    }
  }
  return results
}
