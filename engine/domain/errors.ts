/**
 * The failure type the engine raises, typed by the contract's error catalogue. The table of codes and statuses lives
 * once, in spec/openapi.yaml (ErrorCode, x-error-statuses); `npm run spec:gen` derives ERROR_STATUS from it.
 * Owns: ApiFailure and its status. Does not own rendering (http/exchange.ts).
 */
import { Data, Effect } from "effect"
import { ERROR_STATUS } from "../contract/catalogue.gen.ts"

export { ERROR_STATUS }

export type ErrorCode = keyof typeof ERROR_STATUS

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_STATUS, code)

/** Optional extras the spec allows on the error object. */
export interface ErrorExtras {
  readonly param?: string
  readonly params?: ReadonlyArray<string>
  readonly invalid?: ReadonlyArray<string>
  readonly max?: number
  readonly received?: number
  readonly mode?: string
  readonly endsAt?: string
  readonly statusPage?: string
  readonly activeConnections?: number
  readonly limit?: number
  /** WEBHOOK_TEST_FAILED (D-056): what the endpoint answered (null when unreachable or timed out) and the event sent. */
  readonly httpStatus?: number | null
  readonly eventId?: string
  /** The statuses a sandbox caller may force on this operation (D-018 revised). */
  readonly allowedStatuses?: ReadonlyArray<number>
}

/** A failure the API reports to the caller: a contract error code, a message, and optional extras. */
export class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly code: ErrorCode
  readonly message: string
  readonly extras?: ErrorExtras
  /** Overrides the catalogue status (only the sandbox force header does this). */
  readonly status?: number
  /** Seconds for a `Retry-After` header (the stream cap's 429, E-133); not part of the body. */
  readonly retryAfter?: number
}> {
  get httpStatus(): number {
    return this.status ?? ERROR_STATUS[this.code]
  }
}

export const fail = (code: ErrorCode, message: string, extras?: ErrorExtras): ApiFailure =>
  new ApiFailure(extras === undefined ? { code, message } : { code, message, extras })

/** Pure functions return `A | ApiFailure`; this lifts such a result into the error channel. */
export const liftFailure = <A>(value: A | ApiFailure): Effect.Effect<A, ApiFailure> =>
  value instanceof ApiFailure ? Effect.fail(value) : Effect.succeed(value)
