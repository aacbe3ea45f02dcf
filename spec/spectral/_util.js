// Shared helpers for the Sokoni Spectral functions (imported by the rule functions).
export const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

export function* operations(doc, section = "paths") {
  const items = doc?.[section] || {}
  for (const [path, item] of Object.entries(items)) {
    if (!item || typeof item !== "object") continue
    for (const method of METHODS) {
      if (item[method]) yield { path, method, op: item[method], item }
    }
  }
}

export function allParameters(item, op) {
  const byKey = new Map()
  for (const p of [...(item.parameters || []), ...(op.parameters || [])]) {
    if (p?.name) byKey.set(`${p.in}:${p.name.toLowerCase()}`, p)
  }
  return [...byKey.values()]
}

/** Merge allOf branches into one view of properties and required (enough for envelope checks). */
export function flatten(schema, depth = 0) {
  const out = { properties: {}, required: [] }
  if (!schema || typeof schema !== "object" || depth > 10) return out
  for (const part of schema.allOf || []) {
    const f = flatten(part, depth + 1)
    Object.assign(out.properties, f.properties)
    out.required.push(...f.required)
  }
  Object.assign(out.properties, schema.properties || {})
  out.required.push(...(schema.required || []))
  return out
}
