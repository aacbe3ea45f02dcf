/**
 * The shapes of the documents docs.ts reads back, as Schemas: a read checks the stored body against its collection's
 * shape (issue 22 item 4: "other documents are decoded with Schema on read"), so a body that is not what the code
 * takes it for fails as a StoreError naming the document, instead of travelling on as a cast. Owns the shapes; docs.ts
 * owns the collections (`collection(name, shape)`, also used by the modules that name a collection of their own:
 * listings, audit records, usage, rights entitlements), store/shape-check.ts the check. Each shape is typed against its
 * interface (`Schema.Codec<Doc>`), so the two cannot drift without the compiler saying so.
 *
 * A check, not a transformation: the body the code gets is the stored one (fields a shape does not name pass through
 * untouched), so a field added by newer code is never dropped by an older shape. The version of the shape is the
 * row's `shape_version` on PostgreSQL (docs/storage.md); a new shape is a new version with a migration of the rows.
 */
import { Effect, Schema } from "effect"
import type { StoreError } from "../store/port.ts"
import { shapeCheck } from "../store/shape-check.ts"
import type {
  AccessTokenDoc,
  ApiKeyDoc,
  ApplicationDoc,
  DeliveryDoc,
  DeviceDoc,
  HoldingDoc,
  IncidentDoc,
  KeyPointerDoc,
  MarketWatchDoc,
  OAuthClientDoc,
  PartnerDoc,
  PartnerSettingsDoc,
  PortalPrefsDoc,
  PriceAlertDoc,
  QuoteDoc,
  SubAccountKeyDoc,
  UpgradeRequestDoc,
  WebhookDoc
} from "./docs.ts"
import type { ActionRecord } from "../domain/reference/corporate-actions.ts"
import type { ReportRecord } from "../domain/reports/report.ts"
import type { DividendRecord } from "../domain/reference/dividends.ts"
import type { SubAccountRecord } from "../domain/subaccount.ts"
import type { SubscriptionRecord } from "../domain/subscription.ts"
import type { AuditDoc } from "./audit.ts"
import type { ListingDoc } from "./listings.ts"
import type { EntitlementDoc } from "./corporate-actions/rights.ts"
import type { SlotBody } from "./stream.ts"
import type { SymbolDoc } from "./symbols.ts"
import type { UsageDoc } from "./billing/usage-meter.ts"

/** The version every shape below describes (the rows' `shape_version`). */
export const SHAPE_VERSION = 1

const ENVIRONMENT = Schema.Literals(["sandbox", "production"])
const NullableNumber = Schema.NullOr(Schema.Number)
const NullableString = Schema.NullOr(Schema.String)
const TIER = Schema.Literals(["starter", "growth", "enterprise"])

export const PartnerShape: Schema.Codec<PartnerDoc> = Schema.Struct({
  partnerId: Schema.String,
  businessName: Schema.String,
  email: Schema.String,
  tier: TIER,
  markupBps: Schema.Number,
  createdAt: Schema.Number,
  status: Schema.optionalKey(Schema.Literals(["active", "suspended"]))
})

export const ApiKeyShape: Schema.Codec<ApiKeyDoc> = Schema.Struct({
  keyHash: Schema.String,
  partnerId: Schema.String,
  environment: ENVIRONMENT,
  kind: Schema.Literals(["full", "data"]),
  status: Schema.Literals(["active", "revoked", "rotated"]),
  last4: Schema.String,
  createdAt: Schema.Number
})

export const HoldingShape: Schema.Codec<HoldingDoc> = Schema.Struct({ symbol: Schema.String, quantity: Schema.Number, reserved: Schema.Number })

export const QuoteShape: Schema.Codec<QuoteDoc> = Schema.Struct({
  quoteId: Schema.String,
  partition: Schema.String,
  account: Schema.String,
  symbol: Schema.String,
  side: Schema.NullOr(Schema.Literals(["BUY", "SELL"])),
  quantity: NullableNumber,
  cashValue: NullableNumber,
  derivedQuantity: NullableNumber,
  price: Schema.Number,
  rate: Schema.Number,
  issuedAt: Schema.Number,
  expiresAt: Schema.Number,
  status: Schema.Literals(["OPEN", "USED", "EXPIRED"]),
  expiryJob: Schema.optional(Schema.Number)
})

export const KeyPointerShape: Schema.Codec<KeyPointerDoc> = Schema.Struct({ keyHash: Schema.String })

export const SubAccountKeyShape: Schema.Codec<SubAccountKeyDoc> = Schema.Struct({ subAccountId: Schema.String })

export const WebhookShape: Schema.Codec<WebhookDoc> = Schema.Struct({
  id: Schema.String,
  partition: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  secret: Schema.String,
  status: Schema.Literals(["active", "disabled"]),
  deleted: Schema.Boolean,
  createdAt: Schema.Number,
  consecutiveFailures: Schema.Number
})

export const DeliveryShape: Schema.Codec<DeliveryDoc> = Schema.Struct({
  deliveryId: Schema.String,
  webhookId: Schema.String,
  partition: Schema.String,
  eventId: Schema.String,
  event: Schema.String,
  position: NullableNumber,
  createdAt: Schema.Number,
  attempts: Schema.Number,
  state: Schema.Literals(["pending", "sending", "retrying", "delivered", "failed"]),
  statusCode: NullableNumber,
  latencyMs: NullableNumber,
  success: Schema.Boolean,
  lastAttemptAt: NullableNumber,
  nextAttemptAt: NullableNumber,
  nextJobSeq: NullableNumber,
  history: Schema.optionalKey(
    Schema.Array(
      Schema.Struct({
        attempt: Schema.Number,
        at: Schema.Number,
        outcome: Schema.Literals(["answered", "timeout", "unreachable", "dropped", "lost"]),
        status: NullableNumber,
        latencyMs: NullableNumber,
        bytes: NullableNumber
      })
    )
  )
})

export const PartnerSettingsShape: Schema.Codec<PartnerSettingsDoc> = Schema.Struct({
  markupBps: Schema.Number,
  notificationEmail: Schema.NullOr(Schema.String),
  ipAllowlist: Schema.Array(Schema.String),
  updatedAt: Schema.Number
})

export const OAuthClientShape: Schema.Codec<OAuthClientDoc> = Schema.Struct({ partnerId: Schema.String, enabled: Schema.Boolean, updatedAt: Schema.Number })

export const DeviceShape: Schema.Codec<DeviceDoc> = Schema.Struct({
  deviceId: Schema.String,
  subAccountId: Schema.String,
  platform: Schema.Literals(["ios", "android", "web"]),
  name: NullableString,
  pushToken: Schema.String,
  appVersion: NullableString,
  createdAt: Schema.Number,
  lastSeenAt: NullableNumber
})

export const ApplicationShape: Schema.Codec<ApplicationDoc> = Schema.Struct({
  applicationId: Schema.String,
  uid: Schema.String,
  businessName: Schema.String,
  email: Schema.String,
  country: Schema.String,
  status: Schema.Literals(["pending", "approved", "rejected"]),
  rejectionReason: NullableString,
  submittedAt: Schema.Number,
  partnerId: NullableString
})

export const ApplicationByUidShape: Schema.Codec<{ readonly applicationId: string }> = Schema.Struct({ applicationId: Schema.String })

export const AccessTokenShape: Schema.Codec<AccessTokenDoc> = Schema.Struct({
  tokenHash: Schema.String,
  partnerId: Schema.String,
  environment: ENVIRONMENT,
  parentKeyHash: Schema.String,
  kind: Schema.Literals(["full", "data"]),
  scopes: Schema.Array(Schema.String),
  expiresAt: Schema.Number
})

export const PortalPrefsShape: Schema.Codec<PortalPrefsDoc> = Schema.Struct({ deploymentPreference: Schema.Literals(["hosted", "onprem", "both"]) })

export const UpgradeRequestShape: Schema.Codec<UpgradeRequestDoc> = Schema.Struct({
  requestId: Schema.String,
  partnerId: Schema.String,
  uid: Schema.String,
  targetTier: Schema.NullOr(TIER),
  message: NullableString,
  createdAt: Schema.Number
})

export const IncidentShape: Schema.Codec<IncidentDoc> = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  severity: Schema.Literals(["P0", "P1", "P2", "P3"]),
  affectedServices: Schema.Array(Schema.String),
  status: Schema.Literals(["investigating", "resolved"]),
  startedAt: Schema.Number,
  resolvedAt: NullableNumber
})

export const PriceAlertShape: Schema.Codec<PriceAlertDoc> = Schema.Struct({
  alertId: Schema.String,
  partition: Schema.String,
  clientAlertId: NullableString,
  symbol: Schema.String,
  exchange: Schema.String,
  condition: Schema.Literals(["above", "below"]),
  threshold: Schema.Number,
  currency: Schema.String,
  repeat: Schema.Boolean,
  state: Schema.Literals(["ARMED", "TRIGGERED", "DISARMED"]),
  lastPrice: Schema.Number,
  triggerCount: Schema.Number,
  createdAt: Schema.Number,
  lastTriggeredAt: NullableNumber,
  deleted: Schema.Boolean
})

export const MarketWatchShape: Schema.Codec<MarketWatchDoc> = Schema.Struct({
  running: Schema.Boolean,
  phases: Schema.Record(Schema.String, Schema.Literals(["OPEN", "CLOSED", "HOLIDAY"])),
  dueAt: Schema.Number
})

export const SubAccountShape: Schema.Codec<SubAccountRecord> = Schema.Struct({
  subAccountId: Schema.String,
  partition: Schema.String,
  externalId: Schema.String,
  uid: NullableString,
  displayName: NullableString,
  email: NullableString,
  phone: NullableString,
  country: NullableString,
  kycStatus: Schema.Literals(["NONE", "PENDING", "VERIFIED", "REJECTED"]),
  kycLevel: Schema.Literals(["NONE", "BASIC", "FULL"]),
  kycRejectionCode: NullableString,
  kycRejectionReason: NullableString,
  kycReviewedAt: NullableNumber,
  kycReference: NullableString,
  status: Schema.Literals(["active", "frozen", "closed"]),
  frozenBy: Schema.NullOr(Schema.Literals(["partner", "compliance"])),
  statusReason: NullableString,
  createdAt: Schema.Number,
  closedAt: NullableNumber
})

export const ActionShape: Schema.Codec<ActionRecord> = Schema.Struct({
  actionId: Schema.String,
  actionType: Schema.Literals(["GENERIC", "SPLIT", "REVERSE_SPLIT", "BONUS", "SUSPENSION", "HALT", "DELISTING", "RIGHTS_ISSUE", "SYMBOL_CHANGE"]),
  symbol: Schema.String,
  exchange: Schema.String,
  name: Schema.String,
  announcedAt: Schema.Number,
  effectiveAt: Schema.Number,
  description: Schema.String,
  details: Schema.Record(Schema.String, Schema.NullOr(Schema.Union([Schema.String, Schema.Number]))),
  completedAt: NullableNumber,
  seq: Schema.optionalKey(Schema.Number)
})

export const DividendShape: Schema.Codec<DividendRecord> = Schema.Struct({
  dividendId: Schema.String,
  symbol: Schema.String,
  exchange: Schema.String,
  name: Schema.String,
  perShare: Schema.Number,
  currency: Schema.String,
  type: Schema.Literals(["CASH", "STOCK"]),
  announcedAt: Schema.Number,
  exDate: Schema.String,
  recordDate: Schema.String,
  paymentDate: Schema.String,
  cancelledOn: NullableString
})

export const SubscriptionShape: Schema.Codec<SubscriptionRecord> = Schema.Struct({
  subscriptionId: Schema.String,
  partition: Schema.String,
  account: Schema.String,
  externalId: NullableString,
  assetClass: Schema.Literals(["TREASURY_BILL", "BOND", "FUND", "PRIVATE_CREDIT", "PRE_IPO"]),
  instrumentId: Schema.String,
  instrumentName: Schema.String,
  offerCurrency: Schema.String,
  amount: Schema.Number,
  markupBps: Schema.Number,
  fee: Schema.Number,
  totalAmount: Schema.Number,
  escrow: Schema.Number,
  status: Schema.Literals(["PENDING", "ALLOTTED", "PARTIALLY_ALLOTTED", "REJECTED", "CANCELLED"]),
  allottedAmount: NullableNumber,
  allottedFee: NullableNumber,
  units4: NullableNumber,
  rejectionCode: NullableString,
  rejectionReason: NullableString,
  clientReference: NullableString,
  createdAt: Schema.Number,
  allottedAt: NullableNumber,
  decidedAt: NullableNumber,
  allotAt: Schema.Number
})

export const SymbolShape: Schema.Codec<SymbolDoc> = Schema.Struct({
  listingId: Schema.String,
  symbol: Schema.String,
  formerSymbols: Schema.Array(Schema.String),
  actionId: Schema.String,
  effectiveAt: Schema.Number
})

export const StreamSlotShape: Schema.Codec<SlotBody> = Schema.Struct({ holder: NullableString, expiresAt: Schema.Number })

export const ReportShape: Schema.Codec<ReportRecord> = Schema.Struct({
  reportId: Schema.String,
  partition: Schema.String,
  type: Schema.Literals(["TRADES", "TRANSACTIONS", "STATEMENT", "FEES", "SUB_ACCOUNTS"]),
  format: Schema.Literals(["CSV", "JSON", "PDF"]),
  from: Schema.String,
  to: Schema.String,
  subAccountId: NullableString,
  status: Schema.Literals(["QUEUED", "GENERATING", "READY", "FAILED"]),
  createdAt: Schema.Number,
  completedAt: NullableNumber,
  content: NullableString,
  rowCount: NullableNumber,
  failureReason: NullableString
})

export const ListingShape: Schema.Codec<ListingDoc> = Schema.Struct({
  symbol: Schema.String,
  listingStatus: Schema.Literals(["ACTIVE", "SUSPENDED", "DELISTED"]),
  actionId: Schema.String,
  updatedAt: Schema.Number
})

export const AuditShape: Schema.Codec<AuditDoc> = Schema.Struct({
  auditId: Schema.String,
  partition: Schema.String,
  action: Schema.String,
  actorType: Schema.Literals(["api_key", "data_key", "oauth_token", "portal_member", "service_compliance", "system"]),
  actorId: Schema.String,
  resourceType: Schema.String,
  resourceId: NullableString,
  method: NullableString,
  path: NullableString,
  statusCode: NullableNumber,
  idempotencyKey: NullableString,
  requestId: NullableString,
  createdAt: Schema.Number
})

export const EntitlementShape: Schema.Codec<EntitlementDoc> = Schema.Struct({
  actionId: Schema.String,
  partition: Schema.String,
  account: Schema.String,
  symbol: Schema.String,
  entitled: Schema.Number,
  takenUp: Schema.Number,
  paidCents: Schema.Number,
  status: Schema.Literals(["OPEN", "ALLOTTED", "LAPSED"]),
  allottedAt: Schema.optionalKey(Schema.Number)
})

export const UsageShape: Schema.Codec<UsageDoc> = Schema.Struct({
  partition: Schema.String,
  hourStart: Schema.Number,
  requests: Schema.Number,
  errors: Schema.Number,
  rateLimited: Schema.Number
})

/** The body of `collection/id` if it has `shape`; a StoreError naming the document and what is wrong with it if not. */
export const checkShape = <A>(collection: string, shape: Schema.Codec<A> | undefined): ((id: string, body: unknown) => Effect.Effect<A, StoreError>) =>
  shape === undefined
    ? (_id, body) => Effect.succeed(body as A)
    : shapeCheck(shape, (id) => `stored ${collection}/${id} does not have the shape of version ${SHAPE_VERSION}`)
