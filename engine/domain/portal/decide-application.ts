/**
 * A partner application (D-011, D-121) as pure rules: a verified identity applies (one open application at a time; a
 * new one may follow a rejection and keeps the sandbox partner the identity already has), the operator approves or
 * rejects a pending one, and approval gives the application a partner (created now if it has none yet) and a live
 * key (rotating any earlier one). States: pending -> approved | rejected; rejected -> (a new application) pending.
 * The dispatcher (app/portal.ts) reads the application, draws the ids once a command is accepted (E-350) and writes
 * the plan in one transaction.
 * Owns: an application's states and who may move them. Does not own the key rotation rule
 * (domain/partners/rotate-key.ts) nor the account status `GET /me` shows (domain/partners/decide-account.ts).
 */
import type { ControlResponseBody, Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import type { ApiKeyRecord, DrawnKey, PartnerRecord } from "../partners/decide-partner.ts"
import { type KeyRotation, rotateFullKey } from "../partners/rotate-key.ts"

const isoAt = (ms: number) => new Date(ms).toISOString()

/** A partner application as stored (app/docs.ts Applications), id = applicationId. */
export interface ApplicationRecord {
  readonly applicationId: string
  readonly uid: string
  readonly businessName: string
  readonly email: string
  readonly country: string
  readonly status: "pending" | "approved" | "rejected"
  readonly rejectionReason: string | null
  readonly submittedAt: number
  /** The partner of the application's uid, once one exists (sandbox registration or approval creates it). */
  readonly partnerId: string | null
}

export interface ApplyInput {
  readonly businessName: string
  readonly email: string
  readonly country: string
}

/** Only an identity with a verified email may apply (checked before anything is read). */
export const refuseApply = (emailVerified: boolean): ApiFailure | undefined =>
  emailVerified ? undefined : fail("FORBIDDEN", "verify your email address before applying")

/** One application at a time: a pending or approved one refuses another (409); after a rejection a new one may follow. */
export const acceptApply = (current: ApplicationRecord | undefined): ApiFailure | undefined =>
  current !== undefined && current.status !== "rejected"
    ? fail("CONFLICT", `an application is already ${current.status} (${current.applicationId})`)
    : undefined

/** A new pending application (accepted by acceptApply), which becomes the uid's latest; it keeps the uid's partner. */
export const decideApply = (
  current: ApplicationRecord | undefined,
  command: { readonly uid: string; readonly input: ApplyInput },
  now: number,
  ids: { readonly applicationId: string }
): { readonly application: ApplicationRecord; readonly answer: Schemas["ApplicationResponse"] } => ({
  application: {
    applicationId: ids.applicationId,
    uid: command.uid,
    ...command.input,
    status: "pending",
    rejectionReason: null,
    submittedAt: now,
    partnerId: current?.partnerId ?? null
  },
  answer: {
    message: "Application received; it is reviewed within 1-2 business days.",
    applicationId: ids.applicationId,
    status: "pending",
    submittedAt: isoAt(now)
  }
})

/** The operator reviews only a pending application: an unknown one 404, one already approved or rejected 409. */
export const acceptReview = (found: ApplicationRecord | undefined, applicationId: string): ApplicationRecord | ApiFailure => {
  if (found === undefined) return fail("NOT_FOUND", `application ${applicationId} was not found`)
  if (found.status !== "pending") return fail("CONFLICT", `application ${applicationId} is already ${found.status}`)
  return found
}

/** A partner the portal creates for an application (starter tier, no markup, active), and the application linked to it. */
export const linkPartner = (
  application: ApplicationRecord,
  names: { readonly businessName: string; readonly email: string },
  now: number,
  partnerId: string
): { readonly partner: PartnerRecord; readonly application: ApplicationRecord } => ({
  partner: { partnerId, businessName: names.businessName, email: names.email, tier: "starter", markupBps: 0, createdAt: now, status: "active" },
  application: { ...application, partnerId }
})

/** What approving reads besides the application: the partner's production full-key pointer and the key it names. */
export interface ApproveState {
  readonly application: ApplicationRecord
  readonly pointer: string | undefined
  readonly previous: ApiKeyRecord | undefined
}

export interface ApprovePlan {
  /** The partner created for an application that had none, with the application linked to it (written first). */
  readonly created?: { readonly partner: PartnerRecord; readonly application: ApplicationRecord } | undefined
  readonly rotation: KeyRotation
  readonly application: ApplicationRecord
  readonly answer: ControlResponseBody<"approveSimApplication", 200>
}

/**
 * Approving a pending application (accepted by acceptReview): its partner (`ids.partnerId`: the application's own, or
 * one drawn for it) gets a new live key, rotating any earlier one, and the application is approved.
 */
export const decideApprove = (s: ApproveState, now: number, ids: { readonly partnerId: string; readonly liveKey: DrawnKey }): ApprovePlan => {
  const { application } = s
  const partnerId = application.partnerId ?? ids.partnerId
  const rotation = rotateFullKey({ partnerId, environment: "production", pointer: s.pointer, previous: s.previous }, now, ids.liveKey)
  return {
    created: application.partnerId === null ? linkPartner(application, application, now, partnerId) : undefined,
    rotation,
    application: { ...application, partnerId, status: "approved" },
    answer: { applicationId: application.applicationId, status: "approved", partnerId, liveKey: rotation.raw, reason: null }
  }
}

/** Rejecting a pending application (accepted by acceptReview) with the operator's reason; no partner is touched. */
export const decideReject = (
  application: ApplicationRecord,
  reason: string
): { readonly application: ApplicationRecord; readonly answer: ControlResponseBody<"rejectSimApplication", 200> } => ({
  application: { ...application, status: "rejected", rejectionReason: reason },
  answer: { applicationId: application.applicationId, status: "rejected", partnerId: null, liveKey: null, reason }
})
