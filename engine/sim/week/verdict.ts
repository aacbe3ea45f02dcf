/**
 * The week's verdict: its history judged by the history checker (engine/conform/history.ts: balances, keys,
 * deliveries, rate-limit windows, orders, timestamps), and money conserved in every partition's ledger: the balances
 * of all its accounts sum to zero (every entry's postings do; domain/ledger.ts), and no wallet or escrow is negative.
 */
import { Effect } from "effect"
import { Balances } from "../../app/docs.ts"
import { partitionOf } from "../../app/principal.ts"
import { checkHistory, type HistoryEntry, type Violation } from "../../conform/history.ts"
import { mustStayNonNegative } from "../../domain/ledger.ts"
import { Store } from "../../store/port.ts"

export interface Conservation {
  readonly partitions: number
  readonly accounts: number
  readonly problems: ReadonlyArray<string>
}

/** Every partition of the partners: their balances sum to zero, and none that holds money is below zero. */
export const checkConservation = (partnerIds: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const store = yield* Store
    const problems: Array<string> = []
    let accounts = 0
    const partitions = partnerIds.flatMap((id) => [partitionOf(id, "sandbox"), partitionOf(id, "production")])
    for (const partition of partitions) {
      const balances = yield* store.read((tx) => Balances.list(tx, partition, { limit: 1_000_000, order: "asc" }))
      accounts += balances.length
      const sum = balances.reduce((total, b) => total + b.cents, 0)
      if (sum !== 0) problems.push(`${partition}: the ledger's balances sum to ${sum} cents, not 0`)
      for (const b of balances) if (mustStayNonNegative(b.account) && b.cents < 0) problems.push(`${partition}: ${b.account} is at ${b.cents} cents`)
    }
    return { partitions: partitions.length, accounts, problems } satisfies Conservation
  })

export const judgeHistory = (history: ReadonlyArray<HistoryEntry>): ReadonlyArray<Violation> => checkHistory(history)
