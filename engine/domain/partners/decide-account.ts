/**
 * A partner account's lifecycle as its portal member sees and moves it (D-015, D-124, D-125), as pure rules: the
 * account status `GET /me` shows (and the workspace summary), the member's actions, upgrade requests (only to a higher
 * tier; a sandbox-to-live request only before approval), revoking a production key (never the only active one; a
 * second revocation changes nothing) and the operator's extra live key. The dispatcher (app/portal-account.ts) reads
 * the identity's application, partner and keys, draws ids once a command is accepted (E-350) and writes the plan.
 * Owns: these rules and their answers. Does not own applications, registration and sessions (app/portal.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { Tier } from "../../app/principal.ts"
import { type ApiKeyRecord, KEY_PREFIX, type PartnerRecord } from "./decide-partner.ts"

type MeStatus = Schemas["MeResponse"]["status"]
export type Preference = "hosted" | "onprem" | "both"

const isoAt = (ms: number) => new Date(ms).toISOString()

/** Display-only mask of a key: never a credential (it is not the key, so it hashes to nothing). */
export const maskOf = (prefix: string, last4: string) => `${prefix}****${last4}`

export const TIER_RANK: Readonly<Record<Tier, number>> = { starter: 0, growth: 1, enterprise: 2 }

/** The member's application as the rules need it (app/docs.ts Applications). */
export interface ApplicationState {
  readonly status: "pending" | "approved" | "rejected"
  readonly businessName: string
  readonly email: string
  readonly submittedAt: number
  readonly rejectionReason: string | null
}

/** What `GET /me` reads: the identity's application and partner, the active full keys, the member's preference. */
export interface AccountView {
  readonly application: ApplicationState | undefined
  readonly partner: PartnerRecord | undefined
  readonly sandboxKey: ApiKeyRecord | undefined
  readonly liveKey: ApiKeyRecord | undefined
  readonly preference: Preference | undefined
}

/** The account's status, first match wins: suspended, active (approved with a live key), approved, rejected, sandbox_active, pending. */
export const accountStatus = (v: AccountView): MeStatus => {
  const app = v.application
  if (v.partner?.status === "suspended") return "suspended"
  if (app?.status === "approved") return v.liveKey !== undefined ? "active" : "approved"
  if (app?.status === "rejected") return "rejected"
  if (v.sandboxKey !== undefined) return "sandbox_active"
  return app?.status === "pending" ? "pending" : "not_found"
}

/** `GET /me`: the legacy form, or (workspace) the legacy form with the deployment summary. */
export const meAnswer = (v: AccountView, workspace: boolean): Schemas["MeResponse"] => {
  const { application: app, partner, liveKey: live } = v
  const status = accountStatus(v)
  const sandboxActive = v.sandboxKey !== undefined
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
    deploymentPreference: v.preference ?? null,
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
}

/** The workspace summary needs a verified email (the legacy form does not). */
export const refuseMe = (emailVerified: boolean, workspace: boolean): ApiFailure | undefined =>
  workspace && !emailVerified ? fail("FORBIDDEN", "the workspace summary needs a verified email") : undefined

export interface MeAction {
  readonly action: "select_environment" | "deployment_preference"
  readonly environment?: "sandbox" | "production"
  readonly deploymentPreference?: Preference
}

/** `POST /me`: a verified member selects an environment (nothing stored) or stores a deployment preference. */
export const decideMeAction = (
  emailVerified: boolean,
  input: MeAction
): { readonly preference: Preference | undefined; readonly answer: Schemas["MeActionResponse"] } | ApiFailure => {
  if (!emailVerified) return fail("FORBIDDEN", "portal actions need a verified email")
  if (input.action === "select_environment") {
    if (input.environment === undefined) return fail("MISSING_PARAM", "environment is required", { param: "environment" })
    return { preference: undefined, answer: { action: input.action, path: `/dashboard/${input.environment}` } }
  }
  const preference = input.deploymentPreference
  if (preference === undefined) return fail("MISSING_PARAM", "deploymentPreference is required", { param: "deploymentPreference" })
  return { preference, answer: { action: input.action, deploymentPreference: preference } }
}

/** The identity's partner, or 403: a member acts on an account only once one exists for it. */
export const ownPartner = (partner: PartnerRecord | undefined): PartnerRecord | ApiFailure =>
  partner ?? fail("FORBIDDEN", "no partner account for this identity: apply and register first")

export interface UpgradeInput {
  readonly targetTier?: Tier
  readonly message?: string
}

/** An upgrade names a higher tier than the account's; without a tier it asks for live, so only before approval. */
export const acceptUpgrade = (partner: PartnerRecord, application: ApplicationState | undefined, input: UpgradeInput): ApiFailure | undefined => {
  const target = input.targetTier
  if (target !== undefined && TIER_RANK[target] <= TIER_RANK[partner.tier])
    return fail("VALIDATION_ERROR", `the account is already on ${partner.tier}; targetTier must be a higher tier`, { param: "targetTier" })
  if (target === undefined && application?.status === "approved")
    return fail("VALIDATION_ERROR", "the account is already live; give a targetTier for a tier upgrade", { param: "targetTier" })
  return undefined
}

/** A filed upgrade request (app/docs.ts UpgradeRequests), in the partner's partition. */
export interface UpgradeRequestRecord {
  readonly requestId: string
  readonly partnerId: string
  readonly uid: string
  readonly targetTier: Tier | null
  readonly message: string | null
  readonly createdAt: number
}

/** The request filed (accepted by acceptUpgrade) and its answer; the review itself is outside the engine. */
export const decideUpgrade = (
  partner: PartnerRecord,
  command: { readonly uid: string; readonly input: UpgradeInput },
  now: number,
  ids: { readonly requestId: string }
): { readonly request: UpgradeRequestRecord; readonly answer: Schemas["UpgradeResponse"] } => {
  const target = command.input.targetTier
  const request: UpgradeRequestRecord = {
    requestId: ids.requestId,
    partnerId: partner.partnerId,
    uid: command.uid,
    targetTier: target ?? null,
    message: command.input.message ?? null,
    createdAt: now
  }
  const message =
    target === undefined
      ? "Sandbox-to-live request filed: a business verification review follows within 1-2 business days."
      : `Upgrade to ${target} requested; you will be contacted.`
  return { request, answer: { message, requestId: ids.requestId } }
}

/** What revoking reads: the presented key's record, the partner's other active production full keys (oldest first), and which key the production pointer names. */
export interface RevokeState {
  readonly partner: PartnerRecord
  readonly key: ApiKeyRecord | undefined
  readonly otherActive: ReadonlyArray<ApiKeyRecord>
  readonly pointer: string | undefined
}

export interface RevokePlan {
  /** The key as revoked (absent: it already was, nothing changes). */
  readonly revoked?: ApiKeyRecord | undefined
  /** The key the production pointer moves to, when it named the revoked one. */
  readonly pointTo?: string | undefined
  readonly event?: { readonly name: "account.frozen"; readonly data: Readonly<Record<string, unknown>> } | undefined
  readonly answer: Schemas["RevokeKeyResponse"]
}

/**
 * Revoking a production full key of the member's partner: another partner's and an unknown key are the same 404 (no
 * probing); the only active one is refused; revoking again answers the same with no second event. The pointer moves
 * to the newest other active key, and `account.frozen` tells the partner's receivers who revoked it.
 */
export const decideRevoke = (s: RevokeState, command: { readonly keyHash: string; readonly revokedBy: string }, now: number): RevokePlan | ApiFailure => {
  const key = s.key
  if (key === undefined || key.partnerId !== s.partner.partnerId || key.environment !== "production" || key.kind !== "full")
    return fail("NOT_FOUND", "no such production key on this account")
  const masked = maskOf(KEY_PREFIX.production, key.last4)
  const answer = { message: "The API key is revoked.", apiKey: masked }
  if (key.status === "revoked") return { answer }
  if (s.otherActive.length === 0) return fail("FORBIDDEN", "this is the only active production key: contact support to revoke it")
  return {
    revoked: { ...key, status: "revoked" },
    pointTo: s.pointer === command.keyHash ? (s.otherActive[s.otherActive.length - 1]?.keyHash ?? command.keyHash) : undefined,
    event: {
      name: "account.frozen",
      data: { externalId: null, frozen: true, reason: `API key ${masked} revoked`, revokedBy: command.revokedBy, revokedAt: isoAt(now) }
    },
    answer
  }
}
