/**
 * The simulated webhook receivers of the control API (D-350, E-241): `PUT /_sim/receivers` scripts the receiver of a URL
 * (answers in order, then `otherwise`; a timeout on the engine clock, no real wait; unreachable), optionally for one
 * partner only and with a secret it checks signatures with; `POST /_sim/receivers/take` returns what they got and
 * forgets it. The engine's default outbound routes scripted URLs to them and every other URL to the network.
 * Admin token required, bad input in the envelope. Every answer is checked against spec/control.yaml by the harness.
 */
import { afterEach, describe, expect, it } from "vitest"
import { ADMIN, startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const URL_A = "https://hooks.acme.test/a"
const SECRET = "whsec_0123456789abcdef"

const engines: Array<ReturnType<typeof startEngine>> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

/** An engine with the default (routed) outbound, a partner and a webhook on `url` for wallet.credited. */
const setup = async (url = URL_A) => {
  const engine = startEngine()
  engines.push(engine)
  const partner = await engine.newPartner()
  const hook = await engine.call("POST", `${SANDBOX}/webhooks`, {
    headers: { "x-api-key": partner.sandboxKey, "idempotency-key": "receivers-hook" },
    body: { url, events: ["wallet.credited"], secret: SECRET }
  })
  expect(hook.status).toBe(201)
  const credit = () => engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 10 })
  const advance = (seconds: number) => engine.admin("POST", "/_sim/clock/advance", { seconds })
  const take = (body?: unknown) => engine.admin("POST", "/_sim/receivers/take", body)
  return { engine, partner, webhookId: hook.body.id as string, credit, advance, take }
}

describe("PUT /_sim/receivers and POST /_sim/receivers/take", () => {
  it("answers a delivery as scripted, on the engine clock, and reports it once with the signature verdict", async () => {
    const { engine, partner, webhookId, credit, advance, take } = await setup()
    const set = await engine.admin("PUT", "/_sim/receivers", {
      url: URL_A,
      partnerId: partner.partnerId,
      secret: SECRET,
      answers: [{ status: 500 }, { latencyMs: 8_000 }, { latencyMs: 120, status: 204 }]
    })
    expect([set.status, set.body]).toEqual([
      200,
      {
        url: URL_A,
        partnerId: partner.partnerId,
        checksSignatures: true,
        answers: [{ status: 500 }, { latencyMs: 8_000 }, { latencyMs: 120, status: 204 }],
        otherwise: { status: 200 }
      }
    ])
    expect((await credit()).status).toBe(200)
    await advance(0.001)
    await advance(5)
    await advance(30)
    const got = await take()
    expect(got.status).toBe(200)
    const received = got.body.received as Array<Record<string, unknown>>
    expect(received.map((r) => [r.at, r.event, r.outcome, r.status, r.latencyMs, r.signature, r.partnerId])).toEqual([
      ["2026-11-23T08:00:00.000Z", "wallet.credited", "answered", 500, 0, "valid", partner.partnerId],
      ["2026-11-23T08:00:05.000Z", "wallet.credited", "timeout", null, null, "valid", partner.partnerId],
      ["2026-11-23T08:00:35.000Z", "wallet.credited", "answered", 204, 120, "valid", partner.partnerId]
    ])
    expect(JSON.parse(received[0]?.body as string)).toMatchObject({ event: "wallet.credited", isSandbox: true, data: { amount: 10 } })
    expect(received[0]).toMatchObject({ url: URL_A, isSandbox: true, data: { amount: 10, currency: "USD" } })
    // Taken once: a second take is empty.
    expect((await take()).body).toEqual({ received: [] })
    // The delivery record agrees: delivered on attempt 3 with the scripted latency.
    const deliveries = await engine.call("GET", `${SANDBOX}/webhooks/${webhookId}/deliveries`, { headers: { "x-api-key": partner.sandboxKey } })
    expect(deliveries.body.deliveries[0]).toMatchObject({ attempts: 3, success: true, statusCode: 204, latencyMs: 120 })
  })

  it("checks signatures with the scripted secret: another secret gives `invalid`, none gives `unchecked`", async () => {
    const { engine, partner, webhookId, take } = await setup()
    let sent = 0
    const test = () =>
      engine.call("POST", `${SANDBOX}/webhooks/${webhookId}/test`, {
        headers: { "x-api-key": partner.sandboxKey, "idempotency-key": `receivers-test-${++sent}` }
      })
    await engine.admin("PUT", "/_sim/receivers", { url: URL_A, secret: "whsec_other_secret_000" })
    expect((await test()).status).toBe(200)
    await engine.admin("PUT", "/_sim/receivers", { url: URL_A })
    expect((await test()).status).toBe(200)
    const received = (await take()).body.received as Array<Record<string, unknown>>
    expect(received.map((r) => [r.event, r.signature])).toEqual([
      ["test.event", "invalid"],
      ["test.event", "unchecked"]
    ])
  })

  it("a partner's script is its own: another partner's deliveries to the URL do not consume it, and take filters by partner", async () => {
    const first = await setup()
    const other = await first.engine.newPartner()
    const hook = await first.engine.call("POST", `${SANDBOX}/webhooks`, {
      headers: { "x-api-key": other.sandboxKey, "idempotency-key": "receivers-hook-2" },
      body: { url: URL_A, events: ["wallet.credited"], secret: SECRET }
    })
    expect(hook.status).toBe(201)
    await first.engine.admin("PUT", "/_sim/receivers", { url: URL_A, partnerId: first.partner.partnerId, answers: [{ status: 503 }] })
    await first.engine.admin("PUT", "/_sim/receivers", { url: URL_A, otherwise: { status: 202 } })
    await first.engine.admin("POST", `/_sim/partners/${other.partnerId}/wallet/credit`, { environment: "sandbox", amount: 5 })
    await first.credit()
    await first.advance(1)
    const mine = (await first.take({ partnerId: first.partner.partnerId })).body.received as Array<Record<string, unknown>>
    expect(mine.map((r) => [r.partnerId, r.status])).toEqual([[first.partner.partnerId, 503]])
    const theirs = (await first.take()).body.received as Array<Record<string, unknown>>
    expect(theirs.map((r) => [r.partnerId, r.status])).toEqual([[other.partnerId, 202]])
  })

  it("unreachable answers are reported as such; an unscripted partner's delivery is not taken by the receivers", async () => {
    const { engine, partner, credit, advance, take } = await setup()
    await engine.admin("PUT", "/_sim/receivers", { url: URL_A, partnerId: partner.partnerId, answers: [{ unreachable: true }] })
    await credit()
    await advance(1)
    expect(((await take()).body.received as Array<Record<string, unknown>>).map((r) => [r.outcome, r.status])).toEqual([["unreachable", null]])
  })

  it("refuses bad scripts in the envelope: not a URL, both unreachable and a status, unknown partner, out of range", async () => {
    const { engine } = await setup()
    const bad = async (body: unknown, code: string, status = 400) => {
      const r = await engine.admin("PUT", "/_sim/receivers", body)
      expect([r.status, r.body.error?.code], JSON.stringify(body)).toEqual([status, code])
    }
    await bad({ url: "not a url" }, "VALIDATION_ERROR")
    await bad({ url: "ftp://x.test/" }, "VALIDATION_ERROR")
    await bad({ url: URL_A, answers: [{ unreachable: true, status: 500 }] }, "VALIDATION_ERROR")
    await bad({ url: URL_A, otherwise: { unreachable: true, latencyMs: 5 } }, "VALIDATION_ERROR")
    await bad({ url: URL_A, answers: [{ status: 99 }] }, "VALIDATION_ERROR")
    await bad({ url: URL_A, answers: [{ latencyMs: -1 }] }, "VALIDATION_ERROR")
    await bad({ url: URL_A, answers: Array.from({ length: 101 }, () => ({})) }, "VALIDATION_ERROR")
    await bad({}, "MISSING_PARAM")
    await bad({ url: URL_A, partnerId: "ptn_nobody" }, "NOT_FOUND", 404)
    // what each refusal says, and the parameter it names
    const error = async (body: unknown) => (await engine.admin("PUT", "/_sim/receivers", body)).body.error
    expect(await error({ url: "/hooks/relative" })).toMatchObject({ message: 'url must be an absolute URI, got "/hooks/relative"', param: "url" })
    expect(await error({ url: URL_A, answers: [{ status: 204 }, { unreachable: true, status: 500 }] })).toMatchObject({
      message: "answers[1]: an unreachable answer has no status nor latency",
      param: "answers[1]"
    })
    expect(await error({ url: URL_A, otherwise: { unreachable: true, latencyMs: 5 } })).toMatchObject({
      message: "otherwise: an unreachable answer has no status nor latency",
      param: "otherwise"
    })
    expect((await error({ url: URL_A, partnerId: "ptn_nobody" })).message).toBe("partner ptn_nobody was not found")
    const take = await engine.admin("POST", "/_sim/receivers/take", { partnerId: 7 })
    expect([take.status, take.body.error?.code]).toEqual([400, "INVALID_TYPE"])
  })

  it("scripts a plain http URL as well; without a secret it checks no signature", async () => {
    const { engine } = await setup()
    const set = await engine.admin("PUT", "/_sim/receivers", { url: "http://hooks.acme.test/plain" })
    expect([set.status, set.body]).toEqual([
      200,
      { url: "http://hooks.acme.test/plain", partnerId: null, checksSignatures: false, answers: [], otherwise: { status: 200 } }
    ])
  })

  it("needs the admin token", async () => {
    const { engine } = await setup()
    const none = await engine.call("PUT", "/_sim/receivers", { body: { url: URL_A } })
    expect([none.status, none.body.error.code]).toEqual([401, "AUTH_MISSING"])
    const wrong = await engine.call("POST", "/_sim/receivers/take", { headers: { authorization: `Bearer ${ADMIN}x` } })
    expect([wrong.status, wrong.body.error.code]).toEqual([401, "AUTH_INVALID"])
  })
})
