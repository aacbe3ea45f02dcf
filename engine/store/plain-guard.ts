/**
 * A plain predicate for a Schema's type side, compiled once from its AST, for the kinds of node the stored documents'
 * shapes and the jobs' payloads are made of (structs, arrays, unions, literals, strings, numbers, booleans, null).
 * `Schema.is` runs Effect's interpreted parser (an exit per field, a copy of the value): a webhook delivery's shape
 * cost 3 to 9 µs per check, some 5% of the simulated week's CPU (issue 25, E-500).
 *
 * The guard is JavaScript written for the shape (`new Function`), each field read by its own name: closures walking a
 * list of fields share their property look-ups across every shape and field, which V8 cannot specialise (1.6 µs a
 * delivery against 3.7 for `Schema.is`; the written guard about 0.1). Only names (as JSON string literals) and
 * literals (strings, finite numbers, booleans, null) of the shape go into the source, never a value being checked.
 *
 * Sound, not complete: a guard answers true only where `Schema.is` answers true, so callers take a true as the verdict
 * and ask `Schema.is` on a false (shape-check.ts). A shape with a node it does not know (a refinement, a transformation,
 * a declaration, an index signature, a union of mode "oneOf", a bigint literal, ...) gets no guard (undefined).
 * What each node accepts is read off Effect 4's parsers (SchemaAST.ts): a struct is a non-null object that is not an
 * array, a key is present when `key in value` (as `hasPropertySignature`), extra keys are left alone; an array's
 * items are read up to its length; a union takes a value any member takes.
 */
import { SchemaAST } from "effect"

export type PlainGuard = (value: unknown) => boolean

/** No refinement, transformation or check on the node itself: what its kind accepts is all it accepts. */
const bare = (ast: SchemaAST.AST) =>
  ast.checks === undefined && ast.encoding === undefined && (ast as { readonly encodingChecks?: unknown }).encodingChecks === undefined

/** The functions of one guard's source: each compound node is a function of its own, the guard the last one. */
type Functions = Array<string>

/** Adds a function of `v` with `body` to the source; its name. */
const define = (fns: Functions, body: string): string => {
  const name = `f${fns.length}`
  fns.push(`function ${name}(v) {\n${body}\n}`)
  return name
}

const structTest = (ast: SchemaAST.Objects, x: string, fns: Functions): string | undefined => {
  // An empty struct takes any value but null and undefined, arrays included: not a case of the stored shapes.
  if (ast.indexSignatures.length > 0 || ast.propertySignatures.length === 0) return undefined
  const lines = ["if (typeof v !== 'object' || v === null || Array.isArray(v)) return false"]
  for (const p of ast.propertySignatures) {
    // `__proto__` is looked up as an own key by the parser, and symbol or number keys are not the stored shapes'.
    if (typeof p.name !== "string" || p.name === "__proto__") return undefined
    const key = JSON.stringify(p.name)
    const test = testOf(p.type, `v[${key}]`, fns)
    if (test === undefined) return undefined
    lines.push(SchemaAST.isOptional(p.type) ? `if (${key} in v && !(${test})) return false` : `if (!(${key} in v) || !(${test})) return false`)
  }
  lines.push("return true")
  return `${define(fns, lines.join("\n"))}(${x})`
}

const arrayTest = (ast: SchemaAST.Arrays, x: string, fns: Functions): string | undefined => {
  // Only `Array<Item>`: no tuple elements, one rest type.
  const item = ast.elements.length === 0 && ast.rest.length === 1 ? ast.rest[0] : undefined
  if (item === undefined || SchemaAST.isOptional(item)) return undefined
  const test = testOf(item, "v[i]", fns)
  if (test === undefined) return undefined
  return `${define(fns, `if (!Array.isArray(v)) return false\nfor (let i = 0; i < v.length; i++) if (!(${test})) return false\nreturn true`)}(${x})`
}

const unionTest = (ast: SchemaAST.Union, x: string, fns: Functions): string | undefined => {
  if (ast.options?.mode === "oneOf") return undefined
  const tests: Array<string> = []
  for (const type of ast.types) {
    const test = testOf(type, x, fns)
    if (test === undefined) return undefined
    tests.push(`(${test})`)
  }
  return tests.length === 0 ? undefined : tests.join(" || ")
}

/** A JavaScript expression true when `x` (a variable or a read of one by a constant key) fits `ast`. */
const testOf = (ast: SchemaAST.AST, x: string, fns: Functions): string | undefined => {
  if (!bare(ast)) return undefined
  switch (ast._tag) {
    case "String":
      return `typeof ${x} === "string"`
    case "Number":
      return `typeof ${x} === "number"`
    case "Boolean":
      return `typeof ${x} === "boolean"`
    case "Null":
      return `${x} === null`
    case "Undefined":
      return `${x} === undefined`
    case "Literal":
      // A numeric literal is finite (the AST refuses others), so JSON writes it as JavaScript does.
      return typeof ast.literal === "bigint" ? undefined : `${x} === ${JSON.stringify(ast.literal)}`
    case "Objects":
      return structTest(ast, x, fns)
    case "Arrays":
      return arrayTest(ast, x, fns)
    case "Union":
      return unionTest(ast, x, fns)
    default:
      return undefined
  }
}

/** The guard of `ast` (a type side: `SchemaAST.toType`), or undefined when it has a node this does not know. */
export const plainGuardOf = (ast: SchemaAST.AST): PlainGuard | undefined => {
  const fns: Functions = []
  const test = testOf(ast, "v", fns)
  if (test === undefined) return undefined
  const guard = define(fns, `return ${test}`)
  // The source holds the shape's names and literals only (see above).
  return new Function(`${fns.join("\n")}\nreturn ${guard}`)() as PlainGuard
}
