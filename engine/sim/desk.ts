/**
 * ExecutionDesk: the simulated dealing desk's policy, i.e. when and how PENDING orders get a decision.
 * Owns the policy: `manual` (orders wait for the control API or a scenario step) and `auto` (a fill at the quote
 * price after a configurable delay). Does not own applying the decision (app/trading.ts does, for both policies),
 * so a manual fill and an automatic one go through exactly the same code.
 */
import { Context, Effect, Layer } from "effect"
import type { OrderRecord } from "../domain/order.ts"
import type { StoreError, Tx } from "../store/port.ts"
import { Scheduler } from "./scheduler.ts"

export type DeskMode = "manual" | "auto"
export const DESK_MODES: ReadonlyArray<DeskMode> = ["manual", "auto"]
export const DESK_FILL_JOB = "desk.fill"

export interface DeskFillJob {
  readonly orderId: string
}

export class ExecutionDesk extends Context.Service<
  ExecutionDesk,
  {
    readonly mode: DeskMode
    readonly autoFillDelaySeconds: number
    /** Called in the transaction that queued the order for the desk. */
    readonly onQueued: (tx: Tx, order: OrderRecord, now: number) => Effect.Effect<void, StoreError>
  }
>()("sokoni/ExecutionDesk") {
  static readonly make = (mode: DeskMode, autoFillDelaySeconds: number) =>
    Effect.gen(function* () {
      const scheduler = yield* Scheduler
      return ExecutionDesk.of({
        mode,
        autoFillDelaySeconds,
        onQueued: (tx, order, now) =>
          mode === "auto"
            ? Effect.asVoid(scheduler.schedule(tx, DESK_FILL_JOB, now + autoFillDelaySeconds * 1000, { orderId: order.orderId } satisfies DeskFillJob))
            : Effect.void
      })
    })

  static readonly layer = (mode: DeskMode, autoFillDelaySeconds = 5) => Layer.effect(ExecutionDesk, ExecutionDesk.make(mode, autoFillDelaySeconds))
}
