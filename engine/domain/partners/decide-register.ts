/**
 * Sandbox registration at the sandbox root (`POST /register`, D-122) as pure rules: an identity with an application
 * that is pending or approved gets a sandbox key; the first registration creates its partner (when the application
 * has none yet) and seeds the sandbox master wallet, a later one rotates the key (the previous key stops working) and
 * seeds nothing. The dispatcher (app/portal.ts) reads the application and its partner, draws the partner id (only
 * when one is created) then the key, writes the plan and reads the balance the answer shows.
 * Owns: who may register and what registering writes. Does not own the rotation itself (rotate-key.ts) nor
 * applications (domain/portal/decide-application.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { partitionOf } from "../../app/principal.ts"
import { type ApplicationRecord, linkPartner } from "../portal/decide-application.ts"
import { ApiFailure, fail } from "../errors.ts"
import { type Cents, centsToWire } from "../money.ts"
import { type ApiKeyRecord, activePartner, type DrawnKey, type PartnerRecord, SANDBOX_SEED_CENTS } from "./decide-partner.ts"
import { type KeyRotation, rotateFullKey } from "./rotate-key.ts"

/** What registering reads: the identity's latest application and, when it has one, the application's partner. */
export interface RegisterState {
  readonly application: ApplicationRecord | undefined
  readonly partner: PartnerRecord | undefined
}

/** Registering needs an application that is not rejected (403) and, once it has a partner, an active one. */
export const acceptRegister = (s: RegisterState): ApplicationRecord | ApiFailure => {
  const application = s.application
  if (application === undefined || application.status === "rejected") return fail("FORBIDDEN", "no partner application on file: apply first (POST /apply)")
  if (application.partnerId === null) return application
  const partner = activePartner(s.partner)
  return partner instanceof ApiFailure ? partner : application
}

/** What registering writes, in this order: the partner created, the rotation, the seed. */
export interface RegisterPlan {
  /** The partner created for an application that had none, and the application linked to it (written first). */
  readonly created?: { readonly partner: PartnerRecord; readonly application: ApplicationRecord } | undefined
  readonly rotation: KeyRotation
  /** The sandbox master wallet's seed, on the first registration only. */
  readonly seed?: { readonly partition: string; readonly cents: Cents } | undefined
}

/**
 * Registering (accepted by acceptRegister): a partner named as the request names it when the application has none
 * (`ids.partnerId`: the application's own, or one drawn for it), a new sandbox key rotating any earlier one, and the
 * seed when there was no earlier one.
 */
export const decideRegister = (
  s: { readonly application: ApplicationRecord; readonly pointer: string | undefined; readonly previous: ApiKeyRecord | undefined },
  command: { readonly businessName: string; readonly email: string },
  now: number,
  ids: { readonly partnerId: string; readonly sandboxKey: DrawnKey }
): RegisterPlan => {
  const partnerId = s.application.partnerId ?? ids.partnerId
  const rotation = rotateFullKey({ partnerId, environment: "sandbox", pointer: s.pointer, previous: s.previous }, now, ids.sandboxKey)
  return {
    created: s.application.partnerId === null ? linkPartner(s.application, command, now, partnerId) : undefined,
    rotation,
    seed: rotation.existed ? undefined : { partition: partitionOf(partnerId, "sandbox"), cents: SANDBOX_SEED_CENTS }
  }
}

/** The answer, with the sandbox master wallet's balance once the plan is written. */
export const registerAnswer = (rotation: KeyRotation, balance: Cents): Schemas["RegisterResponse"] => ({
  message: rotation.existed ? "Sandbox key rotated; the previous key no longer works." : "Sandbox account created.",
  apiKey: rotation.raw,
  walletBalance: centsToWire(balance),
  currency: "USD",
  existing: rotation.existed
})
