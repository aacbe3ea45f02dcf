/**
 * The dialect the gateway speaks (`serve --dialect`, E-361): `spec`, the spec's rules (the default), or
 * `public-service`, which accepts what the public service is published or observed to accept where the spec refuses
 * it (../shared/real-service-facts.md; each leniency is a decision entry citing its facts row, E-362..E-365).
 * In both dialects a request that relies on a leniency, or that the other dialect would refuse, leaves a note; the
 * gateway hands the notes of an exchange to `report`, which records them as findings (engine/findings/findings.ts).
 *
 * Owns: which leniencies hold, how a request is read under them (a path, a body, whether a key may be missing), and
 * the sentence a partner reads. Does not own: the guards' order (the gateway's), any state of the partner's.
 * The gateway's guards consult it and write nothing; only `report` writes, to the findings book.
 */
import { Context, Effect, Layer } from "effect"
import { PARTNER_OPERATIONS } from "../contract/catalogue.gen.ts"
import { PartnerService } from "../app/partners/service.ts"
import { SANDBOX_SEED_CENTS } from "../domain/partners/decide-partner.ts"
import type { ResponseBody } from "../contract/wire.ts"
import type { StoreError } from "../store/port.ts"
import type { Principal } from "../app/principal.ts"
import { Findings } from "../findings/findings.ts"
import { SIGNATURE_HEADER } from "../events/webhook-delivery.ts"
import { isFailure, parseJsonBody } from "./body.ts"
import type { EngineRequest } from "./exchange.ts"
import { apiKeyFrom } from "./guards/credentials.ts"
import { makeRouter } from "./router.ts"

export const DIALECTS = ["spec", "public-service"] as const
export type DialectName = (typeof DIALECTS)[number]

/** The header the public service signs webhooks under (facts 11.2): the public-service dialect always sends it. */
export const PUBLIC_SIGNATURE_HEADER = "x-mystocks-signature"

/** What one exchange relied on or would meet elsewhere; the gateway collects them and `report` records them. */
export interface DialectNote {
  readonly kind: string
  /** The contract operation the request meant. */
  readonly operation: string
  readonly message: string
  /**
   * Recorded only when the request was served (2xx: a note about what follows a success), or only when it was refused
   * (4xx: what both dialects refuse, which a client written for the public service meets all the same).
   */
  readonly when?: "served" | "refused"
}

const SANDBOX_ROOT = "/api/sandbox/v1"
const SANDBOX_BASE = `${SANDBOX_ROOT}/partner`

/** The operations the public service asks an Idempotency-Key of: "deposit, withdraw, and trade calls" (facts 15.1). */
export const KEYED_IN_PUBLIC_SERVICE: ReadonlySet<string> = new Set(["depositToSubAccount", "withdrawFromSubAccount", "placeTrade", "placeSubAccountTrade"])

const operations = new Map<string, { readonly method: string; readonly path: string }>(PARTNER_OPERATIONS.map((o) => [o.operationId, o]))
/** `POST /users/{userId}/kyc`: how a finding names an operation, as the contract writes it. */
const named = (operationId: string) => {
  const o = operations.get(operationId)
  return o === undefined ? operationId : `${o.method} ${o.path}`
}
const partnerRouter = makeRouter(PARTNER_OPERATIONS.filter((o) => o.mount === "partner"))
const rootRouter = makeRouter(PARTNER_OPERATIONS.filter((o) => o.mount === "sandboxRoot"))

/** The partner operation a path under the bare sandbox root means (fact 1.2), unless the root serves it itself. */
export const legacyOperation = (method: string, path: string): { rest: string; operationId: string; template: string } | undefined => {
  if (!path.startsWith(`${SANDBOX_ROOT}/`) || path === SANDBOX_BASE || path.startsWith(`${SANDBOX_BASE}/`)) return undefined
  const rest = path.slice(SANDBOX_ROOT.length)
  if (rootRouter.find(method, rest)._tag !== "NotFound") return undefined
  const meant = partnerRouter.find(method, rest)
  return meant._tag === "Found" ? { rest, operationId: meant.route.operationId, template: meant.route.path } : undefined
}

/** The KYC body a public-service client sends, `{status, level, reference}` (facts 6.1, 6.2), or undefined. */
export const publicKycBody = (body: string | undefined): Record<string, unknown> | undefined => {
  const parsed = parseJsonBody(body)
  if (isFailure(parsed) || typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const sent = parsed as Record<string, unknown>
  if (!("status" in sent) || "kycStatus" in sent) return undefined
  const upper = (v: unknown) => (typeof v === "string" ? v.toUpperCase() : v)
  // Only the contract's fields go on: 6.2's client adds provider, verifiedAt and documentType, which the service ignores.
  return {
    kycStatus: upper(sent.status),
    ...(sent.level === undefined ? {} : { kycLevel: upper(sent.level) }),
    ...(sent.reference === undefined ? {} : { reference: sent.reference }),
    ...(sent.rejectionCode === undefined ? {} : { rejectionCode: sent.rejectionCode }),
    ...(sent.rejectionReason === undefined ? {} : { rejectionReason: sent.rejectionReason })
  }
}

/**
 * What a client written for the public service meets that neither dialect accepts (E-367): a MARKET trade without a
 * quote (facts 8.2). Recorded when refused.
 */
const refusedInBothDialects = (operationId: string, request: EngineRequest): { kind: string; message: string } | undefined => {
  if (operationId !== "placeTrade" && operationId !== "placeSubAccountTrade") return undefined
  const body = parseJsonBody(request.body)
  if (isFailure(body) || typeof body !== "object" || body === null || "quoteId" in body) return undefined
  const orderType = (body as { orderType?: unknown }).orderType
  if (orderType !== undefined && orderType !== "MARKET") return undefined
  return {
    kind: "dialect.trade-without-quote",
    message: `${named(operationId)} with {symbol, type, quantity} and no quoteId: refused 400 QUOTE_REQUIRED in both dialects, a MARKET trade needs a fresh quote (GET /quote/{symbol}); clients written for an older service trade without one (facts 8.2)`
  }
}

/** The sentences, one pair per leniency: what the client did, then the other dialect's answer. */
const sentences = {
  key: (op: string, lenient: boolean) =>
    lenient
      ? `${named(op)} without Idempotency-Key: the spec requires it (400 MISSING_IDEMPOTENCY_KEY); accepted as the public service does, which asks for it on deposit, withdraw and trade only (facts 15.1), and a retry of it may run twice`
      : `${named(op)} without Idempotency-Key: refused, the spec requires it (400 MISSING_IDEMPOTENCY_KEY); the public service accepts it, asking for it on deposit, withdraw and trade only (facts 15.1)`,
  legacyRoot: (method: string, path: string, lenient: boolean) =>
    lenient
      ? `${method} ${SANDBOX_ROOT}${path} (the legacy sandbox root): the spec serves the sandbox under ${SANDBOX_BASE} only (404 NOT_FOUND); served as ${SANDBOX_BASE}${path}, as the public service's older docs and clients use it (facts 1.2)`
      : `${method} ${SANDBOX_ROOT}${path} (the legacy sandbox root): refused 404 NOT_FOUND, the spec serves the sandbox under ${SANDBOX_BASE} only; the public service's older docs and clients use the bare root (facts 1.2)`,
  kyc: (lenient: boolean) =>
    lenient
      ? `${named("assertSubAccountKyc")} with {status, level}: the spec's body is {kycStatus, kycLevel} (400 MISSING_PARAM: kycStatus); read as kycStatus and kycLevel, as the public service's clients send it (facts 6.1, 6.2)`
      : `${named("assertSubAccountKyc")} with {status, level}: refused 400 MISSING_PARAM (kycStatus), the spec's body is {kycStatus, kycLevel}; the public service's clients send {status, level} (facts 6.1, 6.2)`,
  register: (lenient: boolean) =>
    lenient
      ? `POST ${SANDBOX_ROOT}/register without Authorization: the spec registers with the portal's ID token (401 AUTH_MISSING); accepted as the public service's quick start does it (facts 3.1), a new partner with its sandbox key`
      : `POST ${SANDBOX_ROOT}/register without Authorization: refused 401 AUTH_MISSING, the spec registers with the portal's ID token; the public service's quick start sends none (facts 3.1)`,
  usersListKey: `${named("listSubAccounts")}?externalId=: answered as users[] in both dialects (the contract's D-020); a client that looks for accounts[] or data[] (facts 4.4, one client's unconfirmed guess) finds nothing there`,
  signature: (headers: ReadonlyArray<string>) =>
    headers.includes(PUBLIC_SIGNATURE_HEADER)
      ? `${named("createWebhook")}: deliveries are signed under ${PUBLIC_SIGNATURE_HEADER}, the public service's header (facts 11.2), besides the spec's ${SIGNATURE_HEADER}; a receiver that reads only ${PUBLIC_SIGNATURE_HEADER} fails against the spec's deliveries`
      : `${named("createWebhook")}: deliveries are signed under ${SIGNATURE_HEADER} only, the spec's header; the public service signs under ${PUBLIC_SIGNATURE_HEADER} (facts 11.2), so a receiver must read the one the service it faces sends`
}

export interface DialectOptions {
  readonly name: DialectName
  /** The extra header names webhook signatures go out under (runtime.ts adds the public one in that dialect). */
  readonly signatureHeaders: ReadonlyArray<string>
}

/**
 * How the gateway reads a request in `options.name`'s dialect: pure, it writes nothing but the exchange's notes (the
 * findings are recorded from them by `report`, after the answer).
 */
export const readerFor = (options: DialectOptions) => {
  const lenient = options.name === "public-service"

  const enter = (request: EngineRequest, notes: Array<DialectNote>): EngineRequest => {
    const legacy = legacyOperation(request.method, request.path)
    if (legacy === undefined) return request
    notes.push({ kind: "dialect.legacy-sandbox-root", operation: legacy.operationId, message: sentences.legacyRoot(request.method, legacy.template, lenient) })
    return lenient ? { ...request, path: `${SANDBOX_BASE}${legacy.rest}` } : request
  }

  /** The notes about what follows an operation's answer, whatever the body: what it is signed under, what is refused. */
  const noteOperation = (operationId: string, request: EngineRequest, notes: Array<DialectNote>) => {
    if (operationId === "createWebhook")
      notes.push({ kind: "dialect.signature-header", operation: operationId, message: sentences.signature(options.signatureHeaders), when: "served" })
    if (operationId === "registerSandbox" && request.headers.authorization === undefined)
      notes.push({ kind: "dialect.register-without-token", operation: operationId, message: sentences.register(lenient), when: lenient ? "served" : "refused" })
    // A public-service client's recovery lookup may read a list key the service was never shown to send (E-366).
    if (lenient && operationId === "listSubAccounts" && request.query.has("externalId"))
      notes.push({ kind: "dialect.users-list-key", operation: operationId, message: sentences.usersListKey, when: "served" })
    const refusedInBoth = refusedInBothDialects(operationId, request)
    if (refusedInBoth !== undefined) notes.push({ ...refusedInBoth, operation: operationId, when: "refused" })
  }

  const adapt = (operationId: string, request: EngineRequest, notes: Array<DialectNote>): EngineRequest => {
    noteOperation(operationId, request, notes)
    if (operationId !== "assertSubAccountKyc") return request
    const kyc = publicKycBody(request.body)
    if (kyc === undefined) return request
    notes.push({ kind: "dialect.kyc-status-level", operation: operationId, message: sentences.kyc(lenient) })
    return lenient ? { ...request, body: JSON.stringify(kyc) } : request
  }

  const keyless = (operationId: string, notes: Array<DialectNote>): boolean => {
    if (KEYED_IN_PUBLIC_SERVICE.has(operationId)) return false
    notes.push({ kind: "dialect.missing-idempotency-key", operation: operationId, message: sentences.key(operationId, lenient) })
    return lenient
  }

  const registersWithoutToken = (request: EngineRequest) => lenient && request.headers.authorization === undefined

  return { enter, adapt, keyless, registersWithoutToken }
}

export class Dialect extends Context.Service<
  Dialect,
  {
    readonly name: DialectName
    /** Before routing: the request to route (the legacy sandbox root read as the partner base, facts 1.2). */
    readonly enter: (request: EngineRequest, notes: Array<DialectNote>) => EngineRequest
    /** Before decoding `operationId`'s input: the request to decode (the KYC body of facts 6.1, 6.2). */
    readonly adapt: (operationId: string, request: EngineRequest, notes: Array<DialectNote>) => EngineRequest
    /** A keyed mutation came without an Idempotency-Key: true to run it without one (facts 4.1, 11.5, 15.1). */
    readonly keyless: (operationId: string, notes: Array<DialectNote>) => boolean
    /** Whether `registerSandbox` may go without an ID token (facts 3.1): then `register` answers it instead. */
    readonly registersWithoutToken: (request: EngineRequest) => boolean
    /** The public service's sandbox register: a new partner with its sandbox key and seeded wallet (E-368). */
    readonly register: (input: { readonly businessName: string; readonly email: string }) => Effect.Effect<ResponseBody<"registerSandbox", 201>, StoreError>
    /** Records an exchange's notes as findings of the partner whose key it carried. */
    readonly report: (notes: ReadonlyArray<DialectNote>, request: EngineRequest, principal: Principal | undefined, status: number) => Effect.Effect<void>
  }
>()("sokoni/Dialect") {
  static readonly make = (options: DialectOptions) =>
    Effect.gen(function* () {
      const findings = yield* Findings
      const partners = yield* PartnerService

      /** A refusal before authentication (the legacy root under `spec`) still names the partner its key belongs to. */
      const partnerOf = (request: EngineRequest, principal: Principal | undefined) => {
        if (principal !== undefined) return Effect.succeed<string | null>(principal.partnerId)
        const raw = apiKeyFrom(request.headers)
        if (typeof raw !== "string") return Effect.succeed(null)
        return partners.authenticate(raw, "sandbox").pipe(
          Effect.map((p): string | null => p.partnerId),
          Effect.orElseSucceed(() => null)
        )
      }

      const report = (notes: ReadonlyArray<DialectNote>, request: EngineRequest, principal: Principal | undefined, status: number) =>
        Effect.gen(function* () {
          const served = status >= 200 && status < 300
          const kept = notes.filter((n) => n.when === undefined || (n.when === "served") === served)
          if (kept.length === 0) return
          const partner = yield* partnerOf(request, principal)
          for (const n of kept) yield* findings.record({ partner, kind: n.kind, operation: n.operation, message: n.message })
        })

      const register = (input: { readonly businessName: string; readonly email: string }) =>
        Effect.map(
          partners.bootstrap({ businessName: input.businessName, email: input.email, tier: "starter" }),
          (made): ResponseBody<"registerSandbox", 201> => ({
            message: "Sandbox account created.",
            apiKey: made.sandboxKey,
            walletBalance: SANDBOX_SEED_CENTS / 100,
            currency: "USD",
            existing: false
          })
        )

      return Dialect.of({ name: options.name, ...readerFor(options), register, report })
    })

  static readonly layer = (options: DialectOptions) => Layer.effect(Dialect, Dialect.make(options))
}

/** The extra signature headers an engine sends: those asked for, plus the public service's in its dialect. */
export const signatureHeadersFor = (name: DialectName, asked: ReadonlyArray<string> | undefined): ReadonlyArray<string> => {
  const headers = [...(asked ?? [])].map((h) => h.toLowerCase())
  return name === "public-service" && !headers.includes(PUBLIC_SIGNATURE_HEADER) ? [...headers, PUBLIC_SIGNATURE_HEADER] : headers
}
