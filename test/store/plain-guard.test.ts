/**
 * The plain guards of store/plain-guard.ts (E-500) answer what `Schema.is` answers, for every stored document's shape
 * and every job's payload: on values built to fit and on the same values broken at a random place (a key deleted, a
 * field or an item replaced by a value of another kind). Shapes with a node the guards do not know get none, so
 * `Schema.is` alone judges them; and a stored value that does not fit still fails its read (shape-check.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Schema, SchemaAST } from "effect"
import * as DocShapes from "../../engine/app/doc-shapes.ts"
import * as JobPayloads from "../../engine/app/job-payloads.ts"
import { plainGuardOf } from "../../engine/store/plain-guard.ts"
import { shapeVerdict } from "../../engine/store/shape-check.ts"
import { StoreError } from "../../engine/store/port.ts"
import { mulberry32 } from "../support/mulberry32.ts"

const seeded = mulberry32
type Rnd = () => number
const pick = <A>(rnd: Rnd, xs: ReadonlyArray<A>): A => xs[Math.floor(rnd() * xs.length)] as A

const JUNK: ReadonlyArray<() => unknown> = [
  () => null,
  () => undefined,
  () => 0,
  () => Number.NaN,
  () => "",
  () => "x",
  () => true,
  () => [],
  () => ({}),
  () => [1],
  () => ({ a: 1 })
]

/** A value of the type side `ast`, built to fit it (for the node kinds the guards know). */
const fitting = (ast: SchemaAST.AST, rnd: Rnd): unknown => {
  switch (ast._tag) {
    case "String":
      return pick(rnd, ["", "a", "ord_1", "ünïcode"])
    case "Number":
      return pick(rnd, [0, -1, 1.5, 1_700_000_000_000, Number.NaN])
    case "Boolean":
      return rnd() < 0.5
    case "Null":
      return null
    case "Undefined":
      return undefined
    case "Literal":
      return ast.literal
    case "Union":
      return fitting(pick(rnd, ast.types), rnd)
    case "Arrays":
      return Array.from({ length: Math.floor(rnd() * 3) }, () => fitting(ast.rest[0] as SchemaAST.AST, rnd))
    case "Objects": {
      const out: Record<string, unknown> = rnd() < 0.2 ? { extraField: pick(rnd, JUNK)() } : {}
      for (const p of ast.propertySignatures) if (!SchemaAST.isOptional(p.type) || rnd() < 0.6) out[String(p.name)] = fitting(p.type, rnd)
      return out
    }
    default:
      throw new Error(`no value for ${ast._tag}`)
  }
}

/** `value` broken at one random place inside it: a key deleted, or a field, an item or the whole replaced by junk. */
const broken = (value: unknown, rnd: Rnd): unknown => {
  if (rnd() < 0.15 || typeof value !== "object" || value === null) return pick(rnd, JUNK)()
  if (Array.isArray(value)) {
    if (value.length === 0) return [pick(rnd, JUNK)()]
    const at = Math.floor(rnd() * value.length)
    return value.map((x, i) => (i === at ? broken(x, rnd) : x))
  }
  const record = { ...(value as Record<string, unknown>) }
  const keys = Object.keys(record)
  if (keys.length === 0) return pick(rnd, JUNK)()
  const key = pick(rnd, keys)
  if (rnd() < 0.3) delete record[key]
  else record[key] = broken(record[key], rnd)
  return record
}

const shapes: ReadonlyArray<readonly [string, Schema.Top]> = [...Object.entries(DocShapes), ...Object.entries(JobPayloads)].flatMap(([name, value]) =>
  Schema.isSchema(value) ? [[name, value as Schema.Top] as const] : []
)

describe("plain guards answer as Schema.is", () => {
  it("for every stored shape and job payload a guard knows, on fitting and broken values", () => {
    let compared = 0
    let fits = 0
    for (const [name, shape] of shapes) {
      const ast = SchemaAST.toType(shape.ast)
      const guard = plainGuardOf(ast)
      if (guard === undefined) continue
      const is = Schema.is(shape)
      const rnd = seeded(name.length * 7919)
      for (let i = 0; i < 150; i++) {
        const good = fitting(ast, rnd)
        for (const value of [good, broken(good, rnd), broken(broken(good, rnd), rnd)]) {
          const expected = is(value)
          assert.strictEqual(guard(value), expected, `${name}: ${JSON.stringify(value)}`)
          compared += 1
          if (expected) fits += 1
        }
      }
    }
    // Both answers are exercised in number (not a comparison of falses only).
    assert.isAbove(fits, 5_000)
    assert.isAbove(compared - fits, 5_000)
  })

  it("the week's hot shapes have one", () => {
    const hot = [
      DocShapes.DeliveryShape,
      DocShapes.QuoteShape,
      DocShapes.UsageShape,
      DocShapes.SubAccountShape,
      DocShapes.HoldingShape,
      DocShapes.PriceAlertShape,
      DocShapes.WebhookShape,
      JobPayloads.DeliveryAttemptPayload,
      JobPayloads.DeskStepPayload,
      JobPayloads.AlertEvaluationPayload
    ]
    for (const shape of hot) assert.isDefined(plainGuardOf(SchemaAST.toType(shape.ast)))
  })

  it("edge cases of the parser: arrays, null, inherited and optional keys, extra keys", () => {
    const shape = Schema.Struct({ a: Schema.String, b: Schema.optionalKey(Schema.Number), c: Schema.NullOr(Schema.Array(Schema.Literals(["x", "y"]))) })
    const guard = plainGuardOf(SchemaAST.toType(shape.ast))
    const is = Schema.is(shape)
    const cases: ReadonlyArray<unknown> = [
      { a: "s", c: null },
      { a: "s", c: ["x", "y"], extra: 1 },
      { a: "s", b: 1, c: [] },
      { a: "s", b: undefined, c: [] },
      { a: "s", c: ["z"] },
      { a: "s" },
      Object.assign(Object.create({ a: "inherited" }), { c: null }),
      Object.assign(Object.create({ b: "inherited" }), { a: "s", c: null }),
      [],
      Object.assign(["x"], { a: "s", c: null }),
      null,
      "s",
      { a: 1, c: null }
    ]
    assert.isDefined(guard)
    for (const value of cases) assert.strictEqual(guard?.(value), is(value), JSON.stringify(value))
  })

  it("a shape with a node it does not know gets no guard", () => {
    const unknown: ReadonlyArray<Schema.Top> = [
      Schema.Struct({ a: Schema.String.check(Schema.isMinLength(1)) }),
      Schema.Struct({ a: Schema.Finite }),
      Schema.Union([Schema.String, Schema.Literal("a")], { mode: "oneOf" }),
      Schema.Record(Schema.String, Schema.Number),
      Schema.Struct({}),
      Schema.Tuple([Schema.String]),
      Schema.Struct({ d: Schema.Date })
    ]
    for (const shape of unknown) assert.isUndefined(plainGuardOf(SchemaAST.toType(shape.ast)), String(shape.ast))
    // A transformation's type side is what it decodes to: a number, which the guard knows.
    const decoded = plainGuardOf(SchemaAST.toType(Schema.Struct({ a: Schema.NumberFromString }).ast))
    assert.deepStrictEqual([decoded?.({ a: 1 }), decoded?.({ a: "1" })], [true, false])
  })

  it("a value that does not fit is still refused, with the parser's account of why", () => {
    const verdict = shapeVerdict(DocShapes.DeliveryShape, (id) => `stored webhookDeliveries/${id} does not fit`)
    const bad = verdict("dlv_1", { deliveryId: "dlv_1", attempts: "one" })
    assert.instanceOf(bad, StoreError)
    assert.include((bad as StoreError).message, "stored webhookDeliveries/dlv_1 does not fit: ")
  })
})
