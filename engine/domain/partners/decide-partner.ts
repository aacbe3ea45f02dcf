/**
 * A partner's lifecycle rules as pure functions: bootstrapping a partner (its record, a sandbox and a live full key,
 * the sandbox master wallet's seed), which credential works where (key prefixes per base; a revoked, rotated or
 * suspended credential, an expired access token), the Principal a working credential stands for, the operator's
 * master-wallet top-up and suspension switch. The dispatcher (app/partners/service.ts) draws the partner's id and keys, hashes the keys,
 * reads the records and writes the plan (E-350).
 * Owns: these rules, the key prefixes and the sandbox seed. Does not own hashing or remembering credentials
 * (app/partners/credentials.ts), the portal's flows (app/portal.ts, app/portal-account.ts) nor the ledger.
 */
import { type ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire, parseScaled } from "../money.ts"
import { type Environment, type KeyKind, partitionOf, type Principal, type Tier } from "../../app/principal.ts"

/** Virtual money seeded into a sandbox master wallet (spec: POST /register, walletBalance 100000). */
export const SANDBOX_SEED_CENTS = 100_000_00

export const KEY_PREFIX = { sandbox: "sk_sandbox_", production: "pk_live_", data: "pk_data_", token: "svc_oauth_" } as const

/** A partner (app/docs.ts Partners), in "global"; absent status means active. */
export interface PartnerRecord {
  readonly partnerId: string
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
  readonly markupBps: number
  readonly createdAt: number
  /** A suspended partner's keys and tokens answer 403 AUTH_SUSPENDED (D-123). */
  readonly status?: "active" | "suspended"
}

/** An API key as stored: only its SHA-256 and its last 4 characters (app/docs.ts ApiKeys). */
export interface ApiKeyRecord {
  readonly keyHash: string
  readonly partnerId: string
  readonly environment: Environment
  readonly kind: KeyKind
  /** `rotated`: replaced by a newer key of the same kind (answers 401 like an unknown key). */
  readonly status: "active" | "revoked" | "rotated"
  readonly last4: string
  readonly createdAt: number
}

/** A `svc_oauth_` access token as the rules need it (app/docs.ts AccessTokens). */
export interface AccessTokenRecord {
  readonly environment: Environment
  readonly kind: KeyKind
  readonly scopes: ReadonlyArray<string>
  readonly expiresAt: number
}

/** A key drawn by the dispatcher: the raw key (shown once) and its hash (what is stored). */
export interface DrawnKey {
  readonly raw: string
  readonly hash: string
}

export interface BootstrapInput {
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
  readonly markupBps?: number | undefined
}

export interface BootstrapResult {
  readonly partnerId: string
  readonly sandboxKey: string
  readonly liveKey: string
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
}

/** A new full key of `partnerId` on `environment`, active from `now`. */
export const activeKey = (partnerId: string, environment: Environment, key: DrawnKey, now: number): ApiKeyRecord => ({
  keyHash: key.hash,
  partnerId,
  environment,
  kind: "full",
  status: "active",
  last4: key.raw.slice(-4),
  createdAt: now
})

/** What bootstrapping writes: the partner, its sandbox then live key, and the sandbox master wallet's seed. */
export interface BootstrapPlan {
  readonly partner: PartnerRecord
  readonly keys: ReadonlyArray<ApiKeyRecord>
  readonly seed: { readonly partition: string; readonly cents: Cents }
  readonly answer: BootstrapResult
}

/** A new partner: active, its markup 0 unless given; the live master wallet starts empty (a top-up funds it). */
export const decideBootstrap = (
  input: BootstrapInput,
  now: number,
  ids: { readonly partnerId: string; readonly sandboxKey: DrawnKey; readonly liveKey: DrawnKey }
): BootstrapPlan => {
  const { partnerId } = ids
  const partner: PartnerRecord = {
    partnerId,
    businessName: input.businessName,
    email: input.email,
    tier: input.tier,
    markupBps: input.markupBps ?? 0,
    createdAt: now
  }
  return {
    partner,
    keys: [activeKey(partnerId, "sandbox", ids.sandboxKey, now), activeKey(partnerId, "production", ids.liveKey, now)],
    seed: { partition: partitionOf(partnerId, "sandbox"), cents: SANDBOX_SEED_CENTS },
    answer: { partnerId, sandboxKey: ids.sandboxKey.raw, liveKey: ids.liveKey.raw, businessName: input.businessName, email: input.email, tier: input.tier }
  }
}

/** The prefixes a key presented on `environment`'s base may carry. */
export const expectedPrefixes = (environment: Environment): ReadonlyArray<string> =>
  environment === "sandbox" ? [KEY_PREFIX.sandbox] : [KEY_PREFIX.production, KEY_PREFIX.data, KEY_PREFIX.token]

/** A key with another base's prefix is refused before any lookup (`planted`: the E-190 defect lets a sandbox key through). */
export const refusePrefix = (raw: string, environment: Environment, planted = false): ApiFailure | undefined => {
  const expected = expectedPrefixes(environment)
  if (planted || expected.some((p) => raw.startsWith(p))) return undefined
  return fail("AUTH_INVALID", `this key is not valid on the ${environment} base (expected a key starting ${expected.join(" or ")})`)
}

/** The partition's settings as authentication reads them (D-065, D-127); absent until first changed. */
export interface CredentialSettings {
  readonly markupBps: number
  readonly ipAllowlist: ReadonlyArray<string>
}

/**
 * Who a working credential is: its partner on `environment`, with the settings' markup (else the partner's) and
 * allowlist. A revoked key is 401 AUTH_REVOKED, a rotated one is no longer a key (spec: rotation "invalidates the
 * previous key"), a suspended partner 403 AUTH_SUSPENDED, checked in that order. A token narrows to its scopes.
 */
export const principalOf = (
  key: ApiKeyRecord,
  partner: PartnerRecord,
  settings: CredentialSettings | undefined,
  environment: Environment,
  token?: Pick<AccessTokenRecord, "kind" | "scopes">
): Principal | ApiFailure => {
  if (key.status === "revoked") return fail("AUTH_REVOKED", "the API key has been revoked")
  if (key.status === "rotated") return fail("AUTH_INVALID", "the API key was rotated and is no longer valid")
  if (partner.status === "suspended") return fail("AUTH_SUSPENDED", "the partner account is suspended")
  const kind = token?.kind ?? key.kind
  const allowlist = settings?.ipAllowlist ?? []
  return {
    partnerId: partner.partnerId,
    environment,
    keyKind: kind,
    tier: partner.tier,
    markupBps: settings?.markupBps ?? partner.markupBps,
    partition: partitionOf(partner.partnerId, environment),
    credential: { kind: token !== undefined ? "oauth_token" : kind === "data" ? "data_key" : "api_key", last4: key.last4 },
    ...(token === undefined ? {} : { tokenScopes: token.scopes }),
    ...(allowlist.length === 0 ? {} : { ipAllowlist: allowlist })
  }
}

/** What authenticating a presented key reads: the key, its partner and the environment's settings. */
export interface CredentialState {
  readonly key: ApiKeyRecord
  readonly partner: PartnerRecord
  readonly settings: CredentialSettings | undefined
}

/**
 * A presented key (its prefix already accepted): unknown (or its partner unknown) and another base's key are the same
 * 401 (`planted`: the E-190 defect lets a sandbox key through on production), else the Principal or its refusal.
 */
export const authenticateKey = (found: CredentialState | undefined, environment: Environment, planted = false): Principal | ApiFailure =>
  found === undefined || (found.key.environment !== environment && !planted)
    ? fail("AUTH_INVALID", "the API key is not recognised")
    : principalOf(found.key, found.partner, found.settings, environment)

/**
 * A presented access token (D-124): it works only on its own environment's base, while its parent key and partner
 * exist, and until it expires; then it stands for its parent key, narrowed to its scopes (and dies with the key).
 */
export const authenticateToken = (
  found: (CredentialState & { readonly token: AccessTokenRecord }) | undefined,
  environment: Environment,
  now: number
): Principal | ApiFailure => {
  if (found === undefined || found.token.environment !== environment) return fail("AUTH_INVALID", "the access token is not recognised")
  if (now >= found.token.expiresAt) return fail("AUTH_INVALID", "the access token has expired; request a new one")
  return principalOf(found.key, found.partner, found.settings, environment, found.token)
}

/** A top-up's amount: positive USD cents (at most 2 decimals). */
export const checkCredit = (amount: number): Cents | ApiFailure => {
  const cents = parseScaled(amount, 2)
  return cents === undefined || cents <= 0
    ? fail("VALIDATION_ERROR", "amount must be a positive USD amount with at most 2 decimals", { param: "amount" })
    : cents
}

/** A top-up of an existing partner's master wallet: refused for an unknown partner. */
export const acceptCredit = (partner: PartnerRecord | undefined, partnerId: string): ApiFailure | undefined =>
  partner === undefined ? fail("NOT_FOUND", `partner ${partnerId} was not found`) : undefined

/** The top-up's `wallet.credited` event and answer, from the balance the ledger posted. */
export const confirmCredit = (cents: Cents, balance: Cents) => ({
  event: { name: "wallet.credited", data: { amount: centsToWire(cents), newBalance: centsToWire(balance), currency: "USD" } },
  answer: { newBalance: centsToWire(balance) }
})

/** A partner a portal flow acts for: it must exist (403 otherwise) and not be suspended (403 AUTH_SUSPENDED, D-123). */
export const activePartner = (partner: PartnerRecord | undefined): PartnerRecord | ApiFailure => {
  if (partner === undefined) return fail("FORBIDDEN", "no partner account")
  if (partner.status === "suspended") return fail("AUTH_SUSPENDED", "the partner account is suspended")
  return partner
}

/** The operator suspends or reactivates a partner (D-123): its keys and tokens follow at once; an unknown partner 404. */
export const decideStatus = (
  partner: PartnerRecord | undefined,
  command: { readonly partnerId: string; readonly status: "active" | "suspended" }
): { readonly partner: PartnerRecord; readonly answer: { readonly partnerId: string; readonly status: "active" | "suspended" } } | ApiFailure =>
  partner === undefined
    ? fail("NOT_FOUND", `partner ${command.partnerId} was not found`)
    : { partner: { ...partner, status: command.status }, answer: { partnerId: command.partnerId, status: command.status } }
