/**
 * Rights: the entitlements of a rights issue raised through the control API and their take-up (D-344..D-346). On the
 * record date (the day the issue is raised) every holder is entitled to floor(units x ratioEntitled / ratioHeld) new
 * units; until the subscription deadline (the exchange's local date) the holder may take some or all of them up
 * (`POST /_sim/corporate-actions/{actionId}/take-up`, acting for the end user: the partner API has no election
 * endpoint), paying subscriptionPrice x units converted to USD at the reference rate, rounded once, from the wallet to
 * the issuer; at 00:00 UTC after the deadline (the issue's effective date) the units taken up are credited and the
 * rest lapse. Owns the `rightsEntitlements` documents (in each holder's partition) and the allotment job.
 * Does not own raising the issue (app/corporate-actions.ts) nor holdings' other movements.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlSchemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { rateFor } from "../domain/fx.ts"
import { ISSUER, transfer, walletAccount } from "../domain/ledger.ts"
import { centsToWire, grossCents, parseScaled } from "../domain/money.ts"
import type { ActionRecord } from "../domain/reference/corporate-actions.ts"
import { DAY_MS, dateMs, isoDate } from "../domain/reference/seeded.ts"
import { refuseInactive } from "../domain/subaccount.ts"
import { EngineClock } from "../sim/clock.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { EntitlementShape } from "./doc-shapes.ts"
import { collection, Partners, SimActions, SubAccounts, timeSortKey } from "./docs.ts"
import { ActionPayload } from "./job-payloads.ts"
import { type Holder, partnerPartitions, putHolding } from "./holders.ts"
import { holding, postEntry, walletBalance } from "./ledger.ts"
import { partitionOf } from "./principal.ts"
import { localDate } from "./reference-data.ts"
import { Symbols } from "./symbols.ts"

export const RIGHTS_ALLOT_JOB = "rights.allot"
const ENTITLEMENTS = "rightsEntitlements"

export interface EntitlementDoc {
  readonly actionId: string
  readonly partition: string
  /** `master` or a sub-account id. */
  readonly account: string
  /** The listing's symbol on the record date. */
  readonly symbol: string
  readonly entitled: number
  readonly takenUp: number
  /** USD cents paid for the units taken up, all take-ups together. */
  readonly paidCents: number
  readonly status: "OPEN" | "ALLOTTED" | "LAPSED"
  /** When the units taken up were credited. */
  readonly allottedAt?: number
}

const Entitlements = collection<EntitlementDoc>(ENTITLEMENTS, EntitlementShape)
const entitlementId = (actionId: string, partition: string, account: string) => `${actionId}|${partition}|${account}`
const putEntitlement = (tx: Tx, e: EntitlementDoc) =>
  tx.put(ENTITLEMENTS, { id: entitlementId(e.actionId, e.partition, e.account), partition: e.partition, sortKey: `${e.actionId}|${e.account}`, body: e })

/** 00:00 UTC of the day after the subscription deadline: when the units taken up are credited (the issue's effective date). */
export const allotmentAt = (subscriptionDeadline: string): number => dateMs(subscriptionDeadline) + DAY_MS

/** New units `units` held entitle to: floor(units x ratioEntitled / ratioHeld). */
export const entitledUnits = (units: number, ratioHeld: number, ratioEntitled: number): number =>
  Number((BigInt(units) * BigInt(ratioEntitled)) / BigInt(ratioHeld))

/** On the record date: each holder's entitlement (none below one new unit), and the allotment job. */
export const entitleIn = (tx: Tx, scheduler: Scheduler["Service"], action: ActionRecord, holders: ReadonlyArray<Holder>) =>
  Effect.gen(function* () {
    const ratioHeld = Number(action.details.ratioHeld)
    const ratioEntitled = Number(action.details.ratioEntitled)
    let entitledHolders = 0
    for (const h of holders) {
      const entitled = entitledUnits(h.holding.quantity, ratioHeld, ratioEntitled)
      if (entitled === 0) continue
      entitledHolders += 1
      yield* putEntitlement(tx, {
        actionId: action.actionId,
        partition: h.partition,
        account: h.account,
        symbol: action.symbol,
        entitled,
        takenUp: 0,
        paidCents: 0,
        status: "OPEN"
      })
    }
    yield* scheduler.schedule(tx, RIGHTS_ALLOT_JOB, action.effectiveAt, { actionId: action.actionId })
    return entitledHolders
  })

export interface TakeUpInput {
  readonly subAccountId?: string | undefined
  readonly partnerId?: string | undefined
  readonly environment?: "sandbox" | "production" | undefined
  readonly units?: number | undefined
}

type Entitlement = ControlSchemas["RightsEntitlement"]

export class Rights extends Context.Service<
  Rights,
  { readonly takeUp: (actionId: string, input: TakeUpInput) => Effect.Effect<Entitlement, ApiFailure | StoreError> }
>()("sokoni/Rights") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const scheduler = yield* Scheduler
    const symbols = yield* Symbols

    const toWire = (a: ActionRecord, e: EntitlementDoc, debitedCents: number): Entitlement => {
      const [partnerId = "", environment = "sandbox"] = e.partition.split(":")
      return {
        actionId: a.actionId,
        symbol: symbols.currentSymbol(e.symbol),
        partnerId,
        environment: environment as Entitlement["environment"],
        subAccountId: e.account,
        entitledUnits: e.entitled,
        takenUpUnits: e.takenUp,
        remainingUnits: e.status === "OPEN" ? e.entitled - e.takenUp : 0,
        subscriptionPrice: Number(a.details.subscriptionPrice),
        currency: String(a.details.currency),
        debitedUsd: centsToWire(debitedCents),
        paidUsd: centsToWire(e.paidCents),
        subscriptionDeadline: String(a.details.subscriptionDeadline),
        allotmentDate: isoDate(a.effectiveAt),
        status: e.status
      }
    }

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

    const takeUp = Effect.fn("Rights.takeUp")(function* (actionId: string, input: TakeUpInput) {
      if (input.units !== undefined && (!Number.isSafeInteger(input.units) || input.units < 1)) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "units must be a whole number above 0", { param: "units" }))
      }
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const found = yield* SimActions.get(tx, actionId)
          if (Option.isNone(found) || found.value.actionType !== "RIGHTS_ISSUE") {
            return yield* Effect.fail(fail("NOT_FOUND", `rights issue ${actionId} was not found`))
          }
          const action = found.value
          const { partition, account } = yield* accountOf(tx, input)
          const stored = yield* Entitlements.get(tx, entitlementId(actionId, partition, account))
          if (Option.isNone(stored)) return yield* Effect.fail(fail("NOT_FOUND", `${account} has no entitlement in rights issue ${actionId}`))
          const e = stored.value
          const deadline = String(action.details.subscriptionDeadline)
          if (e.status !== "OPEN" || localDate(action.exchange, now) > deadline) {
            return yield* Effect.fail(fail("CONFLICT", `the entitlement lapsed: the subscription closed on ${deadline}`))
          }
          const remaining = e.entitled - e.takenUp
          const units = input.units ?? remaining
          if (units > remaining || remaining === 0) {
            return yield* Effect.fail(fail("CONFLICT", `${remaining} units of the entitlement are left to take up`, { param: "units" }))
          }
          const currency = String(action.details.currency)
          const rate = rateFor(currency)
          const price = parseScaled(Number(action.details.subscriptionPrice), 4)
          if (rate === undefined || price === undefined) return yield* Effect.fail(fail("SERVICE_UNAVAILABLE", `no FX rate for ${currency}`))
          const cents = grossCents(units, price, rate)
          const balance = yield* walletBalance(tx, partition, account)
          if (balance < cents) {
            return yield* Effect.fail(
              fail("INSUFFICIENT_FUNDS", `taking up ${units} units needs ${centsToWire(cents)} USD and the wallet holds ${centsToWire(balance)} USD`)
            )
          }
          if (cents > 0) {
            yield* postEntry(tx, partition, {
              kind: "RIGHTS_SUBSCRIBED",
              postings: transfer(walletAccount(account), ISSUER, cents),
              at: now,
              description: `Rights taken up: ${units} new ${symbols.currentSymbol(e.symbol)} at ${currency} ${action.details.subscriptionPrice}`,
              reference: actionId
            })
          }
          const next: EntitlementDoc = { ...e, takenUp: e.takenUp + units, paidCents: e.paidCents + cents }
          yield* putEntitlement(tx, next)
          return toWire(action, next, cents)
        })
      )
    })

    // After the deadline: the units taken up join the holding (under the listing's symbol now), the rest lapse, the
    // issue completes.
    yield* scheduler.register(RIGHTS_ALLOT_JOB, ActionPayload, (tx, { actionId }) =>
      Effect.gen(function* () {
        const found = yield* SimActions.get(tx, actionId)
        if (Option.isNone(found) || found.value.completedAt !== null) return
        const now = yield* clock.now
        for (const partition of yield* partnerPartitions(tx, true)) {
          const docs = yield* Entitlements.listDocs(tx, { partition, after: `${actionId}|`, limit: 1_000_000, order: "asc" })
          for (const doc of docs) {
            const e = doc.body
            if (e.actionId !== actionId || e.status !== "OPEN") continue
            if (e.takenUp > 0) {
              const symbol = symbols.currentSymbol(e.symbol)
              const h = yield* holding(tx, partition, e.account, symbol)
              yield* putHolding(tx, { partition, account: e.account }, { symbol, quantity: h.quantity + e.takenUp, reserved: h.reserved })
            }
            yield* putEntitlement(tx, e.takenUp > 0 ? { ...e, status: "ALLOTTED", allottedAt: now } : { ...e, status: "LAPSED" })
          }
        }
        const action = found.value
        yield* SimActions.put(tx, actionId, "global", timeSortKey(action.announcedAt, actionId), { ...action, completedAt: now })
      })
    )

    return Rights.of({ takeUp })
  })

  static readonly layer = Layer.effect(Rights, Rights.make)
}

/** Units allotted to `account` by rights issues, as BUY fills at their subscription cost: the average cost counts them (D-346). */
export const allottedAsBuys = (tx: ReadTx, partition: string, account: string) =>
  Effect.map(Entitlements.listDocs(tx, { partition, limit: 1_000_000, order: "asc" }), (docs) =>
    docs
      .map((d) => d.body)
      .filter((e) => e.account === account && e.status === "ALLOTTED")
      .map((e) => ({
        account,
        side: "BUY" as const,
        symbol: e.symbol,
        fills: [{ quantity: e.takenUp, gross: e.paidCents, fee: 0, at: e.allottedAt ?? 0 }]
      }))
  )
