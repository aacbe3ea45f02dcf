/**
 * `GET /stream` over a real socket (http/node-server.ts, E-131): the head goes out at once (chunked, no length) and
 * `retry:` first; a client that goes away frees its production slot; a stopping server ends its open streams instead
 * of waiting out the grace period; with the server's scheduler loop (follow clock) an advance of 15 s sends a
 * keep-alive; a chunk over the socket's high-water mark waits for it to drain and the stream goes on, leaving no
 * listener behind. Rate-limit headers as on every keyed answer.
 */
import { type ClientRequest, type IncomingMessage, request, type ServerResponse } from "node:http"
import { afterEach, describe, expect, it } from "vitest"
import { type RunningServer, SHUTDOWN_GRACE_MS, startServer } from "../../engine/http/node-server.ts"
import { config, portOf } from "./node-server-kit.ts"

const LIVE = "/api/v1/partner"
const SANDBOX = "/api/sandbox/v1/partner"

const servers: Array<RunningServer> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop()
})

interface Open {
  readonly res: IncomingMessage
  readonly req: ClientRequest
  text: () => string
  until: (done: (text: string) => boolean) => Promise<string>
  ended: Promise<void>
}

/** Opens a stream on the socket; resolves once the head has arrived. */
const openOn = (port: number, path: string, headers: Record<string, string>) =>
  new Promise<Open>((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, method: "GET", path, headers }, (res) => {
      let text = ""
      const waiters: Array<() => void> = []
      res.setEncoding("utf8")
      res.on("data", (chunk: string) => {
        text += chunk
        for (const w of waiters.splice(0)) w()
      })
      const ended = new Promise<void>((done) => {
        res.on("end", () => done())
        res.on("close", () => done())
      })
      const until = async (done: (text: string) => boolean) => {
        while (!done(text)) await new Promise<void>((wake) => waiters.push(wake))
        return text
      }
      resolve({ res, req, text: () => text, until, ended })
    })
    req.on("error", reject)
    req.end()
  })

const start = async (overrides: Partial<Parameters<typeof startServer>[0]> = {}) => {
  const running = await startServer({ ...config, ...overrides }, 0)
  servers.push(running)
  const port = portOf(running)
  const admin = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${running.url}${path}`, {
      method,
      headers: { authorization: "Bearer t", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: r.status, body: await r.json() }
  }
  const partner = (await admin("POST", "/_sim/partners", { businessName: "Socket Co", email: "s@socket.test", tier: "starter" })).body as {
    partnerId: string
    sandboxKey: string
    liveKey: string
  }
  return { running, port, admin, partner }
}

describe("GET /stream over node:http", () => {
  it("sends the head at once, chunked with no length, then retry: 3000 and the events as they commit", async () => {
    const { port, admin, partner } = await start()
    const s = await openOn(port, `${SANDBOX}/stream`, { "x-api-key": partner.sandboxKey })
    expect(s.res.statusCode).toBe(200)
    expect(s.res.headers["content-type"]).toBe("text/event-stream")
    expect(s.res.headers["content-length"]).toBeUndefined()
    expect(s.res.headers["transfer-encoding"]).toBe("chunked")
    expect(s.res.headers["x-ratelimit-limit"]).toBe("300")
    expect(await s.until((t) => t.length > 0)).toBe("retry: 3000\n\n")
    await admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 7 })
    const text = await s.until((t) => t.includes("\n\n", "retry: 3000\n\n".length))
    expect(text).toMatch(/^retry: 3000\n\nid: 1\nevent: wallet\.credited\ndata: \{"eventId":"evt_[^\n]+"isSandbox":true\}\n\n$/)
    s.req.destroy()
  })

  it("frees a production slot when the client's socket goes away", async () => {
    const { port, partner } = await start()
    const headers = { "x-api-key": partner.liveKey }
    const a = await openOn(port, `${LIVE}/stream`, headers)
    const b = await openOn(port, `${LIVE}/stream`, headers)
    expect([a.res.statusCode, b.res.statusCode]).toEqual([200, 200])
    const refused = await openOn(port, `${LIVE}/stream`, headers)
    expect(refused.res.statusCode).toBe(429)
    expect(refused.res.headers["retry-after"]).toBe("45")
    expect(JSON.parse(await refused.until((t) => t.endsWith("}}")))).toEqual({
      error: { code: "RATE_LIMITED", message: "Concurrent stream limit reached for tier starter", activeConnections: 2, limit: 2 }
    })
    a.req.destroy()
    // The server notices the close and frees the slot; no engine time passes. The 30 s are a failure bound only.
    await expect
      .poll(
        async () => {
          const again = await openOn(port, `${LIVE}/stream`, headers)
          again.req.destroy()
          return again.res.statusCode
        },
        { timeout: 30_000, interval: 20 }
      )
      .toBe(200)
    b.req.destroy()
  })

  it("ends open streams when the server stops, without waiting out the grace period", async () => {
    const { running, port, partner } = await start()
    const s = await openOn(port, `${SANDBOX}/stream`, { "x-api-key": partner.sandboxKey })
    await s.until((t) => t.startsWith("retry:"))
    const begun = performance.now()
    await running.stop()
    await s.ended
    // Not a speed check: a stream left to the grace period would take all of it; this one is ended at once, so even
    // a busy machine finishes well inside it.
    expect(performance.now() - begun).toBeLessThan(SHUTDOWN_GRACE_MS * 0.8)
    servers.splice(servers.indexOf(running), 1)
  })

  it("with the server's scheduler loop (follow clock), advancing 15 s over the control API sends a keep-alive", async () => {
    const { port, admin, partner } = await start({ clock: "follow" })
    const s = await openOn(port, `${SANDBOX}/stream`, { "x-api-key": partner.sandboxKey })
    await s.until((t) => t.startsWith("retry:"))
    const advanced = await admin("POST", "/_sim/clock/advance", { seconds: 15 })
    expect(advanced.status, JSON.stringify(advanced.body)).toBe(200)
    // The follow clock also moves with the wall: on a machine slow enough for 15 s to pass, that beat comes too.
    expect(await s.until((t) => t.includes(": keep-alive"))).toMatch(/^retry: 3000\n\n(: keep-alive\n\n)+$/)
    s.req.destroy()
  })

  it("waits for the socket to drain and goes on, leaving no listener behind on the response", async () => {
    const { running, port, admin, partner } = await start()
    const responses: Array<ServerResponse> = []
    running.server.on("request", (req: IncomingMessage, res: ServerResponse) => void (req.url?.includes("/stream") && responses.push(res)))
    // 125 incidents of 550 bytes or so: one replayed page over 64 KiB, the socket's high-water mark, so the write
    // answers "wait for drain".
    const title = "t".repeat(200)
    for (let i = 0; i < 125; i++) expect((await admin("POST", "/_sim/incidents", { title, severity: "P3" })).status).toBe(201)
    const events = (text: string) => text.split("\nid: ").length - 1
    const replayed = await openOn(port, `${SANDBOX}/stream?since=0`, { "x-api-key": partner.sandboxKey })
    const text = await replayed.until((t) => events(t) === 125)
    const [waited] = responses
    expect(text.length).toBeGreaterThan(waited?.writableHighWaterMark ?? Number.POSITIVE_INFINITY)
    // After the drain the stream goes on: the next event arrives (a stream stuck in the wait never sends it).
    await admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 7 })
    await replayed.until((t) => t.includes("event: wallet.credited"))
    // A stream that never waited has as many listeners as the one that did.
    const live = await openOn(port, `${SANDBOX}/stream`, { "x-api-key": partner.sandboxKey })
    await live.until((t) => t.startsWith("retry:"))
    const never = responses[1]
    expect([waited?.listenerCount("drain"), waited?.listenerCount("close")]).toEqual([0, never?.listenerCount("close")])
    replayed.req.destroy()
    live.req.destroy()
  })
})
