/**
 * The money rules of the whole-run verdict (issue 23, part 3): per wallet, no answer shows a negative balance; and
 * the balance equals its ledger, where the history holds ledger reads (`GET /users/{id}/transactions`): each listed
 * row's balanceAfter is the row before it plus its amount (from 0 when the list is whole), and a transfer's answer
 * (`newBalance`, `transactionId`) is what the ledger lists for that transaction, every time it is listed.
 */
import { type ExchangeEntry, exchanges, type HistoryEntry, jsonOf, type Violation } from "./history-entries.ts"

/** The balances an answer states: a wallet's, a sub-account's, a transfer's result on either side. */
const BALANCE_FIELDS = ["balance", "available", "walletBalance", "newBalance", "masterWalletBalance"] as const

export const negativeBalances = (history: ReadonlyArray<HistoryEntry>): Array<Violation> =>
  exchanges(history).flatMap(({ e, i }) => {
    // A refusal states no balance: its body is not parsed.
    if (e.status >= 300) return []
    const body = jsonOf(e) as Partial<Record<(typeof BALANCE_FIELDS)[number], unknown>> | undefined
    if (typeof body !== "object" || body === null) return []
    const negative = BALANCE_FIELDS.filter((f) => typeof body[f] === "number" && (body[f] as number) < 0)
    return negative.length === 0
      ? []
      : [
          {
            rule: "no-negative-balance" as const,
            message: `${e.method} ${e.path} (${e.caller}) shows ${negative.map((f) => `${f} ${String(body[f])}`).join(", ")} at ${e.answeredAt}`,
            entries: [i]
          }
        ]
  })

interface LedgerRow {
  readonly transactionId?: unknown
  readonly amount?: unknown
  readonly balanceAfter?: unknown
}

const cents = (n: unknown) => (typeof n === "number" ? Math.round(n * 100) : undefined)

/** `GET …/users/{id}/transactions[?query]`: the sub-account, and whether the list is the whole ledger (no filter, no page). */
const ledgerRead = (e: ExchangeEntry) => {
  const m = /\/users\/([^/?]+)\/transactions(\?.*)?$/.exec(e.path)
  if (e.method !== "GET" || e.status !== 200 || m === null) return undefined
  const body = jsonOf(e) as { transactions?: unknown; hasMore?: unknown } | undefined
  if (!Array.isArray(body?.transactions)) return undefined
  const query = new URLSearchParams(m[2] ?? "")
  const filtered = ["from", "to", "type", "cursor"].some((k) => query.has(k))
  return { subAccountId: decodeURIComponent(m[1] ?? ""), rows: body.transactions as ReadonlyArray<LedgerRow>, whole: !filtered && body.hasMore === false }
}

/** Within one listing (newest first): each row's balanceAfter is the older row's plus its amount; from 0 when whole. */
const chainBreak = (rows: ReadonlyArray<LedgerRow>, whole: boolean): string | undefined => {
  for (const [n, row] of rows.entries()) {
    const older = rows[n + 1]
    const before = older === undefined ? (whole ? 0 : undefined) : cents(older.balanceAfter)
    const amount = cents(row.amount)
    const after = cents(row.balanceAfter)
    if (before === undefined || amount === undefined || after === undefined) continue
    if (before + amount !== after)
      return `transaction ${String(row.transactionId)} moves ${String(row.amount)} from ${before / 100}${older === undefined ? " (the ledger's start)" : ""} but lists balanceAfter ${String(row.balanceAfter)}`
  }
  return undefined
}

/** A transfer's answer: the transaction it made and the sub-account balance it states after it. */
const transferAnswer = (e: ExchangeEntry) => {
  if (e.method !== "POST" || e.status >= 300 || !/\/users\/[^/]+\/(deposit|withdraw)$/.test(e.path)) return undefined
  const body = jsonOf(e) as { transactionId?: unknown; newBalance?: unknown } | undefined
  return typeof body?.transactionId === "string" && typeof body.newBalance === "number"
    ? { transactionId: body.transactionId, newBalance: body.newBalance }
    : undefined
}

/**
 * Per sub-account wallet: every ledger listing is a consistent chain, and every time a transaction is listed (or was
 * answered, for a transfer) it shows the same balance after it. Nothing is compared across a reset.
 */
export const walletLedger = (history: ReadonlyArray<HistoryEntry>): Array<Violation> => {
  const found: Array<Violation> = []
  /** Per world and transaction: the first balance after it the history shows, and where. */
  const stated = new Map<string, { balance: number; i: number; where: string }>()
  const agree = (w: number, transactionId: string, balance: number | undefined, i: number, where: string) => {
    if (balance === undefined) return
    const key = `${w} ${transactionId}`
    const first = stated.get(key)
    if (first === undefined) stated.set(key, { balance, i, where })
    else if (first.balance !== balance && !found.some((v) => v.entries.includes(i)))
      found.push({
        rule: "wallet-ledger",
        message: `transaction ${transactionId} left the wallet at ${first.balance / 100} per ${first.where} but at ${balance / 100} per ${where}`,
        entries: [first.i, i]
      })
  }
  for (const { e, i, w } of exchanges(history)) {
    const transfer = transferAnswer(e)
    if (transfer !== undefined) agree(w, transfer.transactionId, cents(transfer.newBalance), i, `the answer to ${e.method} ${e.path}`)
    const read = ledgerRead(e)
    if (read === undefined) continue
    const broken = chainBreak(read.rows, read.whole)
    if (broken !== undefined) found.push({ rule: "wallet-ledger", message: `sub-account ${read.subAccountId}'s ledger (${e.path}): ${broken}`, entries: [i] })
    for (const row of read.rows)
      if (typeof row.transactionId === "string") agree(w, row.transactionId, cents(row.balanceAfter), i, `the ledger listing ${e.path}`)
  }
  return found
}
