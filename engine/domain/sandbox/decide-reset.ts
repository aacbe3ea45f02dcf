/**
 * The sandbox reset's rules (`POST /reset` at the sandbox root, D-013) as pure functions: only the sandbox can be
 * reset (403 FORBIDDEN on production); a reset wipes the caller's whole sandbox partition (sub-accounts and their
 * rows, orders, quotes, holdings, the ledger, idempotency records, events, audit records, usage counts and reports)
 * and seeds the master wallet again with the sandbox's seed; the answer reports the balance the ledger posted. The
 * dispatcher (app/sandbox/service.ts) runs the wipe and the seed in one transaction. The partner, its keys and its
 * production partition are outside the partition, so untouched.
 * Owns these rules and the answer. Does not own the wipe itself (the store) nor the ledger's posting.
 */
import type { Environment } from "../../app/principal.ts"
import type { ResponseBody } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { MASTER } from "../ledger.ts"
import { type Cents, centsToWire } from "../money.ts"
import { SANDBOX_SEED_CENTS } from "../partners/decide-partner.ts"

/** What a reset does: wipe the partition, then seed `account` with `cents`. */
export interface ResetPlan {
  readonly wipe: string
  readonly seed: { readonly account: string; readonly cents: Cents }
}

/** Production is never reset. */
export const refuseReset = (environment: Environment): ApiFailure | undefined =>
  environment === "sandbox" ? undefined : fail("FORBIDDEN", "only the sandbox can be reset")

export const decideReset = (partition: string): ResetPlan => ({ wipe: partition, seed: { account: MASTER, cents: SANDBOX_SEED_CENTS } })

/** The answer, from the master wallet's balance after the seed was posted. */
export const resetAnswer = (balance: Cents, now: number): ResponseBody<"resetSandbox", 200> => ({
  message: "Sandbox reset: sub-accounts, orders, quotes and events were wiped; the master wallet holds 100000 USD.",
  walletBalance: centsToWire(balance),
  currency: "USD",
  resetAt: new Date(now).toISOString()
})
