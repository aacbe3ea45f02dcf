/**
 * Declaring a route: an operationId of the contract, its success status, decoders for its inputs and a handler.
 * Everything else (method, path, mount, credential kind, environments, whether it needs an Idempotency-Key, the
 * statuses it may answer) comes from the contract's generated catalogue, so a route cannot disagree with
 * spec/openapi.yaml or spec/control.yaml. The handler's success type is the contract's body for that status: a
 * missing required field fails `npm run typecheck`, and wire objects are built in literals annotated with their
 * contract type, so an extra field fails it too.
 */
import type { Context, Effect, Schema, Stream } from "effect"
import { CONTROL_OPERATIONS, PARTNER_OPERATIONS } from "../contract/catalogue.gen.ts"
import type { ControlOperationId, ControlResponseBody, OperationId, ResponseBody } from "../contract/wire.ts"
import type { Environment, Principal } from "../app/principal.ts"
import type { ApiFailure } from "../domain/errors.ts"
import type { Hint, StoreError } from "../store/port.ts"
import { type ContractValidator, contractValidator } from "../contract/request-validator.ts"
import { bodyShapeProblem, decodeBody, isFailure, parseJsonBody } from "./body.ts"
import type { EngineRequest } from "./exchange.ts"
import { type Field, paramDecoder, type QueryOf } from "./query.ts"
import type { operations } from "../contract/openapi.gen.ts"
import type { operations as ControlOperations } from "../contract/control.gen.ts"

/** Where a path is served: partner bases, the sandbox root, the public `/api/v1`, or the control API. */
export type Mount = "partner" | "sandboxRoot" | "public" | "control"
/** The credential an operation takes (contract `security`). */
export type AuthKind = "apiKey" | "idToken" | "clientSecret" | "admin" | "none"

type ParamSpec = Record<string, Field<unknown>>
/** No parameters of that kind. */
type NoParams = Record<never, Field<unknown>>
type BodySchema = Schema.Top & { readonly DecodingServices: never }

export interface Decoded {
  readonly params: unknown
  readonly query: unknown
  readonly body: unknown
}

/** What the pipeline knows about a route, whatever its types. */
export interface Route<R> {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly mount: Mount
  readonly auth: AuthKind
  /** Data keys (`pk_data_`) may call it (GET on the market-data families). */
  readonly dataKeyAllowed: boolean
  /** The OAuth scopes the contract names for it; an access token must hold one of them (D-122). Empty: none asked. */
  readonly scopes: ReadonlyArray<string>
  readonly environments: ReadonlyArray<Environment>
  /** Needs an Idempotency-Key (authenticated mutation, not exempt). */
  readonly idempotent: boolean
  /** Every status the contract declares for it: a forced sandbox status must be one of these. */
  readonly statuses: ReadonlyArray<number>
  readonly successStatus: number
  readonly decode: (request: EngineRequest, params: Readonly<Record<string, string>>) => Decoded | ApiFailure
  readonly run: (input: Decoded, principal: Principal | undefined, request: EngineRequest) => Effect.Effect<unknown, ApiFailure | StoreError, R>
  /**
   * The rows the handler's transaction will read, for a store that reads ahead: asked (only by such a store) when the
   * keyed command's transaction is about to lock, so they are read with the lock (E-472). Absent: none named.
   */
  readonly readsAhead?: ((input: Decoded, principal: Principal, context: Context.Context<R>) => ReadonlyArray<Hint>) | undefined
}

const MUTATING = new Set(["POST", "PUT", "PATCH", "DELETE"])

interface CatalogueRow {
  readonly operationId: string
  readonly method: string
  readonly path: string
  readonly mount: string
  readonly environments: ReadonlyArray<string>
  readonly security: ReadonlyArray<string>
  readonly scopes: ReadonlyArray<string>
  readonly idempotencyExempt: boolean
  readonly statuses: ReadonlyArray<number>
}

const authOf = (row: CatalogueRow): AuthKind => {
  // The console's page and files carry no data and no token: the page asks for the token (E-380).
  if (row.mount === "control") return row.security.length === 0 ? "none" : "admin"
  const s = row.security
  if (s.some((k) => k.startsWith("apiKey") || k.startsWith("dataKey") || k.startsWith("oauth"))) return "apiKey"
  if (s.includes("idToken")) return "idToken"
  if (s.some((k) => k.startsWith("clientSecret"))) return "clientSecret"
  return "none"
}

const rowOf = (operationId: string): CatalogueRow => {
  const row = [...PARTNER_OPERATIONS, ...CONTROL_OPERATIONS].find((r) => r.operationId === operationId)
  if (row === undefined) throw new Error(`${operationId} is not an operation of the contract (run npm run spec:gen?)`)
  return row as CatalogueRow
}

interface Inputs<PS extends ParamSpec, QS extends ParamSpec, B extends BodySchema | undefined> {
  readonly params?: PS
  readonly query?: QS
  readonly body?: B
}

export interface HandlerInput<PS extends ParamSpec, QS extends ParamSpec, B extends BodySchema | undefined> {
  readonly params: QueryOf<PS>
  readonly query: QueryOf<QS>
  readonly body: B extends BodySchema ? B["Type"] : undefined
}

/**
 * `checked`: the contract validates the route's inputs in its decode step (E-310); off only for operations whose
 * handler reads the request itself after verifying its own credential (requestRoute: auth before decode).
 */
const build = <R>(
  operationId: string,
  successStatus: number,
  inputs: Inputs<ParamSpec, ParamSpec, BodySchema | undefined>,
  run: Route<R>["run"],
  checked = true,
  readsAhead?: Route<R>["readsAhead"]
): Route<R> => {
  const row = rowOf(operationId)
  const auth = authOf(row)
  const decode = checked ? decoderOf(operationId, row, inputs) : () => ({ params: {}, query: {}, body: undefined })
  return {
    operationId,
    method: row.method,
    path: row.path,
    mount: row.mount as Mount,
    auth,
    dataKeyAllowed: row.security.some((k) => k.startsWith("dataKey")),
    scopes: row.scopes,
    environments: row.environments as ReadonlyArray<Environment>,
    idempotent: MUTATING.has(row.method) && auth !== "none" && auth !== "admin" && !row.idempotencyExempt,
    statuses: row.statuses,
    successStatus,
    decode,
    run,
    readsAhead
  }
}

/**
 * The decode step: the contract's verdict on the path, query and body first (its codes and messages), then the
 * route's own decoders, which type the values and add what JSON Schema cannot say.
 */
const decoderOf = (operationId: string, row: CatalogueRow, inputs: Inputs<ParamSpec, ParamSpec, BodySchema | undefined>): Route<unknown>["decode"] => {
  const contract = contractValidator(row.mount === "control" ? "control" : "partner", operationId)
  if (inputs.body !== undefined && !contract.body.declared) throw new Error(`${operationId} decodes a body the contract does not declare`)
  const decodePath = paramDecoder(inputs.params ?? {})
  const decodeQuery = paramDecoder(inputs.query ?? {})
  const decodeJsonBody = inputs.body === undefined ? undefined : jsonBodyStep(contract, inputs.body)
  return (request, pathParams) => {
    const refused = contract.parameters((place, name) => (place === "path" ? pathParams[name] : (request.query.get(name) ?? undefined)))
    if (refused !== undefined) return refused
    const params = decodePath((name) => pathParams[name])
    if (isFailure(params)) return params
    const query = decodeQuery((name) => request.query.get(name) ?? undefined)
    if (isFailure(query)) return query
    if (decodeJsonBody === undefined) return { params, query, body: undefined }
    const body = decodeJsonBody(request)
    if (isFailure(body)) return body
    return { params, query, body }
  }
}

/** The body step: parsed, judged by the contract, then typed (and domain-checked) by the route's schema. */
const jsonBodyStep =
  <S extends BodySchema>(contract: ContractValidator, schema: S) =>
  (request: EngineRequest): S["Type"] | ApiFailure => {
    const json = parseJsonBody(request.body)
    if (isFailure(json)) return json
    // The contract's `requestBody.required: false`: no body is judged and decoded like `{}`.
    const given = json === undefined && !contract.body.required ? {} : json
    const problem = bodyShapeProblem(given) ?? contract.checkBody(given)
    if (problem !== undefined) return problem
    return decodeBody(schema, given)
  }

/**
 * The body decoder of a `requestRoute` handler, which verifies its own credential first and then decodes: the same
 * contract check and schema as a declared route's body (E-310). Built once, with the route.
 */
export const requestBodyDecoder = <S extends BodySchema>(operationId: OperationId, schema: S) => {
  const contract = contractValidator("partner", operationId)
  if (!contract.body.declared) throw new Error(`${operationId} decodes a body the contract does not declare`)
  return jsonBodyStep(contract, schema)
}

type SuccessStatus<Op extends OperationId> = Extract<keyof operations[Op]["responses"], 200 | 201 | 202>
type ControlSuccessStatus<Op extends ControlOperationId> = Extract<keyof ControlOperations[Op]["responses"], 200 | 201 | 202>

/**
 * An answer with another success status the contract declares for the operation than the route's usual one
 * (`POST /auto-register`: 201 when it creates, 200 when it finds).
 */
export class WithStatus<St extends number, A> {
  readonly status: St
  readonly body: A
  constructor(status: St, body: A) {
    this.status = status
    this.body = body
  }
}

/** Any success status of `Op` with its body. */
type OtherSuccess<Op extends OperationId> = { [K in SuccessStatus<Op>]: WithStatus<K & number, ResponseBody<Op, K>> }[SuccessStatus<Op>]

/** A partner-contract operation answered with `status`; the handler sees the authenticated principal. */
export const partnerRoute = <
  Op extends OperationId,
  S extends SuccessStatus<Op>,
  R,
  PS extends ParamSpec = NoParams,
  QS extends ParamSpec = NoParams,
  B extends BodySchema | undefined = undefined
>(
  operationId: Op,
  status: S,
  spec: Inputs<PS, QS, B> & {
    readonly handle: (
      input: HandlerInput<PS, QS, B> & { readonly principal: Principal }
    ) => Effect.Effect<ResponseBody<Op, S> | OtherSuccess<Op>, ApiFailure | StoreError, R>
    /** The rows `handle`'s transaction will read (Route.readsAhead), from the handler's services. */
    readonly readsAhead?: (input: HandlerInput<PS, QS, B> & { readonly principal: Principal }, context: Context.Context<R>) => ReadonlyArray<Hint>
  }
): Route<R> => {
  const ahead = spec.readsAhead
  return build<R>(
    operationId,
    status,
    spec,
    (input, principal) => spec.handle({ ...(input as HandlerInput<PS, QS, B>), principal: principal as Principal }),
    true,
    ahead === undefined ? undefined : (input, principal, context) => ahead({ ...(input as HandlerInput<PS, QS, B>), principal }, context)
  )
}

/** A partner-contract operation without an API key (public status, portal tokens verified by the handler). */
export const publicRoute = <
  Op extends OperationId,
  S extends SuccessStatus<Op>,
  R,
  PS extends ParamSpec = NoParams,
  QS extends ParamSpec = NoParams,
  B extends BodySchema | undefined = undefined
>(
  operationId: Op,
  status: S,
  spec: Inputs<PS, QS, B> & { readonly handle: (input: HandlerInput<PS, QS, B>) => Effect.Effect<ResponseBody<Op, S>, ApiFailure | StoreError, R> }
): Route<R> => build<R>(operationId, status, spec, (input) => spec.handle(input as HandlerInput<PS, QS, B>))

/** A control-API operation (spec/control.yaml), behind the admin token. */
export const controlRoute = <
  Op extends ControlOperationId,
  S extends ControlSuccessStatus<Op>,
  R,
  PS extends ParamSpec = NoParams,
  QS extends ParamSpec = NoParams,
  B extends BodySchema | undefined = undefined
>(
  operationId: Op,
  status: S,
  spec: Inputs<PS, QS, B> & {
    readonly handle: (input: HandlerInput<PS, QS, B>) => Effect.Effect<ControlResponseBody<Op, S> | RawBody | StreamBody, ApiFailure | StoreError, R>
  }
): Route<R> => build<R>(operationId, status, spec, (input) => spec.handle(input as HandlerInput<PS, QS, B>))

/** A non-JSON answer (the trace's JSON lines, the rendered reference). */
export class RawBody {
  readonly contentType: string
  readonly text: string
  constructor(contentType: string, text: string) {
    this.contentType = contentType
    this.text = text
  }
}

/** A streamed answer (`text/event-stream`): the transport writes `chunks` until they end or the client leaves. */
export class StreamBody {
  readonly contentType: string
  readonly headers: Readonly<Record<string, string>>
  readonly chunks: Stream.Stream<string>
  constructor(contentType: string, headers: Readonly<Record<string, string>>, chunks: Stream.Stream<string>) {
    this.contentType = contentType
    this.headers = headers
    this.chunks = chunks
  }
}

/**
 * A partner-contract operation answered with a stream (`GET /stream`): decoded like `partnerRoute`, and the handler
 * also sees the request (the `Last-Event-ID` header).
 */
export const streamRoute = <Op extends OperationId, R, QS extends ParamSpec = NoParams>(
  operationId: Op,
  spec: {
    readonly query?: QS
    readonly handle: (input: {
      readonly query: QueryOf<QS>
      readonly principal: Principal
      readonly request: EngineRequest
    }) => Effect.Effect<StreamBody, ApiFailure | StoreError, R>
  }
): Route<R> =>
  build<R>(operationId, 200, spec.query === undefined ? {} : { query: spec.query }, (input, principal, request) =>
    spec.handle({ query: input.query as QueryOf<QS>, principal: principal as Principal, request })
  )

/**
 * A partner-contract operation whose handler reads the request itself: ID-token and client-secret operations,
 * which verify their credential before decoding the body (auth before decode, as everywhere) and may take a form
 * body (`POST /oauth/token`).
 */
export const requestRoute = <Op extends OperationId, S extends SuccessStatus<Op>, R>(
  operationId: Op,
  status: S,
  handle: (request: EngineRequest) => Effect.Effect<ResponseBody<Op, S>, ApiFailure | StoreError, R>
): Route<R> => build<R>(operationId, status, {}, (_input, _principal, request) => handle(request), false)
