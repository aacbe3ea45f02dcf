/**
 * What a corporate action decides, as data: the plan its dispatcher (app/corporate-actions/) writes in the action's one
 * transaction (issue 22, item 5). A rule (decide-*.ts) reads loaded state and answers a refusal (an ApiFailure with
 * the spec's code) or a plan; it never touches the store, the clock or the generator.
 * Owns: the plan's shape and its writing order. Does not own writing it.
 *
 * The writing order is fixed and is part of every trace (E-350): the listing's status, the dividend record, the
 * holdings, the ledger credits (their journal positions, holder by holder), the action record, the events (their
 * positions; each event's webhook hook books delivery jobs), the entitlements, the symbol change's renames, then the jobs.
 */
import type { EntryKind, Posting } from "../ledger.ts"
import type { Cents } from "../money.ts"
import type { ActionRecord } from "../reference/corporate-actions.ts"
import type { DividendRecord } from "../reference/dividends.ts"
import type { EntitlementRecord } from "./decide-rights.ts"
import type { ListingStatus } from "./raise.ts"

/** A position in one listing: units held, units reserved by open SELL orders. */
export interface Position {
  readonly symbol: string
  readonly quantity: number
  readonly reserved: number
}

/** One holder of a listing: its partner environment (partition), its account (`master` or a sub-account id), its position. */
export interface Holder {
  readonly partition: string
  readonly account: string
  readonly holding: Position
}

/** A journal entry crediting a holder's wallet from the issuer (a dividend, cash in lieu of a fraction). */
export interface Credit {
  readonly partition: string
  readonly entry: {
    readonly kind: EntryKind
    readonly postings: ReadonlyArray<Posting>
    readonly at: number
    readonly description: string
    readonly reference: string
  }
}

export interface PartitionEvent {
  readonly partition: string
  readonly name: string
  readonly data: Readonly<Record<string, unknown>>
}

export interface ActionJob {
  readonly kind: string
  readonly dueAt: number
  readonly payload: { readonly actionId: string }
}

/** What the operator's answer reports besides the action (app/corporate-actions/ adds the price path's rescale). */
export interface Outcome {
  readonly action: ActionRecord | undefined
  readonly dividend: DividendRecord | undefined
  readonly accountsAffected: number
  readonly ordersRejected: ReadonlyArray<string>
  readonly totalUsdCents: Cents | null
  readonly listingStatus: ListingStatus
  /** A split's ratios: the price path follows them once the transaction commits. */
  readonly rescale: { readonly ratioFrom: number; readonly ratioTo: number } | undefined
}

export interface ActionPlan {
  /** The listing's new status, set by the action `actionId`. */
  readonly listing?: { readonly status: ListingStatus; readonly actionId: string } | undefined
  readonly dividend?: DividendRecord | undefined
  readonly holdings: ReadonlyArray<Holder>
  readonly credits: ReadonlyArray<Credit>
  readonly action?: ActionRecord | undefined
  readonly events: ReadonlyArray<PartitionEvent>
  readonly entitlements: ReadonlyArray<EntitlementRecord>
  /** The listing takes this symbol now, and every record that names it follows (D-340, D-342). */
  readonly rename?: { readonly newSymbol: string } | undefined
  readonly jobs: ReadonlyArray<ActionJob>
  readonly outcome: Outcome
}

/** A plan that writes nothing yet: the listing's status as it is, nobody affected. */
export const emptyPlan = (listingStatus: ListingStatus): ActionPlan => ({
  holdings: [],
  credits: [],
  events: [],
  entitlements: [],
  jobs: [],
  outcome: {
    action: undefined,
    dividend: undefined,
    accountsAffected: 0,
    ordersRejected: [],
    totalUsdCents: null,
    listingStatus,
    rescale: undefined
  }
})
