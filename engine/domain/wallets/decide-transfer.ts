/**
 * Deposits (master -> sub-account) and withdrawals (sub-account -> master), D-025: the rules as pure functions. A
 * transfer moves money only between wallets of an active sub-account and the master, never more than the paying
 * wallet has available. `decideTransfer` answers a refusal or the journal entry to post; once the ledger has posted
 * it (its entry id comes from the journal's position, its balances after), `confirmTransfer` gives the
 * deposit.confirmed / withdraw.confirmed event and the answer.
 * Owns: those rules and payloads. Does not own the amounts' precision and local leg (domain/transfer.ts) nor posting
 * (app/ledger.ts).
 */
import type { Schemas } from "../../contract/wire.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { type EntryKind, MASTER, type Posting, transfer, walletAccount } from "../ledger.ts"
import { type Cents, centsToWire, rate6ToWire, toWireNumber } from "../money.ts"
import { refuseInactive, type SubAccountRecord } from "../subaccount.ts"
import { LOCAL_DECIMALS, type TransferAmounts, type TransferInput } from "../transfer.ts"

export type Direction = "DEPOSIT" | "WITHDRAWAL"

export interface TransferRequest extends TransferInput {
  readonly note?: string | undefined
  readonly reference?: string | undefined
}

/** The wallet that pays: the master's for a deposit, the sub-account's for a withdrawal. */
export const payer = (direction: Direction, subAccountId: string): string => (direction === "DEPOSIT" ? MASTER : subAccountId)

export interface TransferState {
  readonly subAccount: SubAccountRecord
  /** The paying wallet's available cash (`payer`). */
  readonly available: Cents
  /** TEST ONLY (sim/defects.ts, E-190): the planted defect `overdraw` lets a withdrawal take more than is available. */
  readonly overdrawPlanted?: boolean | undefined
}

export interface TransferCommand {
  readonly direction: Direction
  readonly amounts: TransferAmounts
  readonly request: TransferRequest
}

/** The journal entry a transfer posts (app/ledger.ts EntryInput). */
export interface TransferEntry {
  readonly kind: EntryKind
  readonly plantedOverdraw: boolean
  readonly postings: ReadonlyArray<Posting>
  readonly at: number
  readonly description: string
  readonly reference: string | undefined
  readonly note: string | undefined
}

export interface TransferPlan {
  readonly entry: TransferEntry
  readonly subAccount: SubAccountRecord
  readonly command: TransferCommand
}

/**
 * A transfer of an active sub-account (FORBIDDEN when frozen or closed), refused INSUFFICIENT_FUNDS when the paying
 * wallet holds less than the amount; else one entry moving the amount between the two wallets.
 */
export const decideTransfer = (state: TransferState, command: TransferCommand, now: number): TransferPlan | ApiFailure => {
  const { direction, amounts, request } = command
  const s = state.subAccount
  const inactive = refuseInactive(s, direction === "DEPOSIT" ? "a deposit" : "a withdrawal")
  if (inactive !== undefined) return inactive
  const from = payer(direction, s.subAccountId)
  const to = direction === "DEPOSIT" ? s.subAccountId : MASTER
  const overdraw = direction === "WITHDRAWAL" && state.overdrawPlanted === true
  if (state.available < amounts.cents && !overdraw) {
    const whose = direction === "DEPOSIT" ? "the master wallet" : `sub-account ${s.subAccountId}`
    return fail("INSUFFICIENT_FUNDS", `${whose} holds ${centsToWire(state.available)} USD available; the transfer needs ${centsToWire(amounts.cents)} USD`)
  }
  const entry: TransferEntry = {
    kind: direction,
    plantedOverdraw: overdraw,
    postings: transfer(walletAccount(from), walletAccount(to), amounts.cents),
    at: now,
    description: direction === "DEPOSIT" ? "Deposit from the master wallet" : "Withdrawal to the master wallet",
    reference: request.reference,
    note: request.note
  }
  return { entry, subAccount: s, command }
}

/** What the ledger answered for the posted entry: its id and the balances after it. */
export interface PostedEntry {
  readonly entryId: string
  readonly after: ReadonlyMap<string, number>
}

/** The confirmation event and the answer of a posted transfer. */
export const confirmTransfer = (plan: TransferPlan, posted: PostedEntry) => {
  const { subAccount: s, command, entry } = plan
  const { direction, amounts, request } = command
  const newBalance = centsToWire(posted.after.get(walletAccount(s.subAccountId)) ?? 0)
  const local = amounts.local
  const localFields =
    local === null ? {} : { localAmount: toWireNumber(local.amount4, LOCAL_DECIMALS), localCurrency: local.currency, fxRate: rate6ToWire(local.rate) }
  const event = {
    name: direction === "DEPOSIT" ? "deposit.confirmed" : "withdraw.confirmed",
    data: { subAccountId: s.subAccountId, externalId: s.externalId, amount: centsToWire(amounts.cents), currency: "USD", newBalance, ...localFields }
  } as const
  const answer: Schemas["WalletTransferResponse"] = {
    message: direction === "DEPOSIT" ? "Deposit successful." : "Withdrawal successful.",
    transactionId: posted.entryId,
    type: direction,
    subAccountId: s.subAccountId,
    externalId: s.externalId,
    amount: centsToWire(amounts.cents),
    currency: "USD",
    newBalance,
    masterWalletBalance: centsToWire(posted.after.get(walletAccount(MASTER)) ?? 0),
    localAmount: local === null ? null : toWireNumber(local.amount4, LOCAL_DECIMALS),
    localCurrency: local?.currency ?? null,
    fxRate: local === null ? null : rate6ToWire(local.rate),
    note: request.note ?? null,
    reference: request.reference ?? null,
    createdAt: new Date(entry.at).toISOString()
  }
  return { event, answer }
}
