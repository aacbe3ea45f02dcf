/**
 * The request half of `npm run spec:gen`: every operation's JSON request body and query/path parameters, as plain
 * JSON Schema data (engine/contract/requests.gen.ts), so the engine validates requests from the contract itself
 * (issue 22, item 5; E-310) with no YAML parser at run time. References are rewritten to one shared `$defs`
 * document (`#/components/schemas/X` of openapi.yaml becomes `sokoni-requests#/$defs/partner.X`, of control.yaml
 * `control.X`), holding only the schemas requests reach, with the keywords that do not validate (descriptions,
 * examples, x-*) left out.
 */

type Json = Record<string, any>
type Namespace = "partner" | "control"

export const DEFS_ID = "sokoni-requests"

/** Keywords that never change whether a value is valid; dropped to keep the generated file small. */
const ANNOTATIONS = new Set(["description", "example", "examples", "title", "externalDocs", "discriminator", "default", "deprecated", "readOnly", "writeOnly"])
/** Keywords whose value maps names to schemas: their keys are property names, not keywords. */
const SCHEMA_MAPS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"])

const METHODS = ["get", "post", "put", "patch", "delete"] as const

interface Collector {
  readonly docs: Record<Namespace, Json>
  readonly defs: Record<string, unknown>
}

const resolvePointer = (doc: Json, pointer: string): Json => {
  const at = pointer
    .replace(/^\//, "")
    .split("/")
    .reduce<any>((node, key) => node?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc)
  if (at === undefined) throw new Error(`unresolved reference #${pointer}`)
  return at as Json
}

/** `$ref` as written in `ns`'s document -> the namespace and schema name it names. */
const targetOf = (ref: string, ns: Namespace): { ns: Namespace; name: string; pointer: string } => {
  const [file, pointer = ""] = ref.split("#")
  const target: Namespace = file === "" || file === undefined ? ns : file.endsWith("openapi.yaml") ? "partner" : ns
  const match = /^\/components\/schemas\/([^/]+)$/.exec(pointer)
  if (match?.[1] === undefined) throw new Error(`request schemas may only refer to components/schemas, not ${ref}`)
  return { ns: target, name: match[1], pointer }
}

/** A copy of `schema` (from `ns`'s document) with annotations dropped and references rewritten and collected. */
const clean = (schema: unknown, ns: Namespace, into: Collector): unknown => {
  if (Array.isArray(schema)) return schema.map((s) => clean(s, ns, into))
  if (schema === null || typeof schema !== "object") return schema
  const out: Json = {}
  for (const [key, value] of Object.entries(schema as Json)) {
    if (ANNOTATIONS.has(key) || key.startsWith("x-")) continue
    if (key === "$ref") {
      const target = targetOf(String(value), ns)
      const defName = `${target.ns}.${target.name}`
      if (!(defName in into.defs)) {
        into.defs[defName] = true // reserved first: recursive schemas terminate
        into.defs[defName] = clean(resolvePointer(into.docs[target.ns], target.pointer), target.ns, into)
      }
      out.$ref = `${DEFS_ID}#/$defs/${defName}`
    } else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, s]) => [name, clean(s, ns, into)]))
    } else if (key === "enum" || key === "const" || key === "required") out[key] = value
    else out[key] = clean(value, ns, into)
  }
  return fieldsBeforeAlternatives(out)
}

/**
 * Ajv checks a schema's oneOf/anyOf before its object keywords; a body missing `symbol` and both amounts would be
 * told about the amounts. Wrapped as allOf [the fields, the alternatives], the fields are judged first, as a reader
 * of the contract would (E-310). Same verdict on every value; only which problem is named first changes.
 */
const fieldsBeforeAlternatives = (schema: Json): Json => {
  const alternatives = ["oneOf", "anyOf"].filter((k) => k in schema)
  if (alternatives.length === 0 || !("properties" in schema || "required" in schema)) return schema
  const fields = Object.fromEntries(Object.entries(schema).filter(([k]) => !alternatives.includes(k)))
  const rest = Object.fromEntries(alternatives.map((k) => [k, schema[k]]))
  return { allOf: [fields, rest] }
}

const derefParameter = (doc: Json, parameter: Json): Json =>
  typeof parameter.$ref === "string" ? derefParameter(doc, resolvePointer(doc, String(parameter.$ref).replace(/^#/, ""))) : parameter

/** One operation's inputs: path and query parameters in the order the contract lists them, and the JSON body. */
const inputsOf = (ns: Namespace, item: Json, op: Json, into: Collector) => {
  const doc = into.docs[ns]
  const listed = [...((item.parameters ?? []) as Array<Json>), ...((op.parameters ?? []) as Array<Json>)].map((p) => derefParameter(doc, p))
  // An operation-level parameter overrides a path-level one of the same name and place (OpenAPI 3.1, 4.8.10.1).
  const byKey = new Map<string, Json>()
  for (const p of listed) if (p.in === "path" || p.in === "query") byKey.set(`${p.in}:${p.name}`, p)
  const parameters = [...byKey.values()].map((p) => ({
    name: String(p.name),
    in: p.in as "path" | "query",
    required: p.required === true,
    schema: clean(p.schema ?? {}, ns, into)
  }))
  const content = op.requestBody?.content?.["application/json"] as Json | undefined
  const body = content === undefined ? undefined : { required: op.requestBody.required === true, schema: clean(content.schema ?? {}, ns, into) }
  return body === undefined ? { parameters } : { parameters, body }
}

const operationsOf = (ns: Namespace, into: Collector) => {
  const rows: Array<[string, unknown]> = []
  for (const item of Object.values((into.docs[ns].paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined
      if (op !== undefined) rows.push([String(op.operationId), inputsOf(ns, item, op, into)])
    }
  }
  return Object.fromEntries(rows.sort(([a], [b]) => (a < b ? -1 : 1)))
}

/** The text of engine/contract/requests.gen.ts. */
export const requestsOf = (partner: Json, control: Json, header: string): string => {
  const into: Collector = { docs: { partner, control }, defs: {} }
  const partnerOps = operationsOf("partner", into)
  const controlOps = operationsOf("control", into)
  const defs = Object.fromEntries(Object.entries(into.defs).sort(([a], [b]) => (a < b ? -1 : 1)))
  const json = (value: unknown) => JSON.stringify(value)
  return [
    header,
    "/** One input of an operation, as the contract declares it. */",
    'export interface ContractParameter { readonly name: string; readonly in: "path" | "query"; readonly required: boolean; readonly schema: unknown }',
    "/** What an operation takes: its path and query parameters (contract order) and its JSON body, if any. */",
    "export interface ContractInputs { readonly parameters: ReadonlyArray<ContractParameter>; readonly body?: { readonly required: boolean; readonly schema: unknown } }\n",
    `/** The id the schemas below refer to their shared definitions by. */\nexport const REQUEST_DEFS_ID = ${json(DEFS_ID)}\n`,
    "/** Every schema a request reaches, by namespace and name (`partner.TradeRequest`). */",
    `export const REQUEST_DEFS: Readonly<Record<string, unknown>> = ${json(defs)}\n`,
    "/** The inputs of every operation of the partner contract. */",
    `export const PARTNER_INPUTS: Readonly<Record<string, ContractInputs>> = ${json(partnerOps)}\n`,
    "/** The inputs of every operation of the control API. */",
    `export const CONTROL_INPUTS: Readonly<Record<string, ContractInputs>> = ${json(controlOps)}\n`
  ].join("\n")
}
