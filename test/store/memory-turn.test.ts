/**
 * The memory store's turn (engine/store/memory-turn.ts, E-460): taken at once when free, first come first served
 * otherwise, and never lost to an interruption, whether of the holder or of a waiter.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { makeTurn } from "../../engine/store/memory-turn.ts"
import { makeMemoryStore } from "../../engine/store/memory.ts"

describe("memory store: the turn", () => {
  it("is taken at once when free, refused while held or while someone waits, and given back by its holder only", () => {
    const turn = makeTurn()
    const a = {}
    const b = {}
    assert.isTrue(turn.tryTake(a))
    assert.isFalse(turn.tryTake(b))
    turn.release(b)
    assert.isFalse(turn.tryTake(b), "a release by a non-holder gives nothing back")
    turn.release(a)
    assert.isTrue(turn.tryTake(b))
  })

  it.effect("waiters take it in the order they came; one interrupted while it waits leaves the line", () =>
    Effect.gen(function* () {
      const turn = makeTurn()
      const order: Array<string> = []
      const holder = {}
      assert.isTrue(turn.tryTake(holder))
      const waitFor = (name: string) => {
        const token = {}
        return Effect.forkChild(
          Effect.andThen(
            turn.wait(token),
            Effect.sync(() => {
              order.push(name)
              turn.release(token)
            })
          )
        )
      }
      const b = yield* waitFor("b")
      const c = yield* waitFor("c")
      const d = yield* waitFor("d")
      yield* Effect.yieldNow
      assert.isFalse(turn.tryTake({}), "a newcomer does not pass the line")
      yield* Fiber.interrupt(c)
      turn.release(holder)
      yield* Fiber.join(b)
      yield* Fiber.join(d)
      assert.deepStrictEqual(order, ["b", "d"])
      assert.isTrue(turn.tryTake({}), "free once the line is empty")
    })
  )

  it.effect("a transaction interrupted while it waits for its turn leaves it to the next, and commits nothing", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      const inside = yield* Deferred.make<void>()
      const finish = yield* Deferred.make<void>()
      const doc = (id: string) => ({ id, partition: "p", sortKey: id, body: id })
      const first = yield* Effect.forkChild(
        store.transact((tx) => Effect.andThen(tx.put("t", doc("a")), Effect.andThen(Deferred.succeed(inside, undefined), Deferred.await(finish))))
      )
      yield* Deferred.await(inside)
      const waiting = yield* Effect.forkChild(store.transact((tx) => tx.put("t", doc("b"))))
      const next = yield* Effect.forkChild(store.transact((tx) => tx.put("t", doc("c"))))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(waiting)
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(next)
      const ids = yield* store.read((tx) => Effect.forEach(["a", "b", "c"], (id) => Effect.map(tx.get("t", id), (d) => d._tag)))
      assert.deepStrictEqual(ids, ["Some", "None", "Some"])
    })
  )
})
