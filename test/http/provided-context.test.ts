/**
 * `providing` (E-501) gives what `Context.merge(outer, captured)` gives, the captured services over the caller's, and
 * merges once per caller's context: the same context asked again gets the same merged one, another gets its own.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { providing } from "../../engine/http/provided-context.ts"

class A extends Context.Service<A, { readonly name: string }>()("test/A") {}
class B extends Context.Service<B, { readonly name: string }>()("test/B") {}
class C extends Context.Service<C, { readonly name: string }>()("test/C") {}

const names = (context: Context.Context<A | B | C>) => [A, B, C].map((s) => Context.get(context, s as typeof A).name)

describe("providing a captured context", () => {
  const captured = Context.make(A, { name: "captured-a" }).pipe(Context.add(C, { name: "captured-c" }))

  it("merges as Context.merge: the captured services over the caller's, the caller's others kept", () => {
    const outer = Context.make(A, { name: "outer-a" }).pipe(Context.add(B, { name: "outer-b" }))
    const merged = providing(captured)(outer)
    assert.deepStrictEqual(names(merged), ["captured-a", "outer-b", "captured-c"])
    assert.deepStrictEqual(names(merged), names(Context.merge(outer, captured)))
  })

  it("merges once per caller's context, and again for another one", () => {
    const provide = providing(captured)
    const first = Context.make(B, { name: "first-b" })
    const second = Context.make(B, { name: "second-b" })
    const once = provide(first)
    assert.strictEqual(provide(first), once)
    const other = provide(second)
    assert.notStrictEqual(other, once)
    assert.deepStrictEqual(names(other), ["captured-a", "second-b", "captured-c"])
    assert.deepStrictEqual(names(provide(first)), ["captured-a", "first-b", "captured-c"])
  })

  it.effect("an effect run under it sees the captured services and the caller's", () =>
    Effect.gen(function* () {
      const provide = providing(captured)
      const seen = yield* Effect.gen(function* () {
        return [(yield* A).name, (yield* B).name, (yield* C).name]
      }).pipe(
        Effect.updateContext((outer: Context.Context<B>) => provide(outer)),
        Effect.provideService(B, { name: "caller-b" })
      )
      assert.deepStrictEqual(seen, ["captured-a", "caller-b", "captured-c"])
    })
  )
})
