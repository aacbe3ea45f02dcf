/**
 * The store contract for work that opens a transaction inside an open one (E-289): a request's handler runs its own
 * `transact` calls inside the gateway's, and all of them must commit as one. Nested work joins the outer transaction
 * as a savepoint: its writes commit (or roll back) with the outer one, a nested failure undoes only the nested
 * writes and hooks, and a `read` inside a transaction sees its writes. Run against every adapter, as store-contract.ts.
 */
import { assert, layer } from "@effect/vitest"
import { Data, Effect, Exit, type Layer, Option } from "effect"
import { putHere, type ReadTx, Store, type Tx } from "../../engine/store/port.ts"

class Refused extends Data.TaggedError("Refused")<{ readonly why: string }> {}

const doc = (id: string, v: number) => ({ id, partition: "nest:sandbox", sortKey: id, body: { v } })

export const nestedContract = (name: string, storeLayer: Layer.Layer<Store, unknown>) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    it.effect("nested work commits with the outer transaction, and reads inside see the transaction's writes", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const hooks: Array<string> = []
        const seen = yield* store.transact((outer) =>
          Effect.gen(function* () {
            yield* outer.put("nest", doc("n-outer", 1))
            yield* store.transact((inner) =>
              Effect.andThen(inner.put("nest", doc("n-inner", 2)), inner.afterCommit(Effect.sync(() => void hooks.push("inner"))))
            )
            // Not committed yet: no hook has run, and a read through the open transaction sees both writes.
            assert.deepStrictEqual(hooks, [])
            return yield* store.read((tx) => Effect.all([tx.get("nest", "n-outer"), tx.get("nest", "n-inner")]))
          })
        )
        assert.deepStrictEqual(
          seen.map((d) => Option.map(d, (x) => x.body)),
          [Option.some({ v: 1 }), Option.some({ v: 2 })]
        )
        assert.deepStrictEqual(hooks, ["inner"])
        const committed = yield* store.read((tx) => tx.get("nest", "n-inner"))
        assert.deepStrictEqual(
          Option.map(committed, (d) => d.body),
          Option.some({ v: 2 })
        )
      })
    )

    it.effect("a failed nested unit is undone alone: its writes, counters, events and hooks go, the outer ones commit", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const hooks: Array<string> = []
        const inner = yield* store.transact((outer) =>
          Effect.gen(function* () {
            yield* outer.put("nest", doc("f-outer", 1))
            yield* outer.afterCommit(Effect.sync(() => void hooks.push("outer")))
            const failed = yield* Effect.exit(
              store.transact((tx) =>
                Effect.gen(function* () {
                  yield* tx.put("nest", doc("f-outer", 99))
                  yield* tx.put("nest", doc("f-inner", 2))
                  yield* tx.nextSeq("nest-counter")
                  yield* tx.appendEvent("nest:sandbox", { eventId: "evt_nest_1", name: "n", timestamp: 1, payload: {} })
                  yield* tx.afterCommit(Effect.sync(() => void hooks.push("inner")))
                  return yield* new Refused({ why: "after writing" })
                })
              )
            )
            assert.isTrue(Exit.isFailure(failed))
            // Inside the outer transaction the undone unit is invisible already.
            const during = yield* outer.get("nest", "f-outer")
            assert.deepStrictEqual(
              Option.map(during, (d) => d.body),
              Option.some({ v: 1 })
            )
            return yield* outer.nextSeq("nest-counter")
          })
        )
        assert.strictEqual(inner, 1, "the undone unit's counter step is undone too")
        const after = yield* store.read((tx) => Effect.all([tx.get("nest", "f-outer"), tx.get("nest", "f-inner"), tx.readEvents("nest:sandbox", 0, 10)]))
        assert.deepStrictEqual(
          Option.map(after[0], (d) => d.body),
          Option.some({ v: 1 })
        )
        assert.isTrue(Option.isNone(after[1]))
        assert.deepStrictEqual(after[2], [])
        assert.deepStrictEqual(hooks, ["outer"])
      })
    )

    it.effect("an outer failure undoes what nested units wrote, and runs none of their hooks", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const hooks: Array<string> = []
        const exit = yield* Effect.exit(
          store.transact(() =>
            Effect.gen(function* () {
              yield* store.transact((tx) => Effect.andThen(tx.put("nest", doc("o-inner", 1)), tx.afterCommit(Effect.sync(() => void hooks.push("inner")))))
              return yield* new Refused({ why: "outer" })
            })
          )
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.isTrue(Option.isNone(yield* store.read((tx) => tx.get("nest", "o-inner"))))
        assert.deepStrictEqual(hooks, [])
      })
    )

    // A unit undone after a unit nested in it succeeded: both go, and what the outer one wrote before is back as it was,
    // the rewritten values included (the memory adapter puts back each key a savepoint's journal noted, E-410).
    it.effect("a failed unit undoes the succeeded units nested in it, and gives back the values it rewrote", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const bodies = (tx: ReadTx, ids: ReadonlyArray<string>) =>
          Effect.map(Effect.all(ids.map((id) => tx.get("nest", id))), (found) => found.map((d) => Option.getOrUndefined(Option.map(d, (x) => x.body))))
        const ids = ["j-1", "j-2", "j-3", "j-4"]
        const during = yield* store.transact((outer) =>
          Effect.gen(function* () {
            yield* outer.put("nest", doc("j-1", 1))
            yield* outer.put("nest", doc("j-2", 1))
            const failed = yield* Effect.exit(
              store.transact((middle) =>
                Effect.gen(function* () {
                  yield* middle.put("nest", doc("j-2", 2))
                  yield* middle.put("nest", doc("j-3", 2))
                  yield* store.transact((inner) => Effect.andThen(inner.put("nest", doc("j-3", 3)), inner.put("nest", doc("j-1", 3))))
                  return yield* new Refused({ why: "after a nested unit succeeded" })
                })
              )
            )
            assert.isTrue(Exit.isFailure(failed))
            const undone = yield* bodies(outer, ids)
            yield* store.transact((later) => Effect.andThen(later.put("nest", doc("j-4", 4)), later.put("nest", doc("j-2", 4))))
            return undone
          })
        )
        assert.deepStrictEqual(during, [{ v: 1 }, { v: 1 }, undefined, undefined])
        assert.deepStrictEqual(yield* store.read((tx) => bodies(tx, ids)), [{ v: 1 }, { v: 4 }, undefined, { v: 4 }])
      })
    )

    // On postgres the failing write waits in the attempt's batch and fails at COMMIT; the attempt runs again writing at
    // once, so the failure comes where the work made it, and the nested unit that caught it is undone alone (E-317).
    it.effect("a write the database refuses fails where it was made: a nested unit that made it is undone alone", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const append = (tx: Tx, eventId: string) => tx.appendEvent("nest:sandbox", { eventId, name: "x", timestamp: 1, payload: null })
        yield* store.transact((tx) => append(tx, "refused-1"))
        const inner = yield* store.transact((outer) =>
          Effect.gen(function* () {
            yield* outer.put("nest", doc("r-before", 1))
            const exit = yield* Effect.exit(store.transact((tx) => Effect.andThen(tx.put("nest", doc("r-inner", 2)), append(tx, "refused-1"))))
            yield* outer.put("nest", doc("r-after", 3))
            yield* append(outer, "refused-2")
            return exit
          })
        )
        assert.isTrue(Exit.isFailure(inner), "the repeated event id was refused inside the nested unit")
        const left = yield* store.read((tx) => Effect.all(["r-before", "r-inner", "r-after"].map((id) => tx.get("nest", id))))
        assert.deepStrictEqual(
          left.map((d) => Option.map(d, (x) => x.body)),
          [Option.some({ v: 1 }), Option.none(), Option.some({ v: 3 })]
        )
        const events = yield* store.read((tx) => tx.readEvents("nest:sandbox", 0, 100))
        assert.deepStrictEqual(
          events.filter((e) => e.eventId.startsWith("refused-")).map((e) => e.eventId),
          ["refused-1", "refused-2"]
        )
        // Positions stay gapless: the refused append's step of the counter was undone with it.
        assert.deepStrictEqual(
          events.map((e) => e.position),
          events.map((_, i) => i + 1)
        )
      })
    )

    it.effect("a nested unit that writes at once (putHere) and throws as it is called is undone alone", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const died = yield* store.transact((outer) =>
          Effect.gen(function* () {
            yield* outer.put("nest", doc("t-outer", 1))
            const inner = yield* Effect.exit(
              store.transact((tx): Effect.Effect<void> => {
                // On the memory store the write is made here, before the throw (E-429); elsewhere it is never run.
                void putHere(tx, "nest", doc("t-inner", 2))
                throw new Error("thrown while the unit is made")
              })
            )
            return Exit.isFailure(inner)
          })
        )
        assert.isTrue(died)
        const [outer, inner] = yield* store.read((tx) => Effect.all([tx.get("nest", "t-outer"), tx.get("nest", "t-inner")]))
        assert.deepStrictEqual(
          Option.map(outer, (d) => d.body),
          Option.some({ v: 1 })
        )
        assert.isTrue(Option.isNone(inner))
      })
    )
  })
