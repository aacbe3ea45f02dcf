/**
 * Partners: bootstrapping a partner with its keys and master wallets, and resolving an API key to a Principal.
 * Owns: partner and key documents, key hashing (keys are stored only as SHA-256 hashes), key/environment rules.
 * Also resolves `svc_oauth_` access tokens to their parent key's principal and refuses suspended partners.
 * Does not own: portal/identity-token flows (PortalService), key rotation (KeyService, PortalService), rate limits.
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type { ControlResponseBody } from "../contract/wire.ts"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EngineClock } from "../sim/clock.ts"
import { PlantedDefects } from "../sim/defects.ts"
import { Entropy } from "../sim/random.ts"
import { Store, type StoreError } from "../store/port.ts"
import {
  AccessTokens,
  type ApiKeyDoc,
  ApiKeys,
  currentCredentialsGeneration,
  type PartnerDoc,
  type PartnerSettingsDoc,
  PartnerSettingsDocs,
  Partners as PartnerDocs,
  timeSortKey
} from "./docs.ts"
import { creditWallet, seedWallet } from "./ledger.ts"
import { centsToWire, parseScaled } from "../domain/money.ts"
import { EventLog } from "../events/event-log.ts"
import { type Environment, partitionOf, type Principal, type Tier } from "./principal.ts"

/** Virtual money seeded into a sandbox master wallet (spec: POST /register, walletBalance 100000). */
export const SANDBOX_SEED_CENTS = 100_000_00

export const KEY_PREFIX = { sandbox: "sk_sandbox_", production: "pk_live_", data: "pk_data_", token: "svc_oauth_" } as const

/**
 * A map kept in process memory that starts afresh once it holds `max` entries: it bounds what a cache of credentials
 * may hold, never what it answers (a forgotten entry is computed or read again).
 */
export class BoundedMap<K, V> {
  readonly #entries = new Map<K, V>()
  readonly #max: number
  constructor(max: number) {
    this.#max = max
  }
  get(key: K): V | undefined {
    return this.#entries.get(key)
  }
  set(key: K, value: V): void {
    if (this.#entries.size >= this.#max) this.#entries.clear()
    this.#entries.set(key, value)
  }
}

/** `compute` remembered per key in a BoundedMap of `max` entries: each key is computed once while it is remembered. */
export const boundedMemo = <V>(max: number, compute: (key: string) => V) => {
  const memo = new BoundedMap<string, V>(max)
  return (key: string): V => {
    const known = memo.get(key)
    if (known !== undefined) return known
    const value = compute(key)
    memo.set(key, value)
    return value
  }
}

/** How many presented keys' hashes, and how many principals, one process remembers. */
export const MAX_REMEMBERED = 10_000

/** How long (engine time) a principal read from the store is trusted without reading it again (E-052). */
export const PRINCIPAL_TTL_MS = 1_000

/** The SHA-256 of a presented key: every keyed request hashes its key, so the hashes already computed are remembered
 * (in process memory only, never stored). */
export const hashKey = boundedMemo(MAX_REMEMBERED, (raw) => createHash("sha256").update(raw).digest("hex"))

export interface BootstrapInput {
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
  readonly markupBps?: number | undefined
}

export interface BootstrapResult {
  readonly partnerId: string
  readonly sandboxKey: string
  readonly liveKey: string
  readonly businessName: string
  readonly email: string
  readonly tier: Tier
}

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
      const now = yield* clock.now
      const partnerId = yield* entropy.id("ptn")
      const sandboxKey = yield* entropy.secret(KEY_PREFIX.sandbox)
      const liveKey = yield* entropy.secret(KEY_PREFIX.production)
      const markupBps = input.markupBps ?? 0
      yield* store.transact((tx) =>
        Effect.gen(function* () {
          // Partner creation is a global step (E-320): the new partner appears to every transaction at once.
          yield* tx.lockPartition("global")
          yield* PartnerDocs.put(tx, partnerId, "global", timeSortKey(now, partnerId), {
            partnerId,
            businessName: input.businessName,
            email: input.email,
            tier: input.tier,
            markupBps,
            createdAt: now
          })
          for (const [raw, environment] of [
            [sandboxKey, "sandbox"],
            [liveKey, "production"]
          ] as const) {
            const keyHash = hashKey(raw)
            yield* ApiKeys.put(tx, keyHash, "global", timeSortKey(now, keyHash), {
              keyHash,
              partnerId,
              environment,
              kind: "full",
              status: "active",
              last4: raw.slice(-4),
              createdAt: now
            })
          }
          yield* seedWallet(tx, partitionOf(partnerId, "sandbox"), "master", SANDBOX_SEED_CENTS, now)
        })
      )
      return { partnerId, sandboxKey, liveKey, businessName: input.businessName, email: input.email, tier: input.tier }
    })

    const principalOf = (
      key: ApiKeyDoc,
      partner: PartnerDoc,
      settings: Option.Option<PartnerSettingsDoc>,
      environment: Environment,
      kind = key.kind,
      tokenScopes?: ReadonlyArray<string>
    ) => {
      const viaToken = tokenScopes !== undefined
      const allowlist = Option.match(settings, { onNone: () => [], onSome: (s) => s.ipAllowlist })
      if (key.status === "revoked") return Effect.fail(fail("AUTH_REVOKED", "the API key has been revoked"))
      // A rotated key is simply no longer a key (spec: rotation "invalidates the previous key").
      if (key.status === "rotated") return Effect.fail(fail("AUTH_INVALID", "the API key was rotated and is no longer valid"))
      if (partner.status === "suspended") return Effect.fail(fail("AUTH_SUSPENDED", "the partner account is suspended"))
      const principal: Principal = {
        partnerId: partner.partnerId,
        environment,
        keyKind: kind,
        tier: partner.tier,
        markupBps: Option.match(settings, { onNone: () => partner.markupBps, onSome: (s) => s.markupBps }),
        partition: partitionOf(partner.partnerId, environment),
        credential: { kind: viaToken ? "oauth_token" : kind === "data" ? "data_key" : "api_key", last4: key.last4 },
        ...(tokenScopes === undefined ? {} : { tokenScopes }),
        ...(allowlist.length === 0 ? {} : { ipAllowlist: allowlist })
      }
      return Effect.succeed(principal)
    }

    /** A `svc_oauth_` token stands for its parent key while unexpired; it dies with the key (D-124). */
    const tokenPrincipal = Effect.fnUntraced(function* (raw: string, environment: Environment, now: number) {
      const found = yield* store.read((tx) =>
        Effect.gen(function* () {
          const token = yield* AccessTokens.get(tx, hashKey(raw))
          if (Option.isNone(token)) return Option.none()
          const key = yield* ApiKeys.get(tx, token.value.parentKeyHash)
          const partner = yield* PartnerDocs.get(tx, token.value.partnerId)
          const settings = yield* PartnerSettingsDocs.get(tx, partitionOf(token.value.partnerId, environment))
          if (Option.isNone(key) || Option.isNone(partner)) return Option.none()
          return Option.some({ token: token.value, key: key.value, partner: partner.value, settings })
        })
      )
      if (Option.isNone(found) || found.value.token.environment !== environment)
        return yield* Effect.fail(fail("AUTH_INVALID", "the access token is not recognised"))
      const { token, key, partner, settings } = found.value
      if (now >= token.expiresAt) return yield* Effect.fail(fail("AUTH_INVALID", "the access token has expired; request a new one"))
      return yield* principalOf(key, partner, settings, environment, token.kind, token.scopes)
    })

    // Principals of active keys recently read, by key hash (E-052): a keyed request then reads nothing from the store.
    // A key or partner written in this process invalidates them at once (the generation); one written by another
    // engine process on the same database is seen within PRINCIPAL_TTL_MS of engine time.
    const principals = new BoundedMap<string, { readonly principal: Principal; readonly at: number; readonly generation: number }>(MAX_REMEMBERED)

    // Untraced: it runs on every keyed request, and a span per call is measurable there (docs/performance.md).
    const authenticate = Effect.fnUntraced(function* (raw: string, environment: Environment) {
      const expectedPrefix = environment === "sandbox" ? [KEY_PREFIX.sandbox] : [KEY_PREFIX.production, KEY_PREFIX.data, KEY_PREFIX.token]
      // TEST ONLY (sim/defects.ts, E-190): false unless `serve --plant-defect sandbox-key-on-production`.
      const sandboxOnProduction = environment === "production" && raw.startsWith(KEY_PREFIX.sandbox) && planted.has("sandbox-key-on-production")
      if (!sandboxOnProduction && !expectedPrefix.some((p) => raw.startsWith(p))) {
        return yield* Effect.fail(
          fail("AUTH_INVALID", `this key is not valid on the ${environment} base (expected a key starting ${expectedPrefix.join(" or ")})`)
        )
      }
      const now = yield* clock.now
      // Access tokens expire on the engine clock, so they are read each time rather than cached.
      if (raw.startsWith(KEY_PREFIX.token)) return yield* tokenPrincipal(raw, environment, now)
      const keyHash = hashKey(raw)
      const cached = principals.get(keyHash)
      if (
        cached !== undefined &&
        cached.generation === currentCredentialsGeneration() &&
        now >= cached.at &&
        now - cached.at < PRINCIPAL_TTL_MS &&
        cached.principal.environment === environment
      )
        return cached.principal
      const generation = currentCredentialsGeneration()
      const found = yield* store.read((tx) =>
        Effect.gen(function* () {
          const key = yield* ApiKeys.get(tx, keyHash)
          if (Option.isNone(key)) return Option.none()
          const partner = yield* PartnerDocs.get(tx, key.value.partnerId)
          // The environment's settings hold the markup once PATCH /settings changed it (D-065).
          const settings = yield* PartnerSettingsDocs.get(tx, partitionOf(key.value.partnerId, environment))
          return Option.map(partner, (p) => ({ key: key.value, partner: p, settings }))
        })
      )
      if (Option.isNone(found) || (found.value.key.environment !== environment && !sandboxOnProduction)) {
        return yield* Effect.fail(fail("AUTH_INVALID", "the API key is not recognised"))
      }
      const { key, partner, settings } = found.value
      const principal = yield* principalOf(key, partner, settings, environment)
      // Only active keys are remembered: unknown and revoked keys are read again each time (no memory to fill).
      principals.set(keyHash, { principal, at: now, generation })
      return principal
    })

    const creditMaster = Effect.fn("PartnerService.creditMaster")(function* (partnerId: string, environment: Environment, amount: number) {
      const cents = parseScaled(amount, 2)
      if (cents === undefined || cents <= 0)
        return yield* Effect.fail(fail("VALIDATION_ERROR", "amount must be a positive USD amount with at most 2 decimals", { param: "amount" }))
      const partition = partitionOf(partnerId, environment)
      return yield* store.transact((tx) =>
        Effect.gen(function* () {
          if (Option.isNone(yield* PartnerDocs.get(tx, partnerId))) return yield* Effect.fail(fail("NOT_FOUND", `partner ${partnerId} was not found`))
          const balance = yield* creditWallet(tx, partition, cents, yield* clock.now)
          yield* events.append(tx, partition, "wallet.credited", { amount: centsToWire(cents), newBalance: centsToWire(balance), currency: "USD" })
          return { newBalance: centsToWire(balance) }
        })
      )
    })

    return PartnerService.of({ bootstrap, authenticate, creditMaster })
  })

  static readonly layer = Layer.effect(PartnerService, PartnerService.make)
}
