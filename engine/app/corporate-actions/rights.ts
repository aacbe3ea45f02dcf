/**
 * Rights: the take-up of a rights issue's entitlements and their allotment (D-344..D-346). Until the subscription
 * deadline a holder takes units up (`POST /_sim/corporate-actions/{actionId}/take-up`, acting for the end user: the
 * partner API has no election endpoint); at 00:00 UTC after it the units taken up are credited and the rest lapse.
 * Wiring, reads and dispatch: the rules are pure in domain/corporate-actions/decide-rights.ts; the issue is raised
 * (its entitlements written) by app/corporate-actions/. Owns the `rightsEntitlements` documents (in each holder's
 * partition) and the allotment job's handler.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlSchemas } from "../../contract/wire.ts"
import {
  allottedAsBuys as allottedBuys,
  decideAllotment,
  decideTakeUp,
  type EntitlementRecord,
  RIGHTS_ALLOT_JOB,
  takeUpUnits,
  withAllotted
} from "../../domain/corporate-actions/decide-rights.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { refuseInactive } from "../../domain/subaccount.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../../store/port.ts"
import { saveAction } from "./action-records.ts"
import { EntitlementShape } from "../doc-shapes.ts"
import { collection, Partners, SimActions, SubAccounts } from "../docs.ts"
import { partnerPartitions, putHolding } from "./holders.ts"
import { ActionPayload } from "../job-payloads.ts"
import { holding, postEntry, walletBalance } from "../ledger.ts"
import { partitionOf } from "../principal.ts"
import { Symbols } from "../symbols.ts"

export { RIGHTS_ALLOT_JOB }
const ENTITLEMENTS = "rightsEntitlements"

export type EntitlementDoc = EntitlementRecord

const Entitlements = collection<EntitlementDoc>(ENTITLEMENTS, EntitlementShape)
const entitlementId = (actionId: string, partition: string, account: string) => `${actionId}|${partition}|${account}`
export const putEntitlement = (tx: Tx, e: EntitlementDoc) =>
  tx.put(ENTITLEMENTS, { id: entitlementId(e.actionId, e.partition, e.account), partition: e.partition, sortKey: `${e.actionId}|${e.account}`, body: e })

export interface TakeUpInput {
  readonly subAccountId?: string | undefined
  readonly partnerId?: string | undefined
  readonly environment?: "sandbox" | "production" | undefined
  readonly units?: number | undefined
}

type Entitlement = ControlSchemas["RightsEntitlement"]

/** The account the control call acts for: a sub-account of any partner, or a partner's master account. */
const accountOf = (tx: Tx, input: TakeUpInput) =>
  Effect.gen(function* () {
    if (input.subAccountId !== undefined) {
      const found = yield* SubAccounts.get(tx, input.subAccountId)
      if (Option.isNone(found)) return yield* Effect.fail(fail("NOT_FOUND", `sub-account ${input.subAccountId} was not found`))
      yield* liftFailure(refuseInactive(found.value, "taking up rights"))
      return { partition: found.value.partition, account: found.value.subAccountId }
    }
    if (input.partnerId === undefined || input.environment === undefined) {
      return yield* Effect.fail(
        fail("VALIDATION_ERROR", "give subAccountId, or partnerId and environment for the partner's master account", {
          params: ["subAccountId", "partnerId", "environment"]
        })
      )
    }
    if (Option.isNone(yield* Partners.get(tx, input.partnerId))) return yield* Effect.fail(fail("NOT_FOUND", `partner ${input.partnerId} was not found`))
    return { partition: partitionOf(input.partnerId, input.environment), account: "master" }
  })

export class Rights extends Context.Service<
  Rights,
  { readonly takeUp: (actionId: string, input: TakeUpInput) => Effect.Effect<Entitlement, ApiFailure | StoreError> }
>()("sokoni/Rights") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const scheduler = yield* Scheduler
    const symbols = yield* Symbols

    /** The rights issue, the account's entitlement in it and its wallet: what a take-up decides on. */
    const takeUpState = (tx: Tx, actionId: string, input: TakeUpInput) =>
      Effect.gen(function* () {
        const found = yield* SimActions.get(tx, actionId)
        if (Option.isNone(found) || found.value.actionType !== "RIGHTS_ISSUE") {
          return yield* Effect.fail(fail("NOT_FOUND", `rights issue ${actionId} was not found`))
        }
        const { partition, account } = yield* accountOf(tx, input)
        const stored = yield* Entitlements.get(tx, entitlementId(actionId, partition, account))
        if (Option.isNone(stored)) return yield* Effect.fail(fail("NOT_FOUND", `${account} has no entitlement in rights issue ${actionId}`))
        const e = stored.value
        const balance = yield* walletBalance(tx, partition, account)
        return { action: found.value, entitlement: e, balance, currentSymbol: symbols.currentSymbol(e.symbol) }
      })

    const takeUp = Effect.fn("Rights.takeUp")(function* (actionId: string, input: TakeUpInput) {
      yield* liftFailure(takeUpUnits(input.units))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.nowHere()
          const plan = yield* liftFailure(decideTakeUp(yield* takeUpState(tx, actionId, input), input.units, now))
          if (plan.credit !== undefined) yield* postEntry(tx, plan.credit.partition, plan.credit.entry)
          yield* putEntitlement(tx, plan.entitlement)
          return plan.answer
        })
      )
    })

    // After the deadline: the units taken up join the holding (under the listing's symbol now), the rest lapse, the
    // issue completes.
    yield* scheduler.register(RIGHTS_ALLOT_JOB, ActionPayload, (tx, { actionId }) =>
      Effect.gen(function* () {
        const found = yield* SimActions.get(tx, actionId)
        if (Option.isNone(found) || found.value.completedAt !== null) return
        const now = yield* clock.nowHere()
        for (const partition of yield* partnerPartitions(tx, true)) {
          const docs = yield* Entitlements.listDocs(tx, { partition, after: `${actionId}|`, limit: 1_000_000, order: "asc" })
          for (const doc of docs) {
            const e = doc.body
            const next = e.actionId === actionId ? decideAllotment(e, now) : undefined
            if (next === undefined) continue
            if (next.status === "ALLOTTED") {
              const symbol = symbols.currentSymbol(e.symbol)
              yield* putHolding(tx, { partition, account: e.account }, withAllotted(yield* holding(tx, partition, e.account, symbol), e))
            }
            yield* putEntitlement(tx, next)
          }
        }
        yield* saveAction(tx, { ...found.value, completedAt: now })
      })
    )

    return Rights.of({ takeUp })
  })

  static readonly layer = Layer.effect(Rights, Rights.make)
}

/** Units allotted to `account` by rights issues, as BUY fills at their subscription cost: the average cost counts them (D-346). */
export const allottedAsBuys = (tx: ReadTx, partition: string, account: string) =>
  Effect.map(Entitlements.listDocs(tx, { partition, limit: 1_000_000, order: "asc" }), (docs) =>
    allottedBuys(
      docs.map((d) => d.body),
      account
    )
  )
