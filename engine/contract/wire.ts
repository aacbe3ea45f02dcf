/**
 * The engine's view of the contract's types: names for the generated schemas and operation shapes, so services and
 * routes say "this returns the contract's Order" and `npm run typecheck` fails when they drift. Types only.
 * Owns nothing at run time; regenerate the *.gen.ts files with `npm run spec:gen` after changing spec/.
 */
import type { components as ControlComponents, operations as ControlOperations } from "./control.gen.ts"
import type { components, operations } from "./openapi.gen.ts"

export type Schemas = components["schemas"]
export type ControlSchemas = ControlComponents["schemas"]

export type OperationId = keyof operations
export type ControlOperationId = keyof ControlOperations

type JsonContent<R> = R extends { content: { "application/json": infer B } } ? B : never

/** The JSON body the contract declares for `Op` answering `Status`. */
export type ResponseBody<Op extends OperationId, Status extends keyof operations[Op]["responses"]> = JsonContent<operations[Op]["responses"][Status]>
export type ControlResponseBody<Op extends ControlOperationId, Status extends keyof ControlOperations[Op]["responses"]> = JsonContent<
  ControlOperations[Op]["responses"][Status]
>

/** The contract's JSON request body of `Op`. */
export type RequestBody<Op extends OperationId> = operations[Op] extends { requestBody?: infer B } ? JsonContent<NonNullable<B>> : never
export type QueryOf<Op extends OperationId> = operations[Op]["parameters"] extends { query?: infer Q } ? NonNullable<Q> : never

export type ErrorCode = Schemas["ErrorCode"]
