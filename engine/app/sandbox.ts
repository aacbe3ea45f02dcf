/**
 * Sandbox reset (`POST /reset` at the sandbox root, D-013): wipes the calling partner's sandbox partition
 * (sub-accounts and their rows, orders, quotes, holdings, the ledger, idempotency records, the event log, audit
 * records, usage counts and reports: all live in the partition; the audit hook drops its unwritten sandbox counts) and
 * re-seeds the master wallet, in one transaction. Owns nothing else. Event positions and journal positions keep
 * growing (the store keeps counters), so a resumed stream never sees a position twice; the partner, its keys and
 * its production partition are untouched. Jobs of wiped quotes and orders find nothing when they fall due.
 */
import { Context, Effect, Layer } from "effect"
import type { ResponseBody } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { MASTER } from "../domain/ledger.ts"
import { centsToWire } from "../domain/money.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError } from "../store/port.ts"
import { seedWallet } from "./ledger.ts"
import { SANDBOX_SEED_CENTS } from "../domain/partners/decide-partner.ts"
import type { Principal } from "./principal.ts"

export class SandboxService extends Context.Service<
  SandboxService,
  { readonly reset: (principal: Principal) => Effect.Effect<ResponseBody<"resetSandbox", 200>, ApiFailure | StoreError> }
>()("sokoni/SandboxService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock

    const reset = Effect.fn("SandboxService.reset")(function* (principal: Principal) {
      if (principal.environment !== "sandbox") return yield* Effect.fail(fail("FORBIDDEN", "only the sandbox can be reset"))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          yield* tx.deletePartition(principal.partition)
          const balance = yield* seedWallet(tx, principal.partition, MASTER, SANDBOX_SEED_CENTS, now)
          const answer: ResponseBody<"resetSandbox", 200> = {
            message: "Sandbox reset: sub-accounts, orders, quotes and events were wiped; the master wallet holds 100000 USD.",
            walletBalance: centsToWire(balance),
            currency: "USD",
            resetAt: isoAt(now)
          }
          return answer
        })
      )
    })

    return SandboxService.of({ reset })
  })

  static readonly layer = Layer.effect(SandboxService, SandboxService.make)
}
