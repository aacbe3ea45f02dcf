/**
 * EngineReset: the seam through which `POST /_sim/reset` asks whoever hosts the engine (http/engine-host.ts) to
 * replace the whole world with a fresh one once the reset's own answer is ready (E-242). The engine cannot start
 * itself over from inside a request: its layers are what answers the request. Owns the request and its defaults.
 * Does not own building the new world (the host) nor the route (http/routes/control.ts).
 */
import { Context, Effect, Layer } from "effect"
import { type ApiFailure, fail } from "../domain/errors.ts"

/** What the new world starts from: its clock's first instant and its seed. */
export interface ResetPlan {
  readonly at: number
  readonly seed: number
}

export class EngineReset extends Context.Service<
  EngineReset,
  {
    /**
     * The plan for `at`/`seed` (the engine's own start and seed when not given; `now` is the clock's present, the
     * start of a new world on a system clock), accepted: from now on new requests wait for the new world, which the
     * host builds as soon as the requests under way (this one included) are answered.
     */
    readonly schedule: (request: {
      readonly at: number | undefined
      readonly seed: number | undefined
      readonly now: number
    }) => Effect.Effect<ResetPlan, ApiFailure>
  }
>()("sokoni/EngineReset") {
  /** An engine nobody can rebuild (in-process, e.g. a scenario run): a reset is refused with 409 CONFLICT. */
  static readonly unavailable = Layer.succeed(
    EngineReset,
    EngineReset.of({
      schedule: () => Effect.fail(fail("CONFLICT", "this engine cannot start over in place (it runs in-process): start a new one instead"))
    })
  )

  static readonly layer = (reset: EngineReset["Service"]) => Layer.succeed(EngineReset, reset)
}
