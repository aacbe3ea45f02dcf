/**
 * Short-lived access to a partner's production account (D-017, D-124), as pure rules: the portal session a member's
 * identity token buys (3600 s, the full key's scopes), OAuth client credentials (900 s, scopes narrowed on request)
 * and the operator's switch that lets a partner use them. A token is stored by its hash and inherits from its parent
 * key: it dies with the key (rotation, revocation). The dispatcher (app/portal.ts) reads the records, draws the token
 * and the session id once a request is accepted (E-350), hashes the token and writes what the rule answers.
 * Owns: the scopes of a key kind, the token lifetimes, which requests get a token. Does not own authenticating a
 * presented token (decide-partner.ts authenticateToken) nor verifying identity tokens (app/identity.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import type { KeyKind } from "../../app/principal.ts"
import { ApiFailure, fail } from "../errors.ts"
import { type AccessTokenRecord, type ApiKeyRecord, activePartner, type DrawnKey, type PartnerRecord } from "./decide-partner.ts"

export const SESSION_TTL_SECONDS = 3600
export const OAUTH_TTL_SECONDS = 900

/** D-017: the scopes of a full key; a data key's only scope is market:read. */
export const FULL_SCOPES = [
  "market:read",
  "trading:read",
  "trading:write",
  "accounts:read",
  "accounts:write",
  "kyc:write",
  "funds:write",
  "alerts:read",
  "alerts:write",
  "webhooks:read",
  "webhooks:write",
  "events:read",
  "reports:read",
  "reports:write",
  "audit:read",
  "settings:read",
  "settings:write",
  "keys:write"
] as const
export const scopesOf = (kind: KeyKind): ReadonlyArray<string> => (kind === "data" ? ["market:read"] : FULL_SCOPES)

/** A `svc_oauth_` access token as stored (app/docs.ts AccessTokens), id = its SHA-256. */
export interface IssuedTokenRecord extends AccessTokenRecord {
  readonly tokenHash: string
  readonly partnerId: string
  /** The key it inherits from: the token dies with it (rotation, revocation). */
  readonly parentKeyHash: string
}

/** A token of `key` with `scopes`, expiring `ttlSeconds` after `now` on the engine clock. */
export const issueToken = (key: ApiKeyRecord, scopes: ReadonlyArray<string>, ttlSeconds: number, now: number, token: DrawnKey): IssuedTokenRecord => ({
  tokenHash: token.hash,
  partnerId: key.partnerId,
  environment: key.environment,
  parentKeyHash: key.keyHash,
  kind: key.kind,
  scopes,
  expiresAt: now + ttlSeconds * 1000
})

/** What a portal session reads: the identity's partner (null before one exists), and the production key its pointer names. */
export interface SessionState {
  readonly partnerId: string | null
  readonly partner: PartnerRecord | undefined
  readonly key: ApiKeyRecord | undefined
}

/**
 * A member gets a session only for an active partner with a production key: none yet 403, the partner gone 403,
 * suspended 403 AUTH_SUSPENDED, no production key 403, a revoked one 401 AUTH_REVOKED, checked in that order.
 */
export const acceptSession = (s: SessionState): ApiKeyRecord | ApiFailure => {
  if (s.partnerId === null) return fail("FORBIDDEN", "no partner key provisioned for this account")
  const partner = activePartner(s.partner)
  if (partner instanceof ApiFailure) return partner
  if (s.key === undefined) return fail("FORBIDDEN", "no production key provisioned for this account")
  if (s.key.status === "revoked") return fail("AUTH_REVOKED", "the production key has been revoked")
  return s.key
}

/** The session's token (the full key's scopes for an hour) and the answer naming the member as the account's owner. */
export const decideSession = (
  key: ApiKeyRecord,
  identity: { readonly uid: string; readonly email: string },
  now: number,
  ids: { readonly token: DrawnKey; readonly sessionId: string }
): { readonly token: IssuedTokenRecord; readonly answer: Schemas["PortalAccessToken"] } => {
  const permissions = [...FULL_SCOPES]
  return {
    token: issueToken(key, FULL_SCOPES, SESSION_TTL_SECONDS, now, ids.token),
    answer: {
      accessToken: ids.token.raw,
      tokenType: "Bearer",
      expiresIn: SESSION_TTL_SECONDS,
      keyType: "full",
      member: {
        id: `mbr_${identity.uid}`,
        email: identity.email,
        roleIds: ["owner"],
        permissions,
        status: "ACTIVE",
        uid: identity.uid,
        displayName: null
      },
      permissions,
      sessionId: ids.sessionId
    }
  }
}

export interface ClientCredentials {
  readonly grantType: string | undefined
  readonly clientSecret: string | undefined
  readonly scope: string | undefined
}

/** The request's form before any lookup: grant_type must be client_credentials, and a client secret is required. */
export const checkGrant = (input: ClientCredentials): string | ApiFailure => {
  if (input.grantType === undefined) return fail("MISSING_PARAM", "grant_type is required", { param: "grant_type" })
  if (input.grantType !== "client_credentials") return fail("VALIDATION_ERROR", "grant_type must be client_credentials", { param: "grant_type" })
  if (input.clientSecret === undefined || input.clientSecret === "")
    return fail("MISSING_PARAM", "client_secret is required (HTTP Basic, form or JSON)", { param: "client_secret" })
  return input.clientSecret
}

/** What client credentials read: the key the secret hashes to, its partner, and whether the operator enabled OAuth. */
export interface ClientState {
  readonly key: ApiKeyRecord | undefined
  readonly partner: PartnerRecord | undefined
  readonly oauthEnabled: boolean
}

/**
 * The secret must be a current production key (unknown, rotated and sandbox keys are the same 401; revoked 401
 * AUTH_REVOKED), of an active partner the operator enabled; the scopes asked for must be the key's own (none asked:
 * all of them, duplicates once). Returns the key and the token's scopes.
 */
export const acceptClient = (
  s: ClientState,
  scope: string | undefined
): { readonly key: ApiKeyRecord; readonly scopes: ReadonlyArray<string> } | ApiFailure => {
  const key = s.key
  if (key === undefined || key.status === "rotated" || key.environment !== "production")
    return fail("AUTH_INVALID", "the client secret is not a valid production key")
  if (key.status === "revoked") return fail("AUTH_REVOKED", "the API key has been revoked")
  const partner = activePartner(s.partner)
  if (partner instanceof ApiFailure) return partner
  if (!s.oauthEnabled) return fail("FORBIDDEN", "OAuth client credentials are not enabled for this partner")
  const allowed = scopesOf(key.kind)
  const requested = scope === undefined ? [] : scope.split(" ").filter((s) => s !== "")
  const outside = requested.find((s) => !allowed.includes(s))
  if (outside !== undefined) return fail("VALIDATION_ERROR", `scope ${outside} is not among the key's scopes`, { param: "scope" })
  return { key, scopes: requested.length === 0 ? allowed : [...new Set(requested)] }
}

/** The client's token (15 minutes) and the OAuth answer (RFC 6749 field names). */
export const decideClientToken = (
  accepted: { readonly key: ApiKeyRecord; readonly scopes: ReadonlyArray<string> },
  now: number,
  token: DrawnKey
): { readonly token: IssuedTokenRecord; readonly answer: Schemas["OAuthTokenResponse"] } => ({
  token: issueToken(accepted.key, accepted.scopes, OAUTH_TTL_SECONDS, now, token),
  answer: { access_token: token.raw, token_type: "Bearer", expires_in: OAUTH_TTL_SECONDS, scope: accepted.scopes.join(" ") }
})

/** Whether a partner may use client credentials (app/docs.ts OAuthClients), id = partnerId. */
export interface OAuthClientRecord {
  readonly partnerId: string
  readonly enabled: boolean
  readonly updatedAt: number
}

/** The operator's switch (`POST /_sim/partners/{id}/oauth`): an unknown partner 404. */
export const decideOAuth = (
  partner: PartnerRecord | undefined,
  command: { readonly partnerId: string; readonly enabled: boolean },
  now: number
): { readonly client: OAuthClientRecord; readonly answer: { readonly partnerId: string; readonly oauthEnabled: boolean } } | ApiFailure =>
  partner === undefined
    ? fail("NOT_FOUND", `partner ${command.partnerId} was not found`)
    : {
        client: { partnerId: command.partnerId, enabled: command.enabled, updatedAt: now },
        answer: { partnerId: command.partnerId, oauthEnabled: command.enabled }
      }
