/**
 * The payload of each kind of due job, as a Schema: the scheduler checks a job's stored payload against its kind's
 * before the handler runs (issue 22 item 4: job payloads came back `unknown` and were cast), so a payload that is not
 * what the handler takes fails as a StoreError naming the job, and the job goes to deadJobs instead of running on a
 * guess. Owns the payload shapes; each service registers its own handler with its kind's shape.
 *
 * A check, not a transformation (store/shape-check.ts): the handler gets the payload as stored. Where a payload has a
 * type of its own (the order and desk jobs), its shape is typed against it (`Schema.Codec<T>`), so the two cannot
 * drift; the others' types are their shapes'.
 */
import { Schema } from "effect"
import type { ExpireJob, TriggerJob } from "../domain/trading/plan.ts"
import type { DeskFillJob, DeskStepJob, PlannedStep } from "../sim/desk.ts"
import type { SubscriptionAllotJob } from "./subscriptions/decisions.ts"

const OrderId = Schema.String

/** `order.trigger`: a WORKING order's look at the delayed price. */
export const TriggerPayload: Schema.Codec<TriggerJob> = Schema.Struct({ orderId: OrderId })

/** `order.expire`: a DAY or GTD order's deadline. */
export const ExpirePayload: Schema.Codec<ExpireJob> = Schema.Struct({ orderId: OrderId, deadline: Schema.Number })

/** `desk.fill`: the desk before policies (a full fill at the quote price). */
export const DeskFillPayload: Schema.Codec<DeskFillJob> = Schema.Struct({ orderId: OrderId })

const PlannedStepShape: Schema.Codec<PlannedStep> = Schema.Union([
  Schema.Struct({ action: Schema.Literal("fill"), quantity: Schema.NullOr(Schema.Number), price: Schema.Literals(["quote", "market"]) }),
  Schema.Struct({ action: Schema.Literal("reject"), rejectionCode: Schema.String, rejectionReason: Schema.String }),
  Schema.Struct({ action: Schema.Literal("failSettlement"), reason: Schema.String })
])

/** `desk.step`: one planned step of the desk's policy for one order. */
export const DeskStepPayload: Schema.Codec<DeskStepJob> = Schema.Struct({ orderId: OrderId, step: PlannedStepShape })

/** `quote.expire`: a quote reaching its TTL. */
export const QuoteExpiryPayload = Schema.Struct({ quoteId: Schema.String })

/** `price-alert.evaluate`: an alert's look at the delayed price. */
export const AlertEvaluationPayload = Schema.Struct({ alertId: Schema.String })

/** `market.status.watch`: the boundary the watch was booked for. */
export const MarketWatchPayload = Schema.Struct({ dueAt: Schema.Number })

/** `corporateaction.symbol_change` and `rights.allot`: the corporate action whose date it is. */
export const ActionPayload = Schema.Struct({ actionId: Schema.String })

/** `report.generate`: the report and the step it moves to. */
export const ReportPayload = Schema.Struct({ reportId: Schema.String, step: Schema.Literals(["GENERATING", "DONE"]) })

/** `subscription.allot`: a subscription's scheduled decision. */
export const SubscriptionAllotPayload: Schema.Codec<SubscriptionAllotJob> = Schema.Struct({ subscriptionId: Schema.String })

/** `webhook.attempt`: one attempt of a delivery (`held`: a fault plan already delayed it once). */
export const DeliveryAttemptPayload = Schema.Struct({ deliveryId: Schema.String, attempt: Schema.Number, held: Schema.optionalKey(Schema.Boolean) })

/** `webhook.settle`: the check after a delivery's last attempt. */
export const DeliverySettlePayload = Schema.Struct({ deliveryId: Schema.String, attempt: Schema.Number })
