/**
 * Deposits and withdrawals: the dispatcher around domain/wallets/decide-transfer.ts. It checks the amounts, then in
 * one transaction loads the sub-account and the paying wallet, asks the rules, posts the entry and appends the
 * confirmation event. Owns: what is loaded and written. Does not own the rules.
 */
import { Effect } from "effect"
import { liftFailure } from "../../domain/errors.ts"
import { transferAmounts } from "../../domain/transfer.ts"
import { confirmTransfer, decideTransfer, type Direction, payer, type TransferRequest } from "../../domain/wallets/decide-transfer.ts"
import type { EventLog } from "../../events/event-log.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { PlantedDefect } from "../../sim/defects.ts"
import type { Store } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { postEntry, walletBalance } from "../ledger.ts"
import type { Principal } from "../principal.ts"

export interface TransferDeps {
  readonly store: Store["Service"]
  readonly clock: EngineClock["Service"]
  readonly events: EventLog["Service"]
  /** TEST ONLY (sim/defects.ts, E-190). */
  readonly planted: ReadonlySet<PlantedDefect>
}

export const transferring = (d: TransferDeps) => {
  const move = (principal: Principal, id: string, request: TransferRequest, direction: Direction) =>
    Effect.gen(function* () {
      const amounts = yield* liftFailure(transferAmounts(request))
      return yield* d.store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* d.clock.nowHere()
          const p = principal.partition
          const subAccount = yield* findSubAccount(tx, p, id)
          const state = {
            subAccount,
            available: yield* walletBalance(tx, p, payer(direction, subAccount.subAccountId)),
            // TEST ONLY (sim/defects.ts, E-190): empty unless `serve --plant-defect overdraw`.
            overdrawPlanted: d.planted.has("overdraw")
          }
          const plan = yield* liftFailure(decideTransfer(state, { direction, amounts, request }, now))
          const posted = yield* postEntry(tx, p, plan.entry)
          const { event, answer } = confirmTransfer(plan, { entryId: posted.entry.entryId, after: posted.after })
          yield* d.events.append(tx, p, event.name, event.data)
          return answer
        })
      )
    })

  const deposit = Effect.fn("WalletService.deposit")(function* (principal: Principal, id: string, request: TransferRequest) {
    return yield* move(principal, id, request, "DEPOSIT")
  })

  const withdraw = Effect.fn("WalletService.withdraw")(function* (principal: Principal, id: string, request: TransferRequest) {
    return yield* move(principal, id, request, "WITHDRAWAL")
  })

  return { deposit, withdraw }
}
