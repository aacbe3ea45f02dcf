/**
 * Asset subscriptions (D-040, D-270..D-276): subscribing the master account or a sub-account to an open offer,
 * reading subscriptions, and deciding them: the scheduled allotment when the offer closes (bonds, bills and
 * private-market raises) or at the fund's next dealing day, and the control API's allot, reject and cancel.
 * This module is wiring and the reads: the rules are pure in domain/subscriptions/ (decide-subscription.ts, offer.ts),
 * their dispatchers in decisions.ts (escrow of amount + fee at acceptance and the money of every decision, each in
 * one transaction with the record, and the `subscription.allot` job). Does not own the offers (reference book,
 * app/offers.ts for a fund's NAV), the arithmetic and state machine (domain/subscription.ts), nor events: the
 * catalogue has none for subscriptions, so partners poll (D-040).
 */
import { Context, Effect, Layer } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../../domain/errors.ts"
import { type AssetClass, type SubscriptionStatus, subscriptionToWire } from "../../domain/subscription.ts"
import type { SubscribeInput } from "../../domain/subscriptions/decide-subscription.ts"
import type { Offer } from "../../domain/subscriptions/offer.ts"
import { EngineClock } from "../../sim/clock.ts"
import { Entropy } from "../../sim/random.ts"
import { Scheduler } from "../../sim/scheduler.ts"
import { Store, type StoreError } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { checkLimit, decodeCursor, encodeCursor, scanPage } from "../cursor.ts"
import { OfferService } from "../offers.ts"
import type { Principal } from "../principal.ts"
import { ReferenceData } from "../reference-data.ts"
import { Subscriptions, subscriptionPartition } from "../subscription-docs.ts"
import { findSubscription, subscriptionDecisions } from "./decisions.ts"

export interface SubscriptionListQuery {
  readonly status?: SubscriptionStatus | undefined
  readonly assetClass?: AssetClass | undefined
  readonly limit?: number | undefined
  readonly cursor?: string | undefined
}

/** Subscription lists examine at most this many records per request (spec Limits, as for orders). */
const SCAN_LIMIT = 1000
const MASTER = "master"

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
    const { book } = yield* ReferenceData

    const byId = new Map<string, Offer>()
    for (const record of book.bonds()) byId.set(record.bondId, { family: "bond", record })
    for (const record of book.funds()) byId.set(record.fundId, { family: "fund", record })
    for (const record of book.opportunities()) byId.set(record.opportunityId, { family: "opportunity", record })

    const deps = { store, clock: yield* EngineClock, entropy: yield* Entropy, scheduler: yield* Scheduler, offers: yield* OfferService, byId }
    const { subscribe, allotNow, declineNow, registerAllotJob } = subscriptionDecisions(deps)
    yield* registerAllotJob

    const list = Effect.fn("SubscriptionService.list")(function* (principal: Principal, account: string, query: SubscriptionListQuery) {
      const limit = yield* liftFailure(checkLimit(query.limit, 50, 200))
      const { status, assetClass } = query
      const scope = `subscriptions|${principal.partition}|${account}|${status ?? ""}|${assetClass ?? ""}`
      const after = query.cursor === undefined ? undefined : yield* liftFailure(decodeCursor(scope, query.cursor))
      return yield* store.read((tx) =>
        Effect.gen(function* () {
          // a sub-account's subscriptions stay readable whatever its status; an unknown or foreign id is 404
          if (account !== MASTER) yield* findSubAccount(tx, principal.partition, account)
          const scanned = yield* Subscriptions.listDocs(tx, {
            partition: subscriptionPartition(principal.partition, account),
            after,
            limit: SCAN_LIMIT + 1,
            order: "desc"
          })
          const page = scanPage(
            scanned,
            limit,
            SCAN_LIMIT,
            (r) => (status === undefined || r.status === status) && (assetClass === undefined || r.assetClass === assetClass)
          )
          const answer: Schemas["SubscriptionList"] = {
            subscriptions: page.items.map(subscriptionToWire),
            count: page.items.length,
            hasMore: page.hasMore,
            nextCursor: page.hasMore && page.lastKey !== undefined ? encodeCursor(scope, page.lastKey) : null
          }
          return answer
        })
      )
    })

    const get = Effect.fn("SubscriptionService.get")(function* (principal: Principal, subscriptionId: string) {
      const r = yield* store.read((tx) => findSubscription(tx, subscriptionId))
      // another partner's or the other environment's subscription is as unknown as one that never existed
      if (r.partition !== principal.partition) return yield* Effect.fail(fail("NOT_FOUND", `subscription ${subscriptionId} was not found`))
      return subscriptionToWire(r)
    })

    return SubscriptionService.of({ subscribe, list, get, allot: allotNow, decline: declineNow })
  })

  static readonly layer = Layer.effect(SubscriptionService, SubscriptionService.make)
}
