/**
 * What a report holds (domain/reports/tables.ts, D-062): the wallet rows of the period in the order the ledger posted
 * them, the accounts and orders its filters keep, and files that read back as the table (CSV quoting, JSON objects).
 */
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { feeTable, orderTable, render, subAccountTable, walletOwners, walletTable, type WalletRow } from "../../engine/domain/reports/tables.ts"
import type { OrderRecord } from "../../engine/domain/order.ts"
import { subAccount } from "./decider-fixtures.ts"

const period = { from: 1_000, to: 1_999 }
const row = (transactionId: string, at: number, seq?: number): WalletRow => ({
  transactionId,
  type: "DEPOSIT",
  cents: 100,
  balanceAfter: 100,
  orderId: null,
  description: "d",
  at,
  seq
})

/** A minimal CSV reader (RFC 4180 quoting), to read a rendered file back. */
const readCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let cells: Array<string> = []
  let cell = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted && c === '"' && text[i + 1] === '"') {
      cell += '"'
      i++
    } else if (quoted && c === '"') {
      quoted = false
    } else if (quoted) {
      cell += c
    } else if (c === '"') {
      quoted = true
    } else if (c === ",") {
      cells.push(cell)
      cell = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      cells.push(cell)
      rows.push(cells)
      cells = []
      cell = ""
      i++
    } else {
      cell += c
    }
  }
  return rows
}

describe("wallet rows", () => {
  it("keep the period's rows only, by time then ledger position, naming each row's account", () => {
    const table = walletTable(
      [
        { owner: "master", rows: [row("t3", 1_500, 9), row("t0", 999, 1), row("t1", 1_500, 2)] },
        { owner: "usr_1", rows: [row("t2", 1_500, 5), row("t4", 2_000, 10)] }
      ],
      period
    )
    expect(table.rows.map((r) => [r[1], r[2]])).toEqual([
      ["master", "t1"],
      ["usr_1", "t2"],
      ["master", "t3"]
    ])
  })

  it("a report of one sub-account reads its wallet only; otherwise the master's and every sub-account's", () => {
    expect(walletOwners({ subAccountId: "usr_9" }, [subAccount()])).toEqual(["usr_9"])
    expect(walletOwners({ subAccountId: null }, [subAccount(), subAccount({ subAccountId: "usr_2" })])).toEqual(["master", "usr_1", "usr_2"])
  })

  it("property: every row of the period appears once, in non-decreasing time", () => {
    const rows = fc.array(fc.record({ at: fc.integer({ min: 0, max: 3_000 }), seq: fc.nat(50) }), { maxLength: 30 })
    fc.assert(
      fc.property(rows, (raw) => {
        const table = walletTable([{ owner: "master", rows: raw.map((r, i) => row(`t${i}`, r.at, r.seq)) }], period)
        const inside = raw.filter((r) => r.at >= period.from && r.at <= period.to)
        expect(table.rows).toHaveLength(inside.length)
        const times = table.rows.map((r) => Date.parse(String(r[0])))
        for (let i = 1; i < times.length; i++) expect(times[i]).toBeGreaterThanOrEqual(times[i - 1] ?? 0)
      })
    )
  })
})

describe("accounts and orders", () => {
  it("lists the sub-accounts that existed by the period's end (or the one named)", () => {
    const accounts = [subAccount({ createdAt: 500 }), subAccount({ subAccountId: "usr_2", createdAt: 2_500 })]
    expect(subAccountTable({ subAccountId: null }, accounts, period).rows.map((r) => r[0])).toEqual(["usr_1"])
    expect(subAccountTable({ subAccountId: "usr_2" }, accounts, { from: 0, to: 3_000 }).rows.map((r) => r[0])).toEqual(["usr_2"])
  })

  it("lists the orders created in the period, of the named sub-account only when one is named", () => {
    const order = (orderId: string, account: string, createdAt: number) =>
      ({
        orderId,
        account,
        createdAt,
        status: "FILLED",
        baseFee: 10,
        partnerMarkupFee: 5,
        fee: 15,
        priceAtOrder: 180_000,
        gross: 1_800,
        totalAmount: 1_815
      }) as unknown as OrderRecord
    const orders = [order("o1", "master", 1_100), order("o2", "usr_1", 1_200), order("o3", "usr_1", 2_100)]
    expect(feeTable({ subAccountId: null }, orders, period).rows).toEqual([
      ["o1", "master", new Date(1_100).toISOString(), "FILLED", 0.1, 0.05, 0.15],
      ["o2", "usr_1", new Date(1_200).toISOString(), "FILLED", 0.1, 0.05, 0.15]
    ])
    expect(feeTable({ subAccountId: "usr_1" }, orders, period).rows.map((r) => r[0])).toEqual(["o2"])
    expect(orderTable({ subAccountId: null }, orders, period).columns).toContain("priceAtOrder")
  })
})

describe("files", () => {
  it("property: a CSV file reads back as its header and rows, whatever commas, quotes and line breaks the cells hold", () => {
    const cell = fc.string({ maxLength: 8, unit: fc.constantFrom("a", ",", '"', "\n", "\r", " ", "1") })
    fc.assert(
      fc.property(fc.array(fc.array(cell, { minLength: 2, maxLength: 2 }), { maxLength: 6 }), (rows) => {
        expect(readCsv(render("CSV", ["x", "y"], rows))).toEqual([["x", "y"], ...rows])
      })
    )
  })

  it("JSON is an array of objects keyed by column, absent cells null", () => {
    expect(JSON.parse(render("JSON", ["a", "b"], [[1], ["x", true]]))).toEqual([
      { a: 1, b: null },
      { a: "x", b: true }
    ])
  })
})
