/**
 * Account lifecycle: closing, freezing and unfreezing sub-accounts and setting their KYC, by the partner (partner
 * API) or by service compliance (control API). Owns: applying the domain's transitions (domain/subaccount.ts) and
 * emitting `account.closed`, `account.frozen` and `kyc.updated` in the same transaction. A repeated request that
 * changes nothing answers the account unchanged and emits nothing. Does not own creating or reading sub-accounts
 * (accounts.ts) nor money (wallets.ts).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { type Actor, type KycAssertion, nextFreeze, nextKyc, refuseClosed, type SubAccountRecord } from "../domain/subaccount.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError, type Tx } from "../store/port.ts"
import { accountPosition, findSubAccount, saveSubAccount, subAccountWire } from "./accounts.ts"
import { SubAccounts } from "./docs.ts"
import type { Principal } from "./principal.ts"

export class AccountLifecycleService extends Context.Service<
  AccountLifecycleService,
  {
    readonly close: (principal: Principal, id: string) => Effect.Effect<Schemas["SubAccount"], ApiFailure | StoreError>
    readonly setFrozen: (
      principal: Principal,
      id: string,
      frozen: boolean,
      reason: string | undefined
    ) => Effect.Effect<Schemas["SubAccount"], ApiFailure | StoreError>
    readonly assertKyc: (principal: Principal, id: string, assertion: KycAssertion) => Effect.Effect<Schemas["SubAccount"], ApiFailure | StoreError>
    /** Service compliance overrides KYC on any sub-account (`kyc.updated` with overriddenByAdmin). */
    readonly overrideKyc: (id: string, assertion: KycAssertion) => Effect.Effect<ControlResponseBody<"overrideSimSubAccountKyc", 200>, ApiFailure | StoreError>
    /** Service compliance freezes or unfreezes any sub-account; the partner cannot lift a compliance freeze. */
    readonly complianceFreeze: (
      id: string,
      frozen: boolean,
      reason: string | undefined
    ) => Effect.Effect<ControlResponseBody<"freezeSimSubAccount", 200>, ApiFailure | StoreError>
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

    const close = Effect.fn("AccountLifecycleService.close")(function* (principal: Principal, id: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          if (s.status === "closed") return yield* subAccountWire(tx, s)
          const { blockers } = yield* accountPosition(tx, s)
          if (blockers.length > 0) {
            return yield* Effect.fail(
              fail("CONFLICT", `sub-account ${id} cannot be closed yet: ${blockers.map((b) => b.reason).join(", ")} (see GET /users/summary)`)
            )
          }
          const now = yield* clock.now
          const closed: SubAccountRecord = { ...s, status: "closed", closedAt: now }
          yield* saveSubAccount(tx, closed)
          yield* events.append(tx, s.partition, "account.closed", {
            subAccountId: s.subAccountId,
            externalId: s.externalId,
            status: "closed",
            closedAt: isoAt(now)
          })
          return yield* subAccountWire(tx, closed)
        })
      )
    })

    const freezeIn = (tx: Tx, s: SubAccountRecord, frozen: boolean, actor: Actor, reason: string | undefined) =>
      Effect.gen(function* () {
        const next = yield* liftFailure(nextFreeze(s, frozen, actor))
        if (next === undefined) return s
        const saved: SubAccountRecord = { ...next, statusReason: reason ?? null }
        yield* saveSubAccount(tx, saved)
        yield* events.append(tx, s.partition, "account.frozen", {
          subAccountId: s.subAccountId,
          externalId: s.externalId,
          frozen,
          ...(frozen ? { frozenBy: actor } : { unfrozenBy: actor })
        })
        return saved
      })

    const setFrozen = Effect.fn("AccountLifecycleService.setFrozen")(function* (principal: Principal, id: string, frozen: boolean, reason: string | undefined) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          return yield* subAccountWire(tx, yield* freezeIn(tx, s, frozen, "partner", reason))
        })
      )
    })

    const kycIn = (tx: Tx, s: SubAccountRecord, assertion: KycAssertion, actor: Actor) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const next = yield* liftFailure(nextKyc(s, assertion, actor, now))
        if (next === undefined) return s
        const saved: SubAccountRecord = { ...s, ...next }
        yield* saveSubAccount(tx, saved)
        yield* events.append(tx, s.partition, "kyc.updated", {
          subAccountId: s.subAccountId,
          externalId: s.externalId,
          kycStatus: saved.kycStatus,
          kycLevel: saved.kycLevel,
          reference: saved.kycReference,
          ...(actor === "compliance" ? { overriddenByAdmin: true } : {}),
          ...(saved.kycStatus === "REJECTED" ? { kycRejectionCode: saved.kycRejectionCode, kycRejectionReason: saved.kycRejectionReason } : {})
        })
        return saved
      })

    const assertKyc = Effect.fn("AccountLifecycleService.assertKyc")(function* (principal: Principal, id: string, assertion: KycAssertion) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* findSubAccount(tx, principal.partition, id)
          yield* liftFailure(refuseClosed(s, "a KYC assertion"))
          return yield* subAccountWire(tx, yield* kycIn(tx, s, assertion, "partner"))
        })
      )
    })

    const overrideKyc = Effect.fn("AccountLifecycleService.overrideKyc")(function* (id: string, assertion: KycAssertion) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* anySubAccount(tx, id)
          const answer: ControlResponseBody<"overrideSimSubAccountKyc", 200> = {
            ...(yield* subAccountWire(tx, yield* kycIn(tx, s, assertion, "compliance"))),
            overriddenByAdmin: true
          }
          return answer
        })
      )
    })

    const complianceFreeze = Effect.fn("AccountLifecycleService.complianceFreeze")(function* (id: string, frozen: boolean, reason: string | undefined) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const s = yield* anySubAccount(tx, id)
          const answer: ControlResponseBody<"freezeSimSubAccount", 200> = yield* subAccountWire(tx, yield* freezeIn(tx, s, frozen, "compliance", reason))
          return answer
        })
      )
    })

    return AccountLifecycleService.of({ close, setFrozen, assertKyc, overrideKyc, complianceFreeze })
  })

  static readonly layer = Layer.effect(AccountLifecycleService, AccountLifecycleService.make)
}
