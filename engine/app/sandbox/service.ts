/**
 * Sandbox reset (`POST /reset` at the sandbox root, D-013), as a dispatcher: production is refused before any
 * transaction; one transaction wipes the calling partner's sandbox partition and seeds the master wallet again, as
 * the rule (domain/sandbox/decide-reset.ts) plans. The audit hook drops the partition's unwritten usage counts.
 * Event positions and journal positions keep growing (the store keeps counters), so a resumed stream never sees a
 * position twice; jobs of wiped quotes and orders find nothing when they fall due.
 * Owns the transaction. Does not own the rules, the wipe (the store) nor the posting (app/ledger.ts).
 */
import { Context, Effect, Layer } from "effect"
import type { ResponseBody } from "../../contract/wire.ts"
import type { ApiFailure } from "../../domain/errors.ts"
import { decideReset, refuseReset, resetAnswer } from "../../domain/sandbox/decide-reset.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Store, type StoreError } from "../../store/port.ts"
import { seedWallet } from "../ledger.ts"
import type { Principal } from "../principal.ts"

export class SandboxService extends Context.Service<
  SandboxService,
  { readonly reset: (principal: Principal) => Effect.Effect<ResponseBody<"resetSandbox", 200>, ApiFailure | StoreError> }
>()("sokoni/SandboxService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock

    const reset = Effect.fn("SandboxService.reset")(function* (principal: Principal) {
      const refused = refuseReset(principal.environment)
      if (refused !== undefined) return yield* Effect.fail(refused)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.nowHere()
          const plan = decideReset(principal.partition)
          yield* tx.deletePartition(plan.wipe)
          const balance = yield* seedWallet(tx, plan.wipe, plan.seed.account, plan.seed.cents, now)
          return resetAnswer(balance, now)
        })
      )
    })

    return SandboxService.of({ reset })
  })

  static readonly layer = Layer.effect(SandboxService, SandboxService.make)
}
