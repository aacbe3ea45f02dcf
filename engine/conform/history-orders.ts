/**
 * The order rules of the whole-run verdict (issue 23, part 3): per order, no move out of a terminal state as REST
 * answers show it; and REST, webhooks and the stream agreeing on its fate.
 */
import { type ExchangeEntry, exchanges, groupBy, type HistoryEntry, jsonOf, type Violation, worlds } from "./history-entries.ts"

const TERMINAL = new Set(["REJECTED", "CANCELLED", "EXPIRED"])

/**
 * Every (orderId, status) a REST answer shows: an order or a list of orders. Deliveries and stream messages tell of
 * past moments (a retried order.pending may arrive after order.filled; a resumed stream replays), so their order is
 * not the order's.
 */
const orderStates = (e: ExchangeEntry): ReadonlyArray<{ orderId: string; status: string }> => {
  const payload = e.status < 300 ? jsonOf(e) : undefined
  const one = (o: unknown) => {
    const order = o as { orderId?: unknown; status?: unknown; canonicalStatus?: unknown } | null
    const status = order?.canonicalStatus ?? order?.status
    return typeof order?.orderId === "string" && typeof status === "string" ? [{ orderId: order.orderId, status }] : []
  }
  const list = (payload as { orders?: unknown } | null)?.orders
  return Array.isArray(list) ? list.flatMap(one) : one(payload)
}

export const orderTransitions = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const seen = exchanges(history).flatMap(({ e, i, w }) => orderStates(e).map((s) => ({ ...s, i, w })))
  return [...groupBy(seen, (s) => `${s.w} ${s.orderId}`).values()].flatMap((states) => {
    for (const [n, b] of states.entries()) {
      const a = states[n - 1]
      if (a === undefined || a.status === b.status) continue
      if (TERMINAL.has(a.status))
        return [{ rule: "order-transition" as const, message: `order ${b.orderId} moved ${a.status} -> ${b.status}`, entries: [a.i, b.i] }]
    }
    return []
  })
}

/** An order's fate: the statuses it ends in (a FILLED order may still settle; none of these becomes another). */
const FATES = new Set(["FILLED", "REJECTED", "CANCELLED", "EXPIRED"])

/** The fate an event tells of, from the status its payload carries (a partial fill's is no fate). */
const eventFate = (envelope: unknown): { orderId: string; fate: string; event: string } | undefined => {
  const e = envelope as { event?: unknown; data?: { orderId?: unknown; status?: unknown } } | null
  const orderId = e?.data?.orderId
  const status = e?.data?.status
  if (typeof orderId !== "string" || typeof status !== "string" || !FATES.has(status) || typeof e?.event !== "string") return undefined
  return { orderId, fate: status, event: e.event }
}

interface Told {
  readonly orderId: string
  readonly fate: string | undefined
  readonly status: string
  readonly how: string
  readonly i: number
  readonly w: number
  /** When it was known: a REST answer's send (what it shows is at least that late), an event's arrival. */
  readonly at: string
  readonly rest: boolean
}

/** Every order state the history shows: REST answers, webhook deliveries and stream messages. */
const toldStates = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<Told> => {
  const world = worlds(history)
  return history.flatMap((e, i): Array<Told> => {
    const w = world[i] ?? 0
    if (e.kind === "exchange")
      return orderStates(e).map((s) => ({
        ...s,
        fate: FATES.has(s.status) ? s.status : undefined,
        how: `REST ${e.method} ${e.path}`,
        i,
        w,
        at: e.sentAt,
        rest: true
      }))
    const envelope = e.kind === "delivery" ? jsonOf(e) : e.kind === "stream" ? e.data : undefined
    const told = eventFate(envelope)
    if (told === undefined) return []
    const how = `${e.kind === "delivery" ? "webhook" : "stream"} ${told.event}`
    return [{ orderId: told.orderId, fate: told.fate, status: told.fate, how, i, w, at: e.at, rest: false }]
  })
}

/**
 * Per order in one world: REST, webhooks and the stream tell one fate (an order is not both FILLED and CANCELLED),
 * and a REST answer requested after an event of its fate arrived no longer shows it PENDING (the event is written
 * with the change it tells of). Only strictly later instants count: a frozen clock orders nothing.
 */
export const orderAgreement = (history: ReadonlyArray<HistoryEntry>): Array<Violation> =>
  [...groupBy(toldStates(history), (s) => `${s.w} ${s.orderId}`).values()].flatMap((told): Array<Violation> => {
    // REST against REST is order-transition's: here an event's fate against any other account of the order.
    const decided = told.filter((s) => s.fate !== undefined)
    const first = decided.find((s) => !s.rest && decided.some((o) => o.fate !== s.fate))
    const other = decided.find((s) => s.fate !== first?.fate)
    if (first !== undefined && other !== undefined)
      return [
        {
          rule: "order-agreement",
          message: `order ${first.orderId}: ${first.how} says ${first.fate}, ${other.how} says ${other.fate}`,
          entries: [first.i, other.i]
        }
      ]
    for (const event of told.filter((s) => !s.rest && s.fate !== undefined)) {
      const behind = told.find((s) => s.rest && s.status === "PENDING" && s.at > event.at)
      if (behind !== undefined)
        return [
          {
            rule: "order-agreement",
            message: `order ${event.orderId}: ${event.how} arrived at ${event.at}, but ${behind.how} sent at ${behind.at} still shows PENDING`,
            entries: [event.i, behind.i]
          }
        ]
    }
    return []
  })
