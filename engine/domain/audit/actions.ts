/**
 * How the audit log names what happened (D-060, D-260): the action and resource type of each audited operation of the
 * partner API, the control API (with who acts: the operator or its compliance desk, and which partitions it touched)
 * and the portal (the member behind an ID token), the desk's decisions recorded from their events, and how a
 * resource is named (a key only by its mask). Pure: tables and functions over what the gateway observed.
 * Owns: those names. Does not own writing records or usage (app/audit.ts) nor redacting client text (http/redact.ts).
 */

/** How a mutation is named in the log: action, resource type, and where its resource id is found. */
export interface ActionRule {
  readonly action: string | ((request: unknown) => string)
  readonly resourceType: string
  /** A path parameter holding the resource id, or a field of the answer's body. */
  readonly param?: string
  readonly field?: string
}

const frozenFlag = (body: unknown) => typeof body === "object" && body !== null && (body as { frozen?: unknown }).frozen === false

/** Partner-API mutations (authenticated by an API key or token). */
export const PARTNER_ACTIONS: Readonly<Record<string, ActionRule>> = {
  createSubAccount: { action: "subaccount.create", resourceType: "sub_account", field: "subAccountId" },
  autoRegisterSubAccount: { action: "subaccount.auto_register", resourceType: "sub_account", field: "subAccountId" },
  assertSubAccountKyc: { action: "subaccount.kyc", resourceType: "sub_account", param: "userId" },
  freezeSubAccount: { action: "subaccount.freeze", resourceType: "sub_account", param: "userId" },
  unfreezeSubAccount: { action: "subaccount.unfreeze", resourceType: "sub_account", param: "userId" },
  closeSubAccount: { action: "subaccount.close", resourceType: "sub_account", param: "userId" },
  depositToSubAccount: { action: "wallet.deposit", resourceType: "sub_account", param: "userId" },
  withdrawFromSubAccount: { action: "wallet.withdraw", resourceType: "sub_account", param: "userId" },
  registerSubAccountDevice: { action: "device.register", resourceType: "device", field: "deviceId" },
  removeSubAccountDevice: { action: "device.remove", resourceType: "device", param: "deviceId" },
  placeTrade: { action: "order.create", resourceType: "order", field: "orderId" },
  placeSubAccountTrade: { action: "order.create", resourceType: "order", field: "orderId" },
  replaceSubAccountOrder: { action: "order.replace", resourceType: "order", param: "orderId" },
  cancelOrder: { action: "order.cancel", resourceType: "order", param: "orderId" },
  subscribeMaster: { action: "subscription.create", resourceType: "subscription", field: "subscriptionId" },
  subscribeSubAccount: { action: "subscription.create", resourceType: "subscription", field: "subscriptionId" },
  createWebhook: { action: "webhook.create", resourceType: "webhook", field: "id" },
  updateWebhook: { action: "webhook.update", resourceType: "webhook", param: "id" },
  deleteWebhook: { action: "webhook.delete", resourceType: "webhook", param: "id" },
  testWebhook: { action: "webhook.test", resourceType: "webhook", param: "id" },
  createPriceAlert: { action: "price_alert.create", resourceType: "price_alert", field: "alertId" },
  deletePriceAlert: { action: "price_alert.delete", resourceType: "price_alert", param: "alertId" },
  updatePartnerSettings: { action: "settings.update", resourceType: "settings", field: "partnerId" },
  requestReport: { action: "report.request", resourceType: "report", field: "reportId" },
  rotateDataKey: { action: "key.rotate", resourceType: "key", field: "dataKey" },
  resetSandbox: { action: "sandbox.reset", resourceType: "sandbox", field: "" }
}

/** Control-API actions on a partner's state: the service operator (system) or its compliance desk acting. */
export interface ControlRule extends ActionRule {
  readonly actorType: "system" | "service_compliance"
  /** Where the touched partitions come from. */
  readonly scope: "partner-both" | "partner-production" | "partner-body-environment" | "subAccount" | "answer-partner-production"
}

export const CONTROL_ACTIONS: Readonly<Record<string, ControlRule>> = {
  creditSimMasterWallet: { action: "wallet.credit", resourceType: "wallet", param: "partnerId", actorType: "system", scope: "partner-body-environment" },
  setSimPartnerStatus: { action: "partner.status", resourceType: "partner", param: "partnerId", actorType: "system", scope: "partner-both" },
  setSimPartnerOAuth: { action: "partner.oauth", resourceType: "partner", param: "partnerId", actorType: "system", scope: "partner-production" },
  issueSimLiveKey: { action: "key.issue", resourceType: "key", field: "liveKey", actorType: "system", scope: "partner-production" },
  // Approval issues the partner's production key (D-121): a key event of that partner.
  approveSimApplication: { action: "key.issue", resourceType: "key", field: "liveKey", actorType: "system", scope: "answer-partner-production" },
  freezeSimSubAccount: {
    action: (body) => (frozenFlag(body) ? "subaccount.unfreeze" : "subaccount.freeze"),
    resourceType: "sub_account",
    param: "userId",
    actorType: "service_compliance",
    scope: "subAccount"
  },
  overrideSimSubAccountKyc: {
    action: "subaccount.kyc_override",
    resourceType: "sub_account",
    param: "userId",
    actorType: "service_compliance",
    scope: "subAccount"
  }
}

/**
 * What the execution desk decides (manual through the control API, or automatic on a job) is the service acting, not
 * an API call: it is recorded from the event it appends, in that event's transaction, with no method or path.
 */
export const SYSTEM_EVENTS: Readonly<Record<string, { readonly action: string; readonly when?: (payload: Record<string, unknown>) => boolean }>> = {
  "order.filled": { action: "order.fill" },
  "order.rejected": { action: "order.reject" },
  "order.cancelled": { action: "order.expire", when: (payload) => payload.orderLifecycle === "EXPIRED" }
}

/**
 * Portal operations, authenticated by an identity-provider ID token the handler verified: the member (token `sub`)
 * acts, in the partner its application belongs to. `requestField`: the resource is named in the request body.
 */
export interface PortalRule extends ActionRule {
  readonly environment: "sandbox" | "production"
  readonly requestField?: string
}

export const PORTAL_ACTIONS: Readonly<Record<string, PortalRule>> = {
  revokeApiKey: { action: "key.revoke", resourceType: "key", requestField: "apiKey", environment: "production" },
  registerSandbox: { action: "key.rotate", resourceType: "key", field: "apiKey", environment: "sandbox" },
  createPortalSession: { action: "session.create", resourceType: "session", field: "", environment: "production" },
  requestUpgrade: { action: "partner.upgrade_request", resourceType: "partner", field: "", environment: "production" },
  performMeAction: { action: "portal.me", resourceType: "partner", field: "", environment: "production" }
}

/** The `sub` of a JWS bearer token, read without verifying (only after the operation verified it and succeeded). */
export const tokenSubject = (authorization: string | undefined): string | undefined => {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1]
  const payload = token?.split(".")[1]
  if (payload === undefined) return undefined
  try {
    const claims: unknown = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"))
    const sub = typeof claims === "object" && claims !== null ? (claims as { sub?: unknown }).sub : undefined
    return typeof sub === "string" && sub !== "" ? sub.slice(0, 128) : undefined
  } catch {
    return undefined
  }
}

/** A credential as the log shows it: never the key, only its last 4 (spec example `key_****3f9a`). */
export const maskedKey = (last4: string) => `key_****${last4}`

/** A key-shaped string as the log may name it: its mask; anything else unchanged. */
export const namedResource = (value: string) => (/^(pk_live_|sk_sandbox_|pk_data_|svc_oauth_)/.test(value) ? maskedKey(value.slice(-4)) : value)

export const resourceIdOf = (rule: ActionRule, params: Readonly<Record<string, string>>, answer: unknown): string | null => {
  if (rule.param !== undefined) return params[rule.param] ?? null
  if (rule.field === undefined || rule.field === "") return null
  const value = typeof answer === "object" && answer !== null ? (answer as Record<string, unknown>)[rule.field] : undefined
  // A key is named by its mask, never by itself.
  return typeof value === "string" ? namedResource(value) : null
}

/** The partner and environment part of a document partition (`ptn_x:sandbox/usr_y` -> `ptn_x:sandbox`). */
export const basePartition = (partition: string) => partition.split(/[/|]/)[0] ?? partition
