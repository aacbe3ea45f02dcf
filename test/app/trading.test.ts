/**
 * Trading service through the partner API on a manual clock: the one-line mutations of the trading rules (engine/domain/trading/, engine/app/trading/)
 * (quote TTL, BUY debit, reject refund, funds boundary, quote reuse/not-found) each fail one of these.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Reply, startEngine } from "../http/harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"

describe("trading service", () => {
  let engine: ReturnType<typeof startEngine>
  let keys: { partnerId: string; sandboxKey: string; liveKey: string }
  let n = 0
  beforeEach(async () => {
    engine = startEngine()
    keys = await engine.newPartner()
    credits = 0
  })
  afterEach(() => engine.dispose())

  const sandbox = (method: string, path: string, init: { headers?: Record<string, string>; body?: unknown } = {}) =>
    engine.call(method, `${SANDBOX}${path}`, { ...init, headers: { "x-api-key": keys.sandboxKey, ...init.headers } })
  const quote = async (query: string) => {
    const r = await sandbox("GET", `/quote/SCOM?${query}`)
    expect(r.status).toBe(200)
    return r.body as { quoteId: string }
  }
  const trade = (body: unknown): Promise<Reply> => sandbox("POST", "/trade", { body, headers: { "idempotency-key": `app-trade-key-${++n}` } })
  // No GET /wallet yet: a one-cent credit answers the balance after the move, so the balance before is that minus 1 cent.
  let credits = 0
  const balanceCents = async () => {
    const r = await engine.admin("POST", `/_sim/partners/${keys.partnerId}/wallet/credit`, { environment: "sandbox", amount: 0.01 })
    expect(r.status).toBe(200)
    credits += 1
    const credited = (await events()).filter((e) => e.event === "wallet.credited")
    return Math.round(credited[credited.length - 1].data.newBalance * 100) - credits
  }
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
  const events = async () =>
    String((await engine.admin("GET", "/_sim/trace")).body)
      .split("\n")
      .filter((l) => l.includes('"kind":"event"'))
      .map((l) => JSON.parse(l))

  it("a quote 59.999 s old is accepted, one exactly 60 s old is STALE_QUOTE", async () => {
    const q1 = await quote("side=BUY&quantity=1")
    await advance(59.999)
    const ok = await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q1.quoteId })
    expect(ok.status).toBe(202)
    const q2 = await quote("side=BUY&quantity=1")
    await advance(60)
    const stale = await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q2.quoteId })
    expect(stale.status).toBe(409)
    expect(stale.body.error).toMatchObject({ code: "STALE_QUOTE", param: "quoteId" })
  })

  it("a quote cannot be used twice, and an unknown quote is QUOTE_NOT_FOUND", async () => {
    const q = await quote("side=BUY&quantity=1")
    expect((await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.quoteId })).status).toBe(202)
    const again = await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.quoteId })
    expect(again.body.error.code).toBe("STALE_QUOTE")
    expect(again.body.error.message).toBe("the quote was already used")
    const missing = await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: "qt_doesnotexist" })
    expect(missing.body.error).toMatchObject({ code: "QUOTE_NOT_FOUND", param: "quoteId" })
  })

  it("a BUY debits exactly totalAmount; a desk reject refunds exactly and emits order.rejected", async () => {
    const before = await balanceCents()
    const q = await quote("side=BUY&quantity=10")
    const placed = await trade({ symbol: "SCOM", type: "BUY", quantity: 10, quoteId: q.quoteId })
    expect(placed.status).toBe(202)
    const total = placed.body.totalAmount as number
    expect(total).toBeGreaterThan(0)
    expect(before - (await balanceCents())).toBe(Math.round(total * 100))
    const pending = (await events()).filter((e) => e.event === "order.pending")
    expect(pending.length).toBe(1)
    const rej = await engine.admin("POST", `/_sim/desk/orders/${placed.body.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "test" })
    expect(rej.status).toBe(200)
    expect(await balanceCents()).toBe(before)
    const rejected = (await events()).find((e) => e.event === "order.rejected")
    expect(rejected.data).toMatchObject({
      orderId: placed.body.orderId,
      type: "BUY",
      symbol: "SCOM.KE",
      quantity: 10,
      status: "REJECTED",
      rejectionCode: "DESK_REJECTED"
    })
  })

  it("a rejected one-share BUY leaves the seeded 100000 USD exactly", async () => {
    const q = await quote("side=BUY&quantity=1")
    const probe = await trade({ symbol: "SCOM", type: "BUY", quantity: 1, quoteId: q.quoteId })
    const unit = Math.round(probe.body.totalAmount * 100)
    await engine.admin("POST", `/_sim/desk/orders/${probe.body.orderId}/reject`, { rejectionCode: "DESK_REJECTED", rejectionReason: "x" })
    expect(unit).toBe(14)
    expect(await balanceCents()).toBe(10_000_000)
  })
})
