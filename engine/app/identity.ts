/**
 * The simulated identity provider (D-120): signs and verifies the ID tokens of the portal operations.
 * Owns: the signing key (Ed25519, derived from the run's seed so a run is reproducible), the token claims
 * (`sub` = uid, `email`, `email_verified`), issuer, audience and lifetime on the engine clock.
 * Does not own: what a verified identity may do (PortalService).
 */
import { createHash, createPrivateKey, createPublicKey, type KeyObject } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { jwtVerify, SignJWT } from "jose"
import { type ApiFailure, fail } from "../domain/errors.ts"
import { EngineClock } from "../sim/clock.ts"
import { Entropy } from "../sim/random.ts"

export const IDP_ISSUER = "https://idp.sokoni.test"
export const IDP_AUDIENCE = "sokoni-portal"
export const ID_TOKEN_TTL_SECONDS = 3600

export interface Identity {
  readonly uid: string
  readonly email: string
  readonly emailVerified: boolean
}

/** PKCS#8 DER header of an Ed25519 private key; the 32 bytes that follow are the key's seed. */
const ED25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex")

export const signingKeyOf = (seed: number): { readonly privateKey: KeyObject; readonly publicKey: KeyObject } => {
  const material = createHash("sha256").update(`sokoni-idp:${seed}`).digest()
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, material]), format: "der", type: "pkcs8" })
  return { privateKey, publicKey: createPublicKey(privateKey) }
}

/** The Bearer token of an Authorization header, if any. */
export const bearerOf = (authorization: string | undefined): string | undefined => /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1]

export class IdentityProvider extends Context.Service<
  IdentityProvider,
  {
    readonly issue: (identity: Identity) => Effect.Effect<string>
    /** The identity of an `Authorization: Bearer <ID token>` header: 401 AUTH_MISSING or AUTH_INVALID otherwise. */
    readonly verify: (authorization: string | undefined) => Effect.Effect<Identity, ApiFailure>
  }
>()("sokoni/IdentityProvider") {
  static readonly make = Effect.gen(function* () {
    const clock = yield* EngineClock
    const entropy = yield* Entropy
    const { privateKey, publicKey } = signingKeyOf(entropy.seed)

    const issue = Effect.fn("IdentityProvider.issue")(function* (identity: Identity) {
      const seconds = Math.floor((yield* clock.nowHere()) / 1000)
      return yield* Effect.promise(() =>
        new SignJWT({ email: identity.email, email_verified: identity.emailVerified })
          .setProtectedHeader({ alg: "EdDSA", typ: "JWT" })
          .setIssuer(IDP_ISSUER)
          .setAudience(IDP_AUDIENCE)
          .setSubject(identity.uid)
          .setIssuedAt(seconds)
          .setExpirationTime(seconds + ID_TOKEN_TTL_SECONDS)
          .sign(privateKey)
      )
    })

    const verify = Effect.fn("IdentityProvider.verify")(function* (authorization: string | undefined) {
      const token = bearerOf(authorization)
      if (token === undefined) return yield* Effect.fail(fail("AUTH_MISSING", "send an identity-provider ID token as `Authorization: Bearer <ID token>`"))
      const now = yield* clock.nowHere()
      const verified = yield* Effect.tryPromise({
        try: () => jwtVerify(token, publicKey, { issuer: IDP_ISSUER, audience: IDP_AUDIENCE, algorithms: ["EdDSA"], currentDate: new Date(now) }),
        catch: () => fail("AUTH_INVALID", "the ID token is invalid or expired")
      })
      const { sub, email, email_verified } = verified.payload
      if (typeof sub !== "string" || typeof email !== "string") return yield* Effect.fail(fail("AUTH_INVALID", "the ID token lacks a subject or email"))
      return { uid: sub, email, emailVerified: email_verified === true }
    })

    return IdentityProvider.of({ issue, verify })
  })

  static readonly layer = Layer.effect(IdentityProvider, IdentityProvider.make)
}
