/**
 * The store contract for retention (E-400): `dropExpired` removes a partition's documents of one collection whose
 * `keepUntil` has come, earliest first and at most `limit`, and nothing else: not a document without `keepUntil`, not
 * one rewritten with a later one, not another partition's or collection's. Inside a transaction the dropped documents
 * are gone at once; a rollback brings them back. Run against every adapter, as store-contract.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Data, Effect, type Layer, Option } from "effect"
import { type Doc, Store, type Tx } from "../../engine/store/port.ts"

class Undo extends Data.TaggedError("Undo")<{ readonly reason: string }> {}

const P = "keep:sandbox"
const doc = (id: string, keepUntil?: number, partition = P): Doc => ({
  id,
  partition,
  sortKey: id,
  body: { id },
  ...(keepUntil === undefined ? {} : { keepUntil })
})

export const retentionContract = (name: string, storeLayer: Layer.Layer<Store, unknown>) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    const present = (collection: string, ids: ReadonlyArray<string>) =>
      Store.use((store) => store.read((tx) => Effect.forEach(ids, (id) => Effect.map(tx.get(collection, id), (found) => (Option.isSome(found) ? id : "-")))))
    const putAll = (collection: string, docs: ReadonlyArray<Doc>) =>
      Store.use((store) => store.transact((tx: Tx) => Effect.forEach(docs, (d) => tx.put(collection, d), { discard: true })))
    const drop = (collection: string, upTo: number, limit: number, partition = P) =>
      Store.use((store) => store.transact((tx) => tx.dropExpired(collection, partition, upTo, limit)))

    it.effect("drops the partition's documents whose keepUntil has come, earliest first, at most limit", () =>
      Effect.gen(function* () {
        yield* putAll("kc", [doc("b", 200), doc("a", 100), doc("c"), doc("d", 150), doc("q", 100, "keep:production")])
        yield* putAll("kc-other", [doc("a", 50)])
        assert.strictEqual(yield* drop("kc", 150, 1), 1)
        assert.deepStrictEqual(yield* present("kc", ["a", "b", "c", "d"]), ["-", "b", "c", "d"])
        assert.strictEqual(yield* drop("kc", 150, 10), 1)
        assert.deepStrictEqual(yield* present("kc", ["a", "b", "c", "d"]), ["-", "b", "c", "-"])
        // Nothing else is due: the document without keepUntil, another partition's and another collection's stay.
        assert.strictEqual(yield* drop("kc", 199, 10), 0)
        assert.deepStrictEqual(yield* present("kc", ["b", "c", "q"]), ["b", "c", "q"])
        assert.deepStrictEqual(yield* present("kc-other", ["a"]), ["a"])
        assert.strictEqual(yield* drop("kc", 1_000, 10), 1)
        assert.deepStrictEqual(yield* present("kc", ["b", "c"]), ["-", "c"])
        // Dropped documents leave the partition's list too.
        const listed = yield* Store.use((store) => store.read((tx) => tx.list("kc", { partition: P, limit: 10, order: "asc" })))
        assert.deepStrictEqual(
          listed.map((d) => d.id),
          ["c"]
        )
      })
    )

    it.effect("documents kept until the same instant go in id order, whatever order they were written in (E-299)", () =>
      Effect.gen(function* () {
        yield* putAll("kt", [doc("qt_c", 100), doc("qt_a", 100), doc("qt_d", 90)])
        yield* putAll("kt", [doc("qt_b", 100), doc("qt_B", 100)])
        assert.strictEqual(yield* drop("kt", 100, 3), 3)
        // qt_d (earliest), then among those of 100 by code units: qt_B before qt_a before qt_b before qt_c
        assert.deepStrictEqual(yield* present("kt", ["qt_B", "qt_a", "qt_b", "qt_c", "qt_d"]), ["-", "-", "qt_b", "qt_c", "-"])
      })
    )

    it.effect("a document rewritten with a later keepUntil, or none, is kept until then", () =>
      Effect.gen(function* () {
        yield* putAll("kr", [doc("later", 100), doc("never", 100), doc("same", 100)])
        yield* putAll("kr", [doc("later", 300), doc("never"), { ...doc("same", 100), body: { v: 2 } }])
        assert.strictEqual(yield* drop("kr", 200, 10), 1)
        assert.deepStrictEqual(yield* present("kr", ["later", "never", "same"]), ["later", "never", "-"])
        assert.strictEqual(yield* drop("kr", 300, 10), 1)
        assert.deepStrictEqual(yield* present("kr", ["later", "never"]), ["-", "never"])
      })
    )

    it.effect("inside a transaction the dropped documents are gone at once; a rollback brings them back", () =>
      Effect.gen(function* () {
        const store = yield* Store
        yield* putAll("kt", [doc("x", 10), doc("y", 20)])
        const seen = yield* Effect.exit(
          store.transact((tx) =>
            Effect.gen(function* () {
              assert.strictEqual(yield* tx.dropExpired("kt", P, 15, 10), 1)
              assert.isTrue(Option.isNone(yield* tx.get("kt", "x")))
              return yield* new Undo({ reason: "roll back" })
            })
          )
        )
        assert.isTrue(seen._tag === "Failure")
        assert.deepStrictEqual(yield* present("kt", ["x", "y"]), ["x", "y"])
        // Dropped and written again in one transaction: the new version stays, and is dropped in its turn.
        yield* store.transact((tx) => Effect.andThen(tx.dropExpired("kt", P, 15, 10), tx.put("kt", doc("x", 40))))
        assert.deepStrictEqual(yield* present("kt", ["x", "y"]), ["x", "y"])
        assert.strictEqual(yield* drop("kt", 40, 10), 2)
        assert.deepStrictEqual(yield* present("kt", ["x", "y"]), ["-", "-"])
      })
    )
  })
