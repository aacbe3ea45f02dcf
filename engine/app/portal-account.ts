/**
 * The portal account of an identity (D-015, D-124, D-125): `GET /me` (legacy and workspace forms), `POST /me`
 * actions, `POST /upgrade-request`, `POST /api-keys/revoke`, and the operator's extra production key.
 * Owns: the account status a member sees, personal preferences, upgrade requests, revocation of production keys.
 * Does not own: applications, registration and sessions (PortalService), token verification (IdentityProvider).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import {
  type ApiKeyDoc,
  ApiKeys,
  type ApplicationDoc,
  Applications,
  ApplicationsByUid,
  KeyPointers,
  keyPointerId,
  Partners,
  pointKey,
  PortalPrefs,
  timeSortKey,
  UpgradeRequests
} from "./docs.ts"
import type { Identity } from "./identity.ts"
import { hashKey, KEY_PREFIX } from "./partners.ts"
import { partitionOf, type Tier } from "./principal.ts"

type MeStatus = Schemas["MeResponse"]["status"]
type Preference = "hosted" | "onprem" | "both"

/** Display-only mask of a key: never a credential (it is not the key, so it hashes to nothing). */
export const maskOf = (prefix: string, last4: string) => `${prefix}****${last4}`

const TIER_RANK: Record<Tier, number> = { starter: 0, growth: 1, enterprise: 2 }

export class PortalAccountService extends Context.Service<
  PortalAccountService,
  {
    readonly me: (identity: Identity, workspace: boolean) => Effect.Effect<Schemas["MeResponse"], ApiFailure | StoreError>
    readonly act: (
      identity: Identity,
      input: {
        readonly action: "select_environment" | "deployment_preference"
        readonly environment?: "sandbox" | "production"
        readonly deploymentPreference?: Preference
      }
    ) => Effect.Effect<Schemas["MeActionResponse"], ApiFailure | StoreError>
    readonly upgrade: (
      identity: Identity,
      input: { readonly targetTier?: Tier; readonly message?: string }
    ) => Effect.Effect<Schemas["UpgradeResponse"], ApiFailure | StoreError>
    readonly revoke: (identity: Identity, rawKey: string) => Effect.Effect<Schemas["RevokeKeyResponse"], ApiFailure | StoreError>
    readonly issueLiveKey: (partnerId: string) => Effect.Effect<ControlResponseBody<"issueSimLiveKey", 201>, ApiFailure | StoreError>
  }
>()("sokoni/PortalAccountService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog

    const applicationOf = (tx: ReadTx, uid: string) =>
      Effect.gen(function* () {
        const pointer = yield* ApplicationsByUid.get(tx, uid)
        if (Option.isNone(pointer)) return Option.none<ApplicationDoc>()
        return yield* Applications.get(tx, pointer.value.applicationId)
      })

    const activeKey = (tx: ReadTx, partnerId: string, environment: "sandbox" | "production") =>
      Effect.gen(function* () {
        const pointer = yield* KeyPointers.get(tx, keyPointerId(partitionOf(partnerId, environment), "full"))
        if (Option.isNone(pointer)) return Option.none<ApiKeyDoc>()
        return Option.filter(yield* ApiKeys.get(tx, pointer.value.keyHash), (k) => k.status === "active")
      })

    const me = Effect.fn("PortalAccountService.me")(function* (identity: Identity, workspace: boolean) {
      if (workspace && !identity.emailVerified) return yield* Effect.fail(fail("FORBIDDEN", "the workspace summary needs a verified email"))
      const seen = yield* store.read((tx) =>
        Effect.gen(function* () {
          const application = yield* applicationOf(tx, identity.uid)
          const partnerId = Option.isSome(application) ? application.value.partnerId : null
          const partner = partnerId === null ? Option.none() : yield* Partners.get(tx, partnerId)
          const sandbox = partnerId === null ? Option.none<ApiKeyDoc>() : yield* activeKey(tx, partnerId, "sandbox")
          const live = partnerId === null ? Option.none<ApiKeyDoc>() : yield* activeKey(tx, partnerId, "production")
          const prefs = yield* PortalPrefs.get(tx, identity.uid)
          return { application, partner, sandbox, live, prefs }
        })
      )
      const app = Option.getOrUndefined(seen.application)
      const partner = Option.getOrUndefined(seen.partner)
      const live = Option.getOrUndefined(seen.live)
      const sandboxActive = Option.isSome(seen.sandbox)
      const status: MeStatus =
        partner?.status === "suspended"
          ? "suspended"
          : app?.status === "approved" && live !== undefined
            ? "active"
            : app?.status === "approved"
              ? "approved"
              : app?.status === "rejected"
                ? "rejected"
                : sandboxActive
                  ? "sandbox_active"
                  : app?.status === "pending"
                    ? "pending"
                    : "not_found"
      const legacy: Schemas["MeResponse"] = {
        status,
        sandboxActive,
        ...(status === "active" && live !== undefined ? { maskedKey: maskOf(KEY_PREFIX.production, live.last4) } : {}),
        businessName: partner?.businessName ?? app?.businessName ?? null,
        email: partner?.email ?? app?.email ?? null,
        applicationSubmittedAt: app === undefined ? null : isoAt(app.submittedAt),
        applicationRejectionReason: app?.rejectionReason ?? null
      }
      if (!workspace) return legacy
      const liveAllowed = app?.status === "approved" && partner?.status !== "suspended"
      return {
        ...legacy,
        deploymentPreference: Option.match(seen.prefs, { onNone: () => null, onSome: (p) => p.deploymentPreference }),
        hosted: {
          status: live !== undefined && liveAllowed ? "active" : "inactive",
          liveAllowed,
          code: null,
          nextAction: liveAllowed ? null : app === undefined ? "apply" : "await_review",
          keyLast4: live?.last4 ?? null
        },
        sandbox: { status: sandboxActive ? "active" : "inactive", nextAction: sandboxActive ? null : "register" },
        environment: { liveAllowed, status: liveAllowed ? "live" : "sandbox" },
        limit: 50,
        installations: []
      }
    })

    const act = Effect.fn("PortalAccountService.act")(function* (
      identity: Identity,
      input: {
        readonly action: "select_environment" | "deployment_preference"
        readonly environment?: "sandbox" | "production"
        readonly deploymentPreference?: Preference
      }
    ) {
      if (!identity.emailVerified) return yield* Effect.fail(fail("FORBIDDEN", "portal actions need a verified email"))
      if (input.action === "select_environment") {
        if (input.environment === undefined) return yield* Effect.fail(fail("MISSING_PARAM", "environment is required", { param: "environment" }))
        return { action: input.action, path: `/dashboard/${input.environment}` }
      }
      const preference = input.deploymentPreference
      if (preference === undefined) return yield* Effect.fail(fail("MISSING_PARAM", "deploymentPreference is required", { param: "deploymentPreference" }))
      yield* store.transact((tx) => PortalPrefs.put(tx, identity.uid, "global", identity.uid, { deploymentPreference: preference }))
      return { action: input.action, deploymentPreference: preference }
    })

    const partnerOfIdentity = (tx: ReadTx, identity: Identity) =>
      Effect.gen(function* () {
        const application = yield* applicationOf(tx, identity.uid)
        const partnerId = Option.isSome(application) ? application.value.partnerId : null
        const partner = partnerId === null ? Option.none() : yield* Partners.get(tx, partnerId)
        if (Option.isNone(partner)) return yield* Effect.fail(fail("FORBIDDEN", "no partner account for this identity: apply and register first"))
        return { partner: partner.value, application }
      })

    const upgrade = Effect.fn("PortalAccountService.upgrade")(function* (identity: Identity, input: { readonly targetTier?: Tier; readonly message?: string }) {
      const now = yield* clock.now
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const { partner, application } = yield* partnerOfIdentity(tx, identity)
          const target = input.targetTier
          if (target !== undefined && TIER_RANK[target] <= TIER_RANK[partner.tier])
            return yield* Effect.fail(
              fail("VALIDATION_ERROR", `the account is already on ${partner.tier}; targetTier must be a higher tier`, { param: "targetTier" })
            )
          if (target === undefined && Option.isSome(application) && application.value.status === "approved")
            return yield* Effect.fail(fail("VALIDATION_ERROR", "the account is already live; give a targetTier for a tier upgrade", { param: "targetTier" }))
          const requestId = yield* entropy.id("upg")
          yield* UpgradeRequests.put(tx, requestId, partner.partnerId, timeSortKey(now, requestId), {
            requestId,
            partnerId: partner.partnerId,
            uid: identity.uid,
            targetTier: target ?? null,
            message: input.message ?? null,
            createdAt: now
          })
          return {
            message:
              target === undefined
                ? "Sandbox-to-live request filed: a business verification review follows within 1-2 business days."
                : `Upgrade to ${target} requested; you will be contacted.`,
            requestId
          }
        })
      )
    })

    const revoke = Effect.fn("PortalAccountService.revoke")(function* (identity: Identity, rawKey: string) {
      const now = yield* clock.now
      const keyHash = hashKey(rawKey)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const { partner } = yield* partnerOfIdentity(tx, identity)
          const found = yield* ApiKeys.get(tx, keyHash)
          // Another partner's key and an unknown key are the same 404 (no probing of who owns what).
          if (Option.isNone(found) || found.value.partnerId !== partner.partnerId || found.value.environment !== "production" || found.value.kind !== "full")
            return yield* Effect.fail(fail("NOT_FOUND", "no such production key on this account"))
          const key = found.value
          const masked = maskOf(KEY_PREFIX.production, key.last4)
          // Revoking again is harmless: same answer, no second event.
          if (key.status === "revoked") return { message: "The API key is revoked.", apiKey: masked }
          const others = (yield* ApiKeys.list(tx, "global", { limit: 1_000_000, order: "asc" })).filter(
            (k) => k.partnerId === partner.partnerId && k.environment === "production" && k.kind === "full" && k.status === "active" && k.keyHash !== keyHash
          )
          if (others.length === 0) return yield* Effect.fail(fail("FORBIDDEN", "this is the only active production key: contact support to revoke it"))
          yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(key.createdAt, keyHash), { ...key, status: "revoked" })
          const production = partitionOf(partner.partnerId, "production")
          const pointer = yield* KeyPointers.get(tx, keyPointerId(production, "full"))
          if (Option.isSome(pointer) && pointer.value.keyHash === keyHash)
            yield* pointKey(tx, production, "full", others[others.length - 1]?.keyHash ?? keyHash)
          yield* events.append(tx, partitionOf(partner.partnerId, "production"), "account.frozen", {
            externalId: null,
            frozen: true,
            reason: `API key ${masked} revoked`,
            revokedBy: identity.email,
            revokedAt: isoAt(now)
          })
          return { message: "The API key is revoked.", apiKey: masked }
        })
      )
    })

    const issueLiveKey = Effect.fn("PortalAccountService.issueLiveKey")(function* (partnerId: string) {
      const now = yield* clock.now
      const raw = yield* entropy.secret(KEY_PREFIX.production)
      const keyHash = hashKey(raw)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (Option.isNone(yield* Partners.get(tx, partnerId))) return yield* Effect.fail(fail("NOT_FOUND", `partner ${partnerId} was not found`))
          yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(now, keyHash), {
            keyHash,
            partnerId,
            environment: "production",
            kind: "full",
            status: "active",
            last4: raw.slice(-4),
            createdAt: now
          })
          return { partnerId, liveKey: raw }
        })
      )
    })

    return PortalAccountService.of({ me, act, upgrade, revoke, issueLiveKey })
  })

  static readonly layer = Layer.effect(PortalAccountService, PortalAccountService.make)
}
