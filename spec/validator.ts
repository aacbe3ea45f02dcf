/**
 * The response validator: checks any HTTP response (status, headers, JSON body) against spec/openapi.yaml with Ajv
 * (JSON Schema 2020-12, the dialect of OpenAPI 3.1). One instance serves the engine's tests, scenarios, the
 * conformance suite and contract tests. Owns: matching a concrete URL to a contract operation and response, and
 * reporting every mismatch as a readable line. It does not check requests; the engine validates those itself.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { parse } from "yaml"

// ajv-formats is CommonJS; its default export arrives under `default` when imported from ESM.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void

type Json = Record<string, any>

export const CONTRACT_PATH = join(import.meta.dirname, "openapi.yaml")
/** The control API's document; its paths are absolute (`/_sim/...`), so it mounts at the root. */
export const CONTROL_PATH = join(import.meta.dirname, "control.yaml")
export const CONTROL_MOUNTS: ReadonlyArray<string> = [""]

/** Where the contract's path templates are mounted (spec "Base addresses"). */
export const MOUNTS: ReadonlyArray<string> = ["/api/sandbox/v1/partner", "/api/v1/partner", "/api/sandbox/v1", "/api/v1"]

export interface ResponseToCheck {
  readonly method: string
  /** The request's path (and query) as sent, with its base. */
  readonly url: string
  readonly status: number
  readonly headers: Readonly<Record<string, string>> | Headers
  readonly body: unknown
}

export interface Match {
  readonly pathTemplate: string
  readonly operationId: string | undefined
}

const templateToRegex = (template: string) =>
  new RegExp(
    `^${template
      .replace(/[.*+?^$()|[\]\\]/g, "\\$&")
      .replace(/\\?\{[^/}]+\\?\}/g, "[^/]+")
      .replace(/\{[^/}]+\}/g, "[^/]+")}$`
  )

export const makeValidator = (contractPath = CONTRACT_PATH, mounts: ReadonlyArray<string> = MOUNTS) => {
  const doc = parse(readFileSync(contractPath, "utf8")) as Json
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, validateFormats: true })
  addFormats(ajv)
  ajv.addSchema(doc, "contract")
  // control.yaml borrows schemas from the partner contract (`./openapi.yaml#/...`): resolve those references too.
  if (contractPath !== CONTRACT_PATH) ajv.addSchema(parse(readFileSync(CONTRACT_PATH, "utf8")) as Json, "openapi.yaml")
  const compiled = new Map<string, ValidateFunction>()
  const paths = Object.entries((doc.paths ?? {}) as Record<string, Json>).map(([template, item]) => ({ template, item, regex: templateToRegex(template) }))
  // Literal segments beat parameters: /orders/blotter must win over /orders/{orderId}.
  paths.sort((a, b) => (b.template.match(/\{/g)?.length ?? 0) - (a.template.match(/\{/g)?.length ?? 0)).reverse()

  const resolve = (node: Json | undefined): Json | undefined => {
    let current = node
    for (let i = 0; i < 10 && current?.$ref !== undefined; i++) {
      const pointer = String(current.$ref)
        .replace(/^#\//, "")
        .split("/")
        .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
      current = pointer.reduce<any>((at, key) => at?.[key], doc)
    }
    return current
  }

  const validatorFor = (pointer: string) => {
    let fn = compiled.get(pointer)
    if (fn === undefined) {
      fn = ajv.compile({ $ref: `contract#${pointer}` })
      compiled.set(pointer, fn)
    }
    return fn
  }

  /** The contract operation a concrete request hits, or undefined. */
  const match = (method: string, url: string): (Match & { operation: Json; pointerBase: string }) | undefined => {
    const pathname = new URL(url, "http://contract.local").pathname.replace(/\/+$/, "")
    for (const mount of mounts) {
      if (!pathname.startsWith(`${mount}/`)) continue
      const rest = pathname.slice(mount.length)
      for (const p of paths) {
        const operation = p.item[method.toLowerCase()]
        if (operation !== undefined && p.regex.test(rest)) {
          const escaped = p.template.replace(/~/g, "~0").replace(/\//g, "~1")
          return { pathTemplate: p.template, operationId: operation.operationId, operation, pointerBase: `/paths/${escaped}/${method.toLowerCase()}` }
        }
      }
    }
    return undefined
  }

  /** Every mismatch between the response and the contract; empty when it conforms. */
  const check = (response: ResponseToCheck): Array<string> => {
    const found = match(response.method, response.url)
    const where = `${response.method.toUpperCase()} ${response.url} -> ${response.status}`
    if (found === undefined) return [`${where}: no contract operation matches this request`]
    const responses = (found.operation.responses ?? {}) as Json
    const statusKey = [String(response.status), `${String(response.status)[0]}XX`, "default"].find((k) => k in responses)
    if (statusKey === undefined) return [`${where}: status ${response.status} is not declared for ${found.operationId ?? found.pathTemplate}`]
    const declared = resolve(responses[statusKey]) ?? {}
    const problems: Array<string> = []
    const headerOf = (name: string) =>
      response.headers instanceof Headers
        ? response.headers.get(name)
        : (Object.entries(response.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? null)
    for (const [name, rawHeader] of Object.entries((declared.headers ?? {}) as Json)) {
      const header = resolve(rawHeader) ?? {}
      if (header.required === true && headerOf(name) === null) problems.push(`${where}: missing required header ${name}`)
    }
    const content = declared.content as Json | undefined
    if (content === undefined) {
      if (response.body !== null && response.body !== undefined && response.body !== "")
        problems.push(`${where}: the contract declares no body but one was sent`)
      return problems
    }
    const jsonType = Object.keys(content).find((t) => t.includes("json"))
    if (jsonType === undefined) return problems // non-JSON (event stream, ndjson): body not checked here
    const pointer =
      responses[statusKey].$ref !== undefined
        ? `${String(responses[statusKey].$ref).replace(/^#/, "")}/content/${jsonType.replace(/\//g, "~1")}/schema`
        : `${found.pointerBase}/responses/${statusKey}/content/${jsonType.replace(/\//g, "~1")}/schema`
    const validate = validatorFor(pointer)
    if (!validate(response.body)) {
      for (const e of validate.errors ?? [])
        problems.push(
          `${where}: body${e.instancePath} ${e.message ?? "is invalid"}${e.params && "additionalProperty" in e.params ? ` (${String(e.params.additionalProperty)})` : ""}`
        )
    }
    return problems
  }

  /** `resolve` follows a node's `$ref` chain within the contract (the conformance checks read schemas with it). */
  return { doc, match, check, resolve }
}

export type ResponseValidator = ReturnType<typeof makeValidator>
