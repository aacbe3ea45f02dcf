/**
 * Listings: the listing status of each catalogue instrument as corporate actions raised through the control API left
 * it (SUSPENDED by a suspension, ACTIVE again on resumption, DELISTED for good), over the catalogue's own status
 * (domain/instruments.ts). Owns the `listings` documents (one per changed listing, partition "global") and this
 * process's copy of them. Does not own the actions themselves (app/corporate-actions.ts) nor prices.
 *
 * Two readers, two guarantees (E-181): an order checks the status inside its own transaction, from the store, so no
 * process trades a listing another process suspended; a stock item or a mover list reads this process's copy, loaded
 * at start and updated after each commit made here.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Instrument } from "../domain/instruments.ts"
import { Store, type ReadTx, type StoreError, type Tx } from "../store/port.ts"
import { ListingShape } from "./doc-shapes.ts"
import { collection } from "./docs.ts"

export type ListingStatus = Instrument["listingStatus"]

export interface ListingDoc {
  /** The listing's identity (`Instrument.id`, its catalogue symbol): kept through symbol changes (D-340). */
  readonly symbol: string
  readonly listingStatus: ListingStatus
  /** The control-API action that set the status. */
  readonly actionId: string
  readonly updatedAt: number
}

const ListingDocs = collection<ListingDoc>("listings", ListingShape)

/** The row `statusIn` reads for `instrument`, to name it up front (`prefetch`). */
export const listingKey = (instrument: Instrument): readonly [string, string] => [ListingDocs.name, instrument.id]
const GLOBAL = "global"

export class Listings extends Context.Service<
  Listings,
  {
    /** The status this process knows: for answers that read prices and statuses together (stock items, movers). */
    readonly statusOf: (instrument: Instrument) => ListingStatus
    /** Bumped each time this process's copy changes: caches of answers that show statuses key on it. */
    readonly version: () => number
    /** The instrument with the status this process knows. */
    readonly current: (instrument: Instrument) => Instrument
    /** The committed status, read in `tx`: what an order must check. */
    readonly statusIn: (tx: ReadTx, instrument: Instrument) => Effect.Effect<ListingStatus, StoreError>
    /** Sets the status of the listing `listingId` (`Instrument.id`) in `tx`; this process's copy follows once the transaction commits. */
    readonly setIn: (tx: Tx, listingId: string, listingStatus: ListingStatus, actionId: string, at: number) => Effect.Effect<void, StoreError>
  }
>()("sokoni/Listings") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const known = new Map<string, ListingStatus>()
    let version = 0
    const loaded = yield* store.read((tx) => ListingDocs.list(tx, GLOBAL, { limit: 100_000, order: "asc" }))
    for (const body of loaded) known.set(body.symbol, body.listingStatus)

    const statusOf = (instrument: Instrument): ListingStatus => known.get(instrument.id) ?? instrument.listingStatus
    const current = (instrument: Instrument): Instrument => {
      const status = statusOf(instrument)
      return status === instrument.listingStatus ? instrument : { ...instrument, listingStatus: status }
    }
    const statusIn = (tx: ReadTx, instrument: Instrument) =>
      ListingDocs.getWith(tx, instrument.id, Option.match({ onNone: () => instrument.listingStatus, onSome: (d) => d.listingStatus }))
    const setIn = (tx: Tx, listingId: string, listingStatus: ListingStatus, actionId: string, at: number) =>
      Effect.andThen(
        ListingDocs.put(tx, listingId, GLOBAL, listingId, { symbol: listingId, listingStatus, actionId, updatedAt: at }),
        tx.afterCommit(
          Effect.sync(() => {
            known.set(listingId, listingStatus)
            version += 1
          })
        )
      )
    return Listings.of({ statusOf, version: () => version, current, statusIn, setIn })
  })

  static readonly layer = Layer.effect(Listings, Listings.make)
}
