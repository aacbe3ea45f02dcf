/**
 * Maintenance guard, first in the pipeline: `full` refuses every request, `read_only` refuses mutations, both with
 * 503 MAINTENANCE, `Retry-After`, and the spec's extras (mode, endsAt, statusPage). Owns the current mode.
 * Setting it from the control API arrives with the guards issue; the slot and its rule are here now.
 */
import { Context, Effect, Layer, Ref } from "effect"
import { type ApiFailure, fail } from "../../domain/errors.ts"
import { isoAt } from "../../sim/clock.ts"

export interface MaintenanceState {
  readonly mode: "off" | "full" | "read_only"
  readonly endsAt: number | null
  readonly statusPage: string
}

export const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

export class Maintenance extends Context.Service<
  Maintenance,
  {
    readonly state: Ref.Ref<MaintenanceState>
    /** The failure to answer with, or undefined to let the request through. */
    readonly check: (method: string, now: number) => Effect.Effect<{ failure: ApiFailure; retryAfter: number } | undefined>
  }
>()("sokoni/Maintenance") {
  static readonly make = Effect.gen(function* () {
    const state = yield* Ref.make<MaintenanceState>({ mode: "off", endsAt: null, statusPage: "https://status.example.com" })
    const check = (method: string, now: number) =>
      Effect.map(Ref.get(state), (s) => {
        if (s.mode === "off" || (s.mode === "read_only" && READ_METHODS.has(method))) return undefined
        const retryAfter = s.endsAt === null ? 60 : Math.max(1, Math.ceil((s.endsAt - now) / 1000))
        return {
          retryAfter,
          failure: fail("MAINTENANCE", s.mode === "full" ? "planned maintenance: the API is unavailable" : "planned maintenance: the API is read-only", {
            mode: s.mode,
            ...(s.endsAt === null ? {} : { endsAt: isoAt(s.endsAt) }),
            statusPage: s.statusPage
          })
        }
      })
    return Maintenance.of({ state, check })
  })

  static readonly layer = Layer.effect(Maintenance, Maintenance.make)
}
