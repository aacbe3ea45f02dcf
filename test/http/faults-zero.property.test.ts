/**
 * A probability of 0 injects nothing (toxiproxy#603 is the bug this guards against): for any seed and any mix of
 * rules of every kind at probability 0, a client session (trades, fills, webhook deliveries, a stream) sees exactly
 * what it sees with no plan at all. And a plan that does fire leaves every id of the run where it was: its draws come
 * from a stream of their own (E-371).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { FAULT_KINDS } from "../../engine/domain/faults.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { startEngine } from "./harness.ts"
import { eventMessages } from "./stream-kit.ts"

const SB = "/api/sandbox/v1/partner"
const HOOK = "https://hooks.acme.test/in"
const EXTRA: Record<string, Record<string, number>> = { latency: { latencyMs: 1_000 }, delay: { delayMs: 1_000 }, cut: { afterMessages: 1 } }

/** Three trades filled, their deliveries and the stream's messages, under `plan` (or none). */
const session = async (seed: number, plan: unknown) => {
  const receivers = new SimReceivers()
  const engine = startEngine({ receivers, seed })
  try {
    const p = await engine.newPartner()
    const headers = (extra: Record<string, string> = {}) => ({ "x-api-key": p.sandboxKey, ...extra })
    receivers.script(HOOK)
    await engine.call("POST", `${SB}/webhooks`, {
      headers: headers({ "idempotency-key": "webhook-0001" }),
      body: { url: HOOK, events: ["order.pending", "order.filled", "trade.settled"], secret: "whsec_0123456789abcdef" }
    })
    if (plan !== undefined) expect((await engine.admin("PUT", "/_sim/faults", plan)).status).toBe(200)
    const stream = await engine.fetch(new Request(`http://sokoni.test${SB}/stream?since=0`, { headers: headers() }))
    const out: Array<string> = []
    for (let n = 1; n <= 3; n++) {
      const quote = await engine.call("GET", `${SB}/quote/SCOM.KE?side=BUY&quantity=1`, { headers: headers() })
      const trade = await engine.call("POST", `${SB}/trade`, {
        headers: headers({ "idempotency-key": `trade-${n}-key` }),
        body: { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId: quote.body.quoteId }
      })
      out.push(`${quote.status} ${trade.status} ${trade.body.orderId}`)
      await engine.admin("POST", `/_sim/desk/orders/${trade.body.orderId}/fill`, {})
      await engine.admin("POST", "/_sim/clock/advance", { seconds: 10 })
    }
    const reader = (stream.body as ReadableStream<Uint8Array>).getReader()
    let text = ""
    while (eventMessages(text).length < 9) {
      const chunk = await reader.read()
      if (chunk.done) break
      text += new TextDecoder().decode(chunk.value)
    }
    await reader.cancel()
    const faults = plan === undefined ? [] : (await engine.admin("GET", "/_sim/faults")).body.rules.map((r: { injected: number }) => r.injected)
    return {
      out,
      deliveries: receivers.take().map((r) => `${r.at} ${r.body}`),
      messages: eventMessages(text).map((m) => `${m.id} ${m.data}`),
      injected: faults
    }
  } finally {
    await engine.dispose()
  }
}

describe("a probability of 0", () => {
  it("injects nothing: the session is the one without a plan", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.uniqueArray(fc.constantFrom(...FAULT_KINDS), { minLength: 1, maxLength: FAULT_KINDS.length }),
        async (seed, kinds) => {
          const plan = { rules: kinds.map((fault) => ({ fault, probability: 0, ...(EXTRA[fault] ?? {}) })) }
          const [faulted, plain] = [await session(seed, plan), await session(seed, undefined)]
          expect(faulted.injected).toEqual(kinds.map(() => 0))
          expect({ ...faulted, injected: [] }).toEqual(plain)
        }
      ),
      { numRuns: 8 }
    )
  })
})

describe("a plan that fires", () => {
  it("moves no id of the run: orders and events keep their ids", async () => {
    const plan = { seed: 3, rules: [{ fault: "drop", probability: 0.5 }] }
    const [faulted, plain] = [await session(5, plan), await session(5, undefined)]
    expect(faulted.injected[0]).toBeGreaterThan(0)
    expect(faulted.out).toEqual(plain.out)
    expect(faulted.messages).toEqual(plain.messages)
  })
})
