/**
 * A job booked due now runs at once in a running engine, on every clock and store (issue #22 item 8, E-277): on the
 * manual clock a webhook delivery of a wallet credit reaches its receiver without waiting for the next
 * `POST /_sim/clock/advance`, on the memory store as on PostgreSQL. The wait is on the receiver's answer (an event);
 * the 20 s bound is a failure bound only.
 */
import { describe, expect, it } from "vitest"
import { type EngineHost, makeEngineHost } from "../../engine/http/engine-host.ts"
import type { EngineRequest, EngineResponse } from "../../engine/http/exchange.ts"
import type { OutboundRequest, OutboundResult } from "../../engine/sim/outbound.ts"
import { SimReceivers } from "../../engine/sim/outbound.ts"
import { adminUrl, config, withDatabase } from "./node-server-kit.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const HOOK = "https://hooks.due-now.test/in"

/** Receivers that tell when they answered a request: the test waits on that, not on time. */
class NotifyingReceivers extends SimReceivers {
  private readonly answered = Promise.withResolvers<void>()
  readonly firstAnswer = this.answered.promise
  override answer(request: OutboundRequest, now: number): OutboundResult {
    const result = super.answer(request, now)
    this.answered.resolve()
    return result
  }
}

const request = (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: "Bearer t" }): EngineRequest => ({
  method,
  path,
  query: new URLSearchParams(),
  search: "",
  headers: { "content-type": "application/json", ...headers },
  body: body === undefined ? undefined : JSON.stringify(body),
  remoteAddress: "127.0.0.1"
})
const answer = (host: EngineHost, r: EngineRequest) => new Promise<EngineResponse>((resolve) => host.handle(r, resolve))
const bodyOf = (response: EngineResponse) => JSON.parse(response.body) as Record<string, any>

const failAfter = (ms: number, what: string) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms).unref())

const deliversAtOnce = async (store: { readonly store: "memory" } | { readonly store: "postgres"; readonly databaseUrl: string }) => {
  const receivers = new NotifyingReceivers()
  receivers.script(HOOK)
  const host = await makeEngineHost({ ...config, ...store, receivers })
  try {
    const made = bodyOf(await answer(host, request("POST", "/_sim/partners", { businessName: "Due Now", email: "due@now.test" })))
    const key = { "x-api-key": made.sandboxKey as string }
    const hook = await answer(
      host,
      request(
        "POST",
        `${SANDBOX}/webhooks`,
        { url: HOOK, events: ["wallet.credited"], secret: "whsec_0123456789abcdef" },
        { ...key, "idempotency-key": "due-now-hook" }
      )
    )
    expect(hook.status, hook.body).toBe(201)
    const credit = await answer(host, request("POST", `/_sim/partners/${made.partnerId}/wallet/credit`, { environment: "sandbox", amount: 5 }))
    expect(credit.status, credit.body).toBe(200)
    // No advance: the clock stays where it is, and the delivery due now goes out anyway.
    await Promise.race([receivers.firstAnswer, failAfter(20_000, "the delivery due now")])
    const [sent] = receivers.take()
    expect(JSON.parse(sent?.body ?? "{}").event).toBe("wallet.credited")
    const clock = bodyOf(await answer(host, request("GET", "/_sim/clock")))
    expect(Date.parse(clock.now)).toBe(config.start)
  } finally {
    await host.stop()
  }
}

describe("a job due now runs at once on the manual clock", () => {
  it("memory store: a webhook delivery goes out without an advance", () => deliversAtOnce({ store: "memory" }))
  it.skipIf(adminUrl === undefined)("postgres store: a webhook delivery goes out without an advance", () =>
    withDatabase(adminUrl ?? "", (databaseUrl) => deliversAtOnce({ store: "postgres", databaseUrl }))
  )
})
