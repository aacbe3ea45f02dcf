/**
 * Partner settings' rules (D-065, D-127) as pure functions: what a `PATCH /settings` may say (every ipAllowlist entry
 * an IP address or CIDR range), the settings a partner environment has before its first change (the partner's
 * markup, no notification address, an empty allowlist, dated at the partner's creation), what a change leaves stored
 * (only the fields it gives replaced; `notificationEmail: null` clears the address) and the PartnerSettings answer.
 * The dispatcher (app/settings/service.ts) checks the patch before its transaction, loads the partner, the saved
 * settings and the OAuth switch, and writes what the rule answers. Whether a caller's address is inside the allowlist
 * is domain/cidr.ts's, enforced by the gateway through the principal.
 * Owns these rules and the answer. Does not own storing settings, OAuth enablement (the operator's) nor how the
 * markup is charged (domain/money.ts).
 */
import type { Environment, Tier } from "../../app/principal.ts"
import type { Schemas } from "../../contract/wire.ts"
import { isCidr } from "../cidr.ts"
import { type ApiFailure, fail } from "../errors.ts"

/** A partner environment's settings as stored (app/docs.ts PartnerSettingsDocs). */
export interface SettingsRecord {
  readonly markupBps: number
  readonly notificationEmail: string | null
  readonly ipAllowlist: ReadonlyArray<string>
  readonly updatedAt: number
}

export interface SettingsPatch {
  readonly markupBps?: number
  readonly notificationEmail?: string | null
  readonly ipAllowlist?: ReadonlyArray<string>
}

/** What the settings are decided from: the partner (undefined when unknown), what is saved and the OAuth switch. */
export interface SettingsState {
  readonly partner:
    | {
        readonly partnerId: string
        readonly businessName: string
        readonly tier: Tier
        readonly markupBps: number
        readonly createdAt: number
      }
    | undefined
  readonly environment: Environment
  readonly saved: SettingsRecord | undefined
  readonly oauthEnabled: boolean
}

/** What a change leaves stored, and its answer. */
export interface SettingsPlan {
  readonly settings: SettingsRecord
  readonly answer: Schemas["PartnerSettings"]
}

/** Every ipAllowlist entry must be an IP address or a CIDR range; the first that is not is named. */
export const checkSettingsPatch = (patch: SettingsPatch): SettingsPatch | ApiFailure => {
  const bad = patch.ipAllowlist?.find((entry) => !isCidr(entry))
  if (bad === undefined) return patch
  return fail("VALIDATION_ERROR", `ipAllowlist entry "${bad}" is not an IP address or CIDR range`, { param: "ipAllowlist" })
}

/** The settings before the first change: the partner's markup, no address, anyone allowed, as of its creation. */
export const defaultSettings = (partner: { readonly markupBps: number; readonly createdAt: number }): SettingsRecord => ({
  markupBps: partner.markupBps,
  notificationEmail: null,
  ipAllowlist: [],
  updatedAt: partner.createdAt
})

/** The fields a patch gives replace the current ones; the others are kept. */
export const patched = (current: SettingsRecord, patch: SettingsPatch, now: number): SettingsRecord => ({
  markupBps: patch.markupBps ?? current.markupBps,
  notificationEmail: patch.notificationEmail === undefined ? current.notificationEmail : patch.notificationEmail,
  ipAllowlist: patch.ipAllowlist ?? current.ipAllowlist,
  updatedAt: now
})

const toWire = (partner: NonNullable<SettingsState["partner"]>, state: SettingsState, settings: SettingsRecord): Schemas["PartnerSettings"] => ({
  partnerId: partner.partnerId,
  businessName: partner.businessName,
  tier: partner.tier,
  environment: state.environment,
  markupBps: settings.markupBps,
  notificationEmail: settings.notificationEmail,
  oauthEnabled: state.oauthEnabled,
  ipAllowlist: [...settings.ipAllowlist],
  updatedAt: new Date(settings.updatedAt).toISOString()
})

const partnerNotFound = () => fail("NOT_FOUND", "partner not found")

/** `GET /settings`: what is saved, else the defaults; 404 when the partner is gone. */
export const settingsAnswer = (state: SettingsState): Schemas["PartnerSettings"] | ApiFailure => {
  if (state.partner === undefined) return partnerNotFound()
  return toWire(state.partner, state, state.saved ?? defaultSettings(state.partner))
}

/** `PATCH /settings` of a checked patch: the settings it leaves and the answer; 404 when the partner is gone. */
export const decideSettingsUpdate = (state: SettingsState, patch: SettingsPatch, now: number): SettingsPlan | ApiFailure => {
  if (state.partner === undefined) return partnerNotFound()
  const settings = patched(state.saved ?? defaultSettings(state.partner), patch, now)
  return { settings, answer: toWire(state.partner, state, settings) }
}
