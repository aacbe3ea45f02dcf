/**
 * The follow clock runs with real time: a target that real time has passed between a caller's look at the clock and
 * its move is already reached, so the move leaves the clock where it is instead of refusing it as a move back (an
 * advance over a job due a moment ago answered 400 under load). The manual clock, which stands still, still refuses
 * a move back.
 */
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { EngineClock } from "../../engine/sim/clock.ts"

const on = <A, E>(mode: "follow" | "manual", use: (clock: EngineClock["Service"]) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.flatMap(EngineClock.make(mode, 1_800_000_000_000), use))

describe("moving the clock", () => {
  it("follow: a target already passed leaves the clock where it is; a later one moves it there", async () => {
    const out = await on("follow", (clock) =>
      Effect.gen(function* () {
        const before = yield* clock.now
        const past = yield* Effect.exit(clock.moveTo(before - 5_000))
        const after = yield* clock.now
        yield* clock.moveTo(after + 60_000)
        return { past, before, after, moved: yield* clock.now }
      })
    )
    expect(Exit.isSuccess(out.past)).toBe(true)
    expect(out.after - out.before).toBeLessThan(5_000)
    expect(out.after).toBeGreaterThanOrEqual(out.before)
    expect(out.moved - out.after).toBeGreaterThanOrEqual(60_000)
  })

  it("manual: a move back is refused", async () => {
    const exit = await on("manual", (clock) => Effect.exit(clock.moveTo(1_700_000_000_000)))
    expect(Exit.isFailure(exit)).toBe(true)
  })
})
