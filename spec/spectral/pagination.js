import { operations, allParameters, flatten } from "./_util.js"

export default (doc) => {
  const results = []
  for (const { path, method, op, item } of operations(doc)) {
    if (method !== "get") continue
    const where = ["paths", path, method]
    const ok = op.responses?.["200"]
    const schema = ok?.content?.["application/json"]?.schema
    const flat = flatten(schema)
    const hasArray = Object.values(flat.properties).some((p) => p && p.type === "array")
    const isObjectItems = (p) => p && p.type === "array" && p.items && (p.items.type === "object" || p.items.properties || p.items.allOf || p.items.$ref)
    const looksLikeList = !path.endsWith("}") && Object.values(flat.properties).some(isObjectItems)
    const params = allParameters(item, op).filter((p) => p.in === "query")
    const paginated = op["x-paginated"]
    if (paginated === undefined) {
      if (looksLikeList) results.push({ message: `GET ${path} returns a list: declare x-paginated (true or false).`, path: where })
      continue
    }
    if (paginated !== true) {
      if (params.some((p) => p.name === "cursor")) results.push({ message: `GET ${path} has a cursor but x-paginated is false.`, path: where })
      continue
    }
    const limit = params.find((p) => p.name === "limit")
    if (limit.schema?.type !== "integer" || limit.schema.default === undefined || limit.schema.maximum === undefined) {
      results.push({ message: `GET ${path}: list operation needs an integer limit with default and maximum.`, path: where })
    }
    if (!params.some((p) => p.name === "cursor")) results.push({ message: `GET ${path}: list operation needs a cursor parameter.`, path: where })
    for (const f of ["count", "hasMore", "nextCursor"]) {
      if (!flat.properties[f] || !flat.required.includes(f)) {
        results.push({ message: `GET ${path}: 200 body must carry required ${f}.`, path: where })
      }
    }
    if (!hasArray) results.push({ message: `GET ${path}: 200 body must carry the item array.`, path: where })
  }
  return results
}
