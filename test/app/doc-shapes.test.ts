/**
 * Documents read through docs.ts's collections are checked against their shape (E-345): a stored body that is not
 * what the code takes it for fails as a StoreError naming the document, on get and on list; a body that fits is
 * returned as stored, fields the shape does not name included.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Option } from "effect"
import { Quotes, Webhooks } from "../../engine/app/docs.ts"
import { MemoryStoreLayer } from "../../engine/store/memory.ts"
import { Store, StoreError } from "../../engine/store/port.ts"
import { openQuoteBody, QUOTE_PARTITION } from "../support/quote-doc.ts"

const PARTITION = QUOTE_PARTITION
const quote = openQuoteBody

/** Writes `body` under quotes/`id` as raw JSON (no type), as a hand edit or an older engine would have. */
const store = (id: string, body: unknown) =>
  Effect.gen(function* () {
    const s = yield* Store
    yield* s.transact((tx) => tx.put(Quotes.name, { id, partition: PARTITION, sortKey: id, body }))
  })

describe("stored documents are checked against their shape on read", () => {
  it.effect("a body that fits comes back as stored, with the fields its shape does not name", () =>
    Effect.gen(function* () {
      const withExtra = { ...quote, addedByNewerCode: { x: 1 } }
      yield* store("qt_1", withExtra)
      const s = yield* Store
      const read = yield* s.read((tx) => Effect.all([Quotes.get(tx, "qt_1"), Quotes.list(tx, PARTITION, { limit: 10, order: "asc" })]))
      assert.deepStrictEqual(Option.getOrThrow(read[0]), withExtra)
      assert.deepStrictEqual(read[1], [withExtra])
    }).pipe(Effect.provide(MemoryStoreLayer))
  )

  it.effect("a body that does not fit fails the read as a StoreError naming the document, on get and on list", () =>
    Effect.gen(function* () {
      yield* store("qt_bad", { ...quote, quoteId: "qt_bad", price: "180.2880", status: "open" })
      const s = yield* Store
      const reads: ReadonlyArray<Effect.Effect<unknown, StoreError>> = [
        s.read((tx) => Quotes.get(tx, "qt_bad")),
        s.read((tx) => Quotes.list(tx, PARTITION, { limit: 10, order: "asc" }))
      ]
      for (const read of reads) {
        const exit = yield* Effect.exit(read)
        assert.isTrue(Exit.isFailure(exit))
        const error = Exit.isFailure(exit) ? exit.cause.toString() : ""
        assert.include(error, "stored quotes/qt_bad does not have the shape of version 1")
      }
      // Another collection's shape is its own: a webhook missing its secret is refused too.
      yield* s.transact((tx) => tx.put(Webhooks.name, { id: "wh_1", partition: PARTITION, sortKey: "1", body: { id: "wh_1", url: "https://x" } }))
      const webhook = yield* Effect.flip(s.read((tx) => Webhooks.get(tx, "wh_1")))
      assert.instanceOf(webhook, StoreError)
    }).pipe(Effect.provide(MemoryStoreLayer))
  )
})
