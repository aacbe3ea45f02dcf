/**
 * What the console's browser test needs around the page: Debian's Chromium (found, or the reason it is not), an
 * engine on a free port with a manual clock and desk, and the partner-side calls that give the console something to
 * show (a partner, a scripted webhook receiver, quotes and trades).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { expect } from "vitest"
import type { EngineConfig } from "../../engine/runtime.ts"
import { send } from "../http/node-server-kit.ts"

const CONSOLE_DIR = join(import.meta.dirname, "..", "..", "engine", "console")

export const ADMIN = "console-test-token"
/** Where Debian installs Chromium (`apt-get install chromium`); CHROMIUM_PATH overrides. */
export const CHROMIUM_CANDIDATES = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(
  (p): p is string => p !== undefined && p !== ""
)
export const chromium = CHROMIUM_CANDIDATES.find((p) => existsSync(p))
export const missingChromium = `no Chromium at ${CHROMIUM_CANDIDATES.join(" or ")} (apt-get install -y chromium; .ci/run installs it)`

export const engineConfig: EngineConfig = {
  store: "memory",
  clock: "manual",
  start: Date.parse("2026-11-23T08:00:00.000Z"),
  seed: 11,
  desk: "manual",
  adminToken: ADMIN
}

export const RECEIVER = "https://hooks.acme.test/orders"

/** Calls the engine at `base` as a partner (`key`) or as the operator (no key: the admin token). */
export const client = (base: string) => {
  let keys = 0
  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key ?? ADMIN}` }
    if (body !== undefined) headers["content-type"] = "application/json"
    if (key !== undefined && method !== "GET") headers["idempotency-key"] = `console-test-${++keys}`
    const response = await fetch(`${base}${path}`, { method, headers, body: body === undefined ? null : JSON.stringify(body) })
    const text = await response.text()
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`)
    return (text === "" ? undefined : JSON.parse(text)) as Record<string, unknown>
  }
  return call
}

/**
 * A partner with a webhook on a scripted receiver (its first answer a 500, so one delivery shows a retry) and
 * `count` market BUY orders queued at the desk. Their ids, oldest first.
 */
export const seedWorld = async (call: ReturnType<typeof client>, count: number) => {
  const partner = await call("POST", "/_sim/partners", { businessName: "Acme Brokerage", email: "ops@acme.test", tier: "growth" })
  const key = partner.sandboxKey as string
  await call("PUT", "/_sim/receivers", {
    url: RECEIVER,
    partnerId: partner.partnerId,
    answers: [{ status: 500, latencyMs: 41 }],
    otherwise: { status: 200, latencyMs: 23 }
  })
  const events = ["order.pending", "order.filled", "order.rejected", "trade.settled"]
  await call("POST", "/api/sandbox/v1/partner/webhooks", { url: RECEIVER, events, secret: "whsec_console_test_secret" }, key)
  const orders: Array<string> = []
  const symbols = ["SCOM.KE", "EQTY.KE", "KCB.KE", "NPN.ZA"]
  for (let i = 0; i < count; i++) {
    const symbol = symbols[i % symbols.length] as string
    const quote = await call("GET", `/api/sandbox/v1/partner/quote/${symbol}?side=BUY&quantity=${100 * (i + 1)}`, undefined, key)
    const order = await call("POST", "/api/sandbox/v1/partner/trade", { symbol, type: "BUY", quantity: 100 * (i + 1), quoteId: quote.quoteId }, key)
    orders.push(order.orderId as string)
  }
  return { partnerId: partner.partnerId as string, key, orders }
}

/**
 * Gives the findings and faults panels something to show: a fault plan (every 2nd GET /orders answered 429), a
 * client that meets it and retries at once, and a sub-account created without an Idempotency-Key (which the spec
 * dialect refuses, and the public service would accept: a finding).
 */
export const seedChecks = async (base: string, key: string) => {
  const call = client(base)
  await call("PUT", "/_sim/faults", { rules: [{ fault: "429", operations: ["listOrders"], every: 2, retryAfterSeconds: 30 }] })
  const orders = (idempotencyKey: string) =>
    fetch(`${base}/api/sandbox/v1/partner/orders`, { headers: { "x-api-key": key, "idempotency-key": idempotencyKey } })
  expect((await orders("orders-read-1")).status).toBe(200)
  expect((await orders("orders-read-2")).status).toBe(429)
  expect((await orders("orders-read-2")).status).toBe(200)
  const user = await fetch(`${base}/api/sandbox/v1/partner/users`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ externalId: "console-user-1", email: "user@acme.test", firstName: "Ada", lastName: "Okoye" })
  })
  expect(user.status).toBe(400)
}

/**
 * What a bundled engine (dist/serve, the package's dist/cli) must serve of the console: its page and each of its
 * files byte for byte as kept in engine/console/, with no token, and its state behind the token (E-380).
 */
export const servesTheConsole = async (port: number, admin: string) => {
  const page = await send(port, "GET", "/_sim/console", {})
  expect([page.status, page.headers["content-type"]]).toEqual([200, "text/html; charset=utf-8"])
  expect(page.body).toBe(readFileSync(join(CONSOLE_DIR, "index.html"), "utf8"))
  for (const file of readdirSync(CONSOLE_DIR).filter((f) => /\.(js|css|svg)$/.test(f))) {
    const asset = await send(port, "GET", `/_sim/console/assets/${file}`, {})
    expect([file, asset.status, asset.body]).toEqual([file, 200, readFileSync(join(CONSOLE_DIR, file), "utf8")])
  }
  expect((await send(port, "GET", "/_sim/console/state", {})).status).toBe(401)
  expect((await send(port, "GET", "/_sim/console/state", { authorization: `Bearer ${admin}` })).status).toBe(200)
}
