/**
 * A run's history as `sokoni conform --history` records it and `sokoni history check` reads it (issue 23, part 3):
 * every request and answer with the instants it was sent and answered, every webhook delivery received, every stream
 * message, and the target starting over, as JSON lines. Owns the format, its parser and the helpers the rules share
 * (worlds split by resets, the logical clock's order). The rules are history.ts's, history-money.ts's and
 * history-orders.ts's.
 */

/** One request and its answer. `caller` names the key without printing it (environment and its last 4 characters). */
export interface ExchangeEntry {
  readonly kind: "exchange"
  readonly sentAt: string
  readonly answeredAt: string
  /**
   * The order of the send and of the answer among every send and answer recorded (a logical clock): what came first
   * when a frozen or coarse clock gives both the same instant. Optional in a history recorded elsewhere.
   */
  readonly sentSeq?: number | undefined
  readonly answeredSeq?: number | undefined
  readonly caller: string
  readonly method: string
  readonly path: string
  readonly idempotencyKey?: string | undefined
  readonly requestBody?: string | undefined
  readonly status: number
  readonly rate?: { readonly limit: number; readonly remaining: number; readonly reset: number } | undefined
  readonly body: string
}

/** A webhook delivery received, its exact bytes. */
export interface DeliveryEntry {
  readonly kind: "delivery"
  readonly at: string
  readonly eventId: string
  readonly raw: string
}

/** A stream message read. */
export interface StreamEntry {
  readonly kind: "stream"
  readonly at: string
  readonly caller: string
  readonly id?: string | undefined
  readonly event?: string | undefined
  readonly data?: unknown
  /**
   * The connection that read it, numbered in the run: an id may come again on another connection (a resumed stream
   * replays what came after its Last-Event-ID), never twice on one. Optional in a history recorded elsewhere.
   */
  readonly connection?: number | undefined
}

/**
 * The target started over (`POST /_sim/reset`): a new world, whose keys, ids and windows may repeat the old one's.
 * Nothing before it is compared with anything after it.
 */
export interface ResetEntry {
  readonly kind: "reset"
  readonly at: string
}

/**
 * The harness moved the target's clock (a control-API advance, jump or reset): from here on the recorded instants and
 * the target's own timestamps need not agree, so the timestamps rule stops at the first one (history-time.ts).
 */
export interface ClockEntry {
  readonly kind: "clock"
  readonly at: string
  /** What moved it, e.g. `POST /_sim/clock/advance`. */
  readonly what: string
}

export type HistoryEntry = ExchangeEntry | DeliveryEntry | StreamEntry | ResetEntry | ClockEntry

export type Rule =
  | "no-negative-balance"
  | "wallet-ledger"
  | "idempotent-answer"
  | "delivery-bytes"
  | "stream-once"
  | "rate-window"
  | "order-transition"
  | "order-agreement"
  | "timestamps"

export interface Violation {
  readonly rule: Rule
  readonly message: string
  /** The entries (indexes in the history) that make it, in order. */
  readonly entries: ReadonlyArray<number>
}

/** Whether a control-API request moves the target's clock (an advance, a jump, a reset that starts the world over). */
export const movesClock = (method: string, path: string): boolean => method !== "GET" && (path.startsWith("/_sim/clock") || path === "/_sim/reset")

/** Reads JSON lines; a line that is not an entry is an error naming it. */
export const parseHistory = (text: string): ReadonlyArray<HistoryEntry> =>
  text
    .split("\n")
    .map((line, n) => ({ line: line.trim(), n }))
    .filter(({ line }) => line !== "")
    .map(({ line, n }) => {
      let parsed: unknown
      try {
        parsed = JSON.parse(line)
      } catch {
        throw new Error(`line ${n + 1} is not JSON`)
      }
      const kind = (parsed as { kind?: unknown } | null)?.kind
      if (kind !== "exchange" && kind !== "delivery" && kind !== "stream" && kind !== "reset" && kind !== "clock")
        throw new Error(`line ${n + 1}: kind must be exchange, delivery, stream, reset or clock`)
      return parsed as HistoryEntry
    })

const parseOrUndefined = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * The bodies parsed so far by the check under way (`withParsedBodies`): its rules read the same answers (balances,
 * orders, stamps), and each parsed every body again; a simulated week's check spent most of its time there. Rules
 * only read what they get, so one parsed value serves them all. None outside a check: nothing is kept after it.
 * Kept by entry, not by text: a map keyed by the text hashed every body whole (a week's 50 MB of them).
 */
let parsedBodies: Map<ExchangeEntry | DeliveryEntry, unknown> | undefined

/** An exchange's answer (`body`) or a delivery's bytes (`raw`) parsed, or undefined when it is not JSON. */
export const jsonOf = (entry: ExchangeEntry | DeliveryEntry): unknown => {
  const text = entry.kind === "exchange" ? entry.body : entry.raw
  if (parsedBodies === undefined) return parseOrUndefined(text)
  const known = parsedBodies.get(entry)
  if (known !== undefined || parsedBodies.has(entry)) return known
  const value = parseOrUndefined(text)
  parsedBodies.set(entry, value)
  return value
}

/**
 * What the check under way derived from a history once, for every rule that asks (its worlds, its exchanges): six
 * rules walked the whole history for the same list. Keyed by the history itself, which a check never changes.
 */
let derived: WeakMap<ReadonlyArray<HistoryEntry>, { worlds?: ReadonlyArray<number>; exchanges?: ReadonlyArray<IndexedExchange> }> | undefined

const derivedOf = (history: ReadonlyArray<HistoryEntry>) => {
  if (derived === undefined) return {}
  const known = derived.get(history)
  if (known !== undefined) return known
  const fresh = {}
  derived.set(history, fresh)
  return fresh
}

/** Runs `check` with every body it parses parsed once (`jsonOf`); nested calls share the outer one's. */
export const withParsedBodies = <A>(check: () => A): A => {
  if (parsedBodies !== undefined) return check()
  parsedBodies = new Map()
  derived = new WeakMap()
  try {
    return check()
  } finally {
    parsedBodies = undefined
    derived = undefined
  }
}

/** The world each entry belongs to: how many resets came before it. */
export const worlds = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<number> => {
  const known = derivedOf(history)
  if (known.worlds !== undefined) return known.worlds
  let world = 0
  known.worlds = history.map((e) => (e.kind === "reset" ? ++world : world))
  return known.worlds
}

/** An exchange with its index in the history and its world. */
export interface IndexedExchange {
  readonly e: ExchangeEntry
  readonly i: number
  readonly w: number
}

export const exchanges = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<IndexedExchange> => {
  const known = derivedOf(history)
  if (known.exchanges !== undefined) return known.exchanges
  const world = worlds(history)
  known.exchanges = history.flatMap((e, i) => (e.kind === "exchange" ? [{ e, i, w: world[i] ?? 0 }] : []))
  return known.exchanges
}

export const groupBy = <T>(items: ReadonlyArray<T>, key: (t: T) => string | undefined): Map<string, Array<T>> => {
  const groups = new Map<string, Array<T>>()
  for (const item of items) {
    const k = key(item)
    if (k === undefined) continue
    // Pushed in place: copying the group on every item made a long history's large groups quadratic (issue 25).
    const group = groups.get(k)
    if (group === undefined) groups.set(k, [item])
    else group.push(item)
  }
  return groups
}

/** Whether `a` was answered before `b` was sent: by the logical clock when both have it, else strictly by instants. */
export const answeredBefore = (a: ExchangeEntry, b: ExchangeEntry): boolean =>
  a.answeredSeq !== undefined && b.sentSeq !== undefined ? a.answeredSeq < b.sentSeq : a.answeredAt < b.sentAt
