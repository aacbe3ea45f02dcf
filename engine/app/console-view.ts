/**
 * ConsoleView: what the console shows of the simulated world, in one read (`GET /_sim/console/state`, E-381):
 * partners with their keys, master wallets and webhooks; the latest orders, events and webhook deliveries of every
 * partition; the clock and every exchange's next open and close; the streams open in this process. Read only, on
 * committed state, bounded (the newest `limit` of each list, over the newest MAX_PARTNERS partners), so a console
 * left open on a busy engine costs a bounded read per refresh. The desk's part is the desk's and the trading
 * service's (the route adds it).
 */
import { Context, Effect, Layer } from "effect"
import type { ControlSchemas } from "../contract/wire.ts"
import { EXCHANGES } from "../domain/calendar.ts"
import { MASTER } from "../domain/ledger.ts"
import { centsToWire } from "../domain/money.ts"
import { orderToWire } from "../domain/order-wire.ts"
import { logHead } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import { ApiKeys, Deliveries, type DeliveryDoc, deliveryPartition, Orders, Partners, type PartnerDoc, Webhooks } from "./docs.ts"
import { reservedBalance, walletBalance } from "./ledger.ts"
import { exchangeStatus } from "./market-calendar.ts"
import { type Environment, partitionOf } from "./principal.ts"
import { StreamService } from "./stream.ts"

type State = ControlSchemas["ConsoleState"]
export type ConsoleWorld = Omit<State, "desk">

/** Partners whose partitions the view reads (the newest ones): the console of a load test stays one bounded read. */
export const MAX_PARTNERS = 50
/** Keys listed across every partner (they live in one partition). */
const MAX_KEYS = 10_000
const ENVIRONMENTS: ReadonlyArray<Environment> = ["sandbox", "production"]

/** The newest `limit` of `lists` by `at`, newest first; ties by id so the order never depends on the store. */
const newest = <A>(lists: ReadonlyArray<ReadonlyArray<A>>, limit: number, at: (a: A) => number, id: (a: A) => string): Array<A> =>
  lists
    .flat()
    .sort((a, b) => at(b) - at(a) || (id(a) < id(b) ? 1 : id(a) > id(b) ? -1 : 0))
    .slice(0, limit)

const partnerWire = (p: PartnerDoc) => ({
  partnerId: p.partnerId,
  businessName: p.businessName,
  email: p.email,
  tier: p.tier,
  status: p.status ?? "active",
  createdAt: isoAt(p.createdAt)
})

const deliveryWire = (d: DeliveryDoc, environment: Environment, partnerId: string, url: string): ControlSchemas["ConsoleDelivery"] => ({
  deliveryId: d.deliveryId,
  partnerId,
  environment,
  webhookId: d.webhookId,
  url,
  event: d.event,
  eventId: d.eventId,
  state: d.state,
  createdAt: isoAt(d.createdAt),
  nextAttemptAt: d.nextAttemptAt === null ? null : isoAt(d.nextAttemptAt),
  attempts: (d.history ?? []).map((a) => ({ ...a, at: isoAt(a.at) }))
})

/** One partition's part: its master wallet, webhooks, and newest orders, events and deliveries. */
const partitionPart = (tx: ReadTx, partnerId: string, environment: Environment, limit: number, now: number) =>
  Effect.gen(function* () {
    const partition = partitionOf(partnerId, environment)
    const available = yield* walletBalance(tx, partition, MASTER)
    const reserved = yield* reservedBalance(tx, partition, MASTER)
    const wallet = { environment, balance: centsToWire(available + reserved), available: centsToWire(available), reserved: centsToWire(reserved) }
    const webhooks = yield* Webhooks.list(tx, partition, { limit: 100, order: "asc" })
    const orders = (yield* Orders.list(tx, partition, { limit, order: "desc" })).map((o) => ({
      partnerId,
      environment,
      order: orderToWire(o, now),
      at: o.createdAt
    }))
    const head = yield* logHead(tx, partition)
    const logged = yield* tx.readEvents(partition, Math.max(0, head - limit), limit)
    const events = logged.map((e) => ({
      partnerId,
      environment,
      position: e.position,
      eventId: e.eventId,
      event: e.name,
      timestamp: isoAt(e.timestamp),
      data: e.payload,
      at: e.timestamp
    }))
    const deliveries = yield* Effect.forEach(webhooks, (w) =>
      Effect.map(Deliveries.list(tx, deliveryPartition(partition, w.id), { limit, order: "desc" }), (list) =>
        list.map((d) => ({ ...deliveryWire(d, environment, partnerId, w.url), at: d.createdAt, position: d.position }))
      )
    )
    const hooks = webhooks.map((w) => ({ id: w.id, environment, url: w.url, status: w.status, events: [...w.events] }))
    return { wallet, webhooks: hooks, orders, events, deliveries: deliveries.flat() }
  })

/** A log position as a key that sorts as the number does: of two events of one instant, the later one is newer. */
const positionKey = (position: number | null) => String(position ?? 0).padStart(15, "0")

const strip = <A extends { readonly at: number }>({ at: _at, ...rest }: A): Omit<A, "at"> => rest

export class ConsoleView extends Context.Service<ConsoleView, { readonly world: (limit: number) => Effect.Effect<ConsoleWorld, StoreError> }>()(
  "sokoni/ConsoleView"
) {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const streams = yield* StreamService

    const world = Effect.fn("ConsoleView.world")(function* (limit: number) {
      const now = yield* clock.nowHere()
      const read = yield* store.read((tx) =>
        Effect.gen(function* () {
          const partners = (yield* Partners.list(tx, "global", { limit: MAX_PARTNERS, order: "desc" })).toReversed()
          const keys = yield* ApiKeys.list(tx, "global", { limit: MAX_KEYS, order: "desc" })
          const parts = yield* Effect.forEach(partners, (p) => Effect.forEach(ENVIRONMENTS, (env) => partitionPart(tx, p.partnerId, env, limit, now)))
          return { partners, keys, parts }
        })
      )
      const open = yield* streams.connections
      const parts = read.parts.flat()
      const partners = read.partners.map((p, i) => ({
        ...partnerWire(p),
        keys: read.keys
          .filter((k) => k.partnerId === p.partnerId)
          .map((k) => ({ environment: k.environment, kind: k.kind, status: k.status, last4: k.last4, createdAt: isoAt(k.createdAt) })),
        wallets: (read.parts[i] ?? []).map((part) => part.wallet),
        webhooks: (read.parts[i] ?? []).flatMap((part) => part.webhooks)
      }))
      const result: ConsoleWorld = {
        now: isoAt(now),
        mode: clock.mode,
        exchanges: EXCHANGES.map((e) => exchangeStatus(e, now)),
        partners,
        orders: newest(
          parts.map((p) => p.orders),
          limit,
          (o) => o.at,
          (o) => o.order.orderId
        ).map(strip),
        events: newest(
          parts.map((p) => p.events),
          limit,
          (e) => e.at,
          (e) => `${positionKey(e.position)}|${e.eventId}`
        ).map(strip),
        deliveries: newest(
          parts.map((p) => p.deliveries),
          limit,
          (d) => d.at,
          (d) => `${positionKey(d.position)}|${d.deliveryId}`
        ).map(({ position: _position, ...d }) => strip(d)),
        streams: open.map((s) => {
          const at = s.partition.lastIndexOf(":")
          return {
            partnerId: s.partition.slice(0, at),
            environment: s.partition.slice(at + 1) as Environment,
            openedAt: isoAt(s.openedAt),
            position: s.position,
            sent: s.sent,
            events: s.names === null ? null : [...s.names]
          }
        })
      }
      return result
    })

    return ConsoleView.of({ world })
  })

  static readonly layer = Layer.effect(ConsoleView, ConsoleView.make)
}
