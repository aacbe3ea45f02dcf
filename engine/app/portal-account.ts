/**
 * The portal account of an identity (D-015, D-124, D-125), as dispatchers: `GET /me` (legacy and workspace forms),
 * `POST /me` actions, `POST /upgrade-request`, `POST /api-keys/revoke`, and the operator's extra production key. Each
 * reads the identity's application, partner and keys, asks the rule (domain/partners/decide-account.ts) and writes
 * what it answers in one transaction; an upgrade request's id is drawn only once the request is accepted (E-350).
 * Owns: storing personal preferences, upgrade requests and revocations. Does not own the rules (domain/partners/),
 * applications, registration and sessions (PortalService) nor token verification (IdentityProvider).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../contract/wire.ts"
import { type ApiFailure, fail, liftFailure } from "../domain/errors.ts"
import {
  acceptUpgrade,
  decideMeAction,
  decideRevoke,
  decideUpgrade,
  type MeAction,
  meAnswer,
  ownPartner,
  refuseMe,
  type UpgradeInput
} from "../domain/partners/decide-account.ts"
import { activeKey, KEY_PREFIX } from "../domain/partners/decide-partner.ts"
import { EventLog } from "../events/event-log.ts"
import { EngineClock } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../store/port.ts"
import { ApiKeys, Applications, ApplicationsByUid, KeyPointers, keyPointerId, Partners, pointKey, PortalPrefs, timeSortKey, UpgradeRequests } from "./docs.ts"
import type { Identity } from "./identity.ts"
import { hashKey } from "./partners/credentials.ts"
import { partitionOf } from "./principal.ts"

/** The latest application of an identity-provider uid, if any. */
const applicationOf = (tx: ReadTx, uid: string) =>
  Effect.gen(function* () {
    const pointer = yield* ApplicationsByUid.get(tx, uid)
    if (Option.isNone(pointer)) return undefined
    return Option.getOrUndefined(yield* Applications.get(tx, pointer.value.applicationId))
  })

/** The partner's active full key on `environment`, if its pointer names one that is still active. */
const activeKeyOf = (tx: ReadTx, partnerId: string, environment: "sandbox" | "production") =>
  Effect.gen(function* () {
    const pointer = yield* KeyPointers.get(tx, keyPointerId(partitionOf(partnerId, environment), "full"))
    if (Option.isNone(pointer)) return undefined
    return Option.getOrUndefined(Option.filter(yield* ApiKeys.get(tx, pointer.value.keyHash), (k) => k.status === "active"))
  })

export class PortalAccountService extends Context.Service<
  PortalAccountService,
  {
    readonly me: (identity: Identity, workspace: boolean) => Effect.Effect<Schemas["MeResponse"], ApiFailure | StoreError>
    readonly act: (identity: Identity, input: MeAction) => Effect.Effect<Schemas["MeActionResponse"], ApiFailure | StoreError>
    readonly upgrade: (identity: Identity, input: UpgradeInput) => Effect.Effect<Schemas["UpgradeResponse"], ApiFailure | StoreError>
    readonly revoke: (identity: Identity, rawKey: string) => Effect.Effect<Schemas["RevokeKeyResponse"], ApiFailure | StoreError>
    readonly issueLiveKey: (partnerId: string) => Effect.Effect<ControlResponseBody<"issueSimLiveKey", 201>, ApiFailure | StoreError>
  }
>()("sokoni/PortalAccountService") {
  static readonly make = Effect.gen(function* () {
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog

    const me = Effect.fn("PortalAccountService.me")(function* (identity: Identity, workspace: boolean) {
      const refused = refuseMe(identity.emailVerified, workspace)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const view = yield* store.read((tx) =>
        Effect.gen(function* () {
          const application = yield* applicationOf(tx, identity.uid)
          const partnerId = application?.partnerId ?? null
          return {
            application,
            partner: partnerId === null ? undefined : Option.getOrUndefined(yield* Partners.get(tx, partnerId)),
            sandboxKey: partnerId === null ? undefined : yield* activeKeyOf(tx, partnerId, "sandbox"),
            liveKey: partnerId === null ? undefined : yield* activeKeyOf(tx, partnerId, "production"),
            preference: Option.getOrUndefined(yield* PortalPrefs.get(tx, identity.uid))?.deploymentPreference
          }
        })
      )
      return meAnswer(view, workspace)
    })

    const act = Effect.fn("PortalAccountService.act")(function* (identity: Identity, input: MeAction) {
      const decided = yield* liftFailure(decideMeAction(identity.emailVerified, input))
      const preference = decided.preference
      if (preference !== undefined)
        yield* store.transact((tx) => PortalPrefs.put(tx, identity.uid, "global", identity.uid, { deploymentPreference: preference }))
      return decided.answer
    })

    /** The identity's application and its partner (403 without one). */
    const partnerOfIdentity = (tx: ReadTx, identity: Identity) =>
      Effect.gen(function* () {
        const application = yield* applicationOf(tx, identity.uid)
        const partnerId = application?.partnerId ?? null
        const partner = yield* liftFailure(ownPartner(partnerId === null ? undefined : Option.getOrUndefined(yield* Partners.get(tx, partnerId))))
        return { partner, application }
      })

    const upgrade = Effect.fn("PortalAccountService.upgrade")(function* (identity: Identity, input: UpgradeInput) {
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const { partner, application } = yield* partnerOfIdentity(tx, identity)
          const refused = acceptUpgrade(partner, application, input)
          if (refused !== undefined) return yield* Effect.fail(refused)
          const { request, answer } = decideUpgrade(partner, { uid: identity.uid, input }, now, { requestId: yield* entropy.idHere("upg") })
          yield* UpgradeRequests.put(tx, request.requestId, partner.partnerId, timeSortKey(now, request.requestId), request)
          return answer
        })
      )
    })

    const revoke = Effect.fn("PortalAccountService.revoke")(function* (identity: Identity, rawKey: string) {
      const now = yield* clock.nowHere()
      const keyHash = hashKey(rawKey)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const { partner } = yield* partnerOfIdentity(tx, identity)
          const production = partitionOf(partner.partnerId, "production")
          const otherActive = (yield* ApiKeys.list(tx, "global", { limit: 1_000_000, order: "asc" })).filter(
            (k) => k.partnerId === partner.partnerId && k.environment === "production" && k.kind === "full" && k.status === "active" && k.keyHash !== keyHash
          )
          const state = {
            partner,
            key: Option.getOrUndefined(yield* ApiKeys.get(tx, keyHash)),
            otherActive,
            pointer: Option.getOrUndefined(yield* KeyPointers.get(tx, keyPointerId(production, "full")))?.keyHash
          }
          const plan = yield* liftFailure(decideRevoke(state, { keyHash, revokedBy: identity.email }, now))
          const revoked = plan.revoked
          if (revoked !== undefined) yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(revoked.createdAt, keyHash), revoked)
          if (plan.pointTo !== undefined) yield* pointKey(tx, production, "full", plan.pointTo)
          if (plan.event !== undefined) yield* events.append(tx, production, plan.event.name, plan.event.data)
          return plan.answer
        })
      )
    })

    const issueLiveKey = Effect.fn("PortalAccountService.issueLiveKey")(function* (partnerId: string) {
      const now = yield* clock.nowHere()
      const raw = yield* entropy.secret(KEY_PREFIX.production)
      const key = activeKey(partnerId, "production", { raw, hash: hashKey(raw) }, now)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (Option.isNone(yield* Partners.get(tx, partnerId))) return yield* Effect.fail(fail("NOT_FOUND", `partner ${partnerId} was not found`))
          yield* ApiKeys.put(tx, key.keyHash, "global", timeSortKey(now, key.keyHash), key)
          return { partnerId, liveKey: raw }
        })
      )
    })

    return PortalAccountService.of({ me, act, upgrade, revoke, issueLiveKey })
  })

  static readonly layer = Layer.effect(PortalAccountService, PortalAccountService.make)
}
