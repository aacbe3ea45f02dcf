/**
 * Portal routes (contract tags "Portal", "Sandbox" register, "Keys" OAuth): each verifies its own credential (an
 * identity-provider ID token, or the client secret of `POST /oauth/token`), then decodes its body; PortalService
 * does the work.
 */
import { Effect, Schema } from "effect"
import { IdentityProvider } from "../../app/identity.ts"
import { Dialect } from "../dialect.ts"
import { PortalService } from "../../app/portal.ts"
import type { ClientCredentials } from "../../domain/partners/decide-access.ts"
import { PortalAccountService } from "../../app/portal-account.ts"
import { checkKey } from "../guards/idempotency.ts"
import type { OperationId } from "../../contract/wire.ts"
import { fail, liftFailure } from "../../domain/errors.ts"
import { isFailure, maxCharacters, minCharacters, parseJsonBody } from "../body.ts"
import type { EngineRequest } from "../exchange.ts"
import { requestBodyDecoder, requestRoute } from "../route.ts"

const Email = Schema.String.check(maxCharacters(254), Schema.isPattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/))

export const RegisterBody = Schema.Struct({ businessName: Schema.String.check(minCharacters(2), maxCharacters(200)), email: Email })

export const ApplyBody = Schema.Struct({
  businessName: Schema.String.check(minCharacters(2), maxCharacters(200)),
  email: Email,
  country: Schema.String.check(Schema.isPattern(/^[A-Z]{2}$/)),
  website: Schema.optionalKey(Schema.String.check(maxCharacters(500), Schema.isPattern(/^https?:\/\/\S+$/))),
  useCase: Schema.optionalKey(Schema.String.check(maxCharacters(2000))),
  deploymentPreference: Schema.optionalKey(Schema.Literals(["hosted", "onprem", "both"]))
})

const identityOf = (request: EngineRequest) => IdentityProvider.use((idp) => idp.verify(request.headers.authorization))

/** A body decoder of `operationId` as an Effect: the contract's check, then the schema (route.ts, E-310). */
const bodyOf = <S extends Schema.Top & { readonly DecodingServices: never }>(operationId: OperationId, schema: S) => {
  const decode = requestBodyDecoder(operationId, schema)
  return (request: EngineRequest) => liftFailure(decode(request))
}

/** The client credentials of `POST /oauth/token`: HTTP Basic first, then a form or JSON body (D-016). */
export const credentialsOf = (request: EngineRequest): ClientCredentials | ReturnType<typeof fail> => {
  const contentType = request.headers["content-type"] ?? ""
  let fields: Record<string, unknown> = {}
  if (request.body !== undefined && request.body !== "") {
    if (contentType.startsWith("application/x-www-form-urlencoded")) fields = Object.fromEntries(new URLSearchParams(request.body))
    else {
      const json = parseJsonBody(request.body)
      if (isFailure(json)) return json
      if (json === null || typeof json !== "object" || Array.isArray(json)) return fail("VALIDATION_ERROR", "the body must be a JSON object or a form")
      fields = json as Record<string, unknown>
    }
  }
  const str = (name: string) => (typeof fields[name] === "string" ? (fields[name] as string) : undefined)
  const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? "")?.[1]
  let secret = str("client_secret")
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon < 0) return fail("AUTH_INVALID", "HTTP Basic credentials must be client_id:client_secret")
    secret = decoded.slice(colon + 1)
  }
  return { grantType: str("grant_type"), clientSecret: secret, scope: str("scope") }
}

export const MeActionBody = Schema.Struct({
  action: Schema.Literals(["select_environment", "deployment_preference"]),
  environment: Schema.optionalKey(Schema.Literals(["sandbox", "production"])),
  deploymentPreference: Schema.optionalKey(Schema.Literals(["hosted", "onprem", "both"]))
})

export const UpgradeBody = Schema.Struct({
  message: Schema.optionalKey(Schema.String.check(maxCharacters(2000))),
  targetTier: Schema.optionalKey(Schema.Literals(["growth", "enterprise"]))
})

export const RevokeBody = Schema.Struct({ apiKey: Schema.String.check(Schema.isPattern(/^pk_live_/), maxCharacters(200)) })

const meActionBody = bodyOf("performMeAction", MeActionBody)
const upgradeBody = bodyOf("requestUpgrade", UpgradeBody)
const revokeBody = bodyOf("revokeApiKey", RevokeBody)
const applyBody = bodyOf("applyForPartnerAccess", ApplyBody)
const registerBody = bodyOf("registerSandbox", RegisterBody)

export const portalRoutes = [
  requestRoute("getMe", 200, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      // The contract declares no 400 for GET /me: only `workspace=1` asks for the workspace form, any other value
      // is the legacy form (D-126).
      return yield* PortalAccountService.use((a) => a.me(identity, request.query.get("workspace") === "1"))
    })
  ),
  requestRoute("performMeAction", 200, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      const body = yield* meActionBody(request)
      return yield* PortalAccountService.use((a) => a.act(identity, body))
    })
  ),
  requestRoute("requestUpgrade", 201, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      const body = yield* upgradeBody(request)
      return yield* PortalAccountService.use((a) => a.upgrade(identity, body))
    })
  ),
  requestRoute("revokeApiKey", 200, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      // The contract requires the header; revocation is idempotent by nature (a repeat answers the same), so the
      // key is checked but no answer needs storing (D-125).
      const keyProblem = checkKey(request.headers["idempotency-key"])
      if (keyProblem !== undefined) return yield* Effect.fail(keyProblem)
      const body = yield* revokeBody(request)
      return yield* PortalAccountService.use((a) => a.revoke(identity, body.apiKey))
    })
  ),
  requestRoute("applyForPartnerAccess", 201, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      const body = yield* applyBody(request)
      return yield* PortalService.use((p) => p.apply(identity, { businessName: body.businessName, email: body.email, country: body.country }))
    })
  ),
  requestRoute("registerSandbox", 201, (request) =>
    Effect.gen(function* () {
      // The public service's quick start registers with no Authorization at all (facts 3.1): its dialect answers it.
      const dialect = yield* Dialect
      if (dialect.registersWithoutToken(request)) return yield* dialect.register(yield* registerBody(request))
      const identity = yield* identityOf(request)
      const body = yield* registerBody(request)
      return yield* PortalService.use((p) => p.register(identity, body))
    })
  ),
  requestRoute("createPortalSession", 200, (request) =>
    Effect.gen(function* () {
      const identity = yield* identityOf(request)
      return yield* PortalService.use((p) => p.session(identity))
    })
  ),
  requestRoute("issueOAuthToken", 200, (request) =>
    Effect.gen(function* () {
      const credentials = credentialsOf(request)
      if (isFailure(credentials)) return yield* Effect.fail(credentials)
      return yield* PortalService.use((p) => p.clientCredentials(credentials))
    })
  )
]
