/**
 * Partner settings routes (contract tag "Settings", D-065): decoding only; SettingsService does the work.
 */
import { Schema } from "effect"
import { SettingsService } from "../../app/settings/service.ts"
import { partnerRoute } from "../route.ts"
import { maxCharacters } from "../body.ts"

const Email = Schema.String.check(maxCharacters(254), Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))

/** The contract's UpdatePartnerSettingsRequest (at least one field). */
export const SettingsPatchBody = Schema.Struct({
  markupBps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 200 }))),
  notificationEmail: Schema.optionalKey(Schema.NullOr(Email)),
  ipAllowlist: Schema.optionalKey(Schema.Array(Schema.String.check(maxCharacters(64))).check(Schema.isMaxLength(50)))
}).check(Schema.makeFilter((body) => Object.keys(body).length > 0 || "at least one of markupBps, notificationEmail, ipAllowlist"))

export const settingsRoutes = [
  partnerRoute("getPartnerSettings", 200, {
    handle: ({ principal }) => SettingsService.use((s) => s.get(principal))
  }),
  partnerRoute("updatePartnerSettings", 200, {
    body: SettingsPatchBody,
    handle: ({ body, principal }) => SettingsService.use((s) => s.update(principal, body))
  })
]
