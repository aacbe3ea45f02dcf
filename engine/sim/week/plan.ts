/**
 * A simulated trading week, planned from a seed (issue 25): who trades (partners, their sub-accounts), what they do
 * and when (orders through quotes, withdrawals, price alerts), and which of their webhook receivers fail. Pure: the
 * same options give the same plan, action for action; running it is drive.ts's.
 *
 * The week starts on Monday 2026-11-23 (an ordinary NSE week). Set-up (partners, webhooks, sub-accounts, KYC,
 * deposits) runs before the first open, one sub-account a second so no partner's rate-limit window overflows; the
 * orders fall at seeded instants inside the NSE session (06:00-12:00 UTC) of each trading day.
 */
import { makeGenerator } from "../random.ts"

export interface WeekOptions {
  readonly seed: number
  readonly partners: number
  readonly subAccounts: number
  readonly orders: number
  /** Trading days, Monday on (weekends skipped). */
  readonly days: number
}

export const DEFAULT_WEEK: Omit<WeekOptions, "seed"> = { partners: 10, subAccounts: 1_000, orders: 10_000, days: 5 }

/** Monday 2026-11-23, 00:00 UTC. */
export const WEEK_START = Date.parse("2026-11-23T00:00:00.000Z")
const DAY_MS = 86_400_000
/** NSE's session in UTC (09:00-15:00 Nairobi). */
const OPEN_MS = 6 * 3_600_000
const SESSION_MS = 6 * 3_600_000
/** Set-up begins at 03:00 UTC on the first day, one sub-account a second. */
const SETUP_FROM_MS = 3 * 3_600_000
/** After the last close, long enough for the last retries (5 s + 30 s + 5 min + 30 min + 2 h) and the settle job. */
export const WIND_DOWN_MS = 3 * 3_600_000
/** How often the flaky receivers are given a new run of failures. */
export const FLAKY_EVERY_MS = 30 * 60_000
/** A sub-account's deposit, and the margin credited to the sandbox master for it (USD). */
export const DEPOSIT_USD = 500

export type WeekAction =
  | { readonly kind: "order"; readonly at: number; readonly subAccount: number; readonly symbol: string; readonly quantity: number; readonly sell: boolean }
  | { readonly kind: "withdraw"; readonly at: number; readonly subAccount: number; readonly amount: number }
  | {
      readonly kind: "alert"
      readonly at: number
      readonly partner: number
      readonly symbol: string
      readonly condition: "above" | "below"
      readonly percent: number
    }
  | { readonly kind: "flaky"; readonly at: number; readonly failures: ReadonlyArray<ReadonlyArray<FailureKind>> }

/** How a flaky receiver fails one attempt: a 5xx, an answer after the 8 s deadline, or no connection. */
export type FailureKind = "500" | "503" | "timeout" | "unreachable"

export interface WeekPlan {
  readonly options: WeekOptions
  /** Partner index of each sub-account. */
  readonly ownerOf: ReadonlyArray<number>
  /** When each sub-account is set up. */
  readonly setupAt: ReadonlyArray<number>
  /** Partners whose receivers fail now and then (every third, the first included). */
  readonly flaky: ReadonlyArray<boolean>
  /** Every action after set-up, in time order. */
  readonly actions: ReadonlyArray<WeekAction>
  readonly endsAt: number
}

/** NSE symbols the week trades (listed in the seeded catalogue). */
export const WEEK_SYMBOLS: ReadonlyArray<string> = ["SCOM.KE", "EQTY.KE", "KCB.KE", "EABL.KE", "BAT.KE", "COOP.KE"]

/** The trading days' midnights (UTC), Monday on, weekends skipped. */
export const tradingDays = (days: number): ReadonlyArray<number> => {
  const out: Array<number> = []
  for (let d = 0; out.length < days; d++) {
    const weekday = (d % 7) + 1 // 1 = Monday
    if (weekday <= 5) out.push(WEEK_START + d * DAY_MS)
  }
  return out
}

export const planWeek = (options: WeekOptions): WeekPlan => {
  const next = makeGenerator(options.seed)
  const below = (n: number) => next() % Math.max(1, n)
  const ownerOf = Array.from({ length: options.subAccounts }, (_, i) => i % options.partners)
  const setupAt = ownerOf.map((_, i) => WEEK_START + SETUP_FROM_MS + i * 1_000)
  const flaky = Array.from({ length: options.partners }, (_, p) => p % 3 === 0)
  const days = tradingDays(options.days)
  const inSession = () => (days[below(days.length)] ?? WEEK_START) + OPEN_MS + below(SESSION_MS)
  const actions: Array<WeekAction> = []
  for (let n = 0; n < options.orders; n++) {
    const subAccount = below(options.subAccounts)
    const symbol = WEEK_SYMBOLS[below(WEEK_SYMBOLS.length)] ?? "SCOM.KE"
    // About one order in four sells what the sub-account holds (drive.ts decides whether it holds any).
    actions.push({ kind: "order", at: inSession(), subAccount, symbol, quantity: 1 + below(50), sell: below(4) === 0 })
    if (below(20) === 0) actions.push({ kind: "withdraw", at: inSession(), subAccount, amount: 1 + below(20) })
  }
  for (let partner = 0; partner < options.partners; partner++)
    for (let a = 0; a < 3; a++) {
      const condition = below(2) === 0 ? "above" : "below"
      actions.push({ kind: "alert", at: inSession(), partner, symbol: WEEK_SYMBOLS[below(WEEK_SYMBOLS.length)] ?? "SCOM.KE", condition, percent: below(4) })
    }
  const firstDay = days[0] ?? WEEK_START
  const lastClose = (days[days.length - 1] ?? WEEK_START) + OPEN_MS + SESSION_MS
  const kinds: ReadonlyArray<FailureKind> = ["500", "503", "timeout", "unreachable"]
  for (let at = firstDay + OPEN_MS; at < lastClose; at += FLAKY_EVERY_MS) {
    const failures = flaky.map((isFlaky) => (isFlaky ? Array.from({ length: below(4) }, () => kinds[below(kinds.length)] ?? "500") : []))
    actions.push({ kind: "flaky", at, failures })
  }
  // Stable: actions at one instant keep the order they were planned in.
  actions.sort((a, b) => a.at - b.at)
  return { options, ownerOf, setupAt, flaky, actions, endsAt: lastClose + WIND_DOWN_MS }
}
