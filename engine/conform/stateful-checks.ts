/**
 * The stateful checks of `sokoni conform` (issue 10, part 1b): rules no request-by-request fuzzer sees, because they
 * hold between requests. Quote TTL and single use; idempotency (same body replayed, different body refused, a burst
 * of one key creating one thing); an exact rate-limit oracle (which request is the first 429, and the Remaining,
 * Reset and Retry-After it must carry); money conserved through a trade (wallet + escrow + fees, against the fee rule
 * recomputed here) and an overdraw refused with nothing moved; each base taking its own kind of key only; webhook
 * signatures over the bytes sent, retries on the spec's schedule with one eventId; the stream's events once each and
 * resumed after a cut; cross-partner access refused.
 * Owns their run order. Each family lives in stateful-<family>.ts, their shared pieces in stateful-kit.ts.
 *
 * With a control API each check starts from a fresh partner and waits on the target's virtual clock; without one it
 * uses the keys given and waits real time (the report marks those long waits), and the rate-limit oracle runs last.
 */
import { idempotencyConcurrent, idempotencyDifferentBody, idempotencyReplay } from "./stateful-idempotency.ts"
import { eventAgreement, webhookSignature } from "./stateful-events.ts"
import { crossPartner, resourceLifecycle, subAccountIsolation } from "./stateful-isolation.ts"
import type { StatefulCheck } from "./stateful-kit.ts"
import { keyKinds } from "./stateful-keys.ts"
import { moneyInvariants, overdrawRefused } from "./stateful-money.ts"
import { quoteSingleUse, quoteTtl } from "./stateful-quotes.ts"
import { rateLimitOracle } from "./stateful-rate-limit.ts"
import { streamResumption } from "./stateful-stream.ts"
import { webhookRetry } from "./stateful-webhook-retry.ts"

export { BASE_FEE_BPS, baseFeeCents, type StatefulCheck } from "./stateful-kit.ts"
export { QUOTE_TTL_MS } from "./stateful-quotes.ts"

/** The stateful checks in the order they run; the rate-limit oracle last (without a control API it uses up a window). */
export const statefulChecks = (): ReadonlyArray<StatefulCheck> => [
  quoteTtl,
  quoteSingleUse,
  idempotencyReplay,
  idempotencyDifferentBody,
  idempotencyConcurrent,
  moneyInvariants,
  overdrawRefused,
  keyKinds,
  webhookSignature,
  webhookRetry,
  eventAgreement,
  streamResumption,
  resourceLifecycle,
  crossPartner,
  subAccountIsolation,
  rateLimitOracle
]
