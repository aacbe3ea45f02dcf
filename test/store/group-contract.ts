/**
 * The store contract for work grouped by partition (`transactIn`, `Store.transactGrouped`, E-406): units queued for
 * one partition may share one transaction (postgres: group commit), and must still behave as if each ran alone, one
 * after another: each sees what the units before it wrote, a failing unit is undone alone with the error it would
 * have alone, the others commit exactly once, and a group that aborts commits nothing of its own.
 * `grouping` says whether the adapter groups (then the units queued behind a unit must share its commit).
 */
import { assert, layer } from "@effect/vitest"
import { Data, Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { Store, type Tx, transactIn } from "../../engine/store/port.ts"

class Refused extends Data.TaggedError("Refused")<{ readonly why: string }> {}

const P = "group:sandbox"
const doc = (id: string, v: number) => ({ id, partition: P, sortKey: id, body: { v } })
const bodyOf = (found: Option.Option<{ readonly body: unknown }>) => Option.getOrUndefined(Option.map(found, (d) => d.body))

/** A unit: locks the partition, reads what the unit before it wrote (`previous`), writes its own doc and steps the counter. */
const unit = (tx: Tx, id: string, previous: string | undefined, counter: string) =>
  Effect.gen(function* () {
    yield* tx.lockPartition(P)
    const seen = previous === undefined ? undefined : bodyOf(yield* tx.get("grouped", previous))
    const n = yield* tx.nextSeq(counter)
    yield* tx.put("grouped", doc(id, n))
    return seen
  })

/** Lets forked fibers run up to their first wait (they queue behind the unit holding the partition, with no I/O). */
const settle = Effect.forEach(Array.from({ length: 20 }), () => Effect.yieldNow, { discard: true })

export const groupContract = (name: string, storeLayer: Layer.Layer<Store, unknown>, grouping: boolean) =>
  layer(storeLayer, { timeout: "60 seconds" })(name, (it) => {
    it.effect("queued units see the previous one's writes; grouped, they commit together, after the last of them", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const release = yield* Deferred.make<void>()
        const bRan = yield* Deferred.make<void>()
        const cGo = yield* Deferred.make<void>()
        const a = yield* Effect.forkChild(transactIn(store, P, (tx) => Effect.andThen(unit(tx, "a", undefined, `together:${P}`), Deferred.await(release))))
        yield* settle
        const b = yield* Effect.forkChild(
          transactIn(store, P, (tx) => Effect.tap(unit(tx, "b", "a", `together:${P}`), () => Deferred.succeed(bRan, undefined)))
        )
        yield* settle
        const c = yield* Effect.forkChild(transactIn(store, P, (tx) => Effect.andThen(Deferred.await(cGo), unit(tx, "c", "b", `together:${P}`))))
        yield* settle
        yield* Deferred.succeed(release, undefined)
        yield* Deferred.await(bRan)
        if (grouping) {
          // b ran in a's transaction, which waits for c: nothing of it is committed, and a has no answer yet.
          yield* settle
          assert.isUndefined(bodyOf(yield* store.read((tx) => tx.get("grouped", "a"))))
          assert.isUndefined(a.pollUnsafe())
        }
        yield* Deferred.succeed(cGo, undefined)
        const answers = yield* Fiber.joinAll([a, b, c])
        assert.deepStrictEqual(answers, [undefined, { v: 1 }, { v: 2 }])
        const committed = yield* store.read((tx) => Effect.forEach(["a", "b", "c"], (id) => Effect.map(tx.get("grouped", id), bodyOf)))
        assert.deepStrictEqual(committed, [{ v: 1 }, { v: 2 }, { v: 3 }])
      })
    )

    it.effect("a failing unit fails as it would alone; the others commit exactly once", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const counter = `failing:${P}`
        yield* store.transact((tx) => tx.appendEvent(P, { eventId: "evt_group_taken", name: "n", timestamp: 1, payload: {} }))
        const release = yield* Deferred.make<void>()
        const a = yield* Effect.forkChild(transactIn(store, P, (tx) => Effect.andThen(unit(tx, "fa", undefined, counter), Deferred.await(release))))
        yield* settle
        // b refuses after writing (an answer, undone alone); c's event id is taken, which the database refuses.
        const b = yield* Effect.forkChild(transactIn(store, P, (tx) => Effect.andThen(unit(tx, "fb", "fa", counter), new Refused({ why: "no" }))))
        yield* settle
        const c = yield* Effect.forkChild(
          transactIn(store, P, (tx) =>
            Effect.andThen(unit(tx, "fc", undefined, counter), tx.appendEvent(P, { eventId: "evt_group_taken", name: "n", timestamp: 2, payload: {} }))
          )
        )
        yield* settle
        const d = yield* Effect.forkChild(transactIn(store, P, (tx) => unit(tx, "fd", "fa", counter)))
        yield* settle
        yield* Deferred.succeed(release, undefined)
        const exits = yield* Fiber.awaitAll([a, b, c, d])
        const outcome = (exit: Exit.Exit<unknown, unknown> | undefined) => {
          if (exit === undefined || Exit.isSuccess(exit)) return exit?.value
          return (Option.getOrUndefined(Exit.findErrorOption(exit)) as { readonly _tag?: string } | undefined)?._tag
        }
        assert.deepStrictEqual(exits.map(outcome).slice(1), ["Refused", "StoreError", { v: 1 }])
        assert.isTrue(Exit.isSuccess(exits[0] as Exit.Exit<unknown, unknown>))
        const committed = yield* store.read((tx) => Effect.forEach(["fa", "fb", "fc", "fd"], (id) => Effect.map(tx.get("grouped", id), bodyOf)))
        // a stepped the counter to 1 and d to 2: b's and c's steps were undone with them, nothing ran twice.
        assert.deepStrictEqual(committed, [{ v: 1 }, undefined, undefined, { v: 2 }])
      })
    )

    it.effect("an aborted unit holding the partition commits nothing; the units queued behind it run once each", () =>
      Effect.gen(function* () {
        const store = yield* Store
        const counter = `aborted:${P}`
        const inside = yield* Deferred.make<void>()
        const never = yield* Deferred.make<void>()
        const a = yield* Effect.forkChild(
          transactIn(store, P, (tx) =>
            Effect.andThen(unit(tx, "aa", undefined, counter), Effect.andThen(Deferred.succeed(inside, undefined), Deferred.await(never)))
          )
        )
        yield* Deferred.await(inside)
        const b = yield* Effect.forkChild(transactIn(store, P, (tx) => unit(tx, "ab", "aa", counter)))
        const c = yield* Effect.forkChild(transactIn(store, P, (tx) => unit(tx, "ac", "ab", counter)))
        yield* settle
        yield* Fiber.interrupt(a)
        const answers = yield* Fiber.joinAll([b, c])
        assert.deepStrictEqual(answers, [undefined, { v: 1 }])
        const committed = yield* store.read((tx) => Effect.forEach(["aa", "ab", "ac"], (id) => Effect.map(tx.get("grouped", id), bodyOf)))
        assert.deepStrictEqual(committed, [undefined, { v: 1 }, { v: 2 }])
      })
    )
  })
