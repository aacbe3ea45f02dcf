/**
 * Reads through docs.ts's collections give one answer whichever way the store serves them: through `Tx.get` (a store
 * that must ask, PostgreSQL) or from memory at once (`Tx.getNow`). On the memory store a document whose shape was
 * already checked is answered finished, an Exit with no step left to run (E-451, issue 25: the week's jobs and the
 * command path read this way); a body that does not fit fails either way.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { type QuoteDoc, Quotes } from "../../engine/app/docs.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { type Doc, type ReadTx, Store, StoreError } from "../../engine/store/port.ts"
import { openQuoteBody, QUOTE_PARTITION } from "../support/quote-doc.ts"

const PARTITION = QUOTE_PARTITION
const quote = openQuoteBody
const bad = { ...quote, quoteId: "qt_bad", price: "180.2880" }

/** The memory store's transaction as a store that cannot answer at once sees it: no `getNow`. */
const asking = (tx: ReadTx): ReadTx => ({ get: tx.get, list: tx.list, readEvents: tx.readEvents, nextJob: tx.nextJob })

const stored = Effect.gen(function* () {
  const s = yield* Store
  yield* s.transact((tx) =>
    Effect.all([
      tx.put(Quotes.name, { id: "qt_1", partition: PARTITION, sortKey: "1", body: quote }),
      tx.put(Quotes.name, { id: "qt_bad", partition: `${PARTITION}|bad`, sortKey: "1", body: bad })
    ])
  )
  return s
})

/** Every single-document read of `Quotes`, as a list of named effects, for one id. */
const readsOf = (tx: ReadTx, id: string) => ({
  get: Quotes.get(tx, id),
  getWith: Quotes.getWith(tx, id, (found) => ({ found })),
  getDoc: Quotes.getDoc(tx, id),
  getHere: Quotes.getHere(tx, id),
  getWithHere: Quotes.getWithHere(tx, id, (found) => ({ found })),
  getDocHere: Quotes.getDocHere(tx, id)
})

const doc: Doc<QuoteDoc> = { id: "qt_1", partition: PARTITION, sortKey: "1", body: quote }

describe("reads through a collection", () => {
  it.effect("answer alike from memory at once and through the store's get: found, missing, and a body that does not fit", () =>
    Effect.gen(function* () {
      const s = yield* stored
      for (const way of [(tx: ReadTx) => tx, asking]) {
        const found = yield* s.read((tx) => Effect.all(readsOf(way(tx), "qt_1")))
        assert.deepStrictEqual(found.get, Option.some(quote))
        assert.deepStrictEqual(found.getHere, Option.some(quote))
        assert.deepStrictEqual(found.getWith, { found: Option.some(quote) })
        assert.deepStrictEqual(found.getWithHere, { found: Option.some(quote) })
        assert.deepStrictEqual(
          Option.map(found.getDoc, (d): Doc<QuoteDoc> => ({ ...d })),
          Option.some(doc)
        )
        assert.deepStrictEqual(
          Option.map(found.getDocHere, (d): Doc<QuoteDoc> => ({ ...d })),
          Option.some(doc)
        )

        const missing = yield* s.read((tx) => Effect.all(readsOf(way(tx), "qt_none")))
        assert.deepStrictEqual(missing, {
          get: Option.none(),
          getWith: { found: Option.none() },
          getDoc: Option.none(),
          getHere: Option.none(),
          getWithHere: { found: Option.none() },
          getDocHere: Option.none()
        })

        const failures = yield* s.read((tx) =>
          Effect.forEach(Object.values(readsOf(way(tx), "qt_bad")) as ReadonlyArray<Effect.Effect<unknown, StoreError>>, (read) => Effect.flip(read))
        )
        assert.strictEqual(failures.length, 6)
        for (const failure of failures) {
          assert.instanceOf(failure, StoreError)
          assert.include(failure.message, "stored quotes/qt_bad does not have the shape")
        }
      }
    }).pipe(Effect.provide(MemoryStoreLayer))
  )

  it.effect("of a document the memory store holds are answered finished: an Exit, no step left to run", () =>
    Effect.gen(function* () {
      const s = yield* stored
      for (const id of ["qt_1", "qt_none"]) {
        const reads = yield* s.read((tx) => Effect.sync(() => readsOf(tx, id)))
        for (const read of [reads.getHere, reads.getWithHere, reads.getDocHere] as ReadonlyArray<Effect.Effect<unknown, StoreError>>) {
          assert.isTrue(Exit.isExit(read) && Exit.isSuccess(read), `${id}: ${String(read)}`)
        }
      }
      // Read a second time: the verdict on the body is remembered (E-347), and still no step is left.
      const again = yield* s.read((tx) => Effect.sync(() => Quotes.getHere(tx, "qt_1")))
      assert.isTrue(Exit.isExit(again) && Exit.isSuccess(again))
      assert.deepStrictEqual(Exit.isExit(again) && Exit.isSuccess(again) ? again.value : undefined, Option.some(quote))
    }).pipe(Effect.provide(MemoryStoreLayer))
  )
})
