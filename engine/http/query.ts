/**
 * Query and path parameters: small decoders from the raw string to a typed value, each failing with the code the
 * spec gives and the parameter's name in `param` (MISSING_PARAM, INVALID_TYPE for a wrong type, VALIDATION_ERROR
 * for a well-typed but unacceptable value). Enums are case-exact; dates must exist on the calendar.
 * Pure. Unknown query parameters are ignored, as clients send extras such as `page=` (facts 16.2).
 */
import { ApiFailure, fail } from "../domain/errors.ts"
import { calendarDateMs, isCalendarDate } from "../domain/reference/seeded.ts"

/** Decodes one present raw value; `name` is the parameter's name for the error. */
export type Decoder<A> = (raw: string, name: string) => A | ApiFailure

export interface Field<A> {
  readonly required: boolean
  readonly decode: Decoder<A>
}

export const required = <A>(decode: Decoder<A>): Field<A> => ({ required: true, decode })
export const optional = <A>(decode: Decoder<A>): Field<A | undefined> => ({ required: false, decode })

export const text: Decoder<string> = (raw, name) => (raw === "" ? fail("VALIDATION_ERROR", `${name} must not be empty`, { param: name }) : raw)

/** A whole number, optionally bounded (inclusive). A non-number is INVALID_TYPE; out of range, VALIDATION_ERROR. */
export const integer =
  (bounds: { readonly min?: number; readonly max?: number } = {}): Decoder<number> =>
  (raw, name) => {
    if (!/^-?\d{1,15}$/.test(raw)) return fail("INVALID_TYPE", `${name} must be a whole number, got ${JSON.stringify(raw)}`, { param: name })
    const value = Number(raw)
    if ((bounds.min !== undefined && value < bounds.min) || (bounds.max !== undefined && value > bounds.max)) {
      const range = `${bounds.min ?? "-∞"} to ${bounds.max ?? "∞"}`
      return fail("VALIDATION_ERROR", `${name} must be from ${range}, got ${value}`, { param: name })
    }
    return value
  }

/** A finite decimal number (money, prices); precision rules are the domain's. */
export const decimal: Decoder<number> = (raw, name) =>
  /^-?\d{1,15}(\.\d{1,12})?$/.test(raw) ? Number(raw) : fail("INVALID_TYPE", `${name} must be a number, got ${JSON.stringify(raw)}`, { param: name })

/** A decimal number no larger than `max` (amounts whose arithmetic must stay exact). */
export const decimalAtMost =
  (max: number): Decoder<number> =>
  (raw, name) => {
    const value = decimal(raw, name)
    return typeof value === "number" && value > max ? fail("VALIDATION_ERROR", `${name} must be at most ${max}`, { param: name }) : value
  }

/** One of `values`, compared exactly (the contract's enums are case-sensitive). */
export const oneOf =
  <const V extends string>(values: ReadonlyArray<V>): Decoder<V> =>
  (raw, name) =>
    (values as ReadonlyArray<string>).includes(raw) ? (raw as V) : fail("VALIDATION_ERROR", `${name} must be one of ${values.join(", ")}`, { param: name })

const DATE = /^\d{4}-\d{2}-\d{2}$/
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})$/

/**
 * A from/to bound (spec: "A date-only bound covers the whole UTC day ... Date-times must be timezone-aware"): a real
 * calendar date, or a date-time with Z or an offset. Returns epoch millis; `to` of a date runs to 23:59:59.999Z.
 */
export const bound =
  (edge: "from" | "to"): Decoder<number> =>
  (raw, name) => {
    if (DATE.test(raw)) {
      const start = calendarDateMs(raw)
      if (start === undefined) return fail("VALIDATION_ERROR", `${name} ${raw} is not a date on the calendar`, { param: name })
      return edge === "from" ? start : start + 86_400_000 - 1
    }
    const dt = DATE_TIME.exec(raw)
    if (dt === null) return fail("VALIDATION_ERROR", `${name} must be a date (YYYY-MM-DD) or a timezone-aware date-time`, { param: name })
    const [hh, mm, ss] = [4, 5, 6].map((i) => Number(dt[i] ?? 0)) as [number, number, number]
    if (!isCalendarDate(raw.slice(0, 10)) || hh > 23 || mm > 59 || ss > 59)
      return fail("VALIDATION_ERROR", `${name} ${raw} is not a real date-time`, { param: name })
    return Date.parse(raw)
  }

type Decoded<F> = F extends Field<infer A> ? A : never
export type QueryOf<S extends Record<string, Field<unknown>>> = { readonly [K in keyof S]: Decoded<S[K]> }

/** Decodes the parameters `spec` names from `source`; the first failure wins, in the order the spec lists them. */
export const decodeParams = <S extends Record<string, Field<unknown>>>(spec: S, source: (name: string) => string | undefined): QueryOf<S> | ApiFailure =>
  paramDecoder(spec)(source)

/** `decodeParams` with the spec's fields listed once: routes build theirs at start-up, not on every request. */
export const paramDecoder = <S extends Record<string, Field<unknown>>>(spec: S) => {
  const fields = Object.entries(spec)
  return (source: (name: string) => string | undefined): QueryOf<S> | ApiFailure => decodeFields(fields, source) as QueryOf<S> | ApiFailure
}

const decodeFields = (fields: ReadonlyArray<[string, Field<unknown>]>, source: (name: string) => string | undefined): Record<string, unknown> | ApiFailure => {
  const out: Record<string, unknown> = {}
  for (const [name, field] of fields) {
    const raw = source(name)
    if (raw === undefined) {
      if (field.required) return fail("MISSING_PARAM", `${name} is required`, { param: name })
      out[name] = undefined
      continue
    }
    const value = field.decode(raw, name)
    if (value instanceof ApiFailure) return value
    out[name] = value
  }
  return out
}
