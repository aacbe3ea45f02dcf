/**
 * The partner portal (D-011, D-121..D-124): applications and their review, sandbox registration at the sandbox root,
 * portal sessions, OAuth client credentials, and the operator's partner switches (OAuth enablement, suspension).
 * Owns: applications, portal-created partners and their keys, `svc_oauth_` access tokens.
 * Does not own: verifying ID tokens (IdentityProvider), authenticating keys and tokens on requests (PartnerService),
 * the data key (KeyService), settings (SettingsService).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { centsToWire } from "../domain/money.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { Store, type StoreError, type Tx } from "../store/port.ts"
import {
  AccessTokens,
  type ApiKeyDoc,
  ApiKeys,
  type ApplicationDoc,
  Applications,
  ApplicationsByUid,
  KeyPointers,
  keyPointerId,
  OAuthClients,
  type PartnerDoc,
  Partners,
  pointKey,
  timeSortKey
} from "./docs.ts"
import type { Identity } from "./identity.ts"
import { seedWallet, walletBalance } from "./ledger.ts"
import { KEY_PREFIX, SANDBOX_SEED_CENTS } from "../domain/partners/decide-partner.ts"
import { hashKey } from "./partners/credentials.ts"
import { type Environment, type KeyKind, partitionOf } from "./principal.ts"

export const TOKEN_PREFIX = "svc_oauth_"
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

export interface ApplyInput {
  readonly businessName: string
  readonly email: string
  readonly country: string
}

export interface ClientCredentials {
  readonly grantType: string | undefined
  readonly clientSecret: string | undefined
  readonly scope: string | undefined
}

export class PortalService extends Context.Service<
  PortalService,
  {
    readonly apply: (identity: Identity, input: ApplyInput) => Effect.Effect<Schemas["ApplicationResponse"], ApiFailure | StoreError>
    readonly approve: (applicationId: string) => Effect.Effect<ControlResponseBody<"approveSimApplication", 200>, ApiFailure | StoreError>
    readonly reject: (applicationId: string, reason: string) => Effect.Effect<ControlResponseBody<"rejectSimApplication", 200>, ApiFailure | StoreError>
    readonly register: (
      identity: Identity,
      input: { readonly businessName: string; readonly email: string }
    ) => Effect.Effect<Schemas["RegisterResponse"], ApiFailure | StoreError>
    readonly session: (identity: Identity) => Effect.Effect<Schemas["PortalAccessToken"], ApiFailure | StoreError>
    readonly clientCredentials: (input: ClientCredentials) => Effect.Effect<Schemas["OAuthTokenResponse"], ApiFailure | StoreError>
    readonly setOAuth: (partnerId: string, enabled: boolean) => Effect.Effect<ControlResponseBody<"setSimPartnerOAuth", 200>, ApiFailure | StoreError>
    readonly setStatus: (
      partnerId: string,
      status: "active" | "suspended"
    ) => Effect.Effect<ControlResponseBody<"setSimPartnerStatus", 200>, ApiFailure | StoreError>
  }
>()("sokoni/PortalService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy

    const applicationOf = (tx: Parameters<typeof Applications.get>[0], uid: string) =>
      Effect.gen(function* () {
        const pointer = yield* ApplicationsByUid.get(tx, uid)
        if (Option.isNone(pointer)) return Option.none<ApplicationDoc>()
        return yield* Applications.get(tx, pointer.value.applicationId)
      })

    const putApplication = (tx: Tx, doc: ApplicationDoc) =>
      Applications.put(tx, doc.applicationId, "global", timeSortKey(doc.submittedAt, doc.applicationId), doc)

    /** Issues a fresh full key of `environment`; the previous one (if any) stops authenticating. */
    const rotateFullKey = (tx: Tx, partnerId: string, environment: Environment, now: number) =>
      Effect.gen(function* () {
        const partition = partitionOf(partnerId, environment)
        const raw = yield* entropy.secret(environment === "sandbox" ? KEY_PREFIX.sandbox : KEY_PREFIX.production)
        const keyHash = hashKey(raw)
        const previous = yield* KeyPointers.get(tx, keyPointerId(partition, "full"))
        if (Option.isSome(previous)) {
          const old = yield* ApiKeys.get(tx, previous.value.keyHash)
          if (Option.isSome(old) && old.value.status === "active")
            yield* ApiKeys.put(tx, old.value.keyHash, "global", timeSortKey(old.value.createdAt, old.value.keyHash), { ...old.value, status: "rotated" })
        }
        const doc: ApiKeyDoc = { keyHash, partnerId, environment, kind: "full", status: "active", last4: raw.slice(-4), createdAt: now }
        yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(now, keyHash), doc)
        // The pointer lives in "global" with the keys, not in the environment's partition: a sandbox reset wipes that
        // partition, and a lost pointer made /me forget the sandbox key and register issue a second one without
        // rotating the first (and seed the wallet again).
        yield* pointKey(tx, partition, "full", keyHash)
        return { raw, existed: Option.isSome(previous) }
      })

    const createPartner = (tx: Tx, application: ApplicationDoc, businessName: string, email: string, now: number) =>
      Effect.gen(function* () {
        const partnerId = yield* entropy.id("ptn")
        const partner: PartnerDoc = { partnerId, businessName, email, tier: "starter", markupBps: 0, createdAt: now, status: "active" }
        yield* Partners.put(tx, partnerId, "global", timeSortKey(now, partnerId), partner)
        yield* putApplication(tx, { ...application, partnerId })
        return partnerId
      })

    const apply = Effect.fn("PortalService.apply")(function* (identity: Identity, input: ApplyInput) {
      if (!identity.emailVerified) return yield* Effect.fail(fail("FORBIDDEN", "verify your email address before applying"))
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const current = yield* applicationOf(tx, identity.uid)
          if (Option.isSome(current) && current.value.status !== "rejected")
            return yield* Effect.fail(fail("CONFLICT", `an application is already ${current.value.status} (${current.value.applicationId})`))
          const applicationId = yield* entropy.id("app")
          // A new application after a rejection keeps the partner the uid may already have (its sandbox).
          const partnerId = Option.isSome(current) ? current.value.partnerId : null
          yield* putApplication(tx, { applicationId, uid: identity.uid, ...input, status: "pending", rejectionReason: null, submittedAt: now, partnerId })
          yield* ApplicationsByUid.put(tx, identity.uid, "global", identity.uid, { applicationId })
          return {
            message: "Application received; it is reviewed within 1-2 business days.",
            applicationId,
            status: "pending" as const,
            submittedAt: isoAt(now)
          }
        })
      )
    })

    const approve = Effect.fn("PortalService.approve")(function* (applicationId: string) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const found = yield* Applications.get(tx, applicationId)
          if (Option.isNone(found)) return yield* Effect.fail(fail("NOT_FOUND", `application ${applicationId} was not found`))
          const application = found.value
          if (application.status !== "pending") return yield* Effect.fail(fail("CONFLICT", `application ${applicationId} is already ${application.status}`))
          const partnerId = application.partnerId ?? (yield* createPartner(tx, application, application.businessName, application.email, now))
          const { raw } = yield* rotateFullKey(tx, partnerId, "production", now)
          yield* putApplication(tx, { ...application, partnerId, status: "approved" })
          return { applicationId, status: "approved" as const, partnerId, liveKey: raw, reason: null }
        })
      )
    })

    const reject = Effect.fn("PortalService.reject")(function* (applicationId: string, reason: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const found = yield* Applications.get(tx, applicationId)
          if (Option.isNone(found)) return yield* Effect.fail(fail("NOT_FOUND", `application ${applicationId} was not found`))
          if (found.value.status !== "pending") return yield* Effect.fail(fail("CONFLICT", `application ${applicationId} is already ${found.value.status}`))
          yield* putApplication(tx, { ...found.value, status: "rejected", rejectionReason: reason })
          return { applicationId, status: "rejected" as const, partnerId: null, liveKey: null, reason }
        })
      )
    })

    const register = Effect.fn("PortalService.register")(function* (identity: Identity, input: { readonly businessName: string; readonly email: string }) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const application = yield* applicationOf(tx, identity.uid)
          if (Option.isNone(application) || application.value.status === "rejected")
            return yield* Effect.fail(fail("FORBIDDEN", "no partner application on file: apply first (POST /apply)"))
          const partnerId = application.value.partnerId ?? (yield* createPartner(tx, application.value, input.businessName, input.email, now))
          yield* assertActive(tx, partnerId)
          const partition = partitionOf(partnerId, "sandbox")
          const { raw, existed } = yield* rotateFullKey(tx, partnerId, "sandbox", now)
          if (!existed) yield* seedWallet(tx, partition, "master", SANDBOX_SEED_CENTS, now)
          const balance = yield* walletBalance(tx, partition, "master")
          return {
            message: existed ? "Sandbox key rotated; the previous key no longer works." : "Sandbox account created.",
            apiKey: raw,
            walletBalance: centsToWire(balance),
            currency: "USD" as const,
            existing: existed
          }
        })
      )
    })

    const assertActive = (tx: Parameters<typeof Partners.get>[0], partnerId: string) =>
      Effect.gen(function* () {
        const partner = yield* Partners.get(tx, partnerId)
        if (Option.isNone(partner)) return yield* Effect.fail(fail("FORBIDDEN", "no partner account"))
        if (partner.value.status === "suspended") return yield* Effect.fail(fail("AUTH_SUSPENDED", "the partner account is suspended"))
        return partner.value
      })

    const issueToken = (tx: Tx, key: ApiKeyDoc, scopes: ReadonlyArray<string>, ttlSeconds: number, now: number) =>
      Effect.gen(function* () {
        const raw = yield* entropy.secret(TOKEN_PREFIX)
        const tokenHash = hashKey(raw)
        yield* AccessTokens.put(tx, tokenHash, "global", timeSortKey(now, tokenHash), {
          tokenHash,
          partnerId: key.partnerId,
          environment: key.environment,
          parentKeyHash: key.keyHash,
          kind: key.kind,
          scopes,
          expiresAt: now + ttlSeconds * 1000
        })
        return raw
      })

    const session = Effect.fn("PortalService.session")(function* (identity: Identity) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const application = yield* applicationOf(tx, identity.uid)
          const partnerId = Option.isSome(application) ? application.value.partnerId : null
          if (partnerId === null) return yield* Effect.fail(fail("FORBIDDEN", "no partner key provisioned for this account"))
          yield* assertActive(tx, partnerId)
          const pointer = yield* KeyPointers.get(tx, keyPointerId(partitionOf(partnerId, "production"), "full"))
          const key = Option.isSome(pointer) ? yield* ApiKeys.get(tx, pointer.value.keyHash) : Option.none<ApiKeyDoc>()
          if (Option.isNone(key)) return yield* Effect.fail(fail("FORBIDDEN", "no production key provisioned for this account"))
          if (key.value.status === "revoked") return yield* Effect.fail(fail("AUTH_REVOKED", "the production key has been revoked"))
          const accessToken = yield* issueToken(tx, key.value, FULL_SCOPES, SESSION_TTL_SECONDS, now)
          const sessionId = yield* entropy.id("ses")
          const permissions = [...FULL_SCOPES]
          return {
            accessToken,
            tokenType: "Bearer" as const,
            expiresIn: SESSION_TTL_SECONDS as 3600,
            keyType: "full" as const,
            member: {
              id: `mbr_${identity.uid}`,
              email: identity.email,
              roleIds: ["owner"],
              permissions,
              status: "ACTIVE" as const,
              uid: identity.uid,
              displayName: null
            },
            permissions,
            sessionId
          }
        })
      )
    })

    const clientCredentials = Effect.fn("PortalService.clientCredentials")(function* (input: ClientCredentials) {
      if (input.grantType === undefined) return yield* Effect.fail(fail("MISSING_PARAM", "grant_type is required", { param: "grant_type" }))
      if (input.grantType !== "client_credentials")
        return yield* Effect.fail(fail("VALIDATION_ERROR", "grant_type must be client_credentials", { param: "grant_type" }))
      if (input.clientSecret === undefined || input.clientSecret === "")
        return yield* Effect.fail(fail("MISSING_PARAM", "client_secret is required (HTTP Basic, form or JSON)", { param: "client_secret" }))
      const secret = input.clientSecret
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const found = yield* ApiKeys.get(tx, hashKey(secret))
          if (Option.isNone(found) || found.value.status === "rotated" || found.value.environment !== "production")
            return yield* Effect.fail(fail("AUTH_INVALID", "the client secret is not a valid production key"))
          const key = found.value
          if (key.status === "revoked") return yield* Effect.fail(fail("AUTH_REVOKED", "the API key has been revoked"))
          yield* assertActive(tx, key.partnerId)
          const client = yield* OAuthClients.get(tx, key.partnerId)
          if (Option.isNone(client) || !client.value.enabled)
            return yield* Effect.fail(fail("FORBIDDEN", "OAuth client credentials are not enabled for this partner"))
          const allowed = scopesOf(key.kind)
          const requested = input.scope === undefined ? [] : input.scope.split(" ").filter((s) => s !== "")
          const outside = requested.find((s) => !allowed.includes(s))
          if (outside !== undefined) return yield* Effect.fail(fail("VALIDATION_ERROR", `scope ${outside} is not among the key's scopes`, { param: "scope" }))
          const scopes = requested.length === 0 ? allowed : [...new Set(requested)]
          const accessToken = yield* issueToken(tx, key, scopes, OAUTH_TTL_SECONDS, now)
          return { access_token: accessToken, token_type: "Bearer" as const, expires_in: OAUTH_TTL_SECONDS as 900, scope: scopes.join(" ") }
        })
      )
    })

    const setOAuth = Effect.fn("PortalService.setOAuth")(function* (partnerId: string, enabled: boolean) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (Option.isNone(yield* Partners.get(tx, partnerId))) return yield* Effect.fail(fail("NOT_FOUND", `partner ${partnerId} was not found`))
          yield* OAuthClients.put(tx, partnerId, "global", partnerId, { partnerId, enabled, updatedAt: now })
          return { partnerId, oauthEnabled: enabled }
        })
      )
    })

    const setStatus = Effect.fn("PortalService.setStatus")(function* (partnerId: string, status: "active" | "suspended") {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const partner = yield* Partners.get(tx, partnerId)
          if (Option.isNone(partner)) return yield* Effect.fail(fail("NOT_FOUND", `partner ${partnerId} was not found`))
          yield* Partners.put(tx, partnerId, "global", timeSortKey(partner.value.createdAt, partnerId), { ...partner.value, status })
          return { partnerId, status }
        })
      )
    })

    return PortalService.of({ apply, approve, reject, register, session, clientCredentials, setOAuth, setStatus })
  })

  static readonly layer = Layer.effect(PortalService, PortalService.make)
}
