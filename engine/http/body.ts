/**
 * Request bodies: read as JSON whatever the content type says (clients forget the header; a body that is not JSON
 * is refused in the envelope, never stored), bounded in depth, judged by the contract (route.ts, E-310), then
 * decoded with the route's Effect Schema (types, and the rules JSON Schema cannot say) whose first issue
 * becomes the spec's error: a missing field MISSING_PARAM, a wrong type INVALID_TYPE, anything else
 * VALIDATION_ERROR, always with the field's path in `param`. Pure.
 */
import { type Exit, Schema, SchemaIssue } from "effect"
import { ApiFailure, fail } from "../domain/errors.ts"

/** Deepest nesting a body may have; deeper bodies are refused before any work (a 5,000-deep body once crashed the engine). */
export const MAX_JSON_DEPTH = 32

/** Nesting depth of a JSON text, counted on the raw characters (strings skipped), without parsing it. */
export const jsonDepth = (text: string): number => {
  let depth = 0
  let max = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92)
        i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      depth++
      if (depth > max) max = depth
    } else if (c === 125 || c === 93) depth--
  }
  return max
}

let lastText: string | undefined
let lastParsed: unknown
/**
 * Parses a body as JSON; an empty body is `undefined`. The last text parsed is remembered with its value: a command's
 * body is parsed by its route's decoder, by the dialect's look at trades and by the trace, three times a request
 * (E-410). Safe to share because no reader changes a parsed body: the decoders build new values from it, the trace
 * keeps it as it is (a redaction is a copy).
 */
export const parseJsonBody = (text: string | undefined): unknown | ApiFailure => {
  if (text === undefined) return undefined
  if (text === lastText) return lastParsed
  if (text.trim() === "") return undefined
  if (jsonDepth(text) > MAX_JSON_DEPTH) return fail("VALIDATION_ERROR", `the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`)
  try {
    const parsed = JSON.parse(text) as unknown
    lastText = text
    lastParsed = parsed
    return parsed
  } catch {
    return fail("VALIDATION_ERROR", "the request body is not valid JSON")
  }
}

interface Located {
  readonly path: ReadonlyArray<PropertyKey>
  readonly issue: SchemaIssue.Issue
}

/** The first leaf issue and the path to it. */
const firstLeaf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey> = []): Located => {
  switch (issue._tag) {
    case "Pointer":
      return firstLeaf(issue.issue, [...path, ...issue.path])
    case "Composite":
      return firstLeaf(issue.issues[0], path)
    default:
      return { path, issue }
  }
}

const formatter = SchemaIssue.makeFormatterDefault()

/** Maps a schema failure to the spec's code, with `param` naming the field (`items.0.symbol` for nested ones). */
export const failureOfIssue = (issue: SchemaIssue.Issue, where: string): ApiFailure => {
  const { path, issue: leaf } = firstLeaf(issue)
  const param = path.length === 0 ? where : path.map(String).join(".")
  // The formatter's first line is the leaf's own message; later lines (if any) restate the path.
  const [detail] = formatter(leaf).split("\n")
  if (leaf._tag === "MissingKey") return fail("MISSING_PARAM", `${param} is required`, { param })
  if (leaf._tag === "InvalidType") return fail("INVALID_TYPE", `${param} has the wrong type: ${detail}`, { param })
  return fail("VALIDATION_ERROR", `${param}: ${detail}`, { param })
}

/** A missing body, or one that is not a JSON object, refused as a whole (before any field is looked at). */
export const bodyShapeProblem = (json: unknown): ApiFailure | undefined => {
  if (json === undefined) return fail("MISSING_PARAM", "this operation needs a JSON body", { param: "body" })
  if (typeof json !== "object" || json === null || Array.isArray(json)) return fail("INVALID_TYPE", "the body must be a JSON object", { param: "body" })
  return undefined
}

/** Each body Schema's decoder, made once: a command's body is decoded on every request. */
const decoders = new WeakMap<Schema.Top, (json: unknown) => Exit.Exit<unknown, Schema.SchemaError>>()
const decoderOf = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S) => {
  let decoder = decoders.get(schema)
  if (decoder === undefined) {
    decoder = Schema.decodeUnknownExit(schema) as (json: unknown) => Exit.Exit<unknown, Schema.SchemaError>
    decoders.set(schema, decoder)
  }
  return decoder as (json: unknown) => Exit.Exit<S["Type"], Schema.SchemaError>
}

/** Decodes an already parsed body with `schema`; a missing body is refused as a whole. */
export const decodeBody = <S extends Schema.Top & { readonly DecodingServices: never }>(schema: S, json: unknown): S["Type"] | ApiFailure => {
  const shape = bodyShapeProblem(json)
  if (shape !== undefined) return shape
  const result = decoderOf(schema)(json)
  if (result._tag === "Success") return result.value
  const error = result.cause.reasons.find((r) => r._tag === "Fail")
  const issue = (error as { error?: { issue?: SchemaIssue.Issue } } | undefined)?.error?.issue
  return issue === undefined ? fail("VALIDATION_ERROR", "the body failed validation", { param: "body" }) : failureOfIssue(issue, "body")
}

export const isFailure = (value: unknown): value is ApiFailure => value instanceof ApiFailure

/** Characters as JSON Schema counts them: code points, so an emoji is one (UTF-16 `length` would say two). */
export const characterCount = (text: string): number => {
  let n = 0
  for (const _ of text) n++
  return n
}

/** At least `min` characters, counted as the contract counts them (E-310); `Schema.isMinLength` counts UTF-16 units. */
export const minCharacters = (min: number) =>
  Schema.makeFilter((text: string) => characterCount(text) >= min || `Expected a value with at least ${min} character${min === 1 ? "" : "s"}`)

/** At most `max` characters, counted as the contract counts them (E-310); `Schema.isMaxLength` counts UTF-16 units. */
export const maxCharacters = (max: number) =>
  Schema.makeFilter((text: string) => characterCount(text) <= max || `Expected a value with at most ${max} characters`)
