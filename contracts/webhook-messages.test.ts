/**
 * Message pacts for the webhook payloads the reference partner consumes (contracts/client/webhook-handler.ts):
 * 1. consumer: each delivery the handler reads, as an asynchronous message (V4), into
 *    contracts/pacts/sokoni-webhook-receiver-sokoni-engine-webhooks.json;
 * 2. provider: the engine's own deliveries, produced by a real run on the virtual clock (a sub-account verified,
 *    funded, trading, filled; the master wallet credited) and captured at a simulated receiver, verified against
 *    the pact; and the same pact failing when a delivery loses a field the handler reads.
 */
import { join } from "node:path"
import { MatchersV3, PactV4 } from "@pact-foundation/pact"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SimReceivers } from "../engine/sim/outbound.ts"
import { startEngine } from "../test/http/harness.ts"
import { type Envelope, handleWebhook } from "./client/webhook-handler.ts"
import { envelope } from "./kit.ts"
import { VerificationFailed, verifyInChild } from "./verify.ts"

const { like, number } = MatchersV3

const PACTS = join(import.meta.dirname, "pacts")
const PACT_FILE = join(PACTS, "sokoni-webhook-receiver-sokoni-engine-webhooks.json")

/** The messages the handler consumes: description, event, the data fields it reads, what it records. */
const MESSAGES = [
  {
    description: "a deposit.confirmed delivery",
    event: "deposit.confirmed",
    data: { subAccountId: like("usr_1"), amount: number(1000), currency: "USD", newBalance: number(1000) },
    effect: { kind: "balance", subAccountId: "usr_1", balance: 1000 }
  },
  {
    description: "a kyc.updated delivery",
    event: "kyc.updated",
    data: { subAccountId: like("usr_1"), kycStatus: "VERIFIED", kycLevel: "BASIC" },
    effect: { kind: "kyc", subAccountId: "usr_1", status: "VERIFIED" }
  },
  {
    description: "a wallet.credited delivery",
    event: "wallet.credited",
    data: { amount: number(500), currency: "USD", newBalance: number(100500) },
    effect: { kind: "balance", subAccountId: null, balance: 100500 }
  },
  {
    description: "an order.pending delivery",
    event: "order.pending",
    data: { orderId: like("ord_1"), subAccountId: like("usr_1"), type: "BUY", quantity: number(10), status: "PENDING" },
    effect: { kind: "order", orderId: "ord_1", status: "PENDING" }
  },
  {
    description: "an order.filled delivery",
    event: "order.filled",
    data: { orderId: like("ord_1"), subAccountId: like("usr_1"), type: "BUY", quantity: number(10), status: "FILLED" },
    effect: { kind: "order", orderId: "ord_1", status: "FILLED" }
  }
] as const

const pact = new PactV4({ consumer: "sokoni-webhook-receiver", provider: "sokoni-engine-webhooks", dir: PACTS, logLevel: "warn" })

describe("consumer: the reference webhook handler", () => {
  for (const message of MESSAGES) {
    it(`handles ${message.description}`, () =>
      pact
        .addAsynchronousInteraction()
        .expectsToReceive(message.description, (b) => b.withJSONContent(envelope(message.event, message.data)))
        .executeTest(async (m) => {
          // the message arrives as the bytes a receiver would read: parse them as the handler's caller does
          const raw = m.contents.content
          const delivered = (Buffer.isBuffer(raw) ? JSON.parse(raw.toString("utf8")) : raw) as unknown as Envelope
          expect(handleWebhook(delivered)).toEqual(message.effect)
        }))
  }
})

const HOOK = "https://hooks.pact.test/in"
const SECRET = "whsec_0123456789abcdef"

/** One real run of the engine that makes every delivery of the pact, captured at a simulated receiver. */
const captureDeliveries = async () => {
  const receivers = new SimReceivers()
  receivers.script(HOOK)
  const engine = startEngine({ receivers })
  const partner = await engine.newPartner()
  let n = 0
  const sb = (method: string, path: string, body?: unknown) =>
    engine.call(method, `/api/sandbox/v1/partner${path}`, {
      headers: { "x-api-key": partner.sandboxKey, ...(method === "GET" ? {} : { "idempotency-key": `pact-msg-${++n}` }) },
      body
    })
  const ok = async (reply: Promise<{ status: number; body: any }>) => {
    const r = await reply
    if (r.status >= 300) throw new Error(`${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  await ok(sb("POST", "/webhooks", { url: HOOK, events: MESSAGES.map((m) => m.event), secret: SECRET }))
  const userId = (await ok(sb("POST", "/users", { externalId: "pact-msg-1" }))).subAccountId as string
  await ok(sb("POST", `/users/${userId}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC" }))
  await ok(sb("POST", `/users/${userId}/deposit`, { amount: 1000 }))
  await ok(engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 500 }))
  const quote = await ok(sb("GET", `/quote/SCOM?side=BUY&quantity=10&subAccountId=${userId}`))
  const order = await ok(sb("POST", `/users/${userId}/trade`, { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: quote.quoteId }))
  await ok(engine.admin("POST", `/_sim/desk/orders/${order.orderId}/fill`, {}))
  await ok(engine.admin("POST", "/_sim/clock/advance", { seconds: 1 }))
  const byEvent = new Map<string, unknown>()
  for (const r of receivers.received) {
    const body = JSON.parse(r.body) as { event: string }
    if (!byEvent.has(body.event)) byEvent.set(body.event, body)
  }
  return { engine, byEvent }
}

describe("provider: the engine's deliveries honour the pact", () => {
  let run: Awaited<ReturnType<typeof captureDeliveries>>
  beforeAll(async () => {
    run = await captureDeliveries()
  })
  afterAll(() => run.engine.dispose())

  const providers = (mutate: (event: string, body: any) => unknown = (_e, b) => b) =>
    Object.fromEntries(
      MESSAGES.map((m) => [
        m.description,
        () => {
          const body = run.byEvent.get(m.event)
          if (body === undefined) throw new Error(`the run delivered no ${m.event}`)
          return mutate(m.event, structuredClone(body))
        }
      ])
    )

  // In a child process whose report the test captures (contracts/verify.ts, as in pact.test.ts); the providers answer
  // from this process, which holds the captured deliveries.
  const verify = (messageProviders: ReturnType<typeof providers>) =>
    verifyInChild({ provider: "sokoni-engine-webhooks", pactUrls: [PACT_FILE], messageProviders, logLevel: "error" })

  it("delivers every message the handler consumes, as the engine really sends it", { timeout: 60_000 }, async () => {
    expect([...run.byEvent.keys()].sort()).toEqual(MESSAGES.map((m) => m.event).sort())
    const verification = verify(providers())
    await expect(verification).resolves.toBeDefined()
    const { output } = await verification
    expect(output).toContain("Verifying a pact between sokoni-webhook-receiver and sokoni-engine-webhooks")
    expect(output).not.toContain("Failures:")
  })

  it("fails when a delivery loses a field the handler reads (order.filled without orderId)", { timeout: 60_000 }, async () => {
    const broken = providers((event, body) => {
      if (event === "order.filled") delete body.data.orderId
      return body
    })
    const verification = verify(broken)
    await expect(verification).rejects.toThrow(/orderId/)
    const output = await verification.then(
      () => "",
      (error: unknown) => (error instanceof VerificationFailed ? error.output : "")
    )
    expect(output).toContain("Failures:")
    expect(output).toMatch(/an order\.filled delivery\n\s+1\.1\) has a matching body\n\s+\$\.data -> Actual map is missing the following keys: orderId/)
  })
})
