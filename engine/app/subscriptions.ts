/**
 * Asset subscriptions (D-040, D-270..D-276): subscribing the master account or a sub-account to an open offer,
 * reading subscriptions, and deciding them: the scheduled allotment when the offer closes (bonds, bills and
 * private-market raises) or at the fund's next dealing day, and the control API's allot, reject and cancel.
 * Owns: the offer checks (exists, asset class, minimum, window), the account checks (active, KYC VERIFIED), escrow
 * of amount + fee through the ledger at acceptance and the money of every decision, each in one transaction with the
 * record, and the `subscription.allot` job. Does not own the offers (reference book, app/offers.ts for a fund's NAV),
 * the arithmetic and state machine (domain/subscription.ts), nor events: the catalogue has none for subscriptions,
 * so partners poll (D-040).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import { rateFor } from "../domain/fx.ts"
import { centsToWire, parseScaled, type Price4 } from "../domain/money.ts"
import { type BondRecord, type FundRecord, type OfferStatus, type OpportunityRecord, windowStatus } from "../domain/reference/offers.ts"
import {
  type AssetClass,
  accept,
  acceptMovements,
  allot,
  bondClass,
  bondPrice4,
  decline,
  FUND_DEALING_DELAY_MS,
  MAX_SUBSCRIPTION_CENTS,
  MINIMUM_RAISE_NOT_MET,
  OPPORTUNITY_UNIT_PRICE4,
  opportunityOutcome,
  refuseSubscribing,
  type SubscriptionMovements,
  subscriptionPostings,
  type SubscriptionRecord,
  type SubscriptionStatus,
  subscriptionToWire,
  unitsFor
} from "../domain/subscription.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Scheduler } from "../sim/scheduler.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import { findSubAccount } from "./accounts.ts"
import { checkLimit, decodeCursor, encodeCursor, scanPage } from "./cursor.ts"
import { LedgerInvariantError, postEntry, walletBalance } from "./ledger.ts"
import { OfferService } from "./offers.ts"
import type { Principal } from "./principal.ts"
import { ReferenceData } from "./reference-data.ts"
import { SUBSCRIPTIONS, saveSubscription, subscriptionPartition } from "./subscription-docs.ts"

export const SUBSCRIPTION_ALLOT_JOB = "subscription.allot"
export interface SubscriptionAllotJob {
  readonly subscriptionId: string
}

export interface SubscribeInput {
  readonly assetClass: AssetClass
  readonly instrumentId: string
  readonly amount: number
  readonly clientReference?: string | undefined
}

export interface SubscriptionListQuery {
  readonly status?: SubscriptionStatus | undefined
  readonly assetClass?: AssetClass | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Subscription lists examine at most this many records per request (spec Limits, as for orders). */
const SCAN_LIMIT = 1000
const MASTER = "master"

/** One offer of the reference book, whatever its family. */
type Offer =
  | { readonly family: "bond"; readonly record: BondRecord }
  | { readonly family: "fund"; readonly record: FundRecord }
  | { readonly family: "opportunity"; readonly record: OpportunityRecord }

const offerId = (o: Offer) => (o.family === "bond" ? o.record.bondId : o.family === "fund" ? o.record.fundId : o.record.opportunityId)
const classOf = (o: Offer): AssetClass => (o.family === "bond" ? bondClass(o.record.instrumentType) : o.family === "fund" ? "FUND" : o.record.opportunityType)

/** The window at `now` (D-168): a fund is CLOSED to new money, UPCOMING before its launch, else OPEN. */
const statusOf = (o: Offer, now: number): OfferStatus =>
  o.family === "fund" ? (o.record.closed ? "CLOSED" : windowStatus(o.record.opensAt, null, now)) : windowStatus(o.record.opensAt, o.record.closesAt, now)

/** When a subscription accepted at `now` is allotted (D-272): at the close, or on the fund's next dealing day. */
const allotAtOf = (o: Offer, now: number): number => (o.family === "fund" ? now + FUND_DEALING_DELAY_MS : o.record.closesAt)

type EntryKind = "SUBSCRIPTION_PLACED" | "SUBSCRIPTION_ALLOTTED" | "SUBSCRIPTION_REJECTED" | "SUBSCRIPTION_CANCELLED"

/** How an entry reads in the journal and the sub-account's history. */
const describe = (kind: EntryKind, r: SubscriptionRecord) => {
  const what = `subscription ${r.subscriptionId} (${r.instrumentName})`
  if (kind === "SUBSCRIPTION_PLACED") return `Escrow for ${what}`
  if (kind === "SUBSCRIPTION_REJECTED") return `Escrow returned: rejected ${what}`
  if (kind === "SUBSCRIPTION_CANCELLED") return `Escrow returned: cancelled ${what}`
  return r.status === "PARTIALLY_ALLOTTED" ? `Surplus returned: partially allotted ${what}` : `Allotted ${what}`
}

export class SubscriptionService extends Context.Service<
  SubscriptionService,
  {
    readonly subscribe: (principal: Principal, account: string, input: SubscribeInput) => Effect.Effect<Schemas["Subscription"], ApiFailure | StoreError>
    readonly list: (principal: Principal, account: string, query: SubscriptionListQuery) => Effect.Effect<Schemas["SubscriptionList"], ApiFailure | StoreError>
    readonly get: (principal: Principal, subscriptionId: string) => Effect.Effect<Schemas["Subscription"], ApiFailure | StoreError>
    /** Control API: allot now, all of the amount or `amount` USD of it. */
    readonly allot: (subscriptionId: string, amount: number | undefined) => Effect.Effect<Schemas["Subscription"], ApiFailure | StoreError>
    /** Control API: the service rejects (REJECTED) or the issuer cancels (CANCELLED); the escrow returns whole. */
    readonly decline: (
      subscriptionId: string,
      status: "REJECTED" | "CANCELLED",
      code: string,
      reason: string
    ) => Effect.Effect<Schemas["Subscription"], ApiFailure | StoreError>
  }
>()("sokoni/SubscriptionService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const scheduler = yield* Scheduler
    const offers = yield* OfferService
    const { book } = yield* ReferenceData

    const byId = new Map<string, Offer>()
    for (const record of book.bonds()) byId.set(record.bondId, { family: "bond", record })
    for (const record of book.funds()) byId.set(record.fundId, { family: "fund", record })
    for (const record of book.opportunities()) byId.set(record.opportunityId, { family: "opportunity", record })

    /** The price of one unit at `now`, in the offer's currency (a fund's NAV follows its market; D-274). */
    const unitPrice = (o: Offer): Effect.Effect<Price4 | undefined, ApiFailure> => {
      if (o.family === "bond") {
        const b = o.record
        return Effect.succeed(bondPrice4(b.faceValue, b.instrumentType, b.yieldBps, b.tenorDays))
      }
      if (o.family === "opportunity") return Effect.succeed(OPPORTUNITY_UNIT_PRICE4)
      return Effect.map(offers.getFund(o.record.fundId), (f) => (f.nav === null ? undefined : parseScaled(f.nav, 4)))
    }

    const unitsOf = (r: SubscriptionRecord, allotted: number) =>
      Effect.gen(function* () {
        const o = byId.get(r.instrumentId)
        const rate = rateFor(r.offerCurrency)
        const price = o === undefined ? undefined : yield* unitPrice(o)
        return price === undefined || price <= 0 || rate === undefined ? null : unitsFor(allotted, rate, price)
      })

    /** Posts a transition's money (if any moved) and saves the record, in `tx`. */
    const apply = (tx: Tx, kind: EntryKind, r: SubscriptionRecord, movements: SubscriptionMovements, at: number) =>
      Effect.gen(function* () {
        const postings = subscriptionPostings(r.account, movements)
        if (postings === undefined) {
          return yield* Effect.die(new LedgerInvariantError({ message: `subscription ${r.subscriptionId}: ${kind} movements do not balance` }))
        }
        if (postings.length > 0) {
          yield* postEntry(tx, r.partition, {
            kind,
            postings,
            at,
            description: describe(kind, r),
            subscriptionId: r.subscriptionId,
            reference: r.clientReference
          })
        }
        yield* saveSubscription(tx, r)
      })

    const subscribe = Effect.fn("SubscriptionService.subscribe")(function* (principal: Principal, account: string, input: SubscribeInput) {
      const amount = parseScaled(input.amount, 2)
      if (amount === undefined || amount <= 0) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "amount must be a positive USD amount with at most 2 decimals", { param: "amount" }))
      }
      if (amount > MAX_SUBSCRIPTION_CENTS) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", `amount must be at most ${centsToWire(MAX_SUBSCRIPTION_CENTS)} USD`, { param: "amount" }))
      }
      const offer = byId.get(input.instrumentId)
      if (offer === undefined) {
        return yield* Effect.fail(fail("NOT_FOUND", `instrument ${input.instrumentId} is not a bond, fund or opportunity on offer`, { param: "instrumentId" }))
      }
      const assetClass = classOf(offer)
      if (assetClass !== input.assetClass) {
        return yield* Effect.fail(
          fail("VALIDATION_ERROR", `instrument ${input.instrumentId} is a ${assetClass} offer: assetClass must be ${assetClass}`, { param: "assetClass" })
        )
      }
      const minimum = offer.record.minimumSubscription
      if (amount < minimum) {
        return yield* Effect.fail(
          fail("VALIDATION_ERROR", `amount is below the offer's minimum subscription of ${centsToWire(minimum)} USD`, { param: "amount" })
        )
      }
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const now = yield* clock.now
          const subAccount = account === MASTER ? undefined : yield* findSubAccount(tx, principal.partition, account)
          if (subAccount !== undefined) yield* liftFailure(refuseSubscribing(subAccount))
          const status = statusOf(offer, now)
          if (status !== "OPEN") {
            const when =
              status === "UPCOMING" && offer.record.opensAt !== null
                ? `opens at ${isoAt(offer.record.opensAt)}`
                : offer.family === "fund"
                  ? "is closed to new money"
                  : `closed at ${isoAt(offer.record.closesAt)}`
            return yield* Effect.fail(fail("OFFER_NOT_OPEN", `${offer.record.name} is ${status}: it ${when}`))
          }
          const record = accept({
            subscriptionId: yield* entropy.id("sub"),
            partition: principal.partition,
            account,
            externalId: subAccount?.externalId ?? null,
            assetClass,
            instrumentId: offerId(offer),
            instrumentName: offer.record.name,
            offerCurrency: offer.record.currency,
            amount,
            markupBps: principal.markupBps,
            clientReference: input.clientReference ?? null,
            now,
            allotAt: allotAtOf(offer, now)
          })
          const balance = yield* walletBalance(tx, principal.partition, account)
          if (balance < record.totalAmount) {
            return yield* Effect.fail(
              fail(
                "INSUFFICIENT_FUNDS",
                `the subscription needs ${centsToWire(record.totalAmount)} USD (amount + fee) and the wallet holds ${centsToWire(balance)} USD`
              )
            )
          }
          yield* apply(tx, "SUBSCRIPTION_PLACED", record, acceptMovements(record), now)
          yield* scheduler.schedule(tx, SUBSCRIPTION_ALLOT_JOB, record.allotAt, { subscriptionId: record.subscriptionId } satisfies SubscriptionAllotJob)
          return subscriptionToWire(record)
        })
      )
    })

    const list = Effect.fn("SubscriptionService.list")(function* (principal: Principal, account: string, query: SubscriptionListQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { status, assetClass } = query
      const scope = `subscriptions|${principal.partition}|${account}|${status ?? ""}|${assetClass ?? ""}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          // a sub-account's subscriptions stay readable whatever its status; an unknown or foreign id is 404
          if (account !== MASTER) yield* findSubAccount(tx, principal.partition, account)
          const scanned = yield* tx.list(SUBSCRIPTIONS, {
            partition: subscriptionPartition(principal.partition, account),
            after,
            limit: SCAN_LIMIT + 1,
            order: "desc"
          })
          const page = scanPage(scanned, limit, SCAN_LIMIT, (body) => {
            const r = body as SubscriptionRecord
            return (status === undefined || r.status === status) && (assetClass === undefined || r.assetClass === assetClass)
          })
          const answer: Schemas["SubscriptionList"] = {
            subscriptions: page.items.map((body) => subscriptionToWire(body as SubscriptionRecord)),
            count: page.items.length,
            hasMore: page.hasMore,
            nextCursor: page.hasMore && page.lastKey !== undefined ? encodeCursor(scope, page.lastKey) : null
          }
          return answer
        })
      )
    })

    const findAny = (tx: ReadTx, subscriptionId: string) =>
      Effect.flatMap(tx.get(SUBSCRIPTIONS, subscriptionId), (doc) =>
        Option.isSome(doc)
          ? Effect.succeed(doc.value.body as SubscriptionRecord)
          : Effect.fail(fail("NOT_FOUND", `subscription ${subscriptionId} was not found`))
      )

    const get = Effect.fn("SubscriptionService.get")(function* (principal: Principal, subscriptionId: string) {
      const r = yield* store.read((tx) => findAny(tx, subscriptionId))
      // another partner's or the other environment's subscription is as unknown as one that never existed
      if (r.partition !== principal.partition) return yield* Effect.fail(fail("NOT_FOUND", `subscription ${subscriptionId} was not found`))
      return subscriptionToWire(r)
    })

    /** Allots `allotted` cents (all by default) in `tx`. */
    const allotIn = (tx: Tx, r: SubscriptionRecord, allotted: number) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const t = yield* liftFailure(allot(r, allotted, yield* unitsOf(r, allotted), now))
        yield* apply(tx, "SUBSCRIPTION_ALLOTTED", t.record, t.movements, now)
        return t.record
      })

    const declineIn = (tx: Tx, r: SubscriptionRecord, status: "REJECTED" | "CANCELLED", code: string, reason: string) =>
      Effect.gen(function* () {
        const now = yield* clock.now
        const t = yield* liftFailure(decline(r, status, code, reason, now))
        yield* apply(tx, status === "REJECTED" ? "SUBSCRIPTION_REJECTED" : "SUBSCRIPTION_CANCELLED", t.record, t.movements, now)
        return t.record
      })

    const allotNow = Effect.fn("SubscriptionService.allot")(function* (subscriptionId: string, amount: number | undefined) {
      const cents = amount === undefined ? undefined : parseScaled(amount, 2)
      if (amount !== undefined && cents === undefined) {
        return yield* Effect.fail(fail("VALIDATION_ERROR", "amount must be a USD amount with at most 2 decimals", { param: "amount" }))
      }
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const r = yield* findAny(tx, subscriptionId)
          return subscriptionToWire(yield* allotIn(tx, r, cents ?? r.amount))
        })
      )
    })

    const declineNow = Effect.fn("SubscriptionService.decline")(function* (
      subscriptionId: string,
      status: "REJECTED" | "CANCELLED",
      code: string,
      reason: string
    ) {
      return yield* store.transact((tx) =>
        Effect.flatMap(findAny(tx, subscriptionId), (r) => Effect.map(declineIn(tx, r, status, code, reason), subscriptionToWire))
      )
    })

    // The scheduled decision: wiped (sandbox reset) or decided meanwhile (control API) finds nothing to do.
    yield* scheduler.register(SUBSCRIPTION_ALLOT_JOB, (tx, payload) =>
      Effect.gen(function* () {
        const { subscriptionId } = payload as SubscriptionAllotJob
        const doc = yield* tx.get(SUBSCRIPTIONS, subscriptionId)
        if (Option.isNone(doc)) return
        const r = doc.value.body as SubscriptionRecord
        if (r.status !== "PENDING") return
        const o = byId.get(r.instrumentId)
        if (o?.family === "opportunity") {
          const outcome = opportunityOutcome(o.record, r.amount)
          if (outcome.kind === "cancel") {
            yield* declineIn(tx, r, "CANCELLED", MINIMUM_RAISE_NOT_MET, `${r.instrumentName} closed below its minimum raise; the issuer cancelled it`)
            return
          }
          yield* allotIn(tx, r, outcome.allotted)
          return
        }
        yield* allotIn(tx, r, r.amount)
      })
    )

    return SubscriptionService.of({ subscribe, list, get, allot: allotNow, decline: declineNow })
  })

  static readonly layer = Layer.effect(SubscriptionService, SubscriptionService.make)
}
