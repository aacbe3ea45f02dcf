/**
 * Account lifecycle: closing, freezing and unfreezing sub-accounts and setting their KYC, by the partner (partner
 * API) or by service compliance (control API). Wiring and dispatch: the rules are pure in
 * domain/accounts/decide-lifecycle.ts; each command loads the account (and, to close, what blocks it), writes the
 * plan (the account and its `account.closed`, `account.frozen` or `kyc.updated` event, in one transaction) and
 * answers the account. A repeated request that changes nothing answers the account unchanged and emits nothing.
 * Does not own creating or reading sub-accounts (app/accounts.ts) nor money (app/wallets/).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../../contract/wire.ts"
import { type AccountPlan, decideClose, decideFreeze, decideKyc } from "../../domain/accounts/decide-lifecycle.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import type { KycAssertion } from "../../domain/subaccount.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Store, type StoreError, type Tx } from "../../store/port.ts"
import { accountPosition, findSubAccount, saveSubAccount, subAccountWire } from "../accounts.ts"
import { SubAccounts } from "../docs.ts"
import type { Principal } from "../principal.ts"

type Failing<A> = Effect.Effect<A, ApiFailure | StoreError>

export class AccountLifecycleService extends Context.Service<
  AccountLifecycleService,
  {
    readonly close: (principal: Principal, id: string) => Failing<Schemas["SubAccount"]>
    readonly setFrozen: (principal: Principal, id: string, frozen: boolean, reason: string | undefined) => Failing<Schemas["SubAccount"]>
    readonly assertKyc: (principal: Principal, id: string, assertion: KycAssertion) => Failing<Schemas["SubAccount"]>
    /** Service compliance overrides KYC on any sub-account (`kyc.updated` with overriddenByAdmin). */
    readonly overrideKyc: (id: string, assertion: KycAssertion) => Failing<ControlResponseBody<"overrideSimSubAccountKyc", 200>>
    /** Service compliance freezes or unfreezes any sub-account; the partner cannot lift a compliance freeze. */
    readonly complianceFreeze: (id: string, frozen: boolean, reason: string | undefined) => Failing<ControlResponseBody<"freezeSimSubAccount", 200>>
  }
>()("sokoni/AccountLifecycleService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const events = yield* EventLog

    /** The sub-account the control API names: any partner's, any environment's. */
    const anySubAccount = (tx: Tx, id: string) =>
      Effect.flatMap(SubAccounts.get(tx, id), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(fail("NOT_FOUND", `sub-account ${id} was not found`))
      )

    /** Saves the account and appends its event when the plan changed it; answers the account as the partner sees it. */
    const writePlan = (tx: Tx, plan: AccountPlan) =>
      Effect.gen(function* () {
        if (plan.event !== undefined) {
          yield* saveSubAccount(tx, plan.account)
          yield* events.append(tx, plan.account.partition, plan.event.name, plan.event.data)
        }
        return yield* subAccountWire(tx, plan.account)
      })

    const close = Effect.fn("AccountLifecycleService.close")(function* (principal: Principal, id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          const { blockers } = s.status === "closed" ? { blockers: [] } : yield* accountPosition(tx, s)
          return yield* writePlan(tx, yield* liftFailure(decideClose(s, blockers, yield* clock.nowHere())))
        })
      )
    })

    const setFrozen = Effect.fn("AccountLifecycleService.setFrozen")(function* (principal: Principal, id: string, frozen: boolean, reason: string | undefined) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          return yield* writePlan(tx, yield* liftFailure(decideFreeze(s, frozen, "partner", reason)))
        })
      )
    })

    const assertKyc = Effect.fn("AccountLifecycleService.assertKyc")(function* (principal: Principal, id: string, assertion: KycAssertion) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          return yield* writePlan(tx, yield* liftFailure(decideKyc(s, assertion, "partner", yield* clock.nowHere())))
        })
      )
    })

    const overrideKyc = Effect.fn("AccountLifecycleService.overrideKyc")(function* (id: string, assertion: KycAssertion) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* anySubAccount(tx, id)
          const wire = yield* writePlan(tx, yield* liftFailure(decideKyc(s, assertion, "compliance", yield* clock.nowHere())))
          const answer: ControlResponseBody<"overrideSimSubAccountKyc", 200> = { ...wire, overriddenByAdmin: true }
          return answer
        })
      )
    })

    const complianceFreeze = Effect.fn("AccountLifecycleService.complianceFreeze")(function* (id: string, frozen: boolean, reason: string | undefined) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* anySubAccount(tx, id)
          const answer: ControlResponseBody<"freezeSimSubAccount", 200> = yield* writePlan(
            tx,
            yield* liftFailure(decideFreeze(s, frozen, "compliance", reason))
          )
          return answer
        })
      )
    })

    return AccountLifecycleService.of({ close, setFrozen, assertKyc, overrideKyc, complianceFreeze })
  })

  static readonly layer = Layer.effect(AccountLifecycleService, AccountLifecycleService.make)
}
