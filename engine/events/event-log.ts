/**
 * EventLog: the append-only log of partner events, one per partner and environment (a partition), written in the
 * transaction of the state change that caused it (transactional outbox). Owns: the event envelope, appending,
 * reading by position, and fanning committed events out to subscribers (SSE, webhooks, the trace).
 * Does not own delivery: consumers that must be as durable as the event (the webhook outbox) register an
 * `onAppend` hook that writes in the appending transaction; the stream only needs a wake-up once an event commits
 * (`onCommit`; app/stream.ts reads the log itself); others may `subscribe` to committed events.
 */
import { makeListeners } from "./listeners.ts"
import { Context, Effect, Layer, PubSub, type Scope } from "effect"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Trace } from "../sim/trace.ts"
import type { LoggedEvent, ReadTx, StoreError, Tx } from "../store/port.ts"

/** Runs inside the appending transaction, after the event row is written (so it commits or rolls back with it). */
export type AppendHook = (tx: Tx, event: LoggedEvent) => Effect.Effect<void, StoreError>

/** The envelope webhooks and the stream carry (spec "Events"; eventId position decided in the contract). */
export const envelopeOf = (event: LoggedEvent, isSandbox: boolean) => ({
  eventId: event.eventId,
  event: event.name,
  timestamp: isoAt(event.timestamp),
  data: event.payload,
  ...(isSandbox ? { isSandbox: true } : {})
})

/**
 * The log's last position in `partition` (0 when empty), in about 2·log2(n) one-row reads (E-135): "is there an event
 * after k" is true below the end and false from it on (positions are never reused), so gallop, then bisect.
 */
export const logHead = (tx: Pick<ReadTx, "readEvents">, partition: string): Effect.Effect<number, StoreError> =>
  Effect.gen(function* () {
    const anyAfter = (k: number) => Effect.map(tx.readEvents(partition, k, 1), (found) => found.length > 0)
    if (!(yield* anyAfter(0))) return 0
    let lo = 0
    let hi = 1
    while (yield* anyAfter(hi)) {
      lo = hi
      hi *= 2
    }
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2)
      if (yield* anyAfter(mid)) lo = mid
      else hi = mid
    }
    return hi
  })

export class EventLog extends Context.Service<
  EventLog,
  {
    /** Appends `name` with `payload`; subscribers see it only once the transaction commits. */
    readonly append: (tx: Tx, partition: string, name: string, payload: unknown) => Effect.Effect<LoggedEvent, StoreError>
    readonly read: (tx: Tx, partition: string, afterPosition: number, limit: number) => Effect.Effect<ReadonlyArray<LoggedEvent>, StoreError>
    /** Every event committed from now on, for as long as the scope lasts (the console's feed). */
    readonly subscribe: Effect.Effect<PubSub.Subscription<LoggedEvent>, never, Scope.Scope>
    /** Registers a hook run in every append's transaction (the webhook outbox). */
    readonly onAppend: (hook: AppendHook) => Effect.Effect<void>
    /**
     * Registers a plain function called with every event right after its transaction commits, before the event is
     * traced (the streams' wake-up). It must not throw.
     */
    readonly onCommit: (listener: (event: LoggedEvent) => void) => Effect.Effect<void>
  }
>()("sokoni/EventLog") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const trace = yield* Trace
    const committed = yield* PubSub.unbounded<LoggedEvent>()
    const hooks: Array<AppendHook> = []
    // While nobody subscribes (every run without a console open), a committed event is not published: a publish to
    // a PubSub nobody reads still cost some ten steps per event (2% of a simulated week).
    const { listen, heard } = makeListeners()
    const listeners: Array<(event: LoggedEvent) => void> = []
    /**
     * What runs once an event's transaction commits, in this order: the commit listeners, the trace's line, the
     * publish. One after-commit effect per event: a listener's own hook and an empty publish cost some four steps
     * per event (E-450).
     */
    const committedEffect = (logged: LoggedEvent, line: Record<string, unknown>) =>
      Effect.suspend(() => {
        for (const listener of listeners) listener(logged)
        const traced = trace.record(line)
        return heard() ? Effect.andThen(traced, PubSub.publish(committed, logged)) : traced
      })
    const append = Effect.fnUntraced(function* (tx: Tx, partition: string, name: string, payload: unknown) {
      const logged = yield* tx.appendEvent(partition, {
        eventId: yield* entropy.idHere("evt"),
        name,
        timestamp: yield* clock.nowHere(),
        payload
      })
      for (const hook of hooks) yield* hook(tx, logged)
      yield* tx.afterCommit(
        committedEffect(logged, {
          kind: "event",
          partition,
          position: logged.position,
          eventId: logged.eventId,
          event: name,
          timestamp: isoAt(logged.timestamp),
          data: payload
        })
      )
      return logged
    })
    return EventLog.of({
      append,
      read: (tx, partition, after, limit) => tx.readEvents(partition, after, limit),
      subscribe: Effect.andThen(listen, PubSub.subscribe(committed)),
      onAppend: (hook) => Effect.sync(() => void hooks.push(hook)),
      onCommit: (listener) => Effect.sync(() => void listeners.push(listener))
    })
  })

  static readonly layer = Layer.effect(EventLog, EventLog.make)
}
