/**
 * Partner settings (D-065): markup, notification address and IP allowlist, one set per partner and environment.
 * Owns: the settings document and its defaults (the partner's bootstrap markup, no address, an empty allowlist).
 * The allowlist is enforced by the gateway through the principal (D-127, domain/cidr.ts).
 * Does not own: OAuth enablement (set by the operator, read from KeyService's state) nor how the markup is charged
 * (domain/money.ts); the new markup reaches orders through the principal, invalidated when settings are written.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../contract/wire.ts"
import { isCidr } from "../domain/cidr.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EngineClock, isoAt } from "../sim/clock.ts"
import { Store, type StoreError } from "../store/port.ts"
import { OAuthClients, PartnerSettingsDocs, type PartnerSettingsDoc, Partners } from "./docs.ts"
import type { Principal } from "./principal.ts"

export interface SettingsPatch {
  readonly markupBps?: number
  readonly notificationEmail?: string | null
  readonly ipAllowlist?: ReadonlyArray<string>
}

export class SettingsService extends Context.Service<
  SettingsService,
  {
    readonly get: (principal: Principal) => Effect.Effect<Schemas["PartnerSettings"], ApiFailure | StoreError>
    readonly update: (principal: Principal, patch: SettingsPatch) => Effect.Effect<Schemas["PartnerSettings"], ApiFailure | StoreError>
  }
>()("sokoni/SettingsService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock

    const view = (principal: Principal) =>
      store.read((tx) =>
        Effect.gen(function* () {
          const partner = yield* Partners.get(tx, principal.partnerId)
          if (Option.isNone(partner)) return yield* Effect.fail(fail("NOT_FOUND", "partner not found"))
          const saved = yield* PartnerSettingsDocs.get(tx, principal.partition)
          const oauth = yield* OAuthClients.get(tx, principal.partnerId)
          const settings: PartnerSettingsDoc = Option.getOrElse(saved, () => ({
            markupBps: partner.value.markupBps,
            notificationEmail: null,
            ipAllowlist: [],
            updatedAt: partner.value.createdAt
          }))
          return { partner: partner.value, settings, oauthEnabled: Option.isSome(oauth) && oauth.value.enabled }
        })
      )

    const toWire = (principal: Principal, v: Effect.Success<ReturnType<typeof view>>): Schemas["PartnerSettings"] => ({
      partnerId: v.partner.partnerId,
      businessName: v.partner.businessName,
      tier: v.partner.tier,
      environment: principal.environment,
      markupBps: v.settings.markupBps,
      notificationEmail: v.settings.notificationEmail,
      oauthEnabled: v.oauthEnabled,
      ipAllowlist: [...v.settings.ipAllowlist],
      updatedAt: isoAt(v.settings.updatedAt)
    })

    const get = Effect.fn("SettingsService.get")(function* (principal: Principal) {
      return toWire(principal, yield* view(principal))
    })

    const update = Effect.fn("SettingsService.update")(function* (principal: Principal, patch: SettingsPatch) {
      const bad = patch.ipAllowlist?.find((entry) => !isCidr(entry))
      if (bad !== undefined)
        return yield* Effect.fail(fail("VALIDATION_ERROR", `ipAllowlist entry "${bad}" is not an IP address or CIDR range`, { param: "ipAllowlist" }))
      const now = yield* clock.now
      const current = yield* view(principal)
      const next: PartnerSettingsDoc = {
        markupBps: patch.markupBps ?? current.settings.markupBps,
        notificationEmail: patch.notificationEmail === undefined ? current.settings.notificationEmail : patch.notificationEmail,
        ipAllowlist: patch.ipAllowlist ?? current.settings.ipAllowlist,
        updatedAt: now
      }
      yield* store.transact((tx) => PartnerSettingsDocs.put(tx, principal.partition, "global", principal.partition, next))
      return toWire(principal, { ...current, settings: next })
    })

    return SettingsService.of({ get, update })
  })

  static readonly layer = Layer.effect(SettingsService, SettingsService.make)
}
