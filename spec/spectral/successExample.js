import { operations } from "./_util.js"

const hasExample = (media) => media && (media.example !== undefined || (media.examples && Object.keys(media.examples).length > 0))

export default (doc) => {
  const results = []
  for (const { path, method, op } of operations(doc)) {
    for (const [status, response] of Object.entries(op.responses || {})) {
      if (!/^2/.test(status)) continue
      for (const [type, media] of Object.entries(response?.content || {})) {
        if (!hasExample(media))
          results.push({
            message: `${method.toUpperCase()} ${path} ${status} ${type}: add an example.`,
            path: ["paths", path, method, "responses", status, "content", type]
          })
      }
    }
  }
  for (const { path, method, op } of operations(doc, "webhooks")) {
    const media = op.requestBody?.content?.["application/json"]
    if (!hasExample(media)) results.push({ message: `webhook ${path}: add a request body example.`, path: ["webhooks", path, method, "requestBody"] })
  }
  return results
}
