/**
 * Asset-subscription routes (contract tag "Asset subscriptions", D-040): subscribe the master account or a
 * sub-account, list, read one; and the control API's decisions on a PENDING subscription (spec/control.yaml,
 * tag "Subscriptions", D-276). The body schema mirrors the contract's SubscriptionRequest. Decoding only; the work
 * is SubscriptionService's.
 */
import { Schema } from "effect"
import { SubscriptionService } from "../../app/subscriptions/service.ts"
import { ASSET_CLASSES, SUBSCRIPTION_STATUSES } from "../../domain/subscription.ts"
import { integer, oneOf, optional, required, text } from "../query.ts"
import { controlRoute, partnerRoute } from "../route.ts"
import { PAGE } from "./market-data.ts"
import { maxCharacters, minCharacters } from "../body.ts"

/** The contract's SubscriptionRequest. */
export const SubscriptionBody = Schema.Struct({
  assetClass: Schema.Literals(ASSET_CLASSES),
  instrumentId: Schema.String.check(minCharacters(1)),
  amount: Schema.Number.check(Schema.isGreaterThan(0)),
  clientReference: Schema.optionalKey(Schema.String.check(maxCharacters(64)))
})

const listQuery = {
  status: optional(oneOf(SUBSCRIPTION_STATUSES)),
  assetClass: optional(oneOf(ASSET_CLASSES)),
  limit: optional(integer({ min: 1, max: 200 })),
  ...PAGE
}

const userParam = { userId: required(text) }
const subscriptionParam = { subscriptionId: required(text) }

export const subscriptionRoutes = [
  partnerRoute("subscribeMaster", 202, {
    body: SubscriptionBody,
    handle: ({ body, principal }) => SubscriptionService.use((s) => s.subscribe(principal, "master", body))
  }),
  partnerRoute("listMasterSubscriptions", 200, {
    query: listQuery,
    handle: ({ query, principal }) => SubscriptionService.use((s) => s.list(principal, "master", query))
  }),
  partnerRoute("getSubscription", 200, {
    params: subscriptionParam,
    handle: ({ params, principal }) => SubscriptionService.use((s) => s.get(principal, params.subscriptionId))
  }),
  partnerRoute("subscribeSubAccount", 202, {
    params: userParam,
    body: SubscriptionBody,
    handle: ({ params, body, principal }) => SubscriptionService.use((s) => s.subscribe(principal, params.userId, body))
  }),
  partnerRoute("listSubAccountSubscriptions", 200, {
    params: userParam,
    query: listQuery,
    handle: ({ params, query, principal }) => SubscriptionService.use((s) => s.list(principal, params.userId, query))
  })
]

const AllotBody = Schema.Struct({ amount: Schema.optionalKey(Schema.Number.check(Schema.isGreaterThan(0))) })
const RejectBody = Schema.Struct({
  rejectionCode: Schema.String.check(minCharacters(1)),
  rejectionReason: Schema.String.check(minCharacters(1))
})
const CancelBody = Schema.Struct({
  rejectionCode: Schema.optionalKey(Schema.String.check(minCharacters(1))),
  rejectionReason: Schema.optionalKey(Schema.String.check(minCharacters(1)))
})

/** Code and reason of an issuer's cancellation when the operator gives none (D-273). */
const OFFER_WITHDRAWN = "OFFER_WITHDRAWN"

export const subscriptionControlRoutes = [
  controlRoute("allotSimSubscription", 200, {
    params: subscriptionParam,
    body: AllotBody,
    handle: ({ params, body }) => SubscriptionService.use((s) => s.allot(params.subscriptionId, body.amount))
  }),
  controlRoute("rejectSimSubscription", 200, {
    params: subscriptionParam,
    body: RejectBody,
    handle: ({ params, body }) => SubscriptionService.use((s) => s.decline(params.subscriptionId, "REJECTED", body.rejectionCode, body.rejectionReason))
  }),
  controlRoute("cancelSimSubscription", 200, {
    params: subscriptionParam,
    body: CancelBody,
    handle: ({ params, body }) =>
      SubscriptionService.use((s) =>
        s.decline(params.subscriptionId, "CANCELLED", body.rejectionCode ?? OFFER_WITHDRAWN, body.rejectionReason ?? "The issuer withdrew the offer")
      )
  })
]
