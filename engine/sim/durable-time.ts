/**
 * The simulated world's time and market, kept in the store so that a restart continues them (E-298). An engine
 * restarted on the same store (a crashed process, a rolling restart, a second process on one database) must not see
 * its clock go back, nor its price history change under it:
 * - the clock: where the virtual time stood, and at which real instant (a follow clock kept running while the process
 *   was down; a manual clock stands still); written at start and after every advance;
 * - the market feed: the origin its price paths are computed from (the first start's clock), and every pin and
 *   rescale the operator made, replayed into the feed when it is built.
 * Owns the documents and their reading; the clock (clock.ts), the feed (market-feed.ts) and the scheduler own their
 * behaviour. A reset wipes the store, so a new world starts where its plan says.
 */
import { Effect, Option, Schema } from "effect"
import type { Instrument } from "../domain/instruments.ts"
import { Store, type StoreError, type Tx } from "../store/port.ts"
import type { ClockMode } from "./clock.ts"

type StoreService = Store["Service"]

const GLOBAL = "global"
const SIM = "simWorld"
const PINS = "simPins"
const RESCALES = "simRescales"

const ClockMark = Schema.Struct({ version: Schema.Literal(1), virtual: Schema.Number, real: Schema.Number })
const FeedOrigin = Schema.Struct({ version: Schema.Literal(1), origin: Schema.Number })
const PinMark = Schema.Struct({ version: Schema.Literal(1), instrumentId: Schema.String, k: Schema.Number, price: Schema.Number })
const RescaleMark = Schema.Struct({
  version: Schema.Literal(1),
  instrumentId: Schema.String,
  k: Schema.Number,
  ratioFrom: Schema.Number,
  ratioTo: Schema.Number
})
export type PinMark = typeof PinMark.Type
export type RescaleMark = typeof RescaleMark.Type

/** A stored body of the expected shape, or none (a body of another shape is one this engine cannot continue from). */
const decoded =
  <A>(decode: (input: unknown) => Option.Option<A>) =>
  (doc: Option.Option<{ readonly body: unknown }>): Option.Option<A> =>
    Option.flatMap(doc, (d) => decode(d.body))
const clockMarkOf = decoded(Schema.decodeUnknownOption(ClockMark))
const feedOriginOf = decoded(Schema.decodeUnknownOption(FeedOrigin))
const pinMarkOf = decoded(Schema.decodeUnknownOption(PinMark))
const rescaleMarkOf = decoded(Schema.decodeUnknownOption(RescaleMark))

/**
 * Where a restarted clock starts: never before `start`, never before where the store's clock stood (for a follow
 * clock, plus the real time that passed since it was written). A system clock is the wall clock: nothing to resume.
 */
export const resumedStart = (mode: ClockMode, start: number, real: number, mark: Option.Option<typeof ClockMark.Type>): number => {
  if (mode === "system" || Option.isNone(mark)) return start
  const resumed = mode === "follow" ? mark.value.virtual + Math.max(0, real - mark.value.real) : mark.value.virtual
  return Math.max(start, resumed)
}

/** The clock's mark in the store, if a run left one. */
export const readClockMark = Effect.fn("DurableTime.readClockMark")(function* () {
  const store = yield* Store
  return clockMarkOf(yield* store.read((tx) => tx.get(SIM, "clock")))
})

/** Records where the clock stands at the real instant `real` (at start, after an advance). */
export const writeClockMark = (store: StoreService, virtual: number, real: number): Effect.Effect<void, StoreError> =>
  store.transact((tx) => tx.put(SIM, { id: "clock", partition: GLOBAL, sortKey: "clock", body: { version: 1, virtual, real } }))

export interface FeedMemory {
  readonly origin: number
  readonly pins: ReadonlyArray<PinMark>
  readonly rescales: ReadonlyArray<RescaleMark>
}

const listAll = (tx: Pick<Tx, "list">, collection: string) => tx.list(collection, { partition: GLOBAL, limit: Number.MAX_SAFE_INTEGER, order: "asc" })

/**
 * The feed's origin (written as `now` on a store that has none) and the pins and rescales made on it so far, in the
 * order they were made.
 */
export const feedMemory = Effect.fn("DurableTime.feedMemory")(function* (now: number) {
  const store = yield* Store
  return yield* store.transact((tx) =>
    Effect.gen(function* () {
      const kept = feedOriginOf(yield* tx.get(SIM, "feed"))
      if (Option.isNone(kept)) yield* tx.put(SIM, { id: "feed", partition: GLOBAL, sortKey: "feed", body: { version: 1, origin: now } })
      const pins = (yield* listAll(tx, PINS)).flatMap((d) => Option.toArray(pinMarkOf(Option.some(d))))
      const rescales = (yield* listAll(tx, RESCALES)).flatMap((d) => Option.toArray(rescaleMarkOf(Option.some(d))))
      const memory: FeedMemory = { origin: Option.isSome(kept) ? kept.value.origin : now, pins, rescales }
      return memory
    })
  )
})

/** Sort keys in the order marks were made: one counter for both kinds, so a replay applies them as they came. */
const markKey = (tx: Tx) => Effect.map(tx.nextSeq("simMarketMarks"), (n) => String(n).padStart(12, "0"))

/** Keeps a pin made at instant index `k`, in the transaction of the request that made it. */
export const rememberPin = (store: StoreService, instrument: Instrument, k: number, price: number): Effect.Effect<void, StoreError> =>
  store.transact((tx) =>
    Effect.flatMap(markKey(tx), (sortKey) =>
      tx.put(PINS, { id: `${instrument.id}:${sortKey}`, partition: GLOBAL, sortKey, body: { version: 1, instrumentId: instrument.id, k, price } })
    )
  )

/** Keeps a rescale at instant index `k` (a split, reverse split or bonus issue), as `rememberPin` does. */
export const rememberRescale = (store: StoreService, instrument: Instrument, k: number, ratioFrom: number, ratioTo: number): Effect.Effect<void, StoreError> =>
  store.transact((tx) =>
    Effect.flatMap(markKey(tx), (sortKey) =>
      tx.put(RESCALES, {
        id: `${instrument.id}:${sortKey}`,
        partition: GLOBAL,
        sortKey,
        body: { version: 1, instrumentId: instrument.id, k, ratioFrom, ratioTo }
      })
    )
  )
