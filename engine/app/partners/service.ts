/**
 * Partners, as dispatchers: bootstrapping a partner with its keys and master wallets, resolving a presented API key
 * or `svc_oauth_` access token to a Principal, and the operator's master-wallet top-up. Each reads the records, asks
 * the rule (domain/partners/decide-partner.ts) and writes its plan in one transaction; the partner's id and keys are
 * drawn before the bootstrap's transaction, as they always were (E-350: the draw points are part of every trace).
 * Owns: partner and key documents' storage, and the principals remembered per key hash (E-052).
 * Does not own: the rules (domain/partners/), portal/identity-token flows (PortalService), key rotation (KeyService,
 * PortalService), rate limits.
 */
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody } from "../../contract/wire.ts"
import { type ApiFailure, liftFailure } from "../../domain/errors.ts"
import {
  acceptCredit,
  authenticateKey,
  authenticateToken,
  type BootstrapInput,
  type BootstrapResult,
  checkCredit,
  confirmCredit,
  decideBootstrap,
  KEY_PREFIX,
  refusePrefix
} from "../../domain/partners/decide-partner.ts"
import { EventLog } from "../../events/event-log.ts"
import { EngineClock } from "../../sim/clock.ts"
import { PlantedDefects } from "../../sim/defects.ts"
import { Entropy } from "../../sim/random.ts"
import { type ReadTx, Store, type StoreError } from "../../store/port.ts"
import { AccessTokens, ApiKeys, currentCredentialsGeneration, PartnerSettingsDocs, Partners as PartnerDocs, timeSortKey } from "../docs.ts"
import { creditWallet, seedWallet } from "../ledger.ts"
import { type Environment, partitionOf, type Principal } from "../principal.ts"
import { BoundedMap, hashKey, MAX_REMEMBERED, PRINCIPAL_TTL_MS } from "./credentials.ts"

/** The settings of `partnerId` on `environment` as authentication reads them (absent until first changed). */
// Read where it is yielded (`getWithHere`, as the key and partner below): a step less each (E-502).
const settingsOf = (tx: ReadTx, partnerId: string, environment: Environment) =>
  PartnerSettingsDocs.getWithHere(tx, partitionOf(partnerId, environment), Option.getOrUndefined)

/** A presented key's record and its partner's, with the environment's settings; undefined when either is unknown. */
const loadKey = (tx: ReadTx, keyHash: string, environment: Environment) =>
  Effect.gen(function* () {
    const key = yield* ApiKeys.getHere(tx, keyHash)
    if (Option.isNone(key)) return undefined
    const partner = yield* PartnerDocs.getHere(tx, key.value.partnerId)
    // The environment's settings hold the markup once PATCH /settings changed it (D-065).
    const settings = yield* settingsOf(tx, key.value.partnerId, environment)
    return Option.isNone(partner) ? undefined : { key: key.value, partner: partner.value, settings }
  })

/** A presented token with its parent key and partner; the token alone when either of those is gone. */
const loadToken = (tx: ReadTx, tokenHash: string, environment: Environment) =>
  Effect.gen(function* () {
    const token = yield* AccessTokens.get(tx, tokenHash)
    if (Option.isNone(token)) return undefined
    const key = yield* ApiKeys.get(tx, token.value.parentKeyHash)
    const partner = yield* PartnerDocs.get(tx, token.value.partnerId)
    const settings = yield* settingsOf(tx, token.value.partnerId, environment)
    if (Option.isNone(key) || Option.isNone(partner)) return undefined
    return { token: token.value, key: key.value, partner: partner.value, settings }
  })

export class PartnerService extends Context.Service<
  PartnerService,
  {
    readonly bootstrap: (input: BootstrapInput) => Effect.Effect<BootstrapResult, StoreError>
    /** Resolves a raw key presented on `environment`'s base. */
    readonly authenticate: (raw: string, environment: Environment) => Effect.Effect<Principal, ApiFailure | StoreError>
    /** Operator top-up of a master wallet (control API); emits wallet.credited. */
    readonly creditMaster: (
      partnerId: string,
      environment: Environment,
      amount: number
    ) => Effect.Effect<ControlResponseBody<"creditSimMasterWallet", 200>, ApiFailure | StoreError>
  }
>()("sokoni/PartnerService") {
  static readonly make = Effect.gen(function* () {
    const planted = yield* PlantedDefects
    const store = yield* Store
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const events = yield* EventLog

    const bootstrap = Effect.fn("PartnerService.bootstrap")(function* (input: BootstrapInput) {
      const now = yield* clock.nowHere()
      const partnerId = yield* entropy.idHere("ptn")
      const sandboxRaw = yield* entropy.secret(KEY_PREFIX.sandbox)
      const liveRaw = yield* entropy.secret(KEY_PREFIX.production)
      const plan = decideBootstrap(input, now, {
        partnerId,
        sandboxKey: { raw: sandboxRaw, hash: hashKey(sandboxRaw) },
        liveKey: { raw: liveRaw, hash: hashKey(liveRaw) }
      })
      yield* store.transact((tx) =>
        Effect.gen(function* () {
          // Partner creation is a global step (E-320): the new partner appears to every transaction at once.
          yield* tx.lockPartition("global")
          yield* PartnerDocs.put(tx, partnerId, "global", timeSortKey(now, partnerId), plan.partner)
          for (const key of plan.keys) yield* ApiKeys.put(tx, key.keyHash, "global", timeSortKey(now, key.keyHash), key)
          yield* seedWallet(tx, plan.seed.partition, "master", plan.seed.cents, now)
        })
      )
      return plan.answer
    })

    /** A `svc_oauth_` token stands for its parent key while unexpired; it dies with the key (D-124). */
    const tokenPrincipal = Effect.fnUntraced(function* (raw: string, environment: Environment, now: number) {
      const found = yield* store.read((tx) => loadToken(tx, hashKey(raw), environment))
      return yield* liftFailure(authenticateToken(found, environment, now))
    })

    // Principals of active keys recently read, by key hash (E-052): a keyed request then reads nothing from the store.
    // A key or partner written in this process invalidates them at once (the generation); one written by another
    // engine process on the same database is seen within PRINCIPAL_TTL_MS of engine time.
    const principals = new BoundedMap<string, { readonly principal: Principal; readonly at: number; readonly generation: number }>(MAX_REMEMBERED)

    const remembered = (keyHash: string, environment: Environment, now: number) => {
      const cached = principals.get(keyHash)
      const fresh =
        cached !== undefined &&
        cached.generation === currentCredentialsGeneration() &&
        now >= cached.at &&
        now - cached.at < PRINCIPAL_TTL_MS &&
        cached.principal.environment === environment
      return fresh ? cached.principal : undefined
    }

    // Untraced: it runs on every keyed request, and a span per call is measurable there (docs/performance.md).
    const authenticate = Effect.fnUntraced(function* (raw: string, environment: Environment) {
      // TEST ONLY (sim/defects.ts, E-190): false unless `serve --plant-defect sandbox-key-on-production`.
      const sandboxOnProduction = environment === "production" && raw.startsWith(KEY_PREFIX.sandbox) && planted.has("sandbox-key-on-production")
      const refused = refusePrefix(raw, environment, sandboxOnProduction)
      if (refused !== undefined) return yield* Effect.fail(refused)
      const now = yield* clock.nowHere()
      // Access tokens expire on the engine clock, so they are read each time rather than cached.
      if (raw.startsWith(KEY_PREFIX.token)) return yield* tokenPrincipal(raw, environment, now)
      const keyHash = hashKey(raw)
      const cached = remembered(keyHash, environment, now)
      if (cached !== undefined) return cached
      const generation = currentCredentialsGeneration()
      const found = yield* store.read((tx) => loadKey(tx, keyHash, environment))
      const principal = yield* liftFailure(authenticateKey(found, environment, sandboxOnProduction))
      // Only active keys are remembered: unknown and revoked keys are read again each time (no memory to fill).
      principals.set(keyHash, { principal, at: now, generation })
      return principal
    })

    const creditMaster = Effect.fn("PartnerService.creditMaster")(function* (partnerId: string, environment: Environment, amount: number) {
      const cents = yield* liftFailure(checkCredit(amount))
      const partition = partitionOf(partnerId, environment)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          const refused = acceptCredit(Option.getOrUndefined(yield* PartnerDocs.get(tx, partnerId)), partnerId)
          if (refused !== undefined) return yield* Effect.fail(refused)
          const balance = yield* creditWallet(tx, partition, cents, yield* clock.nowHere())
          const { event, answer } = confirmCredit(cents, balance)
          yield* events.append(tx, partition, event.name, event.data)
          return answer
        })
      )
    })

    return PartnerService.of({ bootstrap, authenticate, creditMaster })
  })

  static readonly layer = Layer.effect(PartnerService, PartnerService.make)
}
