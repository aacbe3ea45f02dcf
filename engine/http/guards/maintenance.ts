/**
 * Maintenance guard, first in the pipeline: `full` refuses every request, `read_only` refuses every method but GET,
 * HEAD and OPTIONS, both with 503 MAINTENANCE, `Retry-After`, and the spec's extras (mode, endsAt, statusPage);
 * `outage` simulates an unplanned downstream outage, 503 SERVICE_UNAVAILABLE with `Retry-After`: of every request, or,
 * with `operations`, of those partner-contract operations only (a partial outage, one dependency down: D-320).
 * `endsAt` is an announcement (body and Retry-After): the mode lasts until it is set `off`, as an overrunning
 * maintenance would.
 * Owns the current mode, set from the control API
 * (`PUT /_sim/maintenance`), held by this process (D-191). Does not own the answer's rendering (the gateway's).
 */
import { Context, Effect, Layer, Ref } from "effect"
import { type ApiFailure, fail } from "../../domain/errors.ts"
import { isoAt } from "../../sim/clock.ts"

export type MaintenanceMode = "off" | "full" | "read_only" | "outage"

export interface MaintenanceState {
  readonly mode: MaintenanceMode
  readonly endsAt: number | null
  readonly statusPage: string
  /** `outage` only: the operations (operationId) that are down; undefined when the whole API is. */
  readonly operations?: ReadonlySet<string> | undefined
}

export const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"])
export const DEFAULT_STATUS_PAGE = "https://status.example.com"
/** Retry-After of an open-ended maintenance, and of an open-ended outage (seconds). */
export const OPEN_ENDED_RETRY_S = 60
export const OUTAGE_RETRY_S = 30

const OFF: MaintenanceState = { mode: "off", endsAt: null, statusPage: DEFAULT_STATUS_PAGE }

/**
 * The refusal for a request with `method` at `now` to `operationId` (undefined when the path names no operation), or
 * undefined to let it through. Pure.
 */
export const refusal = (
  state: MaintenanceState,
  method: string,
  now: number,
  operationId?: string | undefined
): { failure: ApiFailure; retryAfter: number } | undefined => {
  if (state.mode === "off" || (state.mode === "read_only" && READ_METHODS.has(method))) return undefined
  if (state.mode === "outage" && state.operations !== undefined && (operationId === undefined || !state.operations.has(operationId))) return undefined
  const untilEnd = state.endsAt === null ? undefined : Math.max(1, Math.ceil((state.endsAt - now) / 1000))
  if (state.mode === "outage") {
    return {
      retryAfter: untilEnd ?? OUTAGE_RETRY_S,
      failure: fail("SERVICE_UNAVAILABLE", "a downstream dependency is unavailable; the request was not processed and is safe to resend unchanged")
    }
  }
  return {
    retryAfter: untilEnd ?? OPEN_ENDED_RETRY_S,
    failure: fail("MAINTENANCE", state.mode === "full" ? "planned maintenance: the API is unavailable" : "planned maintenance: the API is read-only", {
      mode: state.mode,
      ...(state.endsAt === null ? {} : { endsAt: isoAt(state.endsAt) }),
      statusPage: state.statusPage
    })
  }
}

export class Maintenance extends Context.Service<
  Maintenance,
  {
    readonly state: Ref.Ref<MaintenanceState>
    /** The failure to answer with, or undefined to let the request through. */
    readonly check: (method: string, now: number, operationId?: string | undefined) => Effect.Effect<{ failure: ApiFailure; retryAfter: number } | undefined>
    readonly current: Effect.Effect<MaintenanceState>
    /** Sets the mode (the control API validates `endsAt` against the clock). */
    readonly set: (next: MaintenanceState) => Effect.Effect<MaintenanceState>
  }
>()("sokoni/Maintenance") {
  static readonly make = Effect.gen(function* () {
    const state = yield* Ref.make<MaintenanceState>(OFF)
    // One step, read as it runs: this runs on every request.
    const check = (method: string, now: number, operationId?: string | undefined) => Effect.sync(() => refusal(Ref.getUnsafe(state), method, now, operationId))
    const current = Ref.get(state)
    const set = (next: MaintenanceState) => Effect.as(Ref.set(state, next), next)
    return Maintenance.of({ state, check, current, set })
  })

  static readonly layer = Layer.effect(Maintenance, Maintenance.make)
}
