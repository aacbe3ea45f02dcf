/**
 * Pact, both sides, in one file so the consumer writes the pact before the provider reads it:
 * 1. consumer: the reference client (contracts/client/partner-client.ts) against Pact's mock server, for a partner's
 *    main flows, with provider states; writes contracts/pacts/sokoni-partner-client-sokoni-engine.json;
 * 2. cross-check: every interaction's request and response against spec/openapi.yaml (what the consumer expects must
 *    exist in the contract with the contract's types; it may name fewer fields than the contract requires);
 * 3. provider: the pact replayed against the engine started in this process, each state set up through the control
 *    API and its ids injected with fromProviderState; and the same pact failing against an engine behind a proxy
 *    that renames one field, and against a provider missing a state.
 */
import { readFileSync } from "node:fs"
import { createServer, request as httpRequest, type Server } from "node:http"
import { join } from "node:path"
import { MatchersV3, PactV4 } from "@pact-foundation/pact"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../engine/http/node-server.ts"
import { makeValidator } from "../spec/validator.ts"
import { makePartnerClient } from "./client/partner-client.ts"
import { jsonCall } from "./kit.ts"
import { VerificationFailed, verifyInChild } from "./verify.ts"

const { like, eachLike, fromProviderState, regex, integer, number } = MatchersV3

const PACTS = join(import.meta.dirname, "pacts")
const PACT_FILE = join(PACTS, "sokoni-partner-client-sokoni-engine.json")
const SANDBOX = "/api/sandbox/v1/partner"
/** Price alerts are production-only (the sandbox answers 403), so their interactions use the production base. */
const PRODUCTION = "/api/v1/partner"
const ADMIN = "pact-admin"

/** Pact's provider-state expression for a value the state returns: `${name}` (built, so it reads as intended). */
const fromState = (name: string) => `$${"{"}${name}}`
/** Example values the consumer side uses where the provider injects its own. */
const EXAMPLES: Record<string, string> = {
  apiKey: "sk_sandbox_0123456789abcdef",
  liveKey: "pk_live_0123456789abcdef",
  userId: "usr_1",
  quoteId: "qt_1",
  orderId: "ord_1"
}
const injected = (name: string) => fromProviderState(fromState(name), EXAMPLES[name] as string)

/** Headers every request of the client carries; the key comes from the provider state. */
const keyHeader = { "x-api-key": injected("apiKey") }
const mutationHeaders = { ...keyHeader, "content-type": "application/json", "idempotency-key": regex("^[!-~]{8,200}$", "client-1-0000") }
/** A path under the sandbox base whose `{name}` segments the provider state fills in. */
const path = (template: string) =>
  fromProviderState(
    `${SANDBOX}${template.replace(/\{(\w+)\}/g, (_, name: string) => fromState(name))}`,
    `${SANDBOX}${template.replace(/\{(\w+)\}/g, (_, name: string) => EXAMPLES[name] as string)}`
  )
const errorBody = (code: string) => ({ error: { code, message: like("why, in words") } })

const pact = new PactV4({ consumer: "sokoni-partner-client", provider: "sokoni-engine", dir: PACTS, logLevel: "warn" })
const clientAt = (url: string) => makePartnerClient({ baseUrl: `${url}${SANDBOX}`, apiKey: "sk_sandbox_0123456789abcdef" })
const liveClientAt = (url: string) => makePartnerClient({ baseUrl: `${url}${PRODUCTION}`, apiKey: "pk_live_0123456789abcdef" })
const liveHeaders = { "x-api-key": injected("liveKey"), "content-type": "application/json", "idempotency-key": regex("^[!-~]{8,200}$", "client-1-0000") }

describe("consumer: the reference partner client", () => {
  it("creates a sub-account", () =>
    pact
      .addInteraction()
      .given("a partner")
      .uponReceiving("a request to create a sub-account")
      .withRequest("POST", `${SANDBOX}/users`, (b) => b.headers(mutationHeaders).jsonBody({ externalId: "acme-001" }))
      .willRespondWith(201, (b) =>
        b.jsonBody({ subAccountId: like("usr_4kb798xsadb1x7vc"), externalId: "acme-001", kycStatus: "NONE", status: "active", walletBalance: integer(0) })
      )
      .executeTest(async (mock) => {
        const created = await clientAt(mock.url).createSubAccount({ externalId: "acme-001" })
        expect(created.kycStatus).toBe("NONE")
      }))

  it("asserts KYC for a sub-account", () =>
    pact
      .addInteraction()
      .given("a partner with a sub-account")
      .uponReceiving("a KYC assertion (VERIFIED, BASIC)")
      .withRequest("POST", path("/users/{userId}/kyc"), (b) => b.headers(mutationHeaders).jsonBody({ kycStatus: "VERIFIED", kycLevel: "BASIC" }))
      .willRespondWith(200, (b) => b.jsonBody({ subAccountId: like("usr_1"), kycStatus: "VERIFIED", kycLevel: "BASIC" }))
      .executeTest(async (mock) => {
        const account = await clientAt(mock.url).assertKyc("usr_1", { kycStatus: "VERIFIED", kycLevel: "BASIC" })
        expect(account.kycStatus).toBe("VERIFIED")
      }))

  it("deposits into a verified sub-account", () =>
    pact
      .addInteraction()
      .given("a partner with a verified sub-account")
      .uponReceiving("a deposit of 1000 USD")
      .withRequest("POST", path("/users/{userId}/deposit"), (b) => b.headers(mutationHeaders).jsonBody({ amount: 1000 }))
      .willRespondWith(200, (b) =>
        b.jsonBody({ transactionId: like("txn_1"), type: "DEPOSIT", amount: number(1000), currency: "USD", newBalance: number(1000) })
      )
      .executeTest(async (mock) => {
        const deposit = await clientAt(mock.url).deposit("usr_1", 1000)
        expect(deposit.newBalance).toBe(1000)
      }))

  it("gets a quote for a funded sub-account", () =>
    pact
      .addInteraction()
      .given("a partner with a verified sub-account holding 1000 USD")
      .uponReceiving("a BUY quote for 10 SCOM")
      .withRequest("GET", `${SANDBOX}/quote/SCOM`, (b) => b.headers(keyHeader).query({ side: "BUY", quantity: "10", subAccountId: injected("userId") }))
      .willRespondWith(200, (b) =>
        b.jsonBody({ quoteId: like("qt_1"), side: "BUY", quantity: integer(10), estimatedTotal: number(1.4), ttlSeconds: 60, singleUse: true })
      )
      .executeTest(async (mock) => {
        const quote = await clientAt(mock.url).quote("SCOM", { side: "BUY", quantity: 10, subAccountId: "usr_1" })
        expect(quote.ttlSeconds).toBe(60)
      }))

  it("trades on a quote", () =>
    pact
      .addInteraction()
      .given("a verified sub-account holding 1000 USD and a quote for 10 SCOM")
      .uponReceiving("a BUY trade on the quote")
      .withRequest("POST", path("/users/{userId}/trade"), (b) =>
        b.headers(mutationHeaders).jsonBody({ symbol: "SCOM", type: "BUY", quantity: 10, quoteId: injected("quoteId") })
      )
      .willRespondWith(202, (b) => b.jsonBody({ orderId: like("ord_1"), status: "PENDING", settlementStatus: "PENDING", quantity: integer(10) }))
      .executeTest(async (mock) => {
        const order = await clientAt(mock.url).trade("usr_1", { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: "qt_1" })
        expect(order.status).toBe("PENDING")
      }))

  it("is refused a trade on an expired quote", () =>
    pact
      .addInteraction()
      .given("a quote that expired")
      .uponReceiving("a BUY trade on an expired quote")
      .withRequest("POST", path("/users/{userId}/trade"), (b) =>
        b.headers(mutationHeaders).jsonBody({ symbol: "SCOM", type: "BUY", quantity: 10, quoteId: injected("quoteId") })
      )
      .willRespondWith(409, (b) => b.jsonBody(errorBody("STALE_QUOTE")))
      .executeTest(async (mock) => {
        await expect(clientAt(mock.url).trade("usr_1", { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: "qt_1" })).rejects.toMatchObject({
          status: 409,
          code: "STALE_QUOTE"
        })
      }))

  it("reads a sub-account's orders", () =>
    pact
      .addInteraction()
      .given("an order PENDING at the desk")
      .uponReceiving("a request for the sub-account's orders")
      .withRequest("GET", path("/users/{userId}/orders"), (b) => b.headers(keyHeader))
      .willRespondWith(200, (b) =>
        b.jsonBody({ orders: eachLike({ orderId: like("ord_1"), status: "PENDING", type: "BUY", quantity: integer(10) }), hasMore: false })
      )
      .executeTest(async (mock) => {
        const list = await clientAt(mock.url).orders("usr_1")
        expect(list.orders[0]?.status).toBe("PENDING")
      }))

  it("withdraws from a funded sub-account", () =>
    pact
      .addInteraction()
      .given("a partner with a verified sub-account holding 1000 USD")
      .uponReceiving("a withdrawal of 250 USD")
      .withRequest("POST", path("/users/{userId}/withdraw"), (b) => b.headers(mutationHeaders).jsonBody({ amount: 250 }))
      .willRespondWith(200, (b) => b.jsonBody({ transactionId: like("txn_2"), type: "WITHDRAWAL", amount: number(250), newBalance: number(750) }))
      .executeTest(async (mock) => {
        const withdrawal = await clientAt(mock.url).withdraw("usr_1", 250)
        expect(withdrawal.type).toBe("WITHDRAWAL")
      }))

  it("cancels a PENDING order and reads the refund", () =>
    pact
      .addInteraction()
      .given("an order PENDING at the desk")
      .uponReceiving("a cancel of the PENDING order")
      .withRequest("DELETE", path("/orders/{orderId}"), (b) => b.headers({ ...keyHeader, "idempotency-key": regex("^[!-~]{8,200}$", "client-1-0000") }))
      .willRespondWith(200, (b) => b.jsonBody({ orderId: like("ord_1"), status: "CANCELLED", cancelReason: "PARTNER_REQUEST", cancelable: false }))
      .executeTest(async (mock) => {
        const order = await clientAt(mock.url).cancel("ord_1")
        expect(order.status).toBe("CANCELLED")
      }))

  it("registers a webhook", () =>
    pact
      .addInteraction()
      .given("a partner")
      .uponReceiving("a webhook registration for order.filled")
      .withRequest("POST", `${SANDBOX}/webhooks`, (b) =>
        b.headers(mutationHeaders).jsonBody({ url: "https://hooks.acme.test/in", events: ["order.filled"], secret: "whsec_0123456789abcdef" })
      )
      .willRespondWith(201, (b) => b.jsonBody({ id: like("wh_1"), url: "https://hooks.acme.test/in", events: ["order.filled"], status: "active" }))
      .executeTest(async (mock) => {
        const webhook = await clientAt(mock.url).registerWebhook({
          url: "https://hooks.acme.test/in",
          events: ["order.filled"],
          secret: "whsec_0123456789abcdef"
        })
        expect(webhook.status).toBe("active")
      }))

  it("creates a price alert on production", () =>
    pact
      .addInteraction()
      .given("a partner with production access")
      .uponReceiving("a price alert above 30 KES on SCOM.KE")
      .withRequest("POST", `${PRODUCTION}/price-alerts`, (b) =>
        b.headers(liveHeaders).jsonBody({ symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 30, clientAlertId: "acme-alert-12" })
      )
      .willRespondWith(201, (b) =>
        b.jsonBody({
          alertId: like("alr_1"),
          clientAlertId: "acme-alert-12",
          symbol: "SCOM.KE",
          condition: "above",
          threshold: number(30),
          state: "ARMED",
          triggerCount: integer(0)
        })
      )
      .executeTest(async (mock) => {
        const alert = await liveClientAt(mock.url).createPriceAlert({
          symbol: "SCOM.KE",
          exchange: "NSE",
          condition: "above",
          threshold: 30,
          clientAlertId: "acme-alert-12"
        })
        expect(alert.state).toBe("ARMED")
      }))

  it("lists its price alerts", () =>
    pact
      .addInteraction()
      .given("a partner with an armed price alert")
      .uponReceiving("a request for the price alerts")
      .withRequest("GET", `${PRODUCTION}/price-alerts`, (b) => b.headers({ "x-api-key": injected("liveKey") }))
      .willRespondWith(200, (b) =>
        b.jsonBody({ data: eachLike({ alertId: like("alr_1"), symbol: like("SCOM.KE"), state: regex("^(ARMED|TRIGGERED|DISARMED)$", "ARMED") }) })
      )
      .executeTest(async (mock) => {
        const page = await liveClientAt(mock.url).priceAlerts()
        expect(page.data[0]?.alertId).toBe("alr_1")
      }))

  it("is refused a price alert on the sandbox (production only)", () =>
    pact
      .addInteraction()
      .given("a partner")
      .uponReceiving("a price alert on the sandbox")
      .withRequest("POST", `${SANDBOX}/price-alerts`, (b) =>
        b.headers(mutationHeaders).jsonBody({ symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 30 })
      )
      .willRespondWith(403, (b) => b.jsonBody(errorBody("FORBIDDEN")))
      .executeTest(async (mock) => {
        await expect(clientAt(mock.url).createPriceAlert({ symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 30 })).rejects.toMatchObject({
          status: 403,
          code: "FORBIDDEN"
        })
      }))
})

interface PactFile {
  readonly interactions: ReadonlyArray<{
    readonly description: string
    readonly request: { readonly method: string; readonly path: string; readonly query?: Record<string, ReadonlyArray<string>> }
    readonly response: { readonly status: number; readonly body?: { readonly content?: unknown } }
  }>
}

describe("cross-check: the pact against spec/openapi.yaml", () => {
  it("names only operations, statuses and fields the contract has, with its types", () => {
    const validator = makeValidator()
    const file = JSON.parse(readFileSync(PACT_FILE, "utf8")) as PactFile
    expect(file.interactions.length).toBe(13)
    const problems = file.interactions.flatMap((i) => {
      const query = new URLSearchParams(Object.entries(i.request.query ?? {}).flatMap(([k, vs]) => vs.map((v) => [k, v]))).toString()
      const url = `${i.request.path}${query === "" ? "" : `?${query}`}`
      return (
        validator
          .check({ method: i.request.method, url, status: i.response.status, headers: {}, body: i.response.body?.content })
          // a consumer states only the fields it reads: the contract's required fields and headers are not its business
          .filter((p) => !p.includes("must have required property") && !p.includes("missing required header"))
          .map((p) => `${i.description}: ${p}`)
      )
    })
    expect(problems).toEqual([])
  })
})

/** The engine's control and partner calls a provider state needs. */
const stateSetup = (base: () => string) => {
  const call = jsonCall(base)
  let seq = 0
  const partner = async () => {
    const created = await call(
      "POST",
      "/_sim/partners",
      { businessName: `Pact Partner ${++seq}`, email: `pact${seq}@acme.test` },
      { authorization: `Bearer ${ADMIN}` }
    )
    const apiKey = String(created.sandboxKey)
    const as = (method: string, path: string, body?: unknown) =>
      call(method, `${SANDBOX}${path}`, body, { "x-api-key": apiKey, ...(method === "GET" ? {} : { "idempotency-key": `state-${seq}-${path}-${method}` }) })
    const liveKey = String(created.liveKey)
    const live = (method: string, path: string, body?: unknown) =>
      call(method, `${PRODUCTION}${path}`, body, { "x-api-key": liveKey, ...(method === "GET" ? {} : { "idempotency-key": `state-${seq}-${path}-${method}` }) })
    return { apiKey, liveKey, as, live }
  }
  const subAccount = async (verified: boolean, funded: boolean) => {
    const p = await partner()
    const userId = String((await p.as("POST", "/users", { externalId: `pact-${seq}` })).subAccountId)
    if (verified) await p.as("POST", `/users/${userId}/kyc`, { kycStatus: "VERIFIED", kycLevel: "BASIC" })
    if (funded) await p.as("POST", `/users/${userId}/deposit`, { amount: 1000 })
    return { ...p, userId }
  }
  const withQuote = async () => {
    const s = await subAccount(true, true)
    const quoteId = String((await s.as("GET", `/quote/SCOM?side=BUY&quantity=10&subAccountId=${s.userId}`)).quoteId)
    return { ...s, quoteId }
  }
  return {
    "a partner": async () => ({ apiKey: (await partner()).apiKey }),
    "a partner with production access": async () => ({ liveKey: (await partner()).liveKey }),
    "a partner with an armed price alert": async () => {
      const p = await partner()
      await p.live("POST", "/price-alerts", { symbol: "SCOM.KE", exchange: "NSE", condition: "above", threshold: 1000 })
      return { liveKey: p.liveKey }
    },
    "a partner with a sub-account": async () => {
      const s = await subAccount(false, false)
      return { apiKey: s.apiKey, userId: s.userId }
    },
    "a partner with a verified sub-account": async () => {
      const s = await subAccount(true, false)
      return { apiKey: s.apiKey, userId: s.userId }
    },
    "a partner with a verified sub-account holding 1000 USD": async () => {
      const s = await subAccount(true, true)
      return { apiKey: s.apiKey, userId: s.userId }
    },
    "a verified sub-account holding 1000 USD and a quote for 10 SCOM": async () => {
      const q = await withQuote()
      return { apiKey: q.apiKey, userId: q.userId, quoteId: q.quoteId }
    },
    "a quote that expired": async () => {
      const q = await withQuote()
      await call("POST", "/_sim/clock/advance", { seconds: 61 }, { authorization: `Bearer ${ADMIN}` })
      return { apiKey: q.apiKey, userId: q.userId, quoteId: q.quoteId }
    },
    "an order PENDING at the desk": async () => {
      const q = await withQuote()
      const order = await q.as("POST", `/users/${q.userId}/trade`, { symbol: "SCOM", type: "BUY", quantity: 10, quoteId: q.quoteId })
      return { apiKey: q.apiKey, userId: q.userId, orderId: String(order.orderId) }
    }
  } satisfies Record<string, () => Promise<Record<string, string>>>
}

/** A proxy in front of `target` that renames one JSON field in every answer: a provider that broke its contract. */
const renamingProxy = (target: () => string, from: string, to: string) =>
  createServer((req, res) => {
    const url = new URL(req.url ?? "/", target())
    const upstream = httpRequest(url, { method: req.method, headers: req.headers }, (answer) => {
      const chunks: Array<Buffer> = []
      answer.on("data", (c: Buffer) => chunks.push(c))
      answer.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8").replaceAll(`"${from}":`, `"${to}":`)
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, "content-length": Buffer.byteLength(body) })
        res.end(body)
      })
    })
    req.pipe(upstream)
  })

describe("provider: the engine honours the pact", () => {
  let engine: RunningServer
  let proxy: Server
  let proxyUrl = ""
  const config = { store: "memory", clock: "manual", start: Date.parse("2026-11-23T08:00:00.000Z"), seed: 7, desk: "manual", adminToken: ADMIN } as const
  beforeAll(async () => {
    engine = await startServer(config, 0)
    proxy = renamingProxy(() => engine.url, "kycStatus", "kyc_status")
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    const address = proxy.address()
    proxyUrl = `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
  })
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve))
    await engine.stop()
  })

  // In a child process (contracts/verify.ts): Pact's core prints its report from native code, so only there can the
  // report be captured, and asserted on, instead of printed into the run's output.
  const verify = (providerBaseUrl: string, stateHandlers: Record<string, () => Promise<Record<string, string>>>) =>
    verifyInChild({ provider: "sokoni-engine", providerBaseUrl, pactUrls: [PACT_FILE], stateHandlers, logLevel: "error" })
  /** The report of a verification that must fail: what it printed (the verification itself is asserted by the caller). */
  const reportOf = (verification: Promise<unknown>) =>
    verification.then(
      () => "",
      (error: unknown) => (error instanceof VerificationFailed ? error.output : "")
    )

  it("verifies every interaction, each state set up through the control API", { timeout: 60_000 }, async () => {
    const verification = verify(
      engine.url,
      stateSetup(() => engine.url)
    )
    await expect(verification).resolves.toBeDefined()
    const { output } = await verification
    expect(output).toContain("Verifying a pact between sokoni-partner-client and sokoni-engine")
    expect(output).not.toContain("Failures:")
  })

  it("fails when the provider renames a field the consumer reads (kycStatus)", { timeout: 60_000 }, async () => {
    const verification = verify(
      proxyUrl,
      stateSetup(() => engine.url)
    )
    await expect(verification).rejects.toThrow(/kycStatus/)
    const output = await reportOf(verification)
    expect(output).toContain("Failures:")
    expect(output).toMatch(/Given a partner with a sub-account - a KYC assertion \(VERIFIED, BASIC\)\n\s+1\.1\) has a matching body/)
    expect(output).toContain("Actual map is missing the following keys: kycStatus")
  })

  it("fails when the provider cannot set up a state the consumer relies on", { timeout: 60_000 }, async () => {
    const { "a quote that expired": _missing, ...rest } = stateSetup(() => engine.url)
    const verification = verify(engine.url, rest)
    await expect(verification).rejects.toThrow(/a quote that expired/)
    const output = await reportOf(verification)
    // without its state, the expired-quote interaction runs with the example key: the one failure
    expect(output).toContain("Failures:")
    expect(output).toContain("1) Verifying a pact between sokoni-partner-client and sokoni-engine Given a quote that expired - a BUY trade on an expired quote")
    expect(output).toContain("There were 1 pact failures")
  })
})
