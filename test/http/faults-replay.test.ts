/**
 * A fault plan replays from its seed (issue 24's done-when): every 3rd trade 503, 10% seeded webhook drops, a stream
 * cut after 5 messages, all healed after 60 s. One client's session (trades retried with the same key after
 * Retry-After, desk fills, a webhook receiver, a stream reader that resumes from Last-Event-ID after each cut) is run
 * twice on memory and once on PostgreSQL, and the whole observable outcome (every status, every delivery the receiver
 * got, every stream message per connection, the faults the client met and the findings, the trace's hash) must be
 * identical. Another
 * seed must change the drops, so the comparison can fail.
 */
import { Effect, Exit, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { tagsFor } from "../support/stores.ts"
import { startEngine } from "./harness.ts"
import { eventMessages } from "./stream-kit.ts"

const SB = "/api/sandbox/v1/partner"
const HOOK = "https://hooks.acme.test/in"
const planOf = (seed: number) => ({
  seed,
  rules: [
    { fault: "503", operations: ["placeTrade"], every: 3, retryAfterSeconds: 2, healAfterSeconds: 60 },
    { fault: "drop", probability: 0.1, healAfterSeconds: 60 },
    { fault: "cut", afterMessages: 5, healAfterSeconds: 60 }
  ]
})

type Engine = ReturnType<typeof startEngine>

/** Reads a stream to its end (a cut) or until it holds `upTo` messages; returns their ids and events. */
const readStream = async (engine: Engine, key: string, lastId: string, upTo: number) => {
  const response = await engine.fetch(new Request(`http://sokoni.test${SB}/stream`, { headers: { "x-api-key": key, "last-event-id": lastId } }))
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ""
  let ended = false
  while (eventMessages(text).length < upTo) {
    const chunk = await reader.read()
    if (chunk.done) {
      ended = true
      break
    }
    text += decoder.decode(chunk.value, { stream: true })
  }
  if (!ended) await reader.cancel()
  return { ended, messages: eventMessages(text).map((m) => `${m.id} ${m.event}`) }
}

/** One client session under the plan; everything it observed. */
const session = async (engine: Engine, receivers: SimReceivers, seed: number) => {
  const p = await engine.newPartner()
  const key = { "x-api-key": p.sandboxKey }
  const sb = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    engine.call(method, `${SB}${path}`, { headers: { ...key, ...headers }, body })
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
  receivers.script(HOOK)
  const events = ["order.pending", "order.filled", "trade.settled"]
  expect((await sb("POST", "/webhooks", { url: HOOK, events, secret: "whsec_0123456789abcdef" }, { "idempotency-key": "webhook-0001" })).status).toBe(201)
  expect((await engine.admin("PUT", "/_sim/faults", planOf(seed))).status).toBe(200)
  const statuses: Array<number> = []
  /** A client that retries a 503 with the same key once its Retry-After has passed on the engine clock. */
  const trade = async (n: number) => {
    const quote = (await sb("GET", "/quote/SCOM.KE?side=BUY&quantity=1")).body.quoteId
    for (;;) {
      const r = await sb("POST", "/trade", { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId: quote }, { "idempotency-key": `trade-${n}-key` })
      statuses.push(r.status)
      if (r.status !== 503) return r.body.orderId as string
      await advance(Number(r.headers.get("retry-after")))
    }
  }
  const tradeAndFill = async (from: number, to: number) => {
    for (let n = from; n <= to; n++) {
      const orderId = await trade(n)
      await advance(1)
      statuses.push((await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {})).status)
      await advance(1)
    }
  }
  const connections: Array<{ ended: boolean; messages: Array<string> }> = []
  const follow = async (upTo: number) => {
    const last =
      connections
        .flatMap((c) => c.messages)
        .at(-1)
        ?.split(" ")[0] ?? "0"
    connections.push(await readStream(engine, p.sandboxKey, last, upTo))
  }
  await tradeAndFill(1, 10)
  await follow(100) // cut after 5
  await follow(100) // cut again: the rule is still in force
  await advance(60) // healed
  await tradeAndFill(11, 12)
  const head = connections.flatMap((c) => c.messages).length
  await follow(3 * 12 - head) // every event of the 12 orders, uncut
  await advance(3 * 3_600) // every retry of every delivery is over
  const deliveries = receivers.take().map((r) => {
    const body = JSON.parse(r.body) as { event: string; eventId: string }
    return `${new Date(r.at).toISOString()} ${body.event} ${body.eventId} ${r.result.kind}`
  })
  const faults = (await engine.admin("GET", "/_sim/faults")).body
  const hash = (await engine.admin("GET", "/_sim/trace/hash")).body.hash as string
  const findings = (await engine.admin("GET", "/_sim/findings")).body.findings
  return { statuses, deliveries, connections, rules: faults.rules, met: faults.met, findings, hash }
}

const runOn = async (store: "memory" | "postgres", seed: number) => {
  const receivers = new SimReceivers()
  if (store === "memory") {
    const engine = startEngine({ receivers })
    try {
      return await session(engine, receivers, seed)
    } finally {
      await engine.dispose()
    }
  }
  const scope = Effect.runSync(Scope.make())
  const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(process.env.DATABASE_URL ?? ""), scope))
  const engine = startEngine({ receivers, store: "postgres", databaseUrl: url })
  try {
    return await session(engine, receivers, seed)
  } finally {
    await engine.dispose()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe("a fault plan replays from its seed", () => {
  it("the same seed gives the same outcome, byte for byte; the faults are the plan's", async () => {
    const first = await runOn("memory", 7)
    expect(await runOn("memory", 7)).toEqual(first)
    // Every 3rd trade met a 503 until the heal, and each was retried once with its key: 12 orders, 12 fills.
    expect(first.rules[0].injected).toBeGreaterThan(0)
    expect(first.statuses.filter((s) => s === 503).length).toBe(first.rules[0].injected)
    expect(first.statuses.filter((s) => s === 202).length).toBe(12)
    expect(first.met.every((m: { answer: { sameKey: boolean; honouredRetryAfter: boolean } }) => m.answer.sameKey && m.answer.honouredRetryAfter)).toBe(true)
    // Two connections cut after 5 messages, then one uncut after the heal, with no gap or repeat across them.
    expect(first.connections.map((c) => [c.ended, c.messages.length])).toEqual([
      [true, 5],
      [true, 5],
      [false, 26]
    ])
    expect(first.findings.map((f: { kind: string }) => f.kind)).toEqual(
      expect.arrayContaining([
        "fault.503",
        "fault.retry.same-key",
        "fault.retry-after.honoured",
        "fault.webhook.drop",
        "fault.stream.cut",
        "fault.stream.resumed"
      ])
    )
    const ids = first.connections.flatMap((c) => c.messages.map((m) => Number(m.split(" ")[0])))
    expect(ids).toEqual(ids.map((_, i) => i + 1))
    // A drop loses an attempt (the receiver never sees it); the retry brings it: every event arrives once.
    expect(first.rules[1].injected).toBeGreaterThan(0)
    expect(first.deliveries.length).toBe(36)
    expect(new Set(first.deliveries.map((d) => d.split(" ")[2])).size).toBe(36)
  })

  it("another seed drops other deliveries", async () => {
    const [a, b] = [await runOn("memory", 7), await runOn("memory", 8)]
    expect(b.deliveries).not.toEqual(a.deliveries)
  })

  it.skipIf(process.env.DATABASE_URL === undefined)("PostgreSQL replays the memory run exactly", tagsFor("postgres"), async () => {
    expect(await runOn("postgres", 7)).toEqual(await runOn("memory", 7))
  })
})
