/**
 * The only source of variation of the seeded reference data: draws and ids that are pure functions of (seed, key).
 * A profile, a dividend schedule or an article is therefore the same whenever and in whatever order it is asked for,
 * and a different seed gives different data. Also the calendar-day helpers the generators share.
 * Owns nothing stateful; does not read time (days come in as epoch milliseconds).
 */
import { makeGenerator } from "../../sim/random.ts"

/** cyrb53: a 53-bit string hash; two keys collide with a probability of about 2^-53. */
export const hash53 = (text: string, seed: number): number => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i)
    h1 = Math.imul(h1 ^ ch, 2654435761)
    h2 = Math.imul(h2 ^ ch, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

export interface Draws {
  /** Uniform integer in [0, bound). */
  readonly int: (bound: number) => number
  /** Uniform integer in [low, high], both included. */
  readonly between: (low: number, high: number) => number
  readonly pick: <A>(values: ReadonlyArray<A>) => A
  /** True with a probability of `permille` / 1000. */
  readonly chance: (permille: number) => boolean
}

/** A stream of draws that depends only on the seed and the key (the house generator, sfc32, seeded by both). */
export const drawsFor = (seed: number, key: string): Draws => {
  const next = makeGenerator(hash53(key, seed) % 4294967296)
  const int = (bound: number) => next() % bound
  return {
    int,
    between: (low, high) => low + int(high - low + 1),
    pick: (values) => values[int(values.length)] as (typeof values)[number],
    chance: (permille) => int(1000) < permille
  }
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz" // Crockford base32, lower case, as Entropy's ids

const base32 = (value: number, chars: number): string => {
  let out = ""
  let v = value
  for (let i = 0; i < chars; i++) {
    out = (ALPHABET[v % 32] as string) + out
    v = Math.floor(v / 32)
  }
  return out
}

/** `prefix_` and 16 base32 characters (80 bits from two independent hashes of seed and key): the shape of engine ids. */
export const refId = (prefix: string, seed: number, key: string): string =>
  `${prefix}_${base32(hash53(key, seed) % 2 ** 40, 8)}${base32(hash53(key, seed ^ 0x5bd1e995) % 2 ** 40, 8)}`

export const DAY_MS = 86_400_000

/** The UTC calendar date of an instant, `YYYY-MM-DD`. */
export const isoDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** Midnight UTC of a `YYYY-MM-DD` date. */
export const dateMs = (date: string): number => Date.parse(`${date}T00:00:00.000Z`)

/**
 * Midnight UTC of `date` when it is a real calendar date written `YYYY-MM-DD`, else undefined. Date.parse alone takes
 * 2027-02-30 (as 2 March) and 2026-11-31 (as 1 December); the round trip through isoDate does not. The one check of
 * a calendar date in the engine (query bounds, holiday filters, report periods, action dates).
 */
export const calendarDateMs = (date: string): number | undefined => {
  const ms = dateMs(date)
  return Number.isFinite(ms) && isoDate(ms) === date ? ms : undefined
}

/** Whether `date` is a real calendar date written `YYYY-MM-DD` (calendarDateMs). */
export const isCalendarDate = (date: string): boolean => calendarDateMs(date) !== undefined

/** Midnight UTC of the day `ms` falls in. */
export const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS

/** ISO weekday (1 = Monday ... 7 = Sunday) of a UTC day. */
export const weekday = (ms: number): number => ((Math.floor(ms / DAY_MS) + 3) % 7) + 1

/** The day itself when it is a weekday, else the following Monday. */
export const onWeekday = (ms: number): number => {
  const day = dayStart(ms)
  const wd = weekday(day)
  return wd <= 5 ? day : day + (8 - wd) * DAY_MS
}

/** `count` weekdays after `ms` (weekends skipped; exchange holidays are not considered). */
export const addWeekdays = (ms: number, count: number): number => {
  let day = dayStart(ms)
  for (let left = count; left > 0; ) {
    day += DAY_MS
    if (weekday(day) <= 5) left--
  }
  return day
}

/** The last weekday before the day of `ms`. */
export const previousWeekday = (ms: number): number => {
  let day = dayStart(ms) - DAY_MS
  while (weekday(day) > 5) day -= DAY_MS
  return day
}

/** URL slug of a title: lower-case words joined by hyphens. */
export const slugify = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")

const LETTER_VALUE = (ch: string) => (ch >= "A" && ch <= "Z" ? String(ch.charCodeAt(0) - 55) : ch)

/** ISO 6166 check digit of the first 11 characters of an ISIN (letters as 10..35, then the Luhn rule). */
export const isinCheckDigit = (body: string): number => {
  const digits = [...body.toUpperCase()].map(LETTER_VALUE).join("")
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 0) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return (10 - (sum % 10)) % 10
}

/** A well-formed ISIN of `country` (ISO 3166 alpha-2) whose 9-character national part is drawn from `draws`. */
export const isinFor = (country: string, draws: Draws): string => {
  let nsin = ""
  for (let i = 0; i < 9; i++) nsin += String(draws.int(10))
  const body = `${country}${nsin}`
  return `${body}${isinCheckDigit(body)}`
}

/** Countries of the spec's exchanges (ISO 3166-1 alpha-2, the symbol suffixes) and their names. */
export const COUNTRY_NAMES: Readonly<Record<string, string>> = {
  KE: "Kenya",
  NG: "Nigeria",
  ZA: "South Africa",
  GH: "Ghana",
  CI: "Côte d'Ivoire",
  ZW: "Zimbabwe",
  BW: "Botswana",
  ZM: "Zambia",
  EG: "Egypt",
  TZ: "Tanzania",
  UG: "Uganda",
  MW: "Malawi",
  MA: "Morocco",
  MU: "Mauritius"
}

export const countryName = (country: string): string => COUNTRY_NAMES[country] ?? country
