/**
 * A symbol change (D-340..D-342): the listing takes a new ticker, announced now (`corporateaction.symbol_changed`, the
 * old symbol in `symbol`) and applied now when its effective date is today, else at 00:00 UTC of that date by a
 * durable job, unless the listing changed symbol since. A symbol any listing has, had or is about to take names that
 * listing for good: never reused. Two steps around the lookup of the symbols in use, which the dispatcher reads:
 * `newSymbolFor` (the ticker's form) then `decideSymbolChange`. Pure.
 * Owns: those rules and the record. Does not own renaming the records that name the listing (app/corporate-actions/symbol-change.ts)
 * nor which symbol a listing answers to (app/symbols.ts).
 */
import { findExchange } from "../calendar.ts"
import { type ApiFailure, fail } from "../errors.ts"
import { type Instrument, SYMBOL_FORMAT } from "../instruments.ts"
import type { ActionRecord } from "../reference/corporate-actions.ts"
import { dateMs, isCalendarDate, isoDate } from "../reference/seeded.ts"
import { actionOf, announcements } from "./action-record.ts"
import { type ActionPlan, emptyPlan } from "./plan.ts"
import type { ListingStatus, RaiseInput } from "./raise.ts"

/** The job that applies a symbol change announced for a later date, at its effective instant (00:00 UTC of that date). */
export const SYMBOL_CHANGE_JOB = "corporateaction.symbol_change"

/**
 * The new symbol asked for, upper-cased: the spec's symbol format (2-20 letters or digits, dot-separated) with the
 * listing's exchange suffix (`.KE` on NSE, facts 9.1.1), and not the symbol it has. Whether another listing has or had
 * it is decideSymbolChange's check (committed state).
 */
export const newSymbolFor = (raw: string | undefined, instrument: Instrument): string | ApiFailure => {
  const suffix = findExchange(instrument.exchange)?.suffix ?? instrument.exchange
  const symbol = raw?.toUpperCase()
  if (symbol === undefined || !SYMBOL_FORMAT.test(symbol) || !symbol.endsWith(`.${suffix}`) || symbol.split(".").length !== 2) {
    return fail("VALIDATION_ERROR", `a SYMBOL_CHANGE needs newSymbol: a ticker of 1-17 letters or digits and the exchange suffix .${suffix}`, {
      param: "newSymbol"
    })
  }
  if (symbol === instrument.symbol) return fail("VALIDATION_ERROR", `${instrument.symbol} already has that symbol`, { param: "newSymbol" })
  return symbol
}

export interface SymbolChangeState {
  readonly instrument: Instrument
  readonly listingStatus: ListingStatus
  /** Symbol changes raised and not yet applied, of every listing. */
  readonly pending: ReadonlyArray<ActionRecord>
  /** Whether a listing has or had the new symbol. */
  readonly symbolUsed: boolean
  readonly holderCount: number
  readonly partitions: ReadonlyArray<string>
}

/** One change pending per listing; the new symbol never used; effective today (UTC) or later. */
export const decideSymbolChange = (
  state: SymbolChangeState,
  command: { readonly input: RaiseInput; readonly newSymbol: string },
  now: number,
  ids: { readonly actionId: string }
): ActionPlan | ApiFailure => {
  const { instrument, pending } = state
  const { input, newSymbol } = command
  if (pending.some((a) => a.details.oldSymbol === instrument.symbol)) return fail("CONFLICT", `${instrument.symbol} already has a symbol change pending`)
  if (state.symbolUsed || pending.some((a) => a.details.newSymbol === newSymbol)) {
    return fail("CONFLICT", `${newSymbol} is or was the symbol of a listing`, { param: "newSymbol" })
  }
  const today = isoDate(now)
  const effectiveDate = input.effectiveDate ?? today
  if (!isCalendarDate(effectiveDate) || effectiveDate < today) {
    return fail("VALIDATION_ERROR", "effectiveDate must be a date (YYYY-MM-DD), today (UTC) or later", { param: "effectiveDate" })
  }
  const effectiveAt = dateMs(effectiveDate)
  const immediate = effectiveAt <= now
  const details = { oldSymbol: instrument.symbol, newSymbol }
  const description = input.description ?? `Ticker ${instrument.symbol} becomes ${newSymbol}`
  const action = actionOf(instrument, ids.actionId, "SYMBOL_CHANGE", now, description, details, immediate, effectiveAt)
  const none = emptyPlan(state.listingStatus)
  return {
    ...none,
    action,
    events: announcements(state.partitions, "corporateaction.symbol_changed", action, details),
    rename: immediate ? { newSymbol } : undefined,
    jobs: immediate ? [] : [{ kind: SYMBOL_CHANGE_JOB, dueAt: effectiveAt, payload: { actionId: ids.actionId } }],
    outcome: { ...none.outcome, action, accountsAffected: state.holderCount }
  }
}

/**
 * At the effective instant of a change announced for later: the symbol it changes to, unless it was applied already
 * or the listing no longer has the symbol it changes from (it changed since).
 */
export const dueSymbolChange = (action: ActionRecord, listingSymbolNow: string | undefined): string | undefined =>
  action.completedAt === null && listingSymbolNow === action.details.oldSymbol ? String(action.details.newSymbol) : undefined
