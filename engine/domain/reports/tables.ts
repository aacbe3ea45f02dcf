/**
 * What a report holds (D-062): its rows, from the records the generating job reads, and the file they render to.
 * SUB_ACCOUNTS lists the accounts that existed by the period's end; TRANSACTIONS and STATEMENT the wallet rows of the
 * period, by time then ledger position; FEES and ORDERS the orders created in the period. Pure.
 * Owns: the columns, the filters and the rendering. Does not own reading the records (app/reports/).
 */
import type { TransactionType } from "../ledger.ts"
import { centsToWire, price4ToWire } from "../money.ts"
import type { OrderRecord } from "../order.ts"
import type { SubAccountRecord } from "../subaccount.ts"
import type { Period, ReportRecord } from "./report.ts"

export interface Table {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<unknown>>
}

/** A wallet transaction row as the ledger stores it (app/docs.ts WalletTxnDoc). */
export interface WalletRow {
  readonly transactionId: string
  readonly type: TransactionType
  readonly cents: number
  readonly balanceAfter: number
  readonly orderId: string | null
  readonly description: string
  readonly at: number
  /** The journal position of its entry (absent on rows of an earlier version). */
  readonly seq?: number | undefined
}

const isoAt = (ms: number): string => new Date(ms).toISOString()
type Scope = Pick<ReportRecord, "subAccountId">

/** Which accounts a TRANSACTIONS or STATEMENT report reads: its sub-account, else the master and every sub-account. */
export const walletOwners = (r: Scope, subAccounts: ReadonlyArray<Pick<SubAccountRecord, "subAccountId">>): ReadonlyArray<string> =>
  r.subAccountId !== null ? [r.subAccountId] : ["master", ...subAccounts.map((s) => s.subAccountId)]

export const subAccountTable = (r: Scope, accounts: ReadonlyArray<SubAccountRecord>, period: Period): Table => ({
  columns: ["subAccountId", "externalId", "status", "kycStatus", "kycLevel", "createdAt"],
  rows: accounts
    .filter((s) => s.createdAt <= period.to && (r.subAccountId === null || s.subAccountId === r.subAccountId))
    .map((s) => [s.subAccountId, s.externalId, s.status, s.kycStatus, s.kycLevel, isoAt(s.createdAt)])
})

/** Every owner's wallet rows of the period, by time then in the order the ledger posted them. */
export const walletTable = (owned: ReadonlyArray<{ readonly owner: string; readonly rows: ReadonlyArray<WalletRow> }>, period: Period): Table => {
  const found = owned.flatMap(({ owner, rows }) => rows.filter((t) => t.at >= period.from && t.at <= period.to).map((t) => ({ t, owner })))
  // Balances read in sequence within one millisecond; the two rows of one transfer keep the master's first (the sort
  // is stable). Rows of an earlier version without a position fall back to the transaction id.
  found.sort((a, b) => a.t.at - b.t.at || (a.t.seq ?? 0) - (b.t.seq ?? 0) || a.t.transactionId.localeCompare(b.t.transactionId))
  return {
    columns: ["at", "account", "transactionId", "type", "amount", "balanceAfter", "orderId", "description"],
    rows: found.map(({ t, owner }) => [
      isoAt(t.at),
      owner,
      t.transactionId,
      t.type,
      centsToWire(t.cents),
      centsToWire(t.balanceAfter),
      t.orderId,
      t.description
    ])
  }
}

/** The orders a FEES or ORDERS report lists: created in the period, of its sub-account when it names one. */
const ordersIn = (r: Scope, orders: ReadonlyArray<OrderRecord>, period: Period) =>
  orders.filter((o) => o.createdAt >= period.from && o.createdAt <= period.to && (r.subAccountId === null || o.account === r.subAccountId))

export const feeTable = (r: Scope, orders: ReadonlyArray<OrderRecord>, period: Period): Table => ({
  columns: ["orderId", "account", "createdAt", "status", "baseFee", "partnerMarkupFee", "fee"],
  rows: ordersIn(r, orders, period).map((o) => [
    o.orderId,
    o.account,
    isoAt(o.createdAt),
    o.status,
    centsToWire(o.baseFee),
    centsToWire(o.partnerMarkupFee),
    centsToWire(o.fee)
  ])
})

export const orderTable = (r: Scope, orders: ReadonlyArray<OrderRecord>, period: Period): Table => ({
  columns: ["orderId", "account", "createdAt", "side", "symbol", "exchange", "quantity", "priceAtOrder", "gross", "fee", "totalAmount", "status"],
  rows: ordersIn(r, orders, period).map((o) => [
    o.orderId,
    o.account,
    isoAt(o.createdAt),
    o.side,
    o.symbol,
    o.exchange,
    o.quantity,
    price4ToWire(o.priceAtOrder),
    centsToWire(o.gross),
    centsToWire(o.fee),
    centsToWire(o.totalAmount),
    o.status
  ])
})

const csvCell = (value: unknown) => {
  const text = value === null || value === undefined ? "" : String(value)
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A table as CSV (header line, CRLF line ends) or JSON (an array of row objects). */
export const render = (format: "CSV" | "JSON", columns: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<unknown>>): string =>
  format === "JSON"
    ? JSON.stringify(rows.map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i] ?? null]))))
    : `${[columns, ...rows].map((row) => row.map(csvCell).join(",")).join("\r\n")}\r\n`
