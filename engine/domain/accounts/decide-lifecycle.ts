/**
 * A sub-account's lifecycle as pure rules: closing (refused while something still blocks it), freezing and
 * unfreezing (a compliance freeze cannot be lifted by the partner, D-023) and KYC assertions, by the partner or by
 * service compliance. Each answers a refusal or a plan: the account after, and the event it announces (none when
 * the request changes nothing: a repeat answers the account unchanged). The dispatcher
 * (app/account-lifecycle/service.ts) loads the account and its blockers, writes the plan and builds the answer.
 * Owns: these decisions and their events' payloads. Does not own the transitions' own checks (domain/subaccount.ts).
 */
import { ApiFailure, fail } from "../errors.ts"
import { type Actor, type KycAssertion, nextFreeze, nextKyc, refuseClosed, type SubAccountRecord } from "../subaccount.ts"

export type AccountEventName = "account.closed" | "account.frozen" | "kyc.updated"

export interface AccountPlan {
  /** The account as it is after the command (the one loaded when nothing changes). */
  readonly account: SubAccountRecord
  /** The event to append with the saved account; undefined when nothing changed (nothing is saved either). */
  readonly event?: { readonly name: AccountEventName; readonly data: Readonly<Record<string, unknown>> } | undefined
}

const unchanged = (account: SubAccountRecord): AccountPlan => ({ account })

/** Closing (D-022): a closed account stays as it is; open orders, subscriptions or money left block it (CONFLICT). */
export const decideClose = (s: SubAccountRecord, blockers: ReadonlyArray<{ readonly reason: string }>, now: number): AccountPlan | ApiFailure => {
  if (s.status === "closed") return unchanged(s)
  if (blockers.length > 0) {
    return fail("CONFLICT", `sub-account ${s.subAccountId} cannot be closed yet: ${blockers.map((b) => b.reason).join(", ")} (see GET /users/summary)`)
  }
  const closedAt = new Date(now).toISOString()
  return {
    account: { ...s, status: "closed", closedAt: now },
    event: { name: "account.closed", data: { subAccountId: s.subAccountId, externalId: s.externalId, status: "closed", closedAt } }
  }
}

/** Freeze (`frozen`) or unfreeze by `actor`, with the reason kept for the audit log; `account.frozen` says who. */
export const decideFreeze = (s: SubAccountRecord, frozen: boolean, actor: Actor, reason: string | undefined): AccountPlan | ApiFailure => {
  const next = nextFreeze(s, frozen, actor)
  if (next instanceof ApiFailure) return next
  if (next === undefined) return unchanged(s)
  return {
    account: { ...next, statusReason: reason ?? null },
    event: {
      name: "account.frozen",
      data: { subAccountId: s.subAccountId, externalId: s.externalId, frozen, ...(frozen ? { frozenBy: actor } : { unfrozenBy: actor }) }
    }
  }
}

/**
 * A KYC assertion by the partner (refused on a closed account) or an override by compliance (any account);
 * `kyc.updated` carries the rejection's code and reason when REJECTED, and `overriddenByAdmin` for compliance.
 */
export const decideKyc = (s: SubAccountRecord, assertion: KycAssertion, actor: Actor, now: number): AccountPlan | ApiFailure => {
  if (actor === "partner") {
    const closed = refuseClosed(s, "a KYC assertion")
    if (closed !== undefined) return closed
  }
  const next = nextKyc(s, assertion, actor, now)
  if (next instanceof ApiFailure) return next
  if (next === undefined) return unchanged(s)
  const saved: SubAccountRecord = { ...s, ...next }
  return {
    account: saved,
    event: {
      name: "kyc.updated",
      data: {
        subAccountId: s.subAccountId,
        externalId: s.externalId,
        kycStatus: saved.kycStatus,
        kycLevel: saved.kycLevel,
        reference: saved.kycReference,
        ...(actor === "compliance" ? { overriddenByAdmin: true } : {}),
        ...(saved.kycStatus === "REJECTED" ? { kycRejectionCode: saved.kycRejectionCode, kycRejectionReason: saved.kycRejectionReason } : {})
      }
    }
  }
}
