/**
 * The whole-run verdict (issue 23, part 3): `checkHistory` flags a hand-made history with an overdraw, a double
 * debit (one Idempotency-Key executed twice), a rising `X-RateLimit-Remaining`, more admitted than the limit, a
 * redelivery with other bytes, an order leaving a terminal state, a wallet whose balance is not its ledger, an order
 * whose fate REST, webhooks and the stream tell differently; compares nothing across a reset; orders by the
 * logical clock when instants tie; and passes the history conform records of a clean run against our engine, with
 * and without the control API.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { checkHistory, type ExchangeEntry, type HistoryEntry, historyChecks, parseHistory, RULES } from "../../engine/conform/history.ts"
import { ADMIN, conformAgainst, startTarget } from "../conform/conform-kit.ts"

const T = (s: number) => new Date(Date.parse("2026-11-23T08:00:00.000Z") + s * 1000).toISOString()
const CALLER = "sandbox:…ab12"

const exchange = (s: number, fields: Partial<ExchangeEntry>): ExchangeEntry => ({
  kind: "exchange",
  sentAt: T(s),
  answeredAt: T(s + 0.1),
  caller: CALLER,
  method: "GET",
  path: "/api/sandbox/v1/partner/wallet",
  status: 200,
  body: "{}",
  ...fields
})

const wallet = (s: number, balance: number) => exchange(s, { body: JSON.stringify({ balance, available: balance, reserved: 0, currency: "USD" }) })
const rate = (s: number, remaining: number, status = 200) => exchange(s, { status, rate: { limit: 3, remaining, reset: 1_795_000_060 } })
const trade = (s: number, orderId: string) =>
  exchange(s, {
    method: "POST",
    path: "/api/sandbox/v1/partner/trade",
    idempotencyKey: "buy-1",
    requestBody: '{"symbol":"SCOM.KE","type":"BUY","quantity":10,"quoteId":"qt_1"}',
    status: 202,
    body: JSON.stringify({ orderId, status: "PENDING", totalAmount: 25 })
  })

const rules = (history: ReadonlyArray<HistoryEntry>) => checkHistory(history).map((v) => v.rule)

describe("the timestamps rule", () => {
  const created = (s: number, createdAt: string, key = "user-1") =>
    exchange(s, {
      method: "POST",
      path: "/api/sandbox/v1/partner/users",
      idempotencyKey: key,
      status: 201,
      body: JSON.stringify({ subAccountId: "usr_1", createdAt })
    })

  it("flags a resource stamped hours away from when it was made, on the target's clock", () => {
    const violations = checkHistory([created(0, T(0.05)), created(10, T(10 + 3 * 3600), "user-2")])
    expect(violations.map((v) => [v.rule, v.entries])).toEqual([["timestamps", [1]]])
    expect(violations[0]?.message).toContain("stamped 2026-11-23T11:00:10.000Z")
  })

  it("takes a replay's old stamp as the first answer's, and the status's timestamp as now", () => {
    const first = created(0, T(0.05))
    const replay = { ...created(600, T(0.05)) }
    const status = exchange(700, { path: "/api/v1/status", body: JSON.stringify({ status: "ok", timestamp: T(700.05) }) })
    const lateStatus = exchange(800, { path: "/api/v1/status", body: JSON.stringify({ status: "ok", timestamp: T(600) }) })
    expect(rules([first, replay, status])).toEqual([])
    expect(rules([first, replay, status, lateStatus])).toEqual(["timestamps"])
  })

  it("stops at the harness's first move of the target's clock", () => {
    const moved: HistoryEntry = { kind: "clock", at: T(5), what: "POST /_sim/clock/advance" }
    expect(rules([created(0, T(0.05)), moved, created(10, T(10 + 3600), "user-2")])).toEqual([])
  })
})

describe("the history checker", () => {
  it("flags an overdraw: a wallet answer with a negative balance", () => {
    const violations = checkHistory([
      wallet(0, 10),
      exchange(1, { method: "POST", path: "/api/sandbox/v1/partner/wallet/withdraw", status: 201 }),
      wallet(2, -25)
    ])
    expect(violations).toEqual([
      { rule: "no-negative-balance", message: `GET /api/sandbox/v1/partner/wallet (${CALLER}) shows balance -25, available -25 at ${T(2.1)}`, entries: [2] }
    ])
  })

  it("flags a double debit: one Idempotency-Key and body answered with two different orders", () => {
    const violations = checkHistory([trade(0, "ord_1"), trade(1, "ord_2")])
    expect(violations.map((v) => [v.rule, v.entries])).toEqual([["idempotent-answer", [0, 1]]])
    expect(violations[0]?.message).toMatch(/Idempotency-Key buy-1 .* executed twice$/)
    // The same answer again (a replay) is not a violation.
    expect(rules([trade(0, "ord_1"), trade(1, "ord_1")])).toEqual([])
  })

  it("flags a Remaining that rises within a window, and more admitted than the limit", () => {
    expect(checkHistory([rate(0, 2), rate(1, 1), rate(2, 2)]).map((v) => [v.rule, v.entries])).toEqual([["rate-window", [1, 2]]])
    expect(checkHistory([rate(0, 2), rate(1, 1), rate(2, 0), rate(3, 0)]).map((v) => [v.rule, v.entries])).toEqual([["rate-window", [3]]])
    // Requests in flight together may be answered in any order: no violation between overlapping exchanges.
    const overlapping = [
      exchange(0, { answeredAt: T(2), rate: { limit: 3, remaining: 1, reset: 1 } }),
      exchange(1, { rate: { limit: 3, remaining: 2, reset: 1 } })
    ]
    expect(rules(overlapping)).toEqual([])
    expect(rules([rate(0, 2), rate(1, 1), rate(2, 0), rate(3, 0, 429)])).toEqual([])
  })

  it("flags a redelivery with other bytes and an order leaving a terminal state", () => {
    const delivery = (s: number, raw: string): HistoryEntry => ({ kind: "delivery", at: T(s), eventId: "evt_1", raw })
    expect(rules([delivery(0, '{"eventId":"evt_1","a":1}'), delivery(5, '{"eventId":"evt_1", "a":1}')])).toEqual(["delivery-bytes"])
    const order = (s: number, status: string) =>
      exchange(s, { path: "/api/sandbox/v1/partner/orders/ord_1", body: JSON.stringify({ orderId: "ord_1", status }) })
    expect(rules([order(0, "PENDING"), order(1, "REJECTED"), order(2, "FILLED")])).toEqual(["order-transition"])
    expect(rules([order(0, "PENDING"), order(1, "WORKING"), order(2, "FILLED"), order(3, "FILLED")])).toEqual([])
  })

  it("flags an overdraw that only a transfer's answer shows: a sub-account's newBalance below zero", () => {
    const withdrawal = exchange(0, {
      method: "POST",
      path: "/api/sandbox/v1/partner/users/usr_1/withdraw",
      body: JSON.stringify({ transactionId: "txn_2", subAccountId: "usr_1", amount: 50, newBalance: -25, masterWalletBalance: 100 })
    })
    expect(checkHistory([withdrawal]).map((v) => v.message)).toEqual([
      `POST /api/sandbox/v1/partner/users/usr_1/withdraw (${CALLER}) shows newBalance -25 at ${T(0.1)}`
    ])
  })

  it("flags a wallet whose balance is not its ledger: a broken chain of balanceAfter, a transfer answered with another balance", () => {
    const transfer = (s: number, transactionId: string, newBalance: number) =>
      exchange(s, {
        method: "POST",
        path: "/api/sandbox/v1/partner/users/usr_1/deposit",
        body: JSON.stringify({ transactionId, subAccountId: "usr_1", amount: 25, newBalance })
      })
    const ledger = (s: number, rows: ReadonlyArray<[string, number, number]>, path = "/api/sandbox/v1/partner/users/usr_1/transactions") =>
      exchange(s, {
        path,
        body: JSON.stringify({
          transactions: rows.map(([transactionId, amount, balanceAfter]) => ({ transactionId, amount, balanceAfter })),
          count: rows.length,
          hasMore: false
        })
      })
    // Newest first: 25 in, then 10 out, leaves 15.
    const good = ledger(2, [
      ["txn_2", -10, 15],
      ["txn_1", 25, 25]
    ])
    expect(rules([transfer(0, "txn_1", 25), good])).toEqual([])
    // A withdrawal of 10 that took 20 (a double debit the ledger lists once).
    const broken = ledger(2, [
      ["txn_2", -10, 5],
      ["txn_1", 25, 25]
    ])
    expect(checkHistory([broken]).map((v) => [v.rule, v.message])).toEqual([
      [
        "wallet-ledger",
        "sub-account usr_1's ledger (/api/sandbox/v1/partner/users/usr_1/transactions): transaction txn_2 moves -10 from 25 but lists balanceAfter 5"
      ]
    ])
    // The ledger's first row starts from 0 when the list is whole; a page (cursor) may start anywhere.
    expect(rules([ledger(0, [["txn_1", 25, 40]])])).toEqual(["wallet-ledger"])
    expect(rules([ledger(0, [["txn_1", 25, 40]], "/api/sandbox/v1/partner/users/usr_1/transactions?cursor=c1")])).toEqual([])
    // The deposit was answered with a balance of 30 the ledger never held.
    expect(checkHistory([transfer(0, "txn_1", 30), good]).map((v) => [v.rule, v.entries])).toEqual([["wallet-ledger", [0, 1]]])
  })

  it("flags an order whose fate REST, webhooks and the stream tell differently, or REST behind an event already received", () => {
    const order = (s: number, status: string) =>
      exchange(s, { path: `/api/sandbox/v1/partner/orders?status=${status}`, body: JSON.stringify({ orders: [{ orderId: "ord_1", status }] }) })
    const told = (s: number, kind: "delivery" | "stream", event: string, status: string): HistoryEntry => {
      const envelope = { eventId: `evt_${event}`, event, data: { orderId: "ord_1", status } }
      return kind === "delivery"
        ? { kind, at: T(s), eventId: envelope.eventId, raw: JSON.stringify(envelope) }
        : { kind, at: T(s), caller: CALLER, id: "7", event, data: envelope }
    }
    expect(rules([order(0, "CANCELLED"), told(1, "delivery", "order.filled", "FILLED")])).toEqual(["order-agreement"])
    expect(rules([told(0, "stream", "order.rejected", "REJECTED"), told(1, "delivery", "order.filled", "FILLED")])).toEqual(["order-agreement"])
    const behind = checkHistory([told(0, "delivery", "order.filled", "FILLED"), order(2, "PENDING")])
    expect(behind.map((v) => [v.rule, v.entries])).toEqual([["order-agreement", [0, 1]]])
    expect(behind[0]?.message).toMatch(/^order ord_1: webhook order.filled arrived at \S+, but REST GET \S+ sent at \S+ still shows PENDING$/)
    // Agreeing stories pass; so does a REST read at the same instant (a frozen clock orders nothing) or before.
    expect(
      rules([order(0, "PENDING"), told(1, "delivery", "order.filled", "FILLED"), told(1, "stream", "order.filled", "FILLED"), order(2, "FILLED")])
    ).toEqual([])
    expect(rules([told(1, "delivery", "order.filled", "FILLED"), exchange(1, { body: JSON.stringify({ orderId: "ord_1", status: "PENDING" }) })])).toEqual([])
    // A partial fill is no fate.
    expect(rules([told(0, "delivery", "order.filled", "PARTIALLY_FILLED"), order(1, "CANCELLED")])).toEqual([])
  })

  it("flags an event id a stream connection carried twice; another connection may carry it again (a resumption)", () => {
    const read = (s: number, connection: number | undefined, id: string): HistoryEntry => ({
      kind: "stream",
      at: T(s),
      caller: CALLER,
      id,
      event: "deposit.confirmed",
      ...(connection === undefined ? {} : { connection })
    })
    const twice = checkHistory([read(0, 1, "7"), read(0, 1, "8"), read(1, 1, "7")])
    expect(twice.map((v) => [v.rule, v.entries])).toEqual([["stream-once", [0, 2]]])
    expect(twice[0]?.message).toBe(`stream connection 1 (${CALLER}) carried event id 7 (deposit.confirmed) twice, at ${T(0)} and ${T(1)}`)
    expect(rules([read(0, 1, "7"), read(1, 2, "7")])).toEqual([])
    // A history recorded elsewhere may not name connections: then nothing is compared.
    expect(rules([read(0, undefined, "7"), read(1, undefined, "7")])).toEqual([])
  })

  it("compares nothing across a reset: the new world may repeat keys, ids and windows", () => {
    const reset: HistoryEntry = { kind: "reset", at: T(5) }
    expect(rules([trade(0, "ord_1"), reset, trade(6, "ord_2")])).toEqual([])
    expect(rules([rate(0, 2), rate(1, 1), reset, rate(6, 2)])).toEqual([])
    const order = (s: number, status: string) =>
      exchange(s, { path: "/api/sandbox/v1/partner/orders/ord_1", body: JSON.stringify({ orderId: "ord_1", status }) })
    expect(rules([order(0, "REJECTED"), reset, order(6, "PENDING")])).toEqual([])
  })

  it("lets Remaining rise in the reset's own second, when a sliding window's hits of that second leave", () => {
    const reset = Date.parse(T(60)) / 1000
    const at = (s: number, remaining: number) => exchange(s, { rate: { limit: 300, remaining, reset } })
    expect(rules([at(0, 289), at(59.5, 290)])).toEqual([])
    expect(rules([at(0, 289), at(58.9, 290)])).toEqual(["rate-window"])
  })

  it("orders exchanges by their logical clock when a frozen clock gives them one instant", () => {
    const at = (sentSeq: number, answeredSeq: number, remaining: number) =>
      exchange(0, { answeredAt: T(0), sentSeq, answeredSeq, rate: { limit: 3, remaining, reset: 1 } })
    // Sent together (both before either answer): no order between them.
    expect(rules([at(1, 3, 1), at(2, 4, 2)])).toEqual([])
    // One after the other, at the same instant: the rise is seen.
    expect(rules([at(1, 2, 1), at(3, 4, 2)])).toEqual(["rate-window"])
  })

  it("shows each violation on a timeline with the requests that make it, and the replay command", () => {
    const checks = historyChecks([wallet(0, -1)], "npx sokoni history check 'h.jsonl'")
    const failed = checks.filter((c) => c.status === "failed")
    expect(failed.map((c) => c.name.split(":")[0])).toEqual(["history no-negative-balance"])
    expect(failed[0]?.replay).toBe("npx sokoni history check 'h.jsonl'")
    expect(failed[0]?.timeline?.map((t) => t.kind)).toEqual(["note", "request", "response"])
    expect(failed[0]?.timeline?.[0]?.text).toMatch(/^VIOLATION GET \/api\/sandbox\/v1\/partner\/wallet/)
  })

  it("flags the hand-made history of the docs' screenshot: an overdraw, a double debit, a Remaining that rises", () => {
    const file = join(import.meta.dirname, "..", "..", "docs", "screenshots", "history-violations.jsonl")
    const violations = checkHistory(parseHistory(readFileSync(file, "utf8")))
    expect(violations.map((v) => [v.rule, v.entries])).toEqual([
      ["no-negative-balance", [3]],
      ["idempotent-answer", [5, 6]],
      ["rate-window", [3, 7]]
    ])
  })

  it("reads JSON lines and names a line that is not an entry", () => {
    expect(parseHistory(`${JSON.stringify(wallet(0, 1))}\n\n`)).toHaveLength(1)
    expect(() => parseHistory('{"kind":"nope"}')).toThrow("line 1: kind must be exchange, delivery, stream, reset or clock")
  })
})

describe("a recorded clean run", () => {
  it.each([
    ["with the control API", true],
    ["with keys only", false]
  ])("passes as a whole (%s)", async (_how, control) => {
    const target = await startTarget()
    try {
      const keys = control
        ? {}
        : await fetch(`${target.base}/_sim/partners`, {
            method: "POST",
            headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
            body: JSON.stringify({ businessName: "History Co", email: "history@conform.test", tier: "enterprise" })
          }).then((r) => r.json() as Promise<{ sandboxKey: string; liveKey: string }>)
      const recorded: Array<HistoryEntry> = []
      const report = await conformAgainst(target.base, {
        ...(control ? {} : { adminToken: undefined, ...keys }),
        onHistory: (e) => recorded.push(e),
        only: [
          "quote-ttl",
          "quote-single-use",
          "idempotency-replay",
          "idempotency-concurrent",
          "money-invariants",
          "overdraw-refused",
          "sub-account-isolation",
          "event-agreement",
          "stream-resumption",
          "rate-limit-oracle"
        ]
      })
      expect(recorded.length).toBeGreaterThan(100)
      expect(recorded.some((e) => e.kind === "delivery")).toBe(control)
      expect(checkHistory(recorded)).toEqual([])
      const history = report.checks.filter((c) => c.suite === "history")
      expect(history.map((c) => c.status)).toEqual(RULES.map(() => "passed"))
      // The rules had something to judge: ledger reads, stream messages, order states.
      expect(recorded.some((e) => e.kind === "exchange" && /\/transactions$/.test(e.path))).toBe(true)
      expect(recorded.some((e) => e.kind === "stream")).toBe(true)
    } finally {
      await target.stop()
    }
  })
})
