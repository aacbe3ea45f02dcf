/**
 * The store contract for hints (`Tx.prefetch`, E-318, E-405): what `get` and `list` answer is the same with or without
 * them. On PostgreSQL hinted rows and lists are read ahead (with the lock, or in one statement before the first read
 * after the hint) and kept for the attempt; these cases are the ones where a kept answer could go stale: the attempt's
 * own writes to a hinted list, rows another transaction wrote before the hint, and rows an expiry drop removes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { prefetch, pruneExpired, Store } from "../../engine/store/port.ts"

const P = "hint:sandbox"
const doc = (id: string, v: number, sortKey = id) => ({ id, partition: P, sortKey, body: { v } })
const bodies = (docs: ReadonlyArray<{ readonly body: unknown }>) => docs.map((d) => d.body)
const list = { partition: P, limit: 10, order: "asc" } as const

export const prefetchContract = (name: string, storeLayer: Layer.Layer<Store, unknown>) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    it.effect("hinted rows and lists answer what the database holds, and a list follows the attempt's own writes", () =>
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.transact((tx) => Effect.andThen(tx.put("hinted", doc("a", 1)), tx.put("hinted", doc("b", 2))))
        const seen = yield* store.transact((tx) =>
          Effect.gen(function* () {
            yield* tx.lockPartition(P)
            yield* prefetch(tx, [["hinted", "a"], ["hinted", "missing"], { collection: "hinted", list }])
            const a = yield* tx.get("hinted", "a")
            const missing = yield* tx.get("hinted", "missing")
            const before = yield* tx.list("hinted", list)
            yield* tx.put("hinted", doc("c", 3))
            // The first list after the write sends it (postgres); the second must not answer what was read ahead.
            yield* tx.list("hinted", list)
            const after = yield* tx.list("hinted", list)
            return { a: Option.map(a, (d) => d.body), missing, before: bodies(before), after: bodies(after) }
          })
        )
        assert.deepStrictEqual(seen, { a: Option.some({ v: 1 }), missing: Option.none(), before: [{ v: 1 }, { v: 2 }], after: [{ v: 1 }, { v: 2 }, { v: 3 }] })
      })
    )

    it.effect("a hinted list read ahead keeps its limit and order", () =>
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.transact((tx) => Effect.forEach(["d", "e", "f"], (id, i) => tx.put("ordered", doc(id, i, `k${i}`)), { discard: true }))
        const desc = { partition: P, limit: 2, order: "desc" } as const
        const listed = yield* store.transact((tx) =>
          Effect.gen(function* () {
            yield* tx.lockPartition(P)
            yield* prefetch(tx, [{ collection: "ordered", list: desc }])
            return bodies(yield* tx.list("ordered", desc))
          })
        )
        assert.deepStrictEqual(listed, [{ v: 2 }, { v: 1 }])
      })
    )

    it.effect("an expiry drop forgets the rows of its own collection that were read ahead, not others'", () =>
      Effect.gen(function* () {
        const store = yield* Store
        yield* store.transact((tx) => Effect.andThen(tx.put("expiring", { ...doc("x", 1), keepUntil: 5 }), tx.put("lasting", doc("y", 2))))
        const seen = yield* store.transact((tx) =>
          Effect.gen(function* () {
            yield* tx.lockPartition(P)
            yield* prefetch(tx, [
              ["expiring", "x"],
              ["lasting", "y"]
            ])
            const x = yield* tx.get("expiring", "x")
            yield* pruneExpired(tx, "expiring", P, 10, 10)
            // The first read after the drop sends it (postgres); the second must not answer the row read ahead.
            yield* tx.get("expiring", "x")
            return { x: Option.isSome(x), xAfter: Option.isSome(yield* tx.get("expiring", "x")), y: Option.map(yield* tx.get("lasting", "y"), (d) => d.body) }
          })
        )
        assert.deepStrictEqual(seen, { x: true, xAfter: false, y: Option.some({ v: 2 }) })
      })
    )
  })
