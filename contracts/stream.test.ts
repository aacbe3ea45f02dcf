/**
 * Pact for the event stream (`GET /stream`), in two parts, because a stream never ends and Pact compares whole
 * bodies:
 * 1. an HTTP interaction for the resume handshake (`Last-Event-ID` sent, 200 `text/event-stream` back), in its own
 *    pact (contracts/pacts/sokoni-partner-client-sokoni-engine-stream.json). The verifier reads an answer to its end,
 *    so the engine is verified through a proxy that closes a stream once it has been quiet for a moment, as a client
 *    dropping the connection would;
 * 2. message pacts for the stream messages the reference reader consumes (their `data:` is the webhook envelope),
 *    verified against messages the engine really streams after a resume, which must also continue the log with no
 *    gap and no repeat.
 * Each part also fails against a broken provider.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http"
import { join } from "node:path"
import { MatchersV3, PactV4 } from "@pact-foundation/pact"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type RunningServer, startServer } from "../engine/http/node-server.ts"
import { makeValidator } from "../spec/validator.ts"
import { makeCursor, openStream, readMessages, type StreamMessage, splitMessages } from "./client/stream-reader.ts"
import { handleWebhook } from "./client/webhook-handler.ts"
import { envelope, jsonCall } from "./kit.ts"
import { VerificationFailed, verifyInChild } from "./verify.ts"

const { like, number, regex, fromProviderState } = MatchersV3

const PACTS = join(import.meta.dirname, "pacts")
const HTTP_PACT = join(PACTS, "sokoni-partner-client-sokoni-engine-stream.json")
const MESSAGE_PACT = join(PACTS, "sokoni-stream-reader-sokoni-engine-stream-messages.json")
const SANDBOX = "/api/sandbox/v1/partner"
const ADMIN = "pact-admin"
const STATE = "a partner whose event log holds two KYC changes, a deposit and a credit"
const EXAMPLE_KEY = "sk_sandbox_0123456789abcdef"
/** Pact's provider-state expression `${apiKey}` (built, so it reads as intended, as in pact.test.ts). */
const API_KEY_FROM_STATE = `$${"{"}apiKey}`

const httpPact = new PactV4({ consumer: "sokoni-partner-client", provider: "sokoni-engine-stream", dir: PACTS, logLevel: "warn" })
const messagePact = new PactV4({ consumer: "sokoni-stream-reader", provider: "sokoni-engine-stream-messages", dir: PACTS, logLevel: "warn" })

describe("consumer: the reference stream reader", () => {
  it("resumes the stream after the last id it handled", () =>
    httpPact
      .addInteraction()
      .given(STATE)
      .uponReceiving("a resume of the event stream after position 1")
      .withRequest("GET", `${SANDBOX}/stream`, (b) =>
        b.headers({ "x-api-key": fromProviderState(API_KEY_FROM_STATE, EXAMPLE_KEY), "last-event-id": "1", accept: "text/event-stream" })
      )
      .willRespondWith(200, (b) => b.headers({ "content-type": regex("^text/event-stream", "text/event-stream; charset=utf-8") }))
      .executeTest(async (mock) => {
        const response = await openStream({ baseUrl: `${mock.url}${SANDBOX}`, apiKey: EXAMPLE_KEY, lastEventId: 1 })
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
        // the mock's stream ends at once: the reader returns what it had (nothing) and keeps its cursor for the retry
        const cursor = makeCursor(1)
        expect(await readMessages(response, cursor, () => false)).toEqual([])
        expect(cursor.last).toBe(1)
      }))

  const MESSAGES = [
    {
      description: "a kyc.updated stream message",
      event: "kyc.updated",
      data: { subAccountId: like("usr_1"), kycStatus: "VERIFIED", kycLevel: "BASIC" },
      effect: { kind: "kyc", subAccountId: "usr_1", status: "VERIFIED" }
    },
    {
      description: "a deposit.confirmed stream message",
      event: "deposit.confirmed",
      data: { subAccountId: like("usr_1"), amount: number(1000), currency: "USD", newBalance: number(1000) },
      effect: { kind: "balance", subAccountId: "usr_1", balance: 1000 }
    },
    {
      description: "a wallet.credited stream message",
      event: "wallet.credited",
      data: { amount: number(500), currency: "USD", newBalance: number(100500) },
      effect: { kind: "balance", subAccountId: null, balance: 100500 }
    }
  ] as const
  for (const [i, message] of MESSAGES.entries()) {
    it(`handles ${message.description}`, () =>
      messagePact
        .addAsynchronousInteraction()
        .expectsToReceive(message.description, (b) => b.withJSONContent(envelope(message.event, message.data)))
        .executeTest(async (m) => {
          // the message arrives as the `data:` line of an SSE block: frame it as the engine does, then read it as the
          // reader does (a repeat of the same id is dropped by the cursor)
          const raw = m.contents.content
          const data = Buffer.isBuffer(raw) ? raw.toString("utf8") : JSON.stringify(raw)
          const block = `id: ${i + 2}\nevent: ${message.event}\ndata: ${data}\n\n`
          const { messages } = splitMessages(`: keep-alive\n\n${block}${block}`)
          const fresh = makeCursor(i + 1).accept(messages)
          expect(fresh).toHaveLength(1)
          expect(handleWebhook((fresh[0] as StreamMessage).envelope)).toEqual(message.effect)
        }))
  }
})

interface StreamPact {
  readonly interactions: ReadonlyArray<{
    readonly request: { readonly method: string; readonly path: string; readonly headers?: Record<string, ReadonlyArray<string>> }
    readonly response: { readonly status: number; readonly headers?: Record<string, ReadonlyArray<string>> }
  }>
}

describe("cross-check: the stream pact against spec/openapi.yaml", () => {
  it("names GET /stream with a declared Last-Event-ID header, and a declared 200 of text/event-stream", () => {
    const validator = makeValidator()
    const file = JSON.parse(readFileSync(HTTP_PACT, "utf8")) as StreamPact
    expect(file.interactions).toHaveLength(1)
    for (const { request, response } of file.interactions) {
      const found = validator.match(request.method, request.path)
      expect(found?.operationId).toBe("streamEvents")
      const declared = (found?.operation.parameters ?? []).map(
        (p: any) =>
          validator.doc.components.parameters[
            String(p.$ref ?? "")
              .split("/")
              .pop() ?? ""
          ] ?? p
      )
      for (const name of Object.keys(request.headers ?? {}).filter((h) => h !== "x-api-key" && h !== "accept"))
        expect(declared.some((p: any) => p.in === "header" && String(p.name).toLowerCase() === name)).toBe(true)
      const problems = validator
        .check({ method: request.method, url: request.path, status: response.status, headers: {}, body: undefined })
        .filter((p) => !p.includes("missing required header"))
      expect(problems).toEqual([])
      expect(Object.keys(found?.operation.responses[String(response.status)].content ?? {})).toContain("text/event-stream")
    }
  })
})

/** Calls on the engine: the control API and the partner's sandbox base. */
const engineCalls = (base: () => string) => {
  let n = 0
  const call = jsonCall(base)
  /**
   * A fresh partner whose log holds, at positions 1 to 4: kyc.updated (PENDING), kyc.updated (VERIFIED),
   * deposit.confirmed, wallet.credited; so a resume after position 1 carries one of each message the reader consumes.
   */
  const partnerWithEvents = async () => {
    const admin = { authorization: `Bearer ${ADMIN}` }
    const created = await call("POST", "/_sim/partners", { businessName: `Stream Partner ${++n}`, email: `stream${n}@acme.test` }, admin)
    const apiKey = String(created.sandboxKey)
    const as = (method: string, path: string, body?: unknown) =>
      call(method, `${SANDBOX}${path}`, body, { "x-api-key": apiKey, "idempotency-key": `stream-state-${n}-${method}-${path}` })
    const userId = String((await as("POST", "/users", { externalId: `stream-${n}` })).subAccountId)
    await as("POST", `/users/${userId}/kyc`, { kycStatus: "PENDING" })
    await call(
      "POST",
      `${SANDBOX}/users/${userId}/kyc`,
      { kycStatus: "VERIFIED", kycLevel: "BASIC" },
      { "x-api-key": apiKey, "idempotency-key": `stream-state-${n}-verified` }
    )
    await as("POST", `/users/${userId}/deposit`, { amount: 1000 })
    await call("POST", `/_sim/partners/${created.partnerId}/wallet/credit`, { environment: "sandbox", amount: 500 }, admin)
    return { apiKey }
  }
  return { partnerWithEvents }
}

/**
 * A proxy in front of the engine that closes an event stream once no byte has come for `quietMs` (the verifier reads
 * an answer to its end, and a stream has none), optionally rewriting the answer's content type (a broken provider).
 */
const streamClosingProxy = (target: () => string, quietMs: number, contentType?: string) =>
  createServer((req, res) => {
    const upstream = httpRequest(new URL(req.url ?? "/", target()), { method: req.method, headers: req.headers }, (answer) => {
      const headers: IncomingHttpHeaders = { ...answer.headers, ...(contentType === undefined ? {} : { "content-type": contentType }) }
      res.writeHead(answer.statusCode ?? 502, headers)
      let quiet: NodeJS.Timeout | undefined
      const close = () => {
        answer.destroy()
        res.end()
      }
      const rearm = () => {
        if (quiet !== undefined) clearTimeout(quiet)
        quiet = setTimeout(close, quietMs)
      }
      if (String(answer.headers["content-type"]).startsWith("text/event-stream")) rearm()
      answer.on("data", (chunk: Buffer) => {
        res.write(chunk)
        if (quiet !== undefined) rearm()
      })
      answer.on("end", () => {
        if (quiet !== undefined) clearTimeout(quiet)
        res.end()
      })
    })
    req.pipe(upstream)
  })

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`
}

describe("provider: the engine's stream honours the pacts", () => {
  let engine: RunningServer
  const proxies: Array<Server> = []
  let closingUrl = ""
  let jsonUrl = ""
  const config = { store: "memory", clock: "manual", start: Date.parse("2026-11-23T08:00:00.000Z"), seed: 7, desk: "manual", adminToken: ADMIN } as const
  beforeAll(async () => {
    engine = await startServer(config, 0)
    const closing = streamClosingProxy(() => engine.url, 300)
    const json = streamClosingProxy(() => engine.url, 300, "application/json")
    proxies.push(closing, json)
    closingUrl = await listen(closing)
    jsonUrl = await listen(json)
  })
  afterAll(async () => {
    for (const proxy of proxies) await new Promise((resolve) => proxy.close(resolve))
    await engine.stop()
  })

  // Verifications run in a child process whose report the test captures (contracts/verify.ts, as in pact.test.ts).
  const verifyHttp = (providerBaseUrl: string) =>
    verifyInChild({
      provider: "sokoni-engine-stream",
      providerBaseUrl,
      pactUrls: [HTTP_PACT],
      stateHandlers: { [STATE]: () => engineCalls(() => engine.url).partnerWithEvents() },
      logLevel: "error"
    })
  /** What a verification that must fail printed (that it failed is asserted by the caller). */
  const reportOf = (verification: Promise<unknown>) =>
    verification.then(
      () => "",
      (error: unknown) => (error instanceof VerificationFailed ? error.output : "")
    )

  it("answers the resume handshake", { timeout: 60_000 }, async () => {
    const verification = verifyHttp(closingUrl)
    await expect(verification).resolves.toBeDefined()
    const { output } = await verification
    expect(output).toContain("Verifying a pact between sokoni-partner-client and sokoni-engine-stream")
    expect(output).not.toContain("Failures:")
  })

  it("fails when the stream is not served as text/event-stream", { timeout: 60_000 }, async () => {
    const verification = verifyHttp(jsonUrl)
    await expect(verification).rejects.toThrow(/content-type/i)
    const output = await reportOf(verification)
    expect(output).toContain("Failures:")
    expect(output).toContain("Expected header 'content-type' to have value 'text/event-stream; charset=utf-8' but was 'application/json'")
  })

  /**
   * Messages the engine streams after resuming from `lastEventId`, read with the reference reader until `until`
   * holds; a stream that never satisfies it is given up after 10 s (the assertions then say what was missing).
   */
  const streamed = async (apiKey: string, lastEventId: number, until: (received: ReadonlyArray<StreamMessage>) => boolean) => {
    const abort = new AbortController()
    const giveUp = setTimeout(() => abort.abort(), 10_000)
    const response = await openStream({ baseUrl: `${engine.url}${SANDBOX}`, apiKey, lastEventId, signal: abort.signal })
    expect(response.status).toBe(200)
    const received = await readMessages(response, makeCursor(lastEventId), until).catch(() => [])
    clearTimeout(giveUp)
    abort.abort()
    return received
  }
  const EVENTS = ["kyc.updated", "deposit.confirmed", "wallet.credited"]
  const hasAll = (received: ReadonlyArray<StreamMessage>) => EVENTS.every((e) => received.some((m) => m.event === e))

  const verifyMessages = (messages: ReadonlyArray<StreamMessage>, mutate: (envelope: any) => unknown = (e) => e) =>
    verifyInChild({
      provider: "sokoni-engine-stream-messages",
      pactUrls: [MESSAGE_PACT],
      messageProviders: Object.fromEntries(
        EVENTS.map((event) => [
          `a ${event} stream message`,
          () => {
            const message = messages.find((m) => m.event === event)
            if (message === undefined) throw new Error(`the stream carried no ${event}`)
            return mutate(structuredClone(message.envelope))
          }
        ])
      ),
      logLevel: "error"
    })

  it("streams, after a resume, every message the reader consumes, continuing the log with no gap and no repeat", { timeout: 60_000 }, async () => {
    const { apiKey } = await engineCalls(() => engine.url).partnerWithEvents()
    const afterFirst = await streamed(apiKey, 1, hasAll)
    expect(afterFirst.map((m) => [m.id, m.event])).toEqual([
      [2, "kyc.updated"],
      [3, "deposit.confirmed"],
      [4, "wallet.credited"]
    ])
    // resuming from the middle gives exactly the rest
    const middle = afterFirst[1] as StreamMessage
    const rest = await streamed(apiKey, middle.id, (received) => received.some((m) => m.event === "wallet.credited"))
    expect(rest.map((m) => m.id)).toEqual(afterFirst.slice(2).map((m) => m.id))
    const verification = verifyMessages(afterFirst)
    await expect(verification).resolves.toBeDefined()
    const { output } = await verification
    expect(output).toContain("Verifying a pact between sokoni-stream-reader and sokoni-engine-stream-messages")
    expect(output).not.toContain("Failures:")
  })

  it("fails when a stream message loses a field the reader uses (deposit.confirmed without newBalance)", { timeout: 60_000 }, async () => {
    const { apiKey } = await engineCalls(() => engine.url).partnerWithEvents()
    const messages = await streamed(apiKey, 1, hasAll)
    const broken = verifyMessages(messages, (envelope) => {
      if (envelope.event === "deposit.confirmed") delete envelope.data.newBalance
      return envelope
    })
    await expect(broken).rejects.toThrow(/newBalance/)
    const output = await reportOf(broken)
    expect(output).toContain("Failures:")
    expect(output).toMatch(
      /a deposit\.confirmed stream message\n\s+1\.1\) has a matching body\n\s+\$\.data -> Actual map is missing the following keys: newBalance/
    )
  })
})
