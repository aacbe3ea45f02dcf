/**
 * Faults on requests (docs/faults.md) through the control API: the plan is checked, every Nth 503 comes with
 * Retry-After and is decided before the command (no receipt is kept, so the retry with the same key runs once and
 * only one order exists), latency waits on the engine clock, a timeout holds the request and hangs up, a rule heals on
 * the engine clock, and the faults a client met are recorded with how it answered. Every answer is checked against the
 * contract by the harness.
 */
import { describe, expect, it } from "vitest"
import { startEngine } from "./harness.ts"
import { eventMessages } from "./stream-kit.ts"

const SB = "/api/sandbox/v1/partner"

const setup = async () => {
  const engine = startEngine()
  const p = await engine.newPartner()
  const key = { "x-api-key": p.sandboxKey }
  const sb = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    engine.call(method, `${SB}${path}`, { headers: { ...key, ...headers }, body })
  const quote = async () => (await sb("GET", "/quote/SCOM.KE?side=BUY&quantity=1")).body.quoteId as string
  const trade = (quoteId: string, idempotencyKey: string) =>
    sb("POST", "/trade", { symbol: "SCOM.KE", type: "BUY", quantity: 1, quoteId }, { "idempotency-key": idempotencyKey })
  const orders = async () => (await sb("GET", "/orders?limit=100")).body.orders as Array<{ orderId: string }>
  return { ...engine, p, sb, quote, trade, orders }
}

describe("PUT /_sim/faults", () => {
  it("refuses a rule that is both every and probability, a field of another fault, or an unknown operation", async () => {
    const e = await setup()
    const refused = async (rule: Record<string, unknown>, param: string) => {
      const r = await e.admin("PUT", "/_sim/faults", { rules: [rule] })
      expect([r.status, r.body.error.code, r.body.error.param], JSON.stringify(r.body)).toEqual([400, "VALIDATION_ERROR", param])
    }
    await refused({ fault: "503", every: 2, probability: 0.5 }, "rules[0].every")
    await refused({ fault: "500", retryAfterSeconds: 3 }, "rules[0].retryAfterSeconds")
    await refused({ fault: "503", operations: ["placeTrades"] }, "rules[0].operations")
    await refused({ fault: "latency" }, "rules[0].latencyMs")
    expect((await e.admin("GET", "/_sim/faults")).body).toEqual({ seed: null, setAt: null, rules: [], met: [] })
    await e.dispose()
  })
})

/** Waits (a bounded number of turns of the event loop, never real time) until the trace holds `n` fault lines. */
const faultLines = async (e: Awaited<ReturnType<typeof setup>>, n: number) => {
  for (let turn = 0; turn < 1_000; turn++) {
    const trace = String((await e.admin("GET", "/_sim/trace")).body)
    const lines = trace.split("\n").filter((l) => l.includes('"kind":"fault"'))
    if (lines.length >= n) return lines
    await new Promise((resolve) => setImmediate(resolve))
  }
  throw new Error(`the trace never held ${n} fault lines`)
}

describe("request faults", () => {
  it("every 3rd trade answers 503 with Retry-After and is not processed: the retry with the same key places one order", async () => {
    const e = await setup()
    const set = await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "503", operations: ["placeTrade"], every: 3, retryAfterSeconds: 2 }] })
    expect(set.status).toBe(200)
    expect([(await e.trade(await e.quote(), "trade-key-0001")).status, (await e.trade(await e.quote(), "trade-key-0002")).status]).toEqual([202, 202])
    const q = await e.quote()
    const third = await e.trade(q, "trade-key-0003")
    expect([third.status, third.body.error.code, third.headers.get("retry-after")]).toEqual([503, "SERVICE_UNAVAILABLE", "2"])
    expect((await e.orders()).length).toBe(2)
    // The retry comes after the Retry-After on the engine clock, with the same key and the same (unused) quote.
    await e.admin("POST", "/_sim/clock/advance", { seconds: 2 })
    const retried = await e.trade(q, "trade-key-0003")
    expect(retried.status).toBe(202)
    const again = await e.trade(q, "trade-key-0003")
    expect([again.status, again.headers.get("idempotent-replayed"), again.body.orderId]).toEqual([202, "true", retried.body.orderId])
    expect((await e.orders()).length).toBe(3)
    const state = (await e.admin("GET", "/_sim/faults")).body
    expect(state.rules[0]).toMatchObject({ matched: 5, injected: 1, healsAt: null, healed: false })
    expect(state.met).toEqual([
      expect.objectContaining({
        operationId: "placeTrade",
        fault: "503",
        retryAfterSeconds: 2,
        idempotencyKey: "trade-key-0003",
        answer: expect.objectContaining({ sameKey: true, honouredRetryAfter: true })
      })
    ])
    const findings = (await e.admin("GET", `/_sim/findings?partnerId=${e.p.partnerId}`)).body.findings
    expect(findings.map((f: { kind: string; operation: string; count: number }) => [f.kind, f.operation, f.count])).toEqual([
      ["fault.503", "placeTrade", 1],
      ["fault.retry.same-key", "placeTrade", 1],
      ["fault.retry-after.honoured", "placeTrade", 1]
    ])
    await e.dispose()
  })

  it("records a retry with a new key, and one before the Retry-After, as the client's answer", async () => {
    const e = await setup()
    await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "429", operations: ["placeTrade"], every: 1, retryAfterSeconds: 5, healAfterSeconds: 1 }] })
    const q = await e.quote()
    const first = await e.trade(q, "trade-key-0001")
    expect([first.status, first.body.error.code, first.headers.get("retry-after")]).toEqual([429, "RATE_LIMITED", "5"])
    await e.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    expect((await e.trade(q, "trade-key-0002")).status).toBe(202) // healed after 1 s: served
    const state = (await e.admin("GET", "/_sim/faults")).body
    expect(state.rules[0]).toMatchObject({ healed: true, injected: 1 })
    expect(state.met[0].answer).toMatchObject({ sameKey: false, honouredRetryAfter: false })
    const findings = (await e.admin("GET", `/_sim/findings?partnerId=${e.p.partnerId}`)).body.findings
    expect(findings.map((f: { kind: string; message: string }) => `${f.kind}: ${f.message}`)).toEqual([
      "fault.429: met an injected 429 RATE_LIMITED with Retry-After 5 s: nothing was processed; retry the same request with the same Idempotency-Key once Retry-After has passed",
      "fault.retry.new-key: retried after an injected 429 under a new Idempotency-Key: had the first request run, the retry would have run it twice; resend the same key",
      "fault.retry-after.ignored: retried 1 s after an injected 429 that said Retry-After 5 s: too early, a real outage would answer it again"
    ])
    await e.dispose()
  })

  it("latency holds the request until the engine clock has moved by it", async () => {
    const e = await setup()
    await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "latency", operations: ["getQuote"], latencyMs: 2_000 }] })
    let answered = false
    const pending = e.sb("GET", "/quote/SCOM.KE?side=BUY&quantity=1").then((r) => {
      answered = true
      return r
    })
    await faultLines(e, 1)
    expect(answered).toBe(false)
    await e.admin("POST", "/_sim/clock/advance", { seconds: 2 })
    const r = await pending
    expect(r.status).toBe(200)
    // The quote was made after the wait: its TTL counts from the later instant.
    expect(Date.parse(r.body.expiresAt) - Date.parse("2026-11-23T08:00:02.000Z")).toBe(60_000)
    await e.dispose()
  })

  it("a timeout holds the connection with no answer, then hangs up; nothing was processed", async () => {
    const e = await setup()
    await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "timeout", operations: ["placeTrade"], holdSeconds: 10 }] })
    const q = await e.quote()
    let outcome: string | undefined
    const pending = e.trade(q, "trade-key-0001").then(
      (r) => `answered ${r.status}`,
      (error: Error) => `${error.name}: ${error.message}`
    )
    void pending.then((o) => {
      outcome = o
    })
    await faultLines(e, 1)
    await e.admin("POST", "/_sim/clock/advance", { seconds: 9 })
    expect(outcome).toBeUndefined()
    await e.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    expect(await pending).toBe("TypeError: fetch failed")
    await e.admin("DELETE", "/_sim/faults")
    expect((await e.orders()).length).toBe(0)
    expect((await e.trade(q, "trade-key-0001")).status).toBe(202)
    await e.dispose()
  })

  it("a client that gives up ends the held request", async () => {
    const e = await setup()
    await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "timeout", operations: ["getQuote"] }] })
    const giveUp = new AbortController()
    const pending = e.fetch(
      new Request(`http://sokoni.test${SB}/quote/SCOM.KE?side=BUY&quantity=1`, { headers: { "x-api-key": e.p.sandboxKey }, signal: giveUp.signal })
    )
    await faultLines(e, 1)
    giveUp.abort()
    await expect(pending).rejects.toThrow()
    await e.dispose()
  })

  it("a stream is cut after its Nth message; a client that comes back live, not from its last id, is told it missed the gap", async () => {
    const e = await setup()
    await e.admin("PUT", "/_sim/faults", { rules: [{ fault: "cut", afterMessages: 1 }] })
    const first = await e.fetch(new Request(`http://sokoni.test${SB}/stream`, { headers: { "x-api-key": e.p.sandboxKey } }))
    for (const n of [1, 2]) expect((await e.trade(await e.quote(), `trade-key-000${n}`)).status).toBe(202)
    const text = await new Response(first.body).text() // read to its end: the cut
    expect(eventMessages(text).map((m) => m.event)).toEqual(["order.pending"])
    await e.admin("DELETE", "/_sim/faults")
    const again = await e.fetch(new Request(`http://sokoni.test${SB}/stream`, { headers: { "x-api-key": e.p.sandboxKey } }))
    await again.body?.cancel()
    const findings = (await e.admin("GET", `/_sim/findings?partnerId=${e.p.partnerId}`)).body.findings
    expect(findings.map((f: { kind: string }) => f.kind)).toEqual(["fault.stream.cut", "fault.stream.restarted"])
    await e.dispose()
  })
})
