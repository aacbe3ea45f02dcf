/**
 * Turning a JSON Schema violation (an Ajv error) into the spec's error envelope: a missing field is MISSING_PARAM, a
 * value of the wrong JSON type INVALID_TYPE, anything else VALIDATION_ERROR; `param` names the field (`items.0.symbol`
 * in a body, the parameter's name in a query), and the message says what the contract wants and what came. Pure.
 */
import type { ErrorObject } from "ajv"
import { type ApiFailure, fail } from "../domain/errors.ts"

type Json = Record<string, any>

/** Reads a `$ref`ed branch of a composite keyword; the validator passes its shared definitions. */
export type Resolve = (schema: unknown) => Json

const FORMATS: Readonly<Record<string, string>> = {
  "date-time": "a date-time with a time zone (RFC 3339, e.g. 2026-01-05T09:30:00Z)",
  date: "a date on the calendar (YYYY-MM-DD)",
  email: "an email address",
  uri: "an absolute URI"
}

/** A value as a message quotes it: short, and JSON so a string shows its quotes. */
const shown = (value: unknown): string => {
  const text = value === undefined ? "nothing" : (JSON.stringify(value) ?? String(value))
  const characters = Array.from(text)
  return characters.length > 60 ? `${characters.slice(0, 57).join("")}...` : text
}

const SECRET_FIELD = /secret|password|token|key$/i

const jsonTypeOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value)

/** `/items/0/symbol` -> `items.0.symbol`; the top level is `where`. */
const paramOf = (instancePath: string, where: string, child?: unknown): string => {
  const segments = instancePath
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
  if (typeof child === "string") segments.push(child)
  return segments.length === 0 ? where : segments.join(".")
}

const describeLimit = (e: ErrorObject): string => {
  const p = e.params as Json
  switch (e.keyword) {
    case "minimum":
      return `at least ${p.limit}`
    case "maximum":
      return `at most ${p.limit}`
    case "exclusiveMinimum":
      return `greater than ${p.limit}`
    case "exclusiveMaximum":
      return `less than ${p.limit}`
    case "minLength":
      return `at least ${p.limit} characters long`
    case "maxLength":
      return `at most ${p.limit} characters long`
    case "minItems":
      return `a list of at least ${p.limit} item${p.limit === 1 ? "" : "s"}`
    case "maxItems":
      return `a list of at most ${p.limit} item${p.limit === 1 ? "" : "s"}`
    default:
      return `a multiple of ${p.multipleOf}`
  }
}

/** What `e` asks of the value, as the end of "`param` must be ...". */
const wanted = (e: ErrorObject): string => {
  const p = e.params as Json
  switch (e.keyword) {
    case "type":
      return `of type ${[p.type].flat().join(" or ")}`
    case "enum":
      return `one of ${(p.allowedValues as Array<unknown>).map((v) => (typeof v === "string" ? v : shown(v))).join(", ")}`
    case "const":
      return shown(p.allowedValue)
    case "format":
      return FORMATS[String(p.format)] ?? `in the format ${p.format}`
    case "pattern":
      return `text matching the pattern ${p.pattern}`
    case "uniqueItems":
      return `a list without repeats (items ${Math.min(p.i, p.j)} and ${Math.max(p.i, p.j)} are the same)`
    default:
      return describeLimit(e)
  }
}

/** One leaf error (not a composite keyword) as the spec's failure. */
const leafFailure = (e: ErrorObject, where: string): ApiFailure => {
  const p = e.params as Json
  if (e.keyword === "required") {
    const param = paramOf(e.instancePath, where, p.missingProperty)
    return fail("MISSING_PARAM", `${param} is required`, { param })
  }
  if (e.keyword === "additionalProperties") {
    const param = paramOf(e.instancePath, where, p.additionalProperty)
    return fail("VALIDATION_ERROR", `${param} is not a field this operation takes`, { param })
  }
  const param = paramOf(e.instancePath, where)
  if (e.keyword === "minProperties") {
    const names = Object.keys((e.parentSchema as Json | undefined)?.properties ?? {})
    const what = names.length === 0 ? `${p.limit} field${p.limit === 1 ? "" : "s"}` : `${p.limit === 1 ? "one" : p.limit} of ${names.join(", ")}`
    // A whole body with nothing to change names no field: any of them would do.
    return e.instancePath === ""
      ? fail("VALIDATION_ERROR", `give at least ${what}`)
      : fail("VALIDATION_ERROR", `${param} must have at least ${what}`, { param })
  }
  // 1.5 where the contract says integer is a number out of the allowed set, not a value of the wrong JSON type.
  if (e.keyword === "type" && p.type === "integer" && typeof e.data === "number")
    return fail("VALIDATION_ERROR", `${param} must be a whole number, got ${shown(e.data)}`, { param })
  if (e.keyword === "type")
    return fail(
      "INVALID_TYPE",
      `${param} has the wrong type: expected ${[p.type].flat().join(" or ")}, got ${jsonTypeOf(e.data) === "object" || jsonTypeOf(e.data) === "array" ? jsonTypeOf(e.data) : shown(e.data)}`,
      { param }
    )
  // The spec's `max` extra: the most a list may hold.
  const extras = e.keyword === "maxItems" ? { param, max: Number(p.limit) } : { param }
  // A secret is never echoed back (answers are logged, traced and stored under Idempotency-Keys).
  const got = SECRET_FIELD.test(param) ? "" : `, got ${shown(e.data)}`
  return fail("VALIDATION_ERROR", `${param} must be ${wanted(e)}${got}`, extras)
}

/** The `required` names a branch of a oneOf/anyOf lists, when that is all that tells the branches apart. */
const requiredOf = (branch: Json): ReadonlyArray<string> | undefined => (Array.isArray(branch.required) ? (branch.required as Array<string>) : undefined)

/**
 * A failed oneOf/anyOf. When the data names exactly one branch (all its required fields are present), that branch's
 * own first error is the answer; when the branches differ only by which field is given, "give exactly one of ...";
 * otherwise (alternatives of one value, `from` as a date or a date-time) what each alternative wants.
 */
const compositeFailure = (top: ErrorObject, errors: ReadonlyArray<ErrorObject>, where: string, resolve: Resolve): ApiFailure => {
  const branches = (top.schema as Array<unknown>).map(resolve)
  const data = top.data
  const inBranch = (i: number) => errors.filter((e) => e.schemaPath.startsWith(`${top.schemaPath}/${i}/`))
  const required = branches.map(requiredOf)
  if (data !== null && typeof data === "object" && !Array.isArray(data) && required.every((r) => r !== undefined)) {
    const chosen = required.flatMap((names, i) => (names?.every((n) => n in data) === true ? [i] : []))
    const own = chosen.length === 1 ? inBranch(chosen[0] as number) : []
    if (own.length > 0) return failureOf(own, where, resolve)
    const names = [...new Set(required.flatMap((r) => r ?? []))]
    const how = top.keyword === "oneOf" ? "exactly one" : "at least one"
    return fail("VALIDATION_ERROR", `give ${how} of ${names.join(" or ")}`, { params: names })
  }
  const param = paramOf(top.instancePath, where)
  const leaves = branches.map((_, i) => inBranch(i).at(-1)).filter((e): e is ErrorObject => e !== undefined)
  const options = [...new Set(leaves.map(wanted))].join(" or ")
  const code = leaves.length > 0 && leaves.every((e) => e.keyword === "type") ? "INVALID_TYPE" : "VALIDATION_ERROR"
  return fail(code, `${param} must be ${options || "one of the contract's alternatives"}, got ${shown(data)}`, { param })
}

/**
 * The spec's failure for a value Ajv refused. Ajv (allErrors off) stops at the first failing keyword, after any
 * errors of the branches a composite keyword tried: so the last error is the one that failed, and a composite one is
 * explained from its branches.
 */
export const failureOf = (errors: ReadonlyArray<ErrorObject>, where: string, resolve: Resolve): ApiFailure => {
  const top = errors.at(-1)
  if (top === undefined) return fail("VALIDATION_ERROR", `${where} failed validation`, { param: where })
  if (top.keyword === "oneOf" || top.keyword === "anyOf") return compositeFailure(top, errors, where, resolve)
  return leafFailure(top, where)
}
