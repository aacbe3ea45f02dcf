/**
 * The contract as a mock: starts Prism on spec/openapi.yaml (a real child process on a free loopback port), calls a
 * sample of operations across the families (market data, trading, webhooks, portal, status, sub-accounts) and checks
 * every answer's body against the contract schema of that operation and status with Ajv (JSON Schema 2020-12).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import addFormatsModule from "ajv-formats"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parse } from "yaml"

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv2020) => void

const root = join(import.meta.dirname, "..", "..")
const specPath = join(root, "spec", "openapi.yaml")
const prismEntry = join(root, "node_modules", "@stoplight", "prism-cli", "dist", "index.js")
const doc = parse(readFileSync(specPath, "utf8")) as Record<string, any>

const CONTRACT_ID = "urn:sokoni:openapi"
const ajv = new Ajv2020({ strict: false, allErrors: true })
addFormats(ajv)
ajv.addSchema({ $id: CONTRACT_ID, components: doc.components })

const deref = (node: any): any => {
  if (node && typeof node.$ref === "string" && node.$ref.startsWith("#/")) {
    const target = node.$ref
      .slice(2)
      .split("/")
      .reduce((acc: any, key: string) => acc?.[key.replace(/~1/g, "/").replace(/~0/g, "~")], doc)
    return deref(target)
  }
  return node
}

/** The contract's response object for an operation and status. */
const contractResponse = (template: string, method: string, status: number) => {
  const op = doc.paths[template]?.[method]
  if (!op) throw new Error(`no operation ${method.toUpperCase()} ${template} in the contract`)
  const response = deref(op.responses[String(status)])
  if (!response) throw new Error(`${method.toUpperCase()} ${template} declares no ${status}`)
  return { op, response }
}

const validatorFor = (template: string, method: string, status: number, mediaType = "application/json") => {
  const { response } = contractResponse(template, method, status)
  const schema = response.content?.[mediaType]?.schema
  if (!schema) throw new Error(`${method.toUpperCase()} ${template} ${status} has no ${mediaType} schema`)
  const rebased = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${CONTRACT_ID}#/components/`))
  return ajv.compile(rebased)
}

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))))
    })
  })

let prism: ChildProcess | undefined
let base = ""
let prismOutput = ""

const waitUntilAnswering = async (url: string, deadlineMs: number) => {
  const deadline = performance.now() + deadlineMs
  let lastError: unknown
  while (performance.now() < deadline) {
    if (prism?.exitCode !== null && prism?.exitCode !== undefined) throw new Error(`prism exited early (${prism.exitCode}):\n${prismOutput}`)
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) })
      if (res.status === 200) return
    } catch (error) {
      lastError = error
    }
    await new Promise((resolve) => setTimeout(resolve, 250))
  }
  throw new Error(`prism did not answer within ${deadlineMs} ms: ${String(lastError)}\n${prismOutput}`)
}

beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  prism = spawn(process.execPath, [prismEntry, "mock", "--host", "127.0.0.1", "--port", String(port), specPath], {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"]
  })
  prism.stdout?.on("data", (chunk) => {
    prismOutput += String(chunk)
  })
  prism.stderr?.on("data", (chunk) => {
    prismOutput += String(chunk)
  })
  // A failure bound only: Prism answers as soon as it is up, which took over 30 s on a machine at load 26.
  await waitUntilAnswering(`${base}/status`, 150_000)
}, 180_000)

afterAll(async () => {
  if (!prism || prism.exitCode !== null) return
  const exited = new Promise((resolve) => prism?.once("exit", resolve))
  prism.kill("SIGTERM")
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000))])
  if (prism.exitCode === null) prism.kill("SIGKILL")
})

const SANDBOX_KEY = "sk_sandbox_0123456789abcdef"
const keyed = { authorization: `Bearer ${SANDBOX_KEY}` }
const mutation = (key: string) => ({ ...keyed, "idempotency-key": key, "content-type": "application/json" })

interface Sample {
  readonly name: string
  readonly method: "get" | "post" | "delete" | "patch"
  /** Contract path template. */
  readonly template: string
  /** Concrete path with query. */
  readonly url: string
  readonly headers?: Record<string, string>
  readonly body?: unknown
  readonly status: number
  /** API-key operations carry the rate-limit headers. */
  readonly rateLimited: boolean
}

const samples: ReadonlyArray<Sample> = [
  { name: "list stocks", method: "get", template: "/stocks", url: "/stocks?exchange=NSE&limit=10", headers: keyed, status: 200, rateLimited: true },
  {
    name: "tradeable quote",
    method: "get",
    template: "/quote/{symbol}",
    url: "/quote/SCOM.KE?side=BUY&quantity=100",
    headers: keyed,
    status: 200,
    rateLimited: true
  },
  {
    name: "place a trade",
    method: "post",
    template: "/trade",
    url: "/trade",
    headers: mutation("prism-trade-0001"),
    body: { symbol: "SCOM.KE", exchange: "NSE", type: "BUY", orderType: "MARKET", quantity: 100, quoteId: "qt_0001" },
    status: 202,
    rateLimited: true
  },
  { name: "list orders", method: "get", template: "/orders", url: "/orders?status=PENDING&limit=50", headers: keyed, status: 200, rateLimited: true },
  { name: "list webhooks", method: "get", template: "/webhooks", url: "/webhooks", headers: keyed, status: 200, rateLimited: true },
  {
    name: "test a webhook",
    method: "post",
    template: "/webhooks/{id}/test",
    url: "/webhooks/wh_0001/test",
    headers: { ...keyed, "idempotency-key": "prism-webhook-test-1" },
    status: 200,
    rateLimited: true
  },
  {
    name: "portal session",
    method: "post",
    template: "/session",
    url: "/session",
    headers: { authorization: "Bearer eyJhbGciOiJSUzI1NiJ9.e30.sig" },
    status: 200,
    rateLimited: false
  },
  { name: "market status", method: "get", template: "/market/status", url: "/market/status", headers: keyed, status: 200, rateLimited: true },
  {
    name: "deprecated market-data alias with a data key",
    method: "get",
    template: "/market-data/quotes",
    url: "/market-data/quotes?symbols=SCOM.KE,EQTY.KE",
    headers: { "x-api-key": "pk_data_0123456789abcdef" },
    status: 200,
    rateLimited: true
  },
  { name: "service status", method: "get", template: "/status", url: "/status", status: 200, rateLimited: false },
  {
    name: "create a sub-account",
    method: "post",
    template: "/users",
    url: "/users",
    headers: mutation("prism-user-0001"),
    body: { externalId: "cust-1001", displayName: "Amina Otieno", country: "KE" },
    status: 201,
    rateLimited: true
  },
  {
    name: "wallet summaries",
    method: "get",
    template: "/users/summary",
    url: "/users/summary?userIds=usr_0001,cust-9999",
    headers: keyed,
    status: 200,
    rateLimited: true
  },
  { name: "missing key gives the error envelope", method: "get", template: "/stocks", url: "/stocks", status: 401, rateLimited: false }
]

describe("Prism mock of the contract", () => {
  it("serves a sample of at least 8 operations", () => {
    expect(new Set(samples.map((s) => `${s.method} ${s.template}`)).size).toBeGreaterThanOrEqual(8)
  })

  for (const sample of samples) {
    it(`${sample.name}: ${sample.method.toUpperCase()} ${sample.template} answers ${sample.status} with a body valid against the contract`, async () => {
      const init: RequestInit = { method: sample.method.toUpperCase(), headers: sample.headers ?? {}, signal: AbortSignal.timeout(10_000) }
      if (sample.body !== undefined) init.body = JSON.stringify(sample.body)
      const res = await fetch(`${base}${sample.url}`, init)
      const text = await res.text()
      expect(res.status, text).toBe(sample.status)
      expect(res.headers.get("content-type") ?? "").toMatch(/application\/json/)
      const body = JSON.parse(text)
      const validate = validatorFor(sample.template, sample.method, sample.status)
      expect(validate(body), ajv.errorsText(validate.errors)).toBe(true)
      if (sample.rateLimited) {
        for (const header of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset"]) {
          expect(res.headers.get(header), header).toMatch(/^\d+$/)
        }
      }
    })
  }

  it("serves the event stream as text/event-stream with id, event and data lines", async () => {
    const res = await fetch(`${base}/stream`, { headers: keyed, signal: AbortSignal.timeout(10_000) })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type") ?? "").toMatch(/text\/event-stream/)
    const text = await res.text()
    const envelope = ajv.compile({ $ref: `${CONTRACT_ID}#/components/schemas/EventEnvelope` })
    const messages = text.split(/\n\n+/).filter((block) => block.includes("data:"))
    expect(messages.length).toBeGreaterThan(0)
    for (const block of messages) {
      expect(block).toMatch(/^id: \d+$/m)
      expect(block).toMatch(/^event: [a-z_.]+$/m)
      const data = JSON.parse(
        block
          .split("\n")
          .find((line) => line.startsWith("data: "))!
          .slice(6)
      )
      expect(envelope(data), ajv.errorsText(envelope.errors)).toBe(true)
    }
  })

  it("the schema check can fail: a wrong body is rejected", () => {
    const validate = validatorFor("/orders", "get", 200)
    expect(validate({ orders: [{ orderId: "ord_1" }], count: 1, hasMore: false, nextCursor: null })).toBe(false)
    expect(validate({ orders: [], count: 0, hasMore: "no", nextCursor: null })).toBe(false)
  })
})
