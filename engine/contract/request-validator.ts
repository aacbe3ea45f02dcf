/**
 * Request validation from the contract itself (issue 22 item 5, E-310): each operation's JSON body and query/path
 * parameter schemas (generated from spec/openapi.yaml and spec/control.yaml into requests.gen.ts) are compiled once,
 * when its route is declared at start-up, by Ajv in the contract's dialect (JSON Schema 2020-12: string lengths in
 * characters, formats checked). Violations become the spec's envelope (request-errors.ts). What JSON Schema cannot
 * say (a quantity the engine's arithmetic keeps exact, a GTD deadline in the future) stays with the routes' decoders
 * and the services.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { ApiFailure, fail } from "../domain/errors.ts"
import { failureOf } from "./request-errors.ts"
import { CONTROL_INPUTS, type ContractInputs, type ContractParameter, PARTNER_INPUTS, REQUEST_DEFS, REQUEST_DEFS_ID } from "./requests.gen.ts"

// ajv-formats is CommonJS; from ESM its function arrives under `default`.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
  formats: ReadonlyArray<string>
) => void

type Json = Record<string, any>

/**
 * Where a decision gives the engine a more specific answer than a JSON Schema keyword can, or accepts more than the
 * contract states, the schema is checked for its JSON type only and the domain answers the rest (E-312). Every entry
 * names its decision; nothing else in the contract is relaxed.
 */
const DOMAIN_OWNED: ReadonlyArray<{ readonly def: string; readonly path?: ReadonlyArray<string>; readonly why: string }> = [
  // A malformed symbol is INVALID_SYMBOL (with `invalid` on batch reads), not VALIDATION_ERROR.
  { def: "partner.SymbolInput", why: "D-080" },
  // `?exchange=` is case-insensitive; an unknown code is UNKNOWN_EXCHANGE.
  { def: "partner.ExchangeCode", why: "D-234" },
  // Unknown event names are listed together in `invalid`, with `param: events` (webhooks and the stream).
  { def: "partner.EventName", why: "D-058" },
  // Which of quantity and cashValue an order takes depends on its orderType: the service names the one it needs
  // ("a LIMIT order needs a quantity"). The fields-first rewrite put the contract's oneOf at allOf/1.
  { def: "partner.TradeRequest", path: ["allOf", "1"], why: "D-280" },
  // Plain http to a loopback receiver is accepted in simulation.
  { def: "partner.CreateWebhookRequest", path: ["properties", "url"], why: "E-070" },
  { def: "partner.UpdateWebhookRequest", path: ["properties", "url"], why: "E-070" }
]

/** The generated definitions with the domain-owned schemas reduced to their JSON type (copies; the data stays as generated). */
const definitions = (): Record<string, unknown> => {
  const defs = structuredClone(REQUEST_DEFS) as Record<string, Json>
  for (const owned of DOMAIN_OWNED) {
    const parent = owned.path?.slice(0, -1).reduce<Json | undefined>((at, key) => at?.[key], defs[owned.def]) ?? defs
    const key = owned.path?.at(-1) ?? owned.def
    const schema = parent[key] as Json | undefined
    if (schema === undefined) throw new Error(`domain-owned schema ${owned.def} ${owned.path?.join("/") ?? ""} is not in the contract's requests`)
    parent[key] = schema.type === undefined ? {} : { type: schema.type }
  }
  return defs
}

let shared: Ajv2020 | undefined
/** One Ajv for every operation: the shared definitions are compiled once, whichever operation reaches them first. */
const ajv = (): Ajv2020 => {
  if (shared !== undefined) return shared
  // verbose: an error carries its schema and data, which the messages quote and oneOf explanations read.
  const instance = new Ajv2020({ strict: false, allErrors: false, verbose: true, validateSchema: false, validateFormats: true })
  addFormats(instance, ["date-time", "date", "email", "uri"])
  instance.addSchema({ $id: REQUEST_DEFS_ID, $defs: definitions() })
  shared = instance
  return instance
}

const DEF_PREFIX = `${REQUEST_DEFS_ID}#/$defs/`
/** A schema with its `$ref` chain followed through the shared definitions. */
const resolve = (schema: unknown): Json => {
  let at = schema as Json
  for (let i = 0; i < 10 && typeof at?.$ref === "string" && at.$ref.startsWith(DEF_PREFIX); i++) at = REQUEST_DEFS[at.$ref.slice(DEF_PREFIX.length)] as Json
  return at ?? {}
}

/** The functions compiled so far, by schema text: the same `limit` or `symbol` parameter compiles once. */
const compiled = new Map<string, ValidateFunction>()
const compile = (schema: unknown): ValidateFunction => {
  const key = JSON.stringify(schema)
  let fn = compiled.get(key)
  if (fn === undefined) {
    fn = ajv().compile(schema as Json)
    compiled.set(key, fn)
  }
  return fn
}

const refuse = (errors: ReadonlyArray<ErrorObject> | null | undefined, where: string): ApiFailure => failureOf(errors ?? [], where, resolve)

/**
 * A query or path value is text; the contract types it. Integers and numbers are read as the engine's decoders read
 * them (at most 15 digits, so they stay exact), booleans as `true`/`false`; text that does not read as its type is
 * INVALID_TYPE, as a mistyped body field is.
 */
type Coerce = (raw: string, name: string) => unknown | ApiFailure
const INTEGER = /^-?\d{1,15}$/
const NUMBER = /^-?\d{1,15}(\.\d{1,12})?$/
const coercerFor = (schema: unknown): Coerce => {
  const type = resolve(schema).type
  const wrong = (what: string) => (raw: string, name: string) =>
    fail("INVALID_TYPE", `${name} must be ${what}, got ${JSON.stringify(raw.length > 40 ? `${raw.slice(0, 37)}...` : raw)}`, { param: name })
  if (type === "integer") return (raw, name) => (INTEGER.test(raw) ? Number(raw) : wrong("a whole number")(raw, name))
  if (type === "number") return (raw, name) => (NUMBER.test(raw) ? Number(raw) : wrong("a number")(raw, name))
  if (type === "boolean") return (raw, name) => (raw === "true" ? true : raw === "false" ? false : wrong("true or false")(raw, name))
  return (raw) => raw
}

interface CompiledParameter {
  readonly name: string
  readonly in: "path" | "query"
  readonly required: boolean
  readonly coerce: Coerce
  /** Undefined when every value of the type is valid (`type: string` alone): nothing to run per request. */
  readonly validate: ValidateFunction | undefined
}

const compileParameter = (p: ContractParameter): CompiledParameter => {
  const trivial = JSON.stringify(p.schema) === '{"type":"string"}'
  return { name: p.name, in: p.in, required: p.required, coerce: coercerFor(p.schema), validate: trivial ? undefined : compile(p.schema) }
}

/** Raw parameter values by place: the router's path parameters, the URL's query. */
export type ParameterSource = (place: "path" | "query", name: string) => string | undefined

export interface ContractValidator {
  /** The first parameter the contract refuses (in the contract's order: path before query), or undefined. */
  readonly parameters: (source: ParameterSource) => ApiFailure | undefined
  /** Whether the contract declares a JSON body, and whether it may be left out. */
  readonly body: { readonly declared: boolean; readonly required: boolean }
  /** The contract's verdict on a parsed JSON body, or undefined when it conforms. */
  readonly checkBody: (json: unknown) => ApiFailure | undefined
}

const checkParameters =
  (parameters: ReadonlyArray<CompiledParameter>) =>
  (source: ParameterSource): ApiFailure | undefined => {
    for (const p of parameters) {
      const raw = source(p.in, p.name)
      if (raw === undefined) {
        if (p.required) return fail("MISSING_PARAM", `${p.name} is required`, { param: p.name })
        continue
      }
      const value = p.coerce(raw, p.name)
      if (value instanceof ApiFailure) return value
      if (p.validate !== undefined && !p.validate(value)) return refuse(p.validate.errors, p.name)
    }
    return undefined
  }

const inputsOf = (api: "partner" | "control", operationId: string): ContractInputs => {
  const inputs = (api === "control" ? CONTROL_INPUTS : PARTNER_INPUTS)[operationId]
  if (inputs === undefined) throw new Error(`${operationId} has no inputs in requests.gen.ts (run npm run spec:gen?)`)
  return inputs
}

/**
 * `operationId`'s validator. Its schemas compile on its first request, then never again: compiling every operation
 * at start-up costs about 250 ms, which `serve` would pay before its port opens (start-up target 400 ms, E-311).
 * `compileAllInputs` compiles them all at once (the tests do, so a schema Ajv cannot compile fails there).
 */
export const contractValidator = (api: "partner" | "control", operationId: string): ContractValidator => {
  const inputs = inputsOf(api, operationId)
  let compiledInputs: { readonly parameters: (source: ParameterSource) => ApiFailure | undefined; readonly body: ValidateFunction | undefined } | undefined
  const ready = () => {
    if (compiledInputs !== undefined) return compiledInputs
    // Path parameters first: a request for a resource that cannot exist is refused for that before its query is read.
    const parameters = [...inputs.parameters].sort((a, b) => (a.in === b.in ? 0 : a.in === "path" ? -1 : 1)).map(compileParameter)
    compiledInputs = { parameters: checkParameters(parameters), body: inputs.body === undefined ? undefined : compile(inputs.body.schema) }
    return compiledInputs
  }
  const oneCode = api === "partner" && ONE_CODE.has(operationId)
  return {
    parameters: oneCode ? (source) => asValidationError(ready().parameters(source)) : (source) => ready().parameters(source),
    body: { declared: inputs.body !== undefined, required: inputs.body?.required === true },
    checkBody: (json) => {
      const fn = ready().body
      return fn === undefined || fn(json) ? undefined : refuse(fn.errors, "body")
    }
  }
}

/** Operations whose spec text names one code for every invalid input (D-102: "400 VALIDATION_ERROR for invalid input"). */
const ONE_CODE = new Set(["listSubAccountTransactions"])
const asValidationError = (failure: ApiFailure | undefined): ApiFailure | undefined =>
  failure === undefined || failure.code === "VALIDATION_ERROR" || failure.code === "MISSING_PARAM"
    ? failure
    : fail("VALIDATION_ERROR", failure.message, failure.extras)

/** Compiles every operation's inputs now; answers how many operations it compiled. */
export const compileAllInputs = (): number => {
  const all = [
    ...Object.keys(PARTNER_INPUTS).map((op) => contractValidator("partner", op)),
    ...Object.keys(CONTROL_INPUTS).map((op) => contractValidator("control", op))
  ]
  for (const validator of all) validator.parameters(() => undefined)
  return all.length
}
