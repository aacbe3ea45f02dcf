/**
 * The planted defects of engine/sim/defects.ts (test only, never on by default) as an engine built with them answers:
 * fee-rounding rounds an order's base fee up to the next cent, and the totals follow it (a BUY's total is gross plus
 * fee and is escrowed, a SELL's is gross minus fee and escrows nothing). The conformance harness catching each defect
 * by name is tested in test/conform.
 */
import { afterEach, describe, expect, it } from "vitest"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { Store } from "../../engine/store/port.ts"
import type { TraceEvent } from "./accounts-kit.ts"
import { ADMIN, MONDAY_OPEN } from "./harness.ts"

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

describe("the planted fee-rounding defect (sim/defects.ts, test only)", () => {
  it("rounds the base fee up to the next cent; BUY total gross plus fee, escrowed; SELL total gross minus fee, nothing escrowed", async () => {
    const engine = makeInProcessEngine({
      store: "memory",
      clock: "manual",
      start: MONDAY_OPEN,
      seed: 1,
      desk: "manual",
      adminToken: ADMIN,
      plantDefects: ["fee-rounding"]
    })
    engines.push(engine)
    let n = 0
    const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
      const r = await engine.fetch(
        new Request(`http://sokoni.test${path}`, {
          method,
          headers: { "content-type": "application/json", ...(method === "GET" ? {} : { "idempotency-key": `planted-${++n}` }), ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      const text = await r.text()
      return { status: r.status, body: r.headers.get("content-type")?.startsWith("application/json") === true ? JSON.parse(text) : text }
    }
    const admin = (method: string, path: string, body?: unknown) => call(method, path, { authorization: `Bearer ${ADMIN}` }, body)
    const partner = await admin("POST", "/_sim/partners", { businessName: "Planted", email: "p@planted.test", tier: "starter", markupBps: 50 })
    expect(partner.status).toBe(201)
    const key = { "x-api-key": partner.body.sandboxKey as string }
    const partition = `${partner.body.partnerId}:sandbox`
    const wallet = async () => {
      const docs = await engine.runtime.runPromise(Store.use((st) => st.read((tx) => tx.list("balances", { partition, limit: 1000, order: "asc" }))))
      return (docs.map((d) => d.body as { account: string; cents: number }).find((b) => b.account === "wallet:master") as { cents: number }).cents
    }
    const place = async (side: "BUY" | "SELL", quantity: number) => {
      const q = await call("GET", `/api/sandbox/v1/partner/quote/SCOM?side=${side}&quantity=${quantity}`, key)
      expect(q.status).toBe(200)
      const r = await call("POST", "/api/sandbox/v1/partner/trade", key, { symbol: "SCOM", type: side, quantity, quoteId: q.body.quoteId })
      expect(r.status, JSON.stringify(r.body)).toBe(202)
      return r.body
    }
    const pendingOf = async (orderId: string) => {
      const trace = String((await admin("GET", "/_sim/trace")).body)
      const events = trace
        .split("\n")
        .filter((l) => l.includes('"kind":"event"'))
        .map((l) => JSON.parse(l) as TraceEvent)
      return events.find((e) => e.event === "order.pending" && e.data.orderId === orderId)?.data
    }
    const cents = (usd: number) => Math.round(usd * 100)
    const roundedUp = (gross: number) => Number((BigInt(gross) * 75n + 9_999n) / 10_000n)

    const before = await wallet()
    const buy = await place("BUY", 7_001)
    const buyPending = await pendingOf(buy.orderId)
    const gross = cents(buyPending.gross)
    // a base fee with a fraction of a cent, and a markup: the rounding and the sum both show
    expect((gross * 75) % 10_000).not.toBe(0)
    expect(cents(buy.partnerMarkupFee)).toBeGreaterThan(0)
    expect(cents(buy.baseFee)).toBe(roundedUp(gross))
    expect(cents(buy.fee)).toBe(roundedUp(gross) + cents(buy.partnerMarkupFee))
    expect(cents(buy.totalAmount)).toBe(gross + cents(buy.fee))
    expect(buyPending.totalCost).toBe(buy.totalAmount)
    expect(before - (await wallet())).toBe(cents(buy.totalAmount))
    expect((await admin("POST", `/_sim/desk/orders/${buy.orderId}/fill`, {})).status).toBe(200)

    const afterBuy = await wallet()
    const sell = await place("SELL", 5_001)
    const sellGross = cents((await pendingOf(sell.orderId)).gross)
    expect(cents(sell.baseFee)).toBe(roundedUp(sellGross))
    expect(cents(sell.totalAmount)).toBe(sellGross - cents(sell.fee))
    // a SELL escrows nothing: placing and rejecting it leaves the wallet as it was
    expect(await wallet()).toBe(afterBuy)
    expect((await admin("POST", `/_sim/desk/orders/${sell.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "planted" })).status).toBe(200)
    expect(await wallet()).toBe(afterBuy)
  })
})
