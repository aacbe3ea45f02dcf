/**
 * The spec's error catalogue: every error code with its HTTP status, and the one failure type the engine raises.
 * Owns: code -> status. Does not own: how a failure is rendered (http/errors.ts does that).
 */
import { Data, Effect } from "effect"

export const ERROR_STATUS = {
  AUTH_MISSING: 401,
  AUTH_INVALID: 401,
  AUTH_SUSPENDED: 403,
  AUTH_REVOKED: 403,
  RATE_LIMITED: 429,
  MISSING_PARAM: 400,
  MISSING_IDEMPOTENCY_KEY: 400,
  INVALID_SYMBOL: 400,
  UNKNOWN_EXCHANGE: 400,
  INVALID_TYPE: 400,
  VALIDATION_ERROR: 400,
  BATCH_LIMIT_EXCEEDED: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  QUOTE_REQUIRED: 400,
  QUOTE_NOT_FOUND: 404,
  QUOTE_SCOPE_MISMATCH: 403,
  STALE_QUOTE: 409,
  QUOTE_ORDER_MISMATCH: 409,
  INSUFFICIENT_FUNDS: 400,
  KYC_REQUIRED: 403,
  MARKET_CLOSED: 422,
  /** The next three are ours (docs/decisions.md D-003): the spec names the condition but no code. */
  INSUFFICIENT_HOLDINGS: 422,
  OFFER_NOT_OPEN: 422,
  WEBHOOK_TEST_FAILED: 502,
  FORBIDDEN: 403,
  INTERNAL_ERROR: 500,
  MAINTENANCE: 503,
  SERVICE_UNAVAILABLE: 503
} as const

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
}

/** A failure the API reports to the caller: a spec error code, a message, and optional extras. */
export class ApiFailure extends Data.TaggedError("ApiFailure")<{
  readonly code: ErrorCode
  readonly message: string
  readonly extras?: ErrorExtras
  /** Overrides the catalogue status (only the sandbox force header does this). */
  readonly status?: number
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
