/**
 * Webhook delivery faults (docs/faults.md): a duplicated attempt sends the same bytes twice (the first answer counts),
 * a delayed one arrives its delay later on the engine clock, a reordered one is overtaken by the next, and a dropped
 * one never reaches the receiver: the sender sees no answer and retries on the spec's schedule (5 s later).
 */
import { describe, expect, it } from "vitest"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { startEngine } from "../http/harness.ts"

const SB = "/api/sandbox/v1/partner"
const HOOK = "https://hooks.acme.test/in"

/** A partner with a webhook on the order events, under `rules`; `order()` trades and fills one order at once. */
const setup = async (rules: ReadonlyArray<Record<string, unknown>>) => {
  const receivers = new SimReceivers()
  const engine = startEngine({ receivers })
  const p = await engine.newPartner()
  const headers = (extra: Record<string, string> = {}) => ({ "x-api-key": p.sandboxKey, ...extra })
  receivers.script(HOOK)
  const hook = await engine.call("POST", `${SB}/webhooks`, {
    headers: headers({ "idempotency-key": "webhook-0001" }),
    body: { url: HOOK, events: ["order.pending", "order.filled", "trade.settled"], secret: "whsec_0123456789abcdef" }
  })
  expect((await engine.admin("PUT", "/_sim/faults", { rules })).status).toBe(200)
  const order = async () => {
    const quote = await engine.call("GET", `${SB}/quote/SCOM.KE?side=BUY&quantity=1`, { headers: headers() })
    const trade = await engine.call("POST", `${SB}/trade`, {
      headers: headers({ "idempotency-key": "trade-0001-key" }),
      body: { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId: quote.body.quoteId }
    })
    await engine.admin("POST", `/_sim/desk/orders/${trade.body.orderId}/fill`, {})
  }
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
  const received = () =>
    receivers.take().map((r) => `+${(r.at - Date.parse("2026-11-23T08:00:00.000Z")) / 1000}s ${(JSON.parse(r.body) as { event: string }).event}`)
  const deliveries = async () => (await engine.call("GET", `${SB}/webhooks/${hook.body.id}/deliveries`, { headers: headers() })).body.deliveries
  return { engine, order, advance, received, deliveries, receivers }
}

describe("webhook delivery faults", () => {
  it("duplicate: the receiver gets the same bytes twice, the delivery is one attempt", async () => {
    const s = await setup([{ fault: "duplicate", every: 3 }])
    await s.order()
    await s.advance(0.001)
    const got = s.receivers.received.map((r) => r.body)
    expect(got.length).toBe(4)
    expect(got[3]).toBe(got[2])
    expect(s.received()).toEqual(["+0s order.pending", "+0s order.filled", "+0s trade.settled", "+0s trade.settled"])
    const settled = (await s.deliveries()).find((d: { event: string }) => d.event === "trade.settled")
    expect([settled.attempts, settled.success]).toEqual([1, true])
    const findings = (await s.engine.admin("GET", "/_sim/findings")).body.findings
    const faultFindings = findings.filter((f: { kind: string }) => f.kind.startsWith("fault."))
    expect(faultFindings.map((f: { kind: string; count: number }) => [f.kind, f.count])).toEqual([["fault.webhook.duplicate", 1]])
    await s.engine.dispose()
  })

  it("delay: the attempt arrives its delay later on the engine clock", async () => {
    const s = await setup([{ fault: "delay", delayMs: 3_000, every: 1, healAfterSeconds: 1 }])
    await s.order()
    await s.advance(2)
    expect(s.received()).toEqual([])
    await s.advance(1)
    expect(s.received()).toEqual(["+3s order.pending", "+3s order.filled", "+3s trade.settled"])
    await s.engine.dispose()
  })

  it("reorder: a held attempt is overtaken by the next one", async () => {
    const s = await setup([{ fault: "reorder", every: 2, delayMs: 2_000 }])
    await s.order()
    await s.advance(2)
    const got = s.received()
    expect(got.map((g) => g.split(" ")[1])).toEqual(["order.pending", "trade.settled", "order.filled"])
    await s.engine.dispose()
  })

  it("drop: the receiver never sees the attempt; the sender retries 5 s later and it arrives", async () => {
    const s = await setup([{ fault: "drop", every: 1, healAfterSeconds: 1 }])
    await s.order()
    await s.advance(1)
    expect(s.received()).toEqual([])
    await s.advance(5)
    expect(s.received()).toEqual(["+5s order.pending", "+5s order.filled", "+5s trade.settled"])
    const attempts = (await s.deliveries()).map((d: { attempts: number; success: boolean }) => [d.attempts, d.success])
    expect(attempts).toEqual([
      [2, true],
      [2, true],
      [2, true]
    ])
    await s.engine.dispose()
  })
})
