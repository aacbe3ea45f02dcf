/**
 * UsageMeter: request, error and rate-limit counts per partner, environment and hour (`GET /usage`, D-064, E-141).
 * Every authenticated answer is counted in process memory (no write on the hot path); the counts are added into the
 * store's hourly `usage` documents by the next write that passes through the audit trail (a mutation) and by every
 * `GET /usage`, in the same serialised transaction, so several engine processes on one database add up.
 * Owns the counters and the usage report. Does not own deciding what is counted (the gateway hook in audit.ts) or
 * the rate limit itself (http/guards/rate-limit.ts, whose published limit it repeats).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { limitFor } from "../http/guards/rate-limit.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { UsageShape } from "./doc-shapes.ts"
import { collection, Deliveries, deletedWebhookPartition, deliveryPartition, Orders, Webhooks } from "./docs.ts"
import type { Principal } from "./principal.ts"

export const HOUR_MS = 3_600_000
export const DAY_MS = 86_400_000
/** Longest window of one report: 31 days of hours, 366 of days (E-141). */
export const MAX_HOURS = 31 * 24
export const MAX_DAYS = 366

export interface UsageCounts {
  readonly requests: number
  readonly errors: number
  readonly rateLimited: number
}

export interface UsageDoc extends UsageCounts {
  readonly partition: string
  readonly hourStart: number
}

/** A partition's request counts per hour (id `partition|hourStart`), sorted by the hour. */
export const UsageHours = collection<UsageDoc>("usage", UsageShape)
const usageId = (partition: string, hourStart: number) => `${partition}|${hourStart}`
const hourKey = (hourStart: number) => String(hourStart).padStart(15, "0")
const ZERO: UsageCounts = { requests: 0, errors: 0, rateLimited: 0 }
const add = (a: UsageCounts, b: UsageCounts): UsageCounts => ({
  requests: a.requests + b.requests,
  errors: a.errors + b.errors,
  rateLimited: a.rateLimited + b.rateLimited
})

/** The counts one answer adds: every authenticated answer is a request; 4xx and 5xx are errors; 429 is rate-limited. */
export const countsOf = (status: number): UsageCounts => ({ requests: 1, errors: status >= 400 ? 1 : 0, rateLimited: status === 429 ? 1 : 0 })

/** Start of the UTC hour or day containing `ms`. */
export const floorTo = (ms: number, granularity: "hour" | "day") => {
  const step = granularity === "hour" ? HOUR_MS : DAY_MS
  return ms - (((ms % step) + step) % step)
}

export interface UsageQuery {
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly granularity?: "hour" | "day" | undefined
}

/**
 * The window of a report: default the last 7 UTC days through the end of today; `from` after `to`, or more buckets
 * than MAX_HOURS / MAX_DAYS, is 400 VALIDATION_ERROR. Pure.
 */
export const usageWindow = (query: UsageQuery, now: number): { from: number; to: number; granularity: "hour" | "day" } | ApiFailure => {
  const granularity = query.granularity ?? "day"
  const to = query.to ?? floorTo(now, "day") + DAY_MS - 1
  const from = query.from ?? floorTo(to, "day") - 6 * DAY_MS
  if (from > to) return fail("VALIDATION_ERROR", "from must not be after to", { param: "from" })
  const step = granularity === "hour" ? HOUR_MS : DAY_MS
  const buckets = Math.floor((floorTo(to, granularity) - floorTo(from, granularity)) / step) + 1
  const max = granularity === "hour" ? MAX_HOURS : MAX_DAYS
  if (buckets > max) return fail("VALIDATION_ERROR", `at most ${max} ${granularity === "hour" ? "hours" : "days"} per report`, { param: "to" })
  return { from, to, granularity }
}

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
      hours.set(hour, add(hours.get(hour) ?? ZERO, countsOf(status)))
    }

    const forget = (partition: string) => {
      pending.delete(partition)
    }

    const merge = (into: Map<string, Map<number, UsageCounts>>, from: Map<string, Map<number, UsageCounts>>) => {
      for (const [partition, hours] of from) {
        const target = into.get(partition) ?? new Map<number, UsageCounts>()
        for (const [hour, counts] of hours) target.set(hour, add(target.get(hour) ?? ZERO, counts))
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

    const flush = (tx: Tx, only?: ReadonlyArray<string>): Effect.Effect<void, StoreError> =>
      Effect.suspend(() => {
        if (pending.size === 0) return Effect.void
        const taken = take(only)
        if (taken.size === 0) return Effect.void
        return Effect.gen(function* () {
          for (const [partition, hours] of taken) {
            for (const [hourStart, counts] of hours) {
              const id = usageId(partition, hourStart)
              const existing = yield* UsageHours.get(tx, id)
              const before = Option.getOrElse(existing, (): UsageCounts => ZERO)
              const doc: UsageDoc = {
                partition,
                hourStart,
                ...add({ requests: before.requests, errors: before.errors, rateLimited: before.rateLimited }, counts)
              }
              yield* UsageHours.put(tx, id, partition, hourKey(hourStart), doc)
            }
          }
        }).pipe(
          // Not written: the counts go back to memory for the next flush.
          Effect.onError(() => Effect.sync(() => merge(pending, taken)))
        )
      })

    const flushNow = Effect.suspend(() => (pending.size === 0 ? Effect.void : store.transact((tx) => flush(tx))))

    const hoursIn = (tx: ReadTx, partition: string, from: number, to: number) =>
      Effect.map(UsageHours.list(tx, partition, { after: hourKey(floorTo(from, "hour") - 1), limit: MAX_DAYS * 24 + 1, order: "asc" }), (docs) =>
        docs.filter((d) => d.hourStart <= to)
      )

    /** Orders accepted and webhook deliveries made in the window (what the engine already keeps). */
    const activity = (tx: ReadTx, partition: string, from: number, to: number) =>
      Effect.gen(function* () {
        const orders = (yield* Orders.list(tx, partition, { limit: 1_000_000, order: "asc" })).filter((o) => o.createdAt >= from && o.createdAt <= to).length
        const hooks = [
          ...(yield* Webhooks.list(tx, partition, { limit: 10_000, order: "asc" })),
          ...(yield* Webhooks.list(tx, deletedWebhookPartition(partition), { limit: 10_000, order: "asc" }))
        ]
        let deliveries = 0
        for (const hook of hooks) {
          const made = yield* Deliveries.list(tx, deliveryPartition(partition, hook.id), { limit: 1_000_000, order: "asc" })
          deliveries += made.filter((d) => d.createdAt >= from && d.createdAt <= to).length
        }
        return { orders, deliveries }
      })

    const report = Effect.fn("UsageMeter.report")(function* (principal: Principal, query: UsageQuery) {
      const now = yield* clock.now
      const window = usageWindow(query, now)
      if ("_tag" in window) return yield* Effect.fail(window)
      const { from, to, granularity } = window
      // This process's counts first, so a single engine answers exactly what it served.
      yield* flushNow
      const { hours, seen } = yield* store.read((tx) =>
        Effect.all({ hours: hoursIn(tx, principal.partition, from, to), seen: activity(tx, principal.partition, from, to) })
      )
      const step = granularity === "hour" ? HOUR_MS : DAY_MS
      const first = floorTo(from, granularity)
      const buckets = new Map<number, UsageCounts>()
      for (let start = first; start <= to; start += step) buckets.set(start, ZERO)
      let totals = ZERO
      for (const h of hours) {
        const start = floorTo(h.hourStart, granularity)
        const bucket = buckets.get(start)
        if (bucket === undefined) continue
        buckets.set(start, add(bucket, h))
        totals = add(totals, h)
      }
      const answer: Schemas["UsageReport"] = {
        from: isoAt(from),
        to: isoAt(to),
        granularity,
        environment: principal.environment,
        tier: principal.tier,
        rateLimitPerMinute: limitFor(principal.tier, principal.environment),
        totals: { ...totals, orders: seen.orders, webhookDeliveries: seen.deliveries },
        series: [...buckets].map(([start, c]) => ({ periodStart: isoAt(start), requests: c.requests, errors: c.errors, rateLimited: c.rateLimited }))
      }
      return answer
    })

    return UsageMeter.of({ count, forget, flush, flushNow, report })
  })

  static readonly layer = Layer.effect(UsageMeter, UsageMeter.make)
}
