/**
 * UsageMeter: request, error and rate-limit counts per partner, environment and hour (`GET /usage`, D-064, E-141), as
 * wiring. Every authenticated answer is counted in process memory (no write on the hot path); the counts are added
 * into the store's hourly `usage` documents by the next write that passes through the audit trail (a mutation) and by
 * every `GET /usage`, in the same serialised transaction, so several engine processes on one database add up.
 * Owns the counters held in memory, their storage and the report's reads. Does not own the rules (what an answer
 * counts, the report's window and buckets: domain/billing/usage.ts), deciding what is counted (the gateway hook in
 * audit.ts) or the rate limit itself (http/guards/rate-limit.ts, whose published limit the report repeats).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import {
  addCounts,
  countsOf,
  floorTo,
  MAX_DAYS,
  type UsageCounts,
  type UsageHour,
  type UsageQuery,
  usageReport,
  usageWindow,
  ZERO_COUNTS
} from "../../domain/billing/usage.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { limitFor } from "../../http/guards/rate-limit.ts"
import { EngineClock } from "../../sim/clock.ts"
import { type Hint, type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { UsageShape } from "../doc-shapes.ts"
import { collection, Deliveries, deletedWebhookPartition, deliveryPartition, Orders, Webhooks } from "../docs.ts"
import type { Principal } from "../principal.ts"

/** A partition's counts of one UTC hour, as stored. */
export type UsageDoc = UsageHour

/** A partition's request counts per hour (id `partition|hourStart`), sorted by the hour. */
export const UsageHours = collection<UsageDoc>("usage", UsageShape)
const usageId = (partition: string, hourStart: number) => `${partition}|${hourStart}`
const hourKey = (hourStart: number) => String(hourStart).padStart(15, "0")

export class UsageMeter extends Context.Service<
  UsageMeter,
  {
    /** Counts one authenticated answer (memory only). */
    readonly count: (partition: string, at: number, status: number) => void
    /** Forgets counts not yet written for `partition` (the sandbox reset wipes its usage). */
    readonly forget: (partition: string) => void
    /**
     * Adds the counts held in memory into the store, inside the caller's transaction: of `only` these partitions when
     * given (a partner's transaction must not lock every other partner's partition to write their counts, E-320).
     */
    readonly flush: (tx: Tx, only?: ReadonlyArray<string>) => Effect.Effect<void, StoreError>
    /** `flush` in a transaction of its own, when there is anything to write. */
    readonly flushNow: Effect.Effect<void, StoreError>
    /** The rows a flush of `partition` would read now, to name them up front (`prefetch`, E-405). */
    readonly reads: (partition: string) => ReadonlyArray<Hint>
    readonly report: (principal: Principal, query: UsageQuery) => Effect.Effect<Schemas["UsageReport"], ApiFailure | StoreError>
  }
>()("sokoni/UsageMeter") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    // partition -> hour start -> counts not yet in the store
    let pending = new Map<string, Map<number, UsageCounts>>()

    const count = (partition: string, at: number, status: number) => {
      let hours = pending.get(partition)
      if (hours === undefined) {
        hours = new Map()
        pending.set(partition, hours)
      }
      const hour = floorTo(at, "hour")
      hours.set(hour, addCounts(hours.get(hour) ?? ZERO_COUNTS, countsOf(status)))
    }

    const forget = (partition: string) => {
      pending.delete(partition)
    }

    const merge = (into: Map<string, Map<number, UsageCounts>>, from: Map<string, Map<number, UsageCounts>>) => {
      for (const [partition, hours] of from) {
        const target = into.get(partition) ?? new Map<number, UsageCounts>()
        for (const [hour, counts] of hours) target.set(hour, addCounts(target.get(hour) ?? ZERO_COUNTS, counts))
        into.set(partition, target)
      }
    }

    /** Removes from `pending` what a flush writes: all of it, or the partitions `only` names. */
    const take = (only: ReadonlyArray<string> | undefined) => {
      if (only === undefined) {
        const taken = pending
        pending = new Map()
        return taken
      }
      const taken = new Map<string, Map<number, UsageCounts>>()
      for (const partition of only) {
        const hours = pending.get(partition)
        if (hours === undefined) continue
        taken.set(partition, hours)
        pending.delete(partition)
      }
      return taken
    }

    // Made once (Effect.fnUntraced), not per flush: see sim/scheduler.ts.
    const write = Effect.fnUntraced(function* (tx: Tx, taken: ReturnType<typeof take>) {
      for (const [partition, hours] of taken) {
        for (const [hourStart, counts] of hours) {
          const id = usageId(partition, hourStart)
          const existing = yield* UsageHours.getHere(tx, id)
          const before = Option.getOrElse(existing, (): UsageCounts => ZERO_COUNTS)
          const doc: UsageDoc = {
            partition,
            hourStart,
            ...addCounts({ requests: before.requests, errors: before.errors, rateLimited: before.rateLimited }, counts)
          }
          yield* UsageHours.putHere(tx, id, partition, hourKey(hourStart), doc)
        }
      }
    })

    const flush = (tx: Tx, only?: ReadonlyArray<string>): Effect.Effect<void, StoreError> =>
      Effect.suspend(() => {
        if (pending.size === 0) return Effect.void
        const taken = take(only)
        if (taken.size === 0) return Effect.void
        // Not written: the counts go back to memory for the next flush.
        return write(tx, taken).pipe(Effect.onError(() => Effect.sync(() => merge(pending, taken))))
      })

    const reads = (partition: string): ReadonlyArray<Hint> =>
      [...(pending.get(partition)?.keys() ?? [])].map((hourStart) => [UsageHours.name, usageId(partition, hourStart)] as const)

    const flushNow = Effect.suspend(() => (pending.size === 0 ? Effect.void : store.transact((tx) => flush(tx))))

    /** The partition's hours from the window's first (the rule keeps those up to its end). */
    const hoursFrom = (tx: ReadTx, partition: string, from: number) =>
      UsageHours.list(tx, partition, { after: hourKey(floorTo(from, "hour") - 1), limit: MAX_DAYS * 24 + 1, order: "asc" })

    /** When each order was accepted and each webhook delivery made (the rule counts the window's). */
    const activity = (tx: ReadTx, partition: string) =>
      Effect.gen(function* () {
        const orderTimes = (yield* Orders.list(tx, partition, { limit: 1_000_000, order: "asc" })).map((o) => o.createdAt)
        const hooks = [
          ...(yield* Webhooks.list(tx, partition, { limit: 10_000, order: "asc" })),
          ...(yield* Webhooks.list(tx, deletedWebhookPartition(partition), { limit: 10_000, order: "asc" }))
        ]
        const deliveryTimes: Array<number> = []
        for (const hook of hooks) {
          const made = yield* Deliveries.list(tx, deliveryPartition(partition, hook.id), { limit: 1_000_000, order: "asc" })
          for (const d of made) deliveryTimes.push(d.createdAt)
        }
        return { orderTimes, deliveryTimes }
      })

    const report = Effect.fn("UsageMeter.report")(function* (principal: Principal, query: UsageQuery) {
      const window = yield* liftFailure(usageWindow(query, yield* clock.nowHere()))
      // This process's counts first, so a single engine answers exactly what it served.
      yield* flushNow
      const { hours, seen } = yield* store.read((tx) =>
        Effect.all({ hours: hoursFrom(tx, principal.partition, window.from), seen: activity(tx, principal.partition) })
      )
      return usageReport(window, {
        environment: principal.environment,
        tier: principal.tier,
        rateLimitPerMinute: limitFor(principal.tier, principal.environment),
        hours,
        ...seen
      })
    })

    return UsageMeter.of({ count, forget, flush, flushNow, reads, report })
  })

  static readonly layer = Layer.effect(UsageMeter, UsageMeter.make)
}
