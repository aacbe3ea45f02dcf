/**
 * The partner portal (D-011, D-121..D-124), as dispatchers: applications and their review, sandbox registration at the
 * sandbox root, portal sessions, OAuth client credentials, and the operator's partner switches (OAuth enablement,
 * suspension). Each reads the records, asks the rule (domain/portal/decide-application.ts, domain/partners/
 * decide-register.ts, decide-access.ts, decide-partner.ts) and writes its plan in one transaction. Ids and secrets are
 * drawn inside the transaction once the rule accepts the command, at the points they always were (E-350).
 * Owns: storing applications, portal-created partners and their keys, `svc_oauth_` access tokens.
 * Does not own: the rules, verifying ID tokens (IdentityProvider), authenticating keys and tokens on requests
 * (PartnerService), the data key (KeyService), settings (SettingsService).
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody, Schemas } from "../contract/wire.ts"
import { type ApiFailure, liftFailure } from "../domain/errors.ts"
import {
  acceptClient,
  acceptSession,
  checkGrant,
  type ClientCredentials,
  decideClientToken,
  decideOAuth,
  decideSession,
  type IssuedTokenRecord
} from "../domain/partners/decide-access.ts"
import { decideStatus, type DrawnKey, KEY_PREFIX } from "../domain/partners/decide-partner.ts"
import { acceptRegister, decideRegister, registerAnswer } from "../domain/partners/decide-register.ts"
import { fullKeyPrefix, type KeyRotation } from "../domain/partners/rotate-key.ts"
import {
  acceptApply,
  acceptReview,
  type ApplicationRecord,
  type ApplyInput,
  decideApply,
  decideApprove,
  decideReject,
  refuseApply
} from "../domain/portal/decide-application.ts"
import { EngineClock } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"
import { type ReadTx, Store, type StoreError, type Tx } from "../store/port.ts"
import {
  AccessTokens,
  ApiKeys,
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
import { hashKey } from "./partners/credentials.ts"
import { type Environment, partitionOf } from "./principal.ts"

// The scopes stay importable from here (the portal's tests name them so); the rule owns them.
export { FULL_SCOPES, scopesOf } from "../domain/partners/decide-access.ts"

/** The latest application of an identity-provider uid, if any. */
const applicationOf = (tx: ReadTx, uid: string) =>
  Effect.gen(function* () {
    const pointer = yield* ApplicationsByUid.get(tx, uid)
    if (Option.isNone(pointer)) return undefined
    return Option.getOrUndefined(yield* Applications.get(tx, pointer.value.applicationId))
  })

const partnerOf = (tx: ReadTx, partnerId: string | null) =>
  partnerId === null ? Effect.succeed(undefined) : Effect.map(Partners.get(tx, partnerId), Option.getOrUndefined)

/** The partition's full-key pointer and the key it names (the state a rotation reads). */
const fullKeyOf = (tx: ReadTx, partnerId: string, environment: Environment) =>
  Effect.gen(function* () {
    const pointer = Option.getOrUndefined(yield* KeyPointers.get(tx, keyPointerId(partitionOf(partnerId, environment), "full")))?.keyHash
    const previous = pointer === undefined ? undefined : Option.getOrUndefined(yield* ApiKeys.get(tx, pointer))
    return { pointer, previous }
  })

const putApplication = (tx: Tx, doc: ApplicationRecord) =>
  Applications.put(tx, doc.applicationId, "global", timeSortKey(doc.submittedAt, doc.applicationId), doc)

const putPartner = (tx: Tx, partner: PartnerDoc) => Partners.put(tx, partner.partnerId, "global", timeSortKey(partner.createdAt, partner.partnerId), partner)

/** A partner created for an application: the partner, then the application linked to it. */
const putCreated = (tx: Tx, created: { readonly partner: PartnerDoc; readonly application: ApplicationRecord } | undefined) =>
  created === undefined ? Effect.void : Effect.andThen(putPartner(tx, created.partner), putApplication(tx, created.application))

/** The rotation's writes: the retired key, the new key, then the pointer (in "global" with the keys: a sandbox reset
 * wipes the partition, and a lost pointer made /me forget the sandbox key and register issue a second one). */
const putRotation = (tx: Tx, rotation: KeyRotation) =>
  Effect.gen(function* () {
    const { retired, key } = rotation
    if (retired !== undefined) yield* ApiKeys.put(tx, retired.keyHash, "global", timeSortKey(retired.createdAt, retired.keyHash), retired)
    yield* ApiKeys.put(tx, key.keyHash, "global", timeSortKey(key.createdAt, key.keyHash), key)
    yield* pointKey(tx, rotation.pointer.partition, "full", rotation.pointer.keyHash)
  })

const putToken = (tx: Tx, token: IssuedTokenRecord, now: number) => AccessTokens.put(tx, token.tokenHash, "global", timeSortKey(now, token.tokenHash), token)

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

    /** A new secret with `prefix` and its hash (only the hash is stored). */
    const drawKey = (prefix: string) => Effect.map(entropy.secret(prefix), (raw): DrawnKey => ({ raw, hash: hashKey(raw) }))

    const apply = Effect.fn("PortalService.apply")(function* (identity: Identity, input: ApplyInput) {
      const refused = refuseApply(identity.emailVerified)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const current = yield* applicationOf(tx, identity.uid)
          const conflict = acceptApply(current)
          if (conflict !== undefined) return yield* Effect.fail(conflict)
          const { application, answer } = decideApply(current, { uid: identity.uid, input }, now, { applicationId: yield* entropy.idHere("app") })
          yield* putApplication(tx, application)
          yield* ApplicationsByUid.put(tx, identity.uid, "global", identity.uid, { applicationId: application.applicationId })
          return answer
        })
      )
    })

    const approve = Effect.fn("PortalService.approve")(function* (applicationId: string) {
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const application = yield* liftFailure(acceptReview(Option.getOrUndefined(yield* Applications.get(tx, applicationId)), applicationId))
          // A partner id is drawn only for an application without one, and before the live key (E-350).
          const partnerId = application.partnerId ?? (yield* entropy.idHere("ptn"))
          const liveKey = yield* drawKey(fullKeyPrefix("production"))
          const plan = decideApprove({ application, ...(yield* fullKeyOf(tx, partnerId, "production")) }, now, { partnerId, liveKey })
          yield* putCreated(tx, plan.created)
          yield* putRotation(tx, plan.rotation)
          yield* putApplication(tx, plan.application)
          return plan.answer
        })
      )
    })

    const reject = Effect.fn("PortalService.reject")(function* (applicationId: string, reason: string) {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const application = yield* liftFailure(acceptReview(Option.getOrUndefined(yield* Applications.get(tx, applicationId)), applicationId))
          const plan = decideReject(application, reason)
          yield* putApplication(tx, plan.application)
          return plan.answer
        })
      )
    })

    const register = Effect.fn("PortalService.register")(function* (identity: Identity, input: { readonly businessName: string; readonly email: string }) {
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const found = yield* applicationOf(tx, identity.uid)
          const application = yield* liftFailure(acceptRegister({ application: found, partner: yield* partnerOf(tx, found?.partnerId ?? null) }))
          const partnerId = application.partnerId ?? (yield* entropy.idHere("ptn"))
          const sandboxKey = yield* drawKey(fullKeyPrefix("sandbox"))
          const plan = decideRegister({ application, ...(yield* fullKeyOf(tx, partnerId, "sandbox")) }, input, now, { partnerId, sandboxKey })
          yield* putCreated(tx, plan.created)
          yield* putRotation(tx, plan.rotation)
          if (plan.seed !== undefined) yield* seedWallet(tx, plan.seed.partition, "master", plan.seed.cents, now)
          return registerAnswer(plan.rotation, yield* walletBalance(tx, partitionOf(partnerId, "sandbox"), "master"))
        })
      )
    })

    const session = Effect.fn("PortalService.session")(function* (identity: Identity) {
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const partnerId = (yield* applicationOf(tx, identity.uid))?.partnerId ?? null
          const partner = yield* partnerOf(tx, partnerId)
          const production = partnerId === null ? undefined : (yield* fullKeyOf(tx, partnerId, "production")).previous
          const key = yield* liftFailure(acceptSession({ partnerId, partner, key: production }))
          const token = yield* drawKey(KEY_PREFIX.token)
          const { token: record, answer } = decideSession(key, identity, now, { token, sessionId: yield* entropy.idHere("ses") })
          yield* putToken(tx, record, now)
          return answer
        })
      )
    })

    const clientCredentials = Effect.fn("PortalService.clientCredentials")(function* (input: ClientCredentials) {
      const secret = yield* liftFailure(checkGrant(input))
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const key = Option.getOrUndefined(yield* ApiKeys.get(tx, hashKey(secret)))
          const partner = yield* partnerOf(tx, key?.partnerId ?? null)
          const client = key === undefined ? undefined : Option.getOrUndefined(yield* OAuthClients.get(tx, key.partnerId))
          const accepted = yield* liftFailure(acceptClient({ key, partner, oauthEnabled: client?.enabled === true }, input.scope))
          const { token, answer } = decideClientToken(accepted, now, yield* drawKey(KEY_PREFIX.token))
          yield* putToken(tx, token, now)
          return answer
        })
      )
    })

    const setOAuth = Effect.fn("PortalService.setOAuth")(function* (partnerId: string, enabled: boolean) {
      const now = yield* clock.nowHere()
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const plan = yield* liftFailure(decideOAuth(yield* partnerOf(tx, partnerId), { partnerId, enabled }, now))
          yield* OAuthClients.put(tx, partnerId, "global", partnerId, plan.client)
          return plan.answer
        })
      )
    })

    const setStatus = Effect.fn("PortalService.setStatus")(function* (partnerId: string, status: "active" | "suspended") {
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const plan = yield* liftFailure(decideStatus(yield* partnerOf(tx, partnerId), { partnerId, status }))
          yield* putPartner(tx, plan.partner)
          return plan.answer
        })
      )
    })

    return PortalService.of({ apply, approve, reject, register, session, clientCredentials, setOAuth, setStatus })
  })

  static readonly layer = Layer.effect(PortalService, PortalService.make)
}
