/**
 * Asset subscriptions' commands and job: subscribe, the control API's allot and decline, and `subscription.allot` at
 * the offer's close or the fund's dealing day. Dispatchers around domain/subscriptions/decide-subscription.ts: each
 * loads the account, the subscription and the unit price, asks the rules and writes the plan (the ledger entry, the
 * record, the job) in one transaction. Owns: what is loaded and written, and how an entry reads. Does not own the rules.
 */
import { Effect, Option } from "effect"
import { fail, liftFailure } from "../../domain/errors.ts"
import { rateFor } from "../../domain/fx.ts"
import { parseScaled, type Price4 } from "../../domain/money.ts"
import { bondPrice4, OPPORTUNITY_UNIT_PRICE4, type SubscriptionRecord, subscriptionPostings, unitsFor } from "../../domain/subscription.ts"
import {
  acceptSubscription,
  decideAllot,
  decideDecline,
  decideSubscribe,
  type SubscribeInput,
  type SubscriptionEntryKind,
  type SubscriptionPlan,
  scheduledAllotment,
  subscriptionTerms
} from "../../domain/subscriptions/decide-subscription.ts"
import type { Offer } from "../../domain/subscriptions/offer.ts"
import type { EngineClock } from "../../sim/clock.ts"
import type { Entropy } from "../../sim/random.ts"
import type { Scheduler } from "../../sim/scheduler.ts"
import type { ReadTx, Store, Tx } from "../../store/port.ts"
import { findSubAccount } from "../accounts.ts"
import { SubscriptionAllotPayload } from "../job-payloads.ts"
import { LedgerInvariantError, postEntry, walletBalance } from "../ledger.ts"
import type { OfferService } from "../offers.ts"
import type { Principal } from "../principal.ts"
import { Subscriptions, saveSubscription } from "../subscription-docs.ts"

export const SUBSCRIPTION_ALLOT_JOB = "subscription.allot"
export interface SubscriptionAllotJob {
  readonly subscriptionId: string
}

const MASTER = "master"

/** How an entry reads in the journal and the sub-account's history. */
const describe = (kind: SubscriptionEntryKind, r: SubscriptionRecord) => {
  const what = `subscription ${r.subscriptionId} (${r.instrumentName})`
  if (kind === "SUBSCRIPTION_PLACED") return `Escrow for ${what}`
  if (kind === "SUBSCRIPTION_REJECTED") return `Escrow returned: rejected ${what}`
  if (kind === "SUBSCRIPTION_CANCELLED") return `Escrow returned: cancelled ${what}`
  return r.status === "PARTIALLY_ALLOTTED" ? `Surplus returned: partially allotted ${what}` : `Allotted ${what}`
}

export const findSubscription = (tx: ReadTx, subscriptionId: string) =>
  Effect.flatMap(Subscriptions.get(tx, subscriptionId), (doc) =>
    Option.isSome(doc) ? Effect.succeed(doc.value) : Effect.fail(fail("NOT_FOUND", `subscription ${subscriptionId} was not found`))
  )

export interface SubscriptionDeps {
  readonly store: Store["Service"]
  readonly clock: EngineClock["Service"]
  readonly entropy: Entropy["Service"]
  readonly scheduler: Scheduler["Service"]
  readonly offers: OfferService["Service"]
  readonly byId: ReadonlyMap<string, Offer>
}

export const subscriptionDecisions = (d: SubscriptionDeps) => {
  /** Writes a plan in `tx`: the entry for its money (if any moved), the record, then the allotment job. */
  const writePlan = (tx: Tx, plan: SubscriptionPlan, at: number) =>
    Effect.gen(function* () {
      const r = plan.record
      const postings = subscriptionPostings(r.account, plan.movements)
      if (postings === undefined) {
        return yield* Effect.die(new LedgerInvariantError({ message: `subscription ${r.subscriptionId}: ${plan.kind} movements do not balance` }))
      }
      if (postings.length > 0) {
        const entry = { kind: plan.kind, postings, at, description: describe(plan.kind, r), subscriptionId: r.subscriptionId, reference: r.clientReference }
        yield* postEntry(tx, r.partition, entry)
      }
      yield* saveSubscription(tx, r)
      if (plan.allotJob !== undefined) {
        yield* d.scheduler.scheduleHere(tx, SUBSCRIPTION_ALLOT_JOB, plan.allotJob.dueAt, {
          subscriptionId: plan.allotJob.subscriptionId
        } satisfies SubscriptionAllotJob)
      }
      return plan.answer
    })

  /** The price of one unit at `now`, in the offer's currency (a fund's NAV follows its market; D-274). */
  const unitPrice = (o: Offer) => {
    if (o.family === "bond") {
      const b = o.record
      return Effect.succeed<Price4 | undefined>(bondPrice4(b.faceValue, b.instrumentType, b.yieldBps, b.tenorDays))
    }
    if (o.family === "opportunity") return Effect.succeed<Price4 | undefined>(OPPORTUNITY_UNIT_PRICE4)
    return Effect.map(d.offers.getFund(o.record.fundId), (f) => (f.nav === null ? undefined : parseScaled(f.nav, 4)))
  }

  /** The units `allotted` cents buy, or null without a usable price or rate. */
  const unitsOf = (r: SubscriptionRecord, allotted: number) =>
    Effect.gen(function* () {
      const o = d.byId.get(r.instrumentId)
      const rate = rateFor(r.offerCurrency)
      const price = o === undefined ? undefined : yield* unitPrice(o)
      return price === undefined || price <= 0 || rate === undefined ? null : unitsFor(allotted, rate, price)
    })

  const subscribe = Effect.fn("SubscriptionService.subscribe")(function* (principal: Principal, account: string, input: SubscribeInput) {
    const terms = yield* liftFailure(subscriptionTerms(input, d.byId.get(input.instrumentId)))
    const command = { partition: principal.partition, account, markupBps: principal.markupBps, input, terms }
    return yield* d.store.transact((tx) =>
      Effect.gen(function* () {
        const now = yield* d.clock.nowHere()
        const subAccount = account === MASTER ? null : yield* findSubAccount(tx, principal.partition, account)
        const externalId = yield* liftFailure(acceptSubscription(subAccount, terms, now))
        const subscriptionId = yield* d.entropy.idHere("sub")
        const available = yield* walletBalance(tx, principal.partition, account)
        const plan = yield* liftFailure(decideSubscribe(command, externalId, available, now, { subscriptionId }))
        return yield* writePlan(tx, plan, now)
      })
    )
  })

  /** Allots `allotted` cents (all by default) in `tx`. */
  const allotIn = (tx: Tx, r: SubscriptionRecord, allotted: number) =>
    Effect.gen(function* () {
      const now = yield* d.clock.nowHere()
      const plan = yield* liftFailure(decideAllot(r, allotted, yield* unitsOf(r, allotted), now))
      return yield* writePlan(tx, plan, now)
    })

  const declineIn = (tx: Tx, r: SubscriptionRecord, status: "REJECTED" | "CANCELLED", code: string, reason: string) =>
    Effect.gen(function* () {
      const now = yield* d.clock.nowHere()
      return yield* writePlan(tx, yield* liftFailure(decideDecline(r, status, code, reason, now)), now)
    })

  /** Control API: allot now, all of the amount or `amount` USD of it. */
  const allotNow = Effect.fn("SubscriptionService.allot")(function* (subscriptionId: string, amount: number | undefined) {
    const cents = amount === undefined ? undefined : parseScaled(amount, 2)
    if (amount !== undefined && cents === undefined) {
      return yield* Effect.fail(fail("VALIDATION_ERROR", "amount must be a USD amount with at most 2 decimals", { param: "amount" }))
    }
    return yield* d.store.transact((tx) => Effect.flatMap(findSubscription(tx, subscriptionId), (r) => allotIn(tx, r, cents ?? r.amount)))
  })

  /** Control API: the service rejects (REJECTED) or the issuer cancels (CANCELLED); the escrow returns whole. */
  const declineNow = Effect.fn("SubscriptionService.decline")(function* (
    subscriptionId: string,
    status: "REJECTED" | "CANCELLED",
    code: string,
    reason: string
  ) {
    return yield* d.store.transact((tx) => Effect.flatMap(findSubscription(tx, subscriptionId), (r) => declineIn(tx, r, status, code, reason)))
  })

  // The scheduled decision: wiped (sandbox reset) or decided meanwhile (control API) finds nothing to do.
  const registerAllotJob = d.scheduler.register(SUBSCRIPTION_ALLOT_JOB, SubscriptionAllotPayload, (tx, { subscriptionId }) =>
    Effect.gen(function* () {
      const doc = yield* Subscriptions.get(tx, subscriptionId)
      if (Option.isNone(doc)) return
      const r = doc.value
      if (r.status !== "PENDING") return
      const outcome = scheduledAllotment(r, d.byId.get(r.instrumentId))
      if (outcome._tag === "Cancel") yield* declineIn(tx, r, "CANCELLED", outcome.code, outcome.reason)
      else yield* allotIn(tx, r, outcome.allotted)
    })
  )

  return { subscribe, allotNow, declineNow, registerAllotJob }
}
