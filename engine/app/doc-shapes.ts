/**
 * The shapes of the documents docs.ts reads back, as Schemas: a read checks the stored body against its collection's
 * shape (issue 22 item 4: "other documents are decoded with Schema on read"), so a body that is not what the code
 * takes it for fails as a StoreError naming the document, instead of travelling on as a cast. Owns the shapes and the
 * check; docs.ts owns the collections. Each shape is typed against its interface (`Schema.Codec<Doc>`), so the two
 * cannot drift without the compiler saying so.
 *
 * A check, not a transformation: the body the code gets is the stored one (fields a shape does not name pass through
 * untouched), so a field added by newer code is never dropped by an older shape. The version of the shape is the
 * row's `shape_version` on PostgreSQL (docs/storage.md); a new shape is a new version with a migration of the rows.
 */
import { Cause, Effect, Exit, Schema } from "effect"
import { StoreError } from "../store/port.ts"
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
  nextJobSeq: NullableNumber
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

/** The body of `collection/id` if it has `shape`; a StoreError naming the document and what is wrong with it if not. */
export const checkShape =
  <A>(collection: string, shape: Schema.Codec<A> | undefined) =>
  (id: string, body: unknown): Effect.Effect<A, StoreError> => {
    if (shape === undefined || Schema.is(shape)(body)) return Effect.succeed(body as A)
    const exit = Schema.decodeUnknownExit(shape)(body)
    const issue = Exit.isFailure(exit) ? `: ${Cause.pretty(exit.cause)}` : ""
    return Effect.fail(new StoreError({ message: `stored ${collection}/${id} does not have the shape of version ${SHAPE_VERSION}${issue}` }))
  }
