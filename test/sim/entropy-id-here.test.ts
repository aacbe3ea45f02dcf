/**
 * `Entropy.idHere` (E-503) draws the ids `id` draws, from the same stream in the same order, but when it is called:
 * its effect is finished already, so a generator passes it without a step (and must yield it at once: the at-once
 * guard, test/guards/at-once.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { Entropy } from "../../engine/sim/random.ts"

describe("Entropy.idHere", () => {
  it.effect("gives the ids id gives, in the same order, mixed with other draws", () =>
    Effect.gen(function* () {
      const a = yield* Entropy.make(7)
      const b = yield* Entropy.make(7)
      const viaId = [yield* a.id("ord"), yield* a.nextInt(1000), yield* a.id("dlv"), yield* a.id("evt")]
      const viaHere = [yield* b.idHere("ord"), yield* b.nextInt(1000), yield* b.idHere("dlv"), yield* b.idHere("evt")]
      assert.deepStrictEqual(viaHere, viaId)
      assert.match(viaHere[0] as string, /^ord_[0-9a-hjkmnp-tv-z]{16}$/)
    })
  )

  it.effect("draws when called, not when its effect runs", () =>
    Effect.gen(function* () {
      const a = yield* Entropy.make(3)
      const b = yield* Entropy.make(3)
      const first = a.idHere("x")
      const second = a.idHere("x")
      assert.isTrue(Exit.isExit(first))
      // Run in the other order: each still holds the id of its call.
      const [two, one] = [yield* second, yield* first]
      assert.deepStrictEqual([one, two], [yield* b.id("x"), yield* b.id("x")])
      assert.notStrictEqual(one, two)
    })
  )
})
