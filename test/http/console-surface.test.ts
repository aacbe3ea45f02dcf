/**
 * The console's surface of the control API (E-380..E-384): its page and files need no token, its state and feed
 * do; the state shows partners (keys by their last 4 only), master wallets, webhooks, orders, events newest first,
 * each delivery's attempts with status, latency and bytes, and open streams; the feed carries committed events and
 * answered requests; and watching (the console's surface, its GETs) leaves the trace as it was. Every answer is
 * checked against spec/control.yaml by the harness.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { tagsFor } from "../support/stores.ts"
import { ADMIN, engineOn, startEngine } from "./harness.ts"
import { openStream, parseSse } from "./stream-kit.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const HOOK = "https://hooks.acme.test/console"
const CONSOLE_DIR = join(import.meta.dirname, "..", "..", "engine", "console")
const admin = { authorization: `Bearer ${ADMIN}` }

const disposals: Array<() => Promise<void>> = []
const engines = { push: (engine: ReturnType<typeof startEngine>) => disposals.push(() => engine.dispose()) }
afterEach(async () => {
  for (const dispose of disposals.splice(0)) await dispose()
})

/** A partner with a webhook whose receiver answers 500 then 200, and one market BUY queued at the desk. */
const world = async (store: "memory" | "postgres" = "memory") => {
  const { engine, dispose } = await engineOn(store)
  disposals.push(dispose)
  const partner = await engine.newPartner()
  const key = { "x-api-key": partner.sandboxKey }
  await engine.admin("PUT", "/_sim/receivers", {
    url: HOOK,
    partnerId: partner.partnerId,
    answers: [{ status: 500, latencyMs: 40 }],
    otherwise: { latencyMs: 12 }
  })
  const events = ["order.pending", "order.filled", "trade.settled"]
  const hook = await engine.call("POST", `${SANDBOX}/webhooks`, {
    headers: { ...key, "idempotency-key": "console-hook" },
    body: { url: HOOK, events, secret: "whsec_console_secret" }
  })
  expect([hook.status, hook.body]).toEqual([201, expect.anything()])
  const quote = await engine.call("GET", `${SANDBOX}/quote/SCOM.KE?side=BUY&quantity=10`, { headers: key })
  const order = await engine.call("POST", `${SANDBOX}/trade`, {
    headers: { ...key, "idempotency-key": "console-trade" },
    body: { symbol: "SCOM.KE", type: "BUY", quantity: 10, quoteId: quote.body.quoteId }
  })
  expect(order.status).toBe(202)
  return { engine, partner, key, orderId: order.body.orderId as string }
}

describe("the console's page and files", () => {
  it("are served without a token, as kept in engine/console/, and an unknown file is a 404", async () => {
    const engine = startEngine()
    engines.push(engine)
    const page = await engine.call("GET", "/_sim/console")
    expect([page.status, page.headers.get("content-type"), page.body]).toEqual([
      200,
      "text/html; charset=utf-8",
      readFileSync(join(CONSOLE_DIR, "index.html"), "utf8")
    ])
    const script = await engine.call("GET", "/_sim/console/assets/console.js")
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"])
    expect(script.body).toBe(readFileSync(join(CONSOLE_DIR, "console.js"), "utf8"))
    expect((await engine.call("GET", "/_sim/console/assets/console.css")).headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect((await engine.call("GET", "/_sim/console/assets/missing.js")).body.error.code).toBe("NOT_FOUND")
    expect((await engine.call("GET", "/_sim/console/assets/files.ts")).status).toBe(400)
  })
})

describe("GET /_sim/console/state", () => {
  it("needs the admin token and a limit from 1 to 500", async () => {
    const engine = startEngine()
    engines.push(engine)
    expect((await engine.call("GET", "/_sim/console/state")).body.error.code).toBe("AUTH_MISSING")
    expect((await engine.call("GET", "/_sim/console/state?limit=0", { headers: admin })).status).toBe(400)
    expect((await engine.call("GET", "/_sim/console/state?limit=501", { headers: admin })).status).toBe(400)
  })

  for (const store of ["memory", "postgres"] as const)
    it.skipIf(store === "postgres" && process.env.DATABASE_URL === undefined)(
      `shows partners, keys, wallets, webhooks, the queue, orders, events and each delivery attempt (${store})`,
      tagsFor(store),
      async () => {
        const { engine, partner, orderId } = await world(store)
        expect((await engine.admin("POST", `/_sim/desk/orders/${orderId}/fill`, {})).body.status).toBe("FILLED")
        await engine.admin("POST", "/_sim/clock/advance", { seconds: 60 })
        const state = (await engine.admin("GET", "/_sim/console/state")).body
        const [shown] = state.partners
        expect(shown.partnerId).toBe(partner.partnerId)
        expect(shown.keys.map((k: { last4: string }) => k.last4).sort()).toEqual([partner.liveKey.slice(-4), partner.sandboxKey.slice(-4)].sort())
        expect(JSON.stringify(state)).not.toContain(partner.sandboxKey)
        expect(shown.wallets.map((w: { environment: string }) => w.environment)).toEqual(["sandbox", "production"])
        expect(shown.webhooks).toEqual([expect.objectContaining({ url: HOOK, environment: "sandbox", status: "active" })])
        expect(state.desk).toEqual({ policy: { mode: "manual" }, queue: [], queued: 0 })
        expect(state.orders.map((o: { order: { orderId: string; status: string } }) => [o.order.orderId, o.order.status])).toEqual([[orderId, "FILLED"]])
        const positions = state.events.map((e: { position: number }) => e.position)
        expect(positions).toEqual([...positions].sort((a, b) => b - a))
        expect(state.events.map((e: { event: string }) => e.event)).toEqual(["trade.settled", "order.filled", "order.pending"])
        const pending = state.deliveries.find((d: { event: string }) => d.event === "order.pending")
        expect(pending.state).toBe("delivered")
        expect(pending.attempts.map((a: { attempt: number; status: number; latencyMs: number }) => [a.attempt, a.status, a.latencyMs])).toEqual([
          [1, 500, 40],
          [2, 200, 12]
        ])
        for (const attempt of pending.attempts) expect(attempt.bytes).toBeGreaterThan(100)
      }
    )

  it("bounds the desk queue to the oldest `limit`, and counts them all", async () => {
    const { engine, key, orderId } = await world()
    // A second later: the queue is ordered by time, then id.
    await engine.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    const quote = await engine.call("GET", `${SANDBOX}/quote/EQTY.KE?side=BUY&quantity=5`, { headers: key })
    const second = await engine.call("POST", `${SANDBOX}/trade`, {
      headers: { ...key, "idempotency-key": "console-trade-2" },
      body: { symbol: "EQTY.KE", type: "BUY", quantity: 5, quoteId: quote.body.quoteId }
    })
    expect(second.status).toBe(202)
    const desk = (await engine.admin("GET", "/_sim/console/state?limit=1")).body.desk
    expect([desk.queue.map((o: { orderId: string }) => o.orderId), desk.queued]).toEqual([[orderId], 2])
  })

  it("lists the streams open in this process with their position and what they sent", async () => {
    const { engine, key } = await world()
    const stream = await openStream(engine, `${SANDBOX}/stream?since=0`, key)
    await stream.until((text) => text.includes("order.pending"))
    const state = (await engine.admin("GET", "/_sim/console/state")).body
    expect(state.streams).toEqual([expect.objectContaining({ environment: "sandbox", position: 1, sent: 1, events: null })])
    await stream.close()
  })
})

describe("the console's feed and the trace", () => {
  it("carries committed events and answered requests, and opens with hello", async () => {
    const { engine, partner } = await world()
    const feed = await openStream(engine, "/_sim/console/stream", admin)
    await feed.until((text) => text.includes("event: hello"))
    await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 5 })
    const text = await feed.until((t) => t.includes("event: log") && t.includes("event: exchange"))
    const messages = parseSse(text)
    expect(messages[0]?.retry).toBe("2000")
    const log = messages.find((m) => m.event === "log")
    expect(JSON.parse(log?.data ?? "{}")).toMatchObject({ partnerId: partner.partnerId, environment: "sandbox", event: "wallet.credited" })
    const exchange = messages.find((m) => m.event === "exchange")
    expect(JSON.parse(exchange?.data ?? "{}")).toMatchObject({ method: "POST", path: `/_sim/partners/${partner.partnerId}/wallet/credit`, status: 200 })
    await feed.close()
  })

  it("is left as it was by watching: the console's surface and its GETs; its actions are recorded", async () => {
    const { engine, orderId } = await world()
    const hash = async () => (await engine.admin("GET", "/_sim/trace/hash")).body
    const before = await hash()
    await engine.call("GET", "/_sim/console")
    await engine.admin("GET", "/_sim/console/state")
    await engine.call("GET", "/_sim/desk/queue", { headers: { ...admin, "x-sokoni-console": "1" } })
    expect(await hash()).toEqual(before)
    await engine.call("POST", `/_sim/desk/orders/${orderId}/fill`, { headers: { ...admin, "x-sokoni-console": "1" }, body: {} })
    expect((await hash()).lines).toBeGreaterThan(before.lines)
  })
})
