/**
 * Symbols: which exchange-qualified symbol each catalogue listing answers to now, after the symbol changes raised
 * through the control API (D-340). A listing keeps its identity (`Instrument.id`, its catalogue symbol) for life; a
 * symbol change gives it a new visible symbol and retires the old one, which then answers 404 NOT_FOUND naming its
 * successor (D-341). Owns the `symbols` documents (one per renamed listing, partition "global") and this process's copy
 * of them; resolving a request's symbol against the current catalogue; finding the listing of a symbol stored on a
 * record (a holding, an order, an alert, a quote, an action), current or retired.
 * Does not own the symbol change itself (app/corporate-actions.ts), listing statuses (app/listings.ts) nor prices.
 *
 * Same two guarantees as listing statuses (E-181, E-230): a trade re-reads its listing's symbol inside its own
 * transaction; every read answers from this process's copy, loaded at start and updated after each commit made here.
 */
import { Context, Effect, Layer, Option } from "effect"
import { findExchange } from "../domain/calendar.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { INSTRUMENTS, type Instrument, lookupSymbol, renamed, type SymbolLookup } from "../domain/instruments.ts"
import { isoDate } from "../domain/reference/seeded.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { SymbolShape } from "./doc-shapes.ts"
import { collection } from "./docs.ts"

export interface SymbolDoc {
  /** The listing's identity (its catalogue symbol). */
  readonly listingId: string
  /** The symbol it answers to now. */
  readonly symbol: string
  /** Every symbol it answered to before, oldest first (the catalogue symbol first). */
  readonly formerSymbols: ReadonlyArray<string>
  /** The SYMBOL_CHANGE action that set `symbol`, and when it took effect. */
  readonly actionId: string
  readonly effectiveAt: number
}

const SymbolDocs = collection<SymbolDoc>("symbols", SymbolShape)

/** The row `symbolIn` reads for `instrument`, to name it up front (`prefetch`). */
export const symbolKey = (instrument: Instrument): readonly [string, string] => [SymbolDocs.name, instrument.id]
const GLOBAL = "global"

/** Where a retired symbol went: the listing and the day its symbol changed. */
interface Retired {
  readonly listingId: string
  readonly effectiveAt: number
}

export class Symbols extends Context.Service<
  Symbols,
  {
    /** The catalogue under the current symbols (same order as the catalogue). */
    readonly catalogue: () => ReadonlyArray<Instrument>
    /** Bumped each time this process's copy changes: caches keyed on symbols include it. */
    readonly version: () => number
    /** The listing with its current symbol. */
    readonly current: (instrument: Instrument) => Instrument
    /** The catalogue listing (original symbol): what the seeded reference data was generated from. */
    readonly original: (instrument: Instrument) => Instrument
    /** A request's symbol, with the spec's error for each way it can be wrong; a retired symbol is 404 naming its successor. */
    readonly resolve: (symbol: string, exchange?: string) => Instrument | ApiFailure
    /** The lookup a batch makes (found, malformed, unknown, ambiguous), over the current symbols. */
    readonly lookup: (symbol: string, exchange?: string) => SymbolLookup
    /** The listing (current symbol) of a symbol stored on a record, whether current or retired since. */
    readonly listingOf: (storedSymbol: string) => Instrument | undefined
    /** The current symbol of a stored symbol (itself if no listing has it). */
    readonly currentSymbol: (storedSymbol: string) => string
    /** Every symbol the listing has answered to, the current one first. */
    readonly namesOf: (instrument: Instrument) => ReadonlyArray<string>
    /** The committed symbol of the listing, read in `tx`: what a trade checks (another process may have renamed it). */
    readonly symbolIn: (tx: ReadTx, instrument: Instrument) => Effect.Effect<string, StoreError>
    /** Whether any listing answers or answered to `symbol` (committed state, read in `tx`). */
    readonly usedIn: (tx: ReadTx, symbol: string) => Effect.Effect<boolean, StoreError>
    /** Gives the listing `newSymbol` in `tx`; this process's copy follows once the transaction commits. */
    readonly renameIn: (tx: Tx, instrument: Instrument, newSymbol: string, actionId: string, at: number) => Effect.Effect<void, StoreError>
  }
>()("sokoni/Symbols") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const byId = new Map(INSTRUMENTS.map((i) => [i.id, i]))
    const docs = new Map<string, SymbolDoc>()
    let catalogue: ReadonlyArray<Instrument> = INSTRUMENTS
    let currentById = new Map<string, Instrument>()
    let bySymbol = new Map<string, Instrument>()
    let retired = new Map<string, Retired>()
    let version = 0

    const rebuild = () => {
      catalogue = INSTRUMENTS.map((i) => {
        const doc = docs.get(i.id)
        return doc === undefined ? i : renamed(i, doc.symbol)
      })
      currentById = new Map(catalogue.map((i) => [i.id, i]))
      bySymbol = new Map(catalogue.map((i) => [i.symbol, i]))
      retired = new Map()
      for (const doc of docs.values()) {
        const listing = currentById.get(doc.listingId)
        if (listing === undefined) continue
        for (const former of doc.formerSymbols) {
          bySymbol.set(former, listing)
          retired.set(former, { listingId: doc.listingId, effectiveAt: doc.effectiveAt })
        }
      }
      version += 1
    }

    const loaded = yield* store.read((tx) => SymbolDocs.listDocs(tx, { partition: GLOBAL, limit: 100_000, order: "asc" }))
    for (const doc of loaded) docs.set(doc.id, doc.body)
    rebuild()

    const current = (instrument: Instrument) => currentById.get(instrument.id) ?? instrument
    const original = (instrument: Instrument) => byId.get(instrument.id) ?? instrument
    const lookup = (symbol: string, exchange?: string) => lookupSymbol(symbol, exchange, catalogue)

    /** The listing a retired symbol (qualified, or its bare ticker) now answers to, with when it changed. */
    const successorOf = (raw: string, exchange: string | undefined): { readonly now: Instrument; readonly at: number } | undefined => {
      const wanted = raw.toUpperCase()
      const wantedExchange = exchange?.toUpperCase()
      for (const [former, where] of retired) {
        const listing = currentById.get(where.listingId)
        if (listing === undefined || (wantedExchange !== undefined && listing.exchange !== wantedExchange)) continue
        if (former === wanted || former.slice(0, former.lastIndexOf(".")) === wanted) return { now: listing, at: where.effectiveAt }
      }
      return undefined
    }

    const resolve = (symbol: string, exchange?: string): Instrument | ApiFailure => {
      if (exchange !== undefined && findExchange(exchange.toUpperCase()) === undefined) {
        return fail("UNKNOWN_EXCHANGE", `exchange ${exchange} is not recognised`, { param: "exchange" })
      }
      const found = lookup(symbol, exchange)
      switch (found._tag) {
        case "Found":
          return found.instrument
        case "InvalidFormat":
          return fail("INVALID_SYMBOL", `symbol ${JSON.stringify(symbol)} must be 2-20 letters or digits, optionally dot-separated`, { param: "symbol" })
        case "Ambiguous":
          return fail("VALIDATION_ERROR", `symbol ${symbol} matches several listings (${found.candidates.join(", ")}); use an exchange-qualified symbol`, {
            param: "symbol"
          })
        case "NotFound": {
          // A retired symbol names no listing any more (D-341): 404, with its successor in the message.
          const successor = successorOf(symbol, exchange)
          return successor === undefined
            ? fail("NOT_FOUND", `symbol ${symbol} was not found`)
            : fail("NOT_FOUND", `symbol ${symbol} was not found: it changed to ${successor.now.symbol} on ${isoDate(successor.at)}`)
        }
      }
    }

    const listingOf = (storedSymbol: string) => bySymbol.get(storedSymbol)
    const currentSymbol = (storedSymbol: string) => bySymbol.get(storedSymbol)?.symbol ?? storedSymbol
    const namesOf = (instrument: Instrument) => {
      const doc = docs.get(instrument.id)
      return doc === undefined ? [instrument.symbol] : [doc.symbol, ...[...doc.formerSymbols].reverse()]
    }

    const docIn = (tx: ReadTx, listingId: string) => SymbolDocs.get(tx, listingId)
    const symbolIn = (tx: ReadTx, instrument: Instrument) =>
      SymbolDocs.getWith(tx, instrument.id, Option.match({ onNone: () => instrument.id, onSome: (d) => d.symbol }))
    const usedIn = (tx: ReadTx, symbol: string) =>
      Effect.map(
        SymbolDocs.list(tx, GLOBAL, { limit: 100_000, order: "asc" }),
        (all) => byId.has(symbol) || all.some((d) => d.symbol === symbol || d.formerSymbols.includes(symbol))
      )

    const renameIn = (tx: Tx, instrument: Instrument, newSymbol: string, actionId: string, at: number) =>
      Effect.gen(function* () {
        const before = yield* docIn(tx, instrument.id)
        const doc: SymbolDoc = Option.match(before, {
          onNone: () => ({ listingId: instrument.id, symbol: newSymbol, formerSymbols: [instrument.id], actionId, effectiveAt: at }),
          onSome: (d) => ({ listingId: d.listingId, symbol: newSymbol, formerSymbols: [...d.formerSymbols, d.symbol], actionId, effectiveAt: at })
        })
        yield* SymbolDocs.put(tx, instrument.id, GLOBAL, instrument.id, doc)
        yield* tx.afterCommit(
          Effect.sync(() => {
            docs.set(instrument.id, doc)
            rebuild()
          })
        )
      })

    return Symbols.of({
      catalogue: () => catalogue,
      version: () => version,
      current,
      original,
      resolve,
      lookup,
      listingOf,
      currentSymbol,
      namesOf,
      symbolIn,
      usedIn,
      renameIn
    })
  })

  static readonly layer = Layer.effect(Symbols, Symbols.make)
}
