/**
 * StreamService: `GET /stream` (D-058), the event log as Server-Sent Events. Owns opening a stream (the concurrent
 * cap per tier, E-132), what a stream sends and in which order (replay from the log, then live, keep-alives), and
 * freeing a stream's slot. Does not own the log (events/event-log.ts), the framing (domain/sse.ts) nor the transport
 * (http/node-server.ts and runtime.ts write the chunks and interrupt the stream when the client goes away).
 *
 * How a stream stays gap-free and repeat-free (E-131): the log is the only source. A stream holds a cursor (the last
 * position it has passed) and always reads the committed log after it, in position order, so it can neither skip nor
 * repeat a position; a committed event only wakes it up (an `EventLog.onCommit` listener called right after the
 * commit, so no queue grows behind a slow client). It closes its wake-up latch before each read, so an event
 * committed during the read wakes it again. A live start (no resume position) starts after the log's end as it
 * stands when the stream opens. Each keep-alive also reads the log, so events another engine process commits on the
 * same database arrive within 15 s.
 *
 * Keep-alives come from a Scheduler timer on the engine clock every 15 s (E-130), which also renews the stream's slot.
 */
import { Context, Effect, Latch, Layer, Option, Stream } from "effect"
import { ApiFailure } from "../domain/errors.ts"
import { frame, KEEP_ALIVE, KEEP_ALIVE_MS, RETRY_MS, retryField, SLOT_LEASE_MS, STREAM_CAPS } from "../domain/sse.ts"
import { envelopeOf, EventLog, logHead } from "../events/event-log.ts"
import { EngineClock } from "../sim/clock.ts"
import { PlantedDefects } from "../sim/defects.ts"
import { Faults } from "../sim/faults.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type LoggedEvent, type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { StreamSlotShape } from "./doc-shapes.ts"
import { collection } from "./docs.ts"
import { partnerOfPartition, type Principal } from "./principal.ts"

/** Events read from the log per step: a long replay goes out in pages, each a chunk of its own. */
export const PAGE = 200
/** Where slots live: `streamSlots`, one document per (partition, slot index). */
export const SLOTS = "streamSlots"
/** The slots, read through their shape (doc-shapes.ts). */
export const StreamSlots = collection<SlotBody>(SLOTS, StreamSlotShape)

export interface OpenOptions {
  /** Replay after this position; undefined starts live. */
  readonly after: number | undefined
  /** Only these event names (`events=`); undefined sends all. */
  readonly names: ReadonlySet<string> | undefined
}

/** One of a partition's stream slots (E-132), id `partition#index`: who holds it, and until when. */
export interface SlotBody {
  readonly holder: string | null
  readonly expiresAt: number
}

interface Slot {
  readonly id: string
  readonly holder: string
}

/** One open stream in this process. */
interface Connection {
  readonly partition: string
  readonly sandbox: boolean
  readonly names: ReadonlySet<string> | undefined
  readonly wake: Latch.Latch
  readonly slot: Slot | undefined
  /** Engine time it opened at (the console shows it). */
  readonly openedAt: number
  cursor: number
  beats: number
  ended: boolean
  cancelBeat: Effect.Effect<void>
  /** A fault plan's cut (docs/faults.md): the stream ends after this many event messages, unless healed by then. */
  readonly cut: { readonly afterMessages: number; readonly healsAt: number | undefined } | undefined
  sent: number
}

/** What the console shows of an open stream. */
export interface OpenStream {
  readonly partition: string
  readonly openedAt: number
  readonly position: number
  readonly sent: number
  readonly names: ReadonlyArray<string> | null
}

export class StreamService extends Context.Service<
  StreamService,
  {
    /** Opens a stream: refuses over the cap (429) before anything is sent, else the chunks to write. */
    readonly open: (principal: Principal, options: OpenOptions) => Effect.Effect<Stream.Stream<string>, ApiFailure | StoreError>
    /** Streams open in this process, per partition (tests and diagnostics). */
    readonly openCount: (partition: string) => Effect.Effect<number>
    /** Every stream open in this process, oldest first per partition (the console, E-381). */
    readonly connections: Effect.Effect<ReadonlyArray<OpenStream>>
  }
>()("sokoni/StreamService") {
  static readonly make = (options: { readonly retryMs?: number | undefined } = {}) =>
    Effect.gen(function* () {
      const store = yield* Store
      const clock = yield* EngineClock
      const entropy = yield* Entropy
      const scheduler = yield* Scheduler
      const events = yield* EventLog
      const faults = yield* Faults
      const duplicate = (yield* PlantedDefects).has("stream-duplicate")
      const retry = retryField(options.retryMs ?? RETRY_MS)
      const open = new Map<string, Set<Connection>>()

      // Each committed event wakes the streams of its partition, right after its commit; a live stream starts at the
      // first one committed after it opened.
      const wake = (event: LoggedEvent) => {
        const streams = open.get(event.partition)
        if (streams === undefined) return
        for (const c of streams) {
          c.cursor ??= event.position - 1
          Latch.openUnsafe(c.wake)
        }
      }
      yield* events.onCommit(wake)

      const slotId = (partition: string, index: number) => `${partition}#${index}`
      const slotAt = (tx: ReadTx, id: string) =>
        Effect.map(
          StreamSlots.get(tx, id),
          Option.getOrElse((): SlotBody => ({ holder: null, expiresAt: 0 }))
        )
      const putSlot = (tx: Tx, partition: string, id: string, body: SlotBody) => StreamSlots.put(tx, id, partition, id, body)

      /** Takes a free slot (never held, released, or lapsed) or fails 429 with how many are held (E-132). */
      const acquire = (principal: Principal, now: number) =>
        store.transact((tx) =>
          Effect.gen(function* () {
            const limit = STREAM_CAPS[principal.tier]
            let active = 0
            let earliest = Number.POSITIVE_INFINITY
            let free: string | undefined
            for (let i = 0; i < limit; i++) {
              const id = slotId(principal.partition, i)
              const slot = yield* slotAt(tx, id)
              if (slot.holder !== null && slot.expiresAt > now) {
                active++
                earliest = Math.min(earliest, slot.expiresAt)
              } else free ??= id
            }
            if (free === undefined) {
              // Retry-After: when the earliest held slot lapses if its stream is gone (at most the 45 s lease).
              return yield* new ApiFailure({
                code: "RATE_LIMITED",
                message: `Concurrent stream limit reached for tier ${principal.tier}`,
                extras: { activeConnections: active, limit },
                retryAfter: Math.max(1, Math.ceil((earliest - now) / 1000))
              })
            }
            const holder = yield* entropy.idHere("stm")
            yield* putSlot(tx, principal.partition, free, { holder, expiresAt: now + SLOT_LEASE_MS })
            return { id: free, holder } satisfies Slot
          })
        )

      /** Renews the lease while the slot is still this stream's; false when it lapsed and was taken meanwhile. */
      const renew = (c: Connection, slot: Slot, now: number) =>
        store.transact((tx) =>
          Effect.gen(function* () {
            const held = yield* slotAt(tx, slot.id)
            if (held.holder !== slot.holder) return false
            yield* putSlot(tx, c.partition, slot.id, { holder: slot.holder, expiresAt: now + SLOT_LEASE_MS })
            return true
          })
        )

      const release = (c: Connection, slot: Slot) =>
        store.transact((tx) =>
          Effect.gen(function* () {
            const held = yield* slotAt(tx, slot.id)
            if (held.holder === slot.holder) yield* putSlot(tx, c.partition, slot.id, { holder: null, expiresAt: 0 })
          })
        )

      /** The keep-alive timer: a comment to send, the slot renewed, the next beat set. */
      const beatAt = (c: Connection, dueAt: number): Effect.Effect<void> =>
        Effect.flatMap(
          scheduler.timer(
            dueAt,
            Effect.gen(function* () {
              if (c.ended) return
              if (c.slot !== undefined) {
                const kept = yield* renew(c, c.slot, dueAt).pipe(
                  Effect.catch((error) => Effect.as(Effect.logWarning("could not renew a stream slot", error), true))
                )
                if (!kept) {
                  // The lease lapsed and another stream took the slot: end this one, its client reconnects.
                  c.ended = true
                  Latch.openUnsafe(c.wake)
                  return
                }
              }
              c.beats++
              Latch.openUnsafe(c.wake)
              yield* beatAt(c, dueAt + KEEP_ALIVE_MS)
            })
          ),
          (cancel) =>
            Effect.sync(() => {
              c.cancelBeat = cancel
            })
        )

      /** The next chunk to send (keep-alive, then events after the cursor), waiting until there is one. */
      const next = (c: Connection): Effect.Effect<string | undefined, StoreError> =>
        Effect.gen(function* () {
          while (true) {
            if (c.ended) return undefined
            Latch.closeUnsafe(c.wake)
            let out = ""
            // One comment per beat, even when several beats fired before this loop ran (two 15 s beats inside one
            // clock advance, or a busy machine): what the client sees must not depend on how fast the host is.
            if (c.beats > 0) {
              out += KEEP_ALIVE.repeat(c.beats)
              c.beats = 0
            }
            const page = yield* store.read((tx) => tx.readEvents(c.partition, c.cursor, PAGE))
            const cutting = c.cut !== undefined && (c.cut.healsAt === undefined || (yield* clock.nowHere()) < c.cut.healsAt)
            for (const event of page) {
              c.cursor = event.position
              if (c.names === undefined || c.names.has(event.name)) {
                const framed = frame(event.position, event.name, envelopeOf(event, c.sandbox))
                // TEST ONLY (sim/defects.ts, E-190): false unless `serve --plant-defect stream-duplicate`.
                out += duplicate ? framed + framed : framed
                c.sent++
                if (cutting && c.sent >= (c.cut?.afterMessages ?? 0)) {
                  // The cut: this message is the last; the client resumes from its id (Last-Event-ID).
                  c.ended = true
                  yield* faults.streamWasCut(partnerOfPartition(c.partition), c.sent)
                  break
                }
              }
            }
            if (out !== "") return out
            yield* c.wake.await
          }
        })

      const headOf = (partition: string) => store.read((tx) => logHead(tx, partition))

      const close = (c: Connection) =>
        Effect.gen(function* () {
          c.ended = true
          yield* c.cancelBeat
          const streams = open.get(c.partition)
          streams?.delete(c)
          if (streams?.size === 0) open.delete(c.partition)
          if (c.slot !== undefined) yield* release(c, c.slot).pipe(Effect.catch((error) => Effect.logWarning("could not free a stream slot", error)))
        })

      const openStream = Effect.fn("StreamService.open")(function* (principal: Principal, options: OpenOptions) {
        const now = yield* clock.nowHere()
        const sandbox = principal.environment === "sandbox"
        // A live start: after the log's end as it stands now (the first read comes after registering, so a commit in
        // between is not missed).
        const after = options.after ?? (yield* headOf(principal.partition))
        // The sandbox does not enforce a cap (spec "Limits"), so its streams hold no slot.
        const slot = sandbox ? undefined : yield* acquire(principal, now)
        const c: Connection = {
          partition: principal.partition,
          sandbox,
          names: options.names,
          wake: Latch.makeUnsafe(true),
          slot,
          openedAt: now,
          cursor: after,
          beats: 0,
          ended: false,
          cancelBeat: Effect.void,
          cut: faults.busy() ? yield* faults.streamCut({ partnerId: principal.partnerId, now, resumed: options.after !== undefined }) : undefined,
          sent: 0
        }
        const streams = open.get(c.partition) ?? new Set<Connection>()
        streams.add(c)
        open.set(c.partition, streams)
        yield* beatAt(c, now + KEEP_ALIVE_MS)
        const body = Stream.unfold(undefined, () => Effect.map(next(c), (chunk) => (chunk === undefined ? undefined : ([chunk, undefined] as const))))
        return Stream.concat(Stream.succeed(retry), body).pipe(
          // A store failure ends the stream (logged); the client resumes from its last id.
          Stream.catchCause((cause) => Stream.fromEffectDrain(Effect.logWarning("a stream ended on a failure", cause))),
          Stream.ensuring(close(c))
        )
      })

      return StreamService.of({
        open: openStream,
        openCount: (partition) => Effect.sync(() => open.get(partition)?.size ?? 0),
        connections: Effect.sync(() =>
          [...open.values()].flatMap((streams) =>
            [...streams].map((c) => ({
              partition: c.partition,
              openedAt: c.openedAt,
              position: c.cursor,
              sent: c.sent,
              names: c.names === undefined ? null : [...c.names].sort()
            }))
          )
        )
      })
    })

  static readonly layer = (options: { readonly retryMs?: number | undefined } = {}) => Layer.effect(StreamService, StreamService.make(options))
}
