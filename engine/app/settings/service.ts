/**
 * Partner settings (D-065): markup, notification address and IP allowlist, one set per partner and environment, as a
 * dispatcher. A patch is checked before its transaction (guards write nothing); the transaction loads the partner,
 * the saved settings and the OAuth switch, asks the rule (domain/settings/decide-settings.ts) and writes the settings
 * it answers. The allowlist is enforced by the gateway through the principal (D-127, domain/cidr.ts); the new markup
 * reaches orders through the principal, invalidated when settings are written (a credential collection).
 * Owns: the settings' storage and the transaction. Does not own the rules (domain/settings/) nor OAuth enablement
 * (set by the operator).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import { checkSettingsPatch, decideSettingsUpdate, type SettingsPatch, type SettingsState, settingsAnswer } from "../../domain/settings/decide-settings.ts"
import { EngineClock } from "../../sim/clock.ts"
import { type ReadTx, Store, type StoreError } from "../../store/port.ts"
import { OAuthClients, PartnerSettingsDocs, Partners } from "../docs.ts"
import type { Principal } from "../principal.ts"

/** What the settings rules read: the partner, its environment's saved settings and whether OAuth is enabled for it. */
const loadSettings = (tx: ReadTx, principal: Principal) =>
  Effect.gen(function* () {
    const partner = yield* Partners.get(tx, principal.partnerId)
    const saved = yield* PartnerSettingsDocs.get(tx, principal.partition)
    const oauth = yield* OAuthClients.get(tx, principal.partnerId)
    const state: SettingsState = {
      partner: Option.getOrUndefined(partner),
      environment: principal.environment,
      saved: Option.getOrUndefined(saved),
      oauthEnabled: Option.isSome(oauth) && oauth.value.enabled
    }
    return state
  })

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

    const get = Effect.fn("SettingsService.get")(function* (principal: Principal) {
      return yield* liftFailure(settingsAnswer(yield* store.read((tx) => loadSettings(tx, principal))))
    })

    const update = Effect.fn("SettingsService.update")(function* (principal: Principal, patch: SettingsPatch) {
      const checked = yield* liftFailure(checkSettingsPatch(patch))
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const plan = yield* liftFailure(decideSettingsUpdate(yield* loadSettings(tx, principal), checked, yield* clock.nowHere()))
          yield* PartnerSettingsDocs.put(tx, principal.partition, "global", principal.partition, plan.settings)
          return plan.answer
        })
      )
    })

    return SettingsService.of({ get, update })
  })

  static readonly layer = Layer.effect(SettingsService, SettingsService.make)
}
