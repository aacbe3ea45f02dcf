/**
 * The Outbound seam. `network`: real fetch against a loopback server (status, redirects not followed, unreachable,
 * the timeout, the exact bytes and headers). `simulated`: scripted receivers answer in order, then `otherwise`; a
 * latency at or above the timeout is a timeout; unscripted URLs are unreachable. `routed` (serve's default, E-240):
 * a URL scripted for the sender's partner (or for every partner) answers from the script, any other from the network.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { EngineClock } from "../../engine/sim/clock.ts"
import { Outbound, type OutboundRequest, Receivers, SimReceivers } from "../../engine/sim/outbound.ts"

const seen: Array<{ path: string; headers: IncomingMessage["headers"]; body: string }> = []
let server: Server
let base = ""

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = ""
    req.on("data", (c) => {
      body += c
    })
    req.on("end", () => {
      seen.push({ path: req.url ?? "", headers: req.headers, body })
      if (req.url === "/ok") res.writeHead(204).end()
      else if (req.url === "/fail") res.writeHead(500).end("boom")
      else if (req.url === "/redirect") res.writeHead(302, { location: `${base}/ok` }).end()
      else if (req.url === "/hang") setTimeout(() => res.writeHead(200).end(), 2_000)
      else res.writeHead(404).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const post = (layer: Layer.Layer<Outbound>, request: Partial<OutboundRequest> & { url: string }) =>
  Effect.runPromise(
    Effect.provide(
      Outbound.use((o) => o.post({ headers: {}, body: "{}", timeoutMs: 8_000, ...request })),
      layer
    )
  )

describe("Outbound.network", () => {
  it("reports the status and sends the exact bytes and headers", async () => {
    seen.length = 0
    const r = await post(Outbound.network, { url: `${base}/ok`, body: '{"a":1}', headers: { "content-type": "application/json", "x-service-signature": "ab" } })
    expect(r).toMatchObject({ kind: "answered", status: 204 })
    expect(r.kind === "answered" && r.latencyMs >= 0).toBe(true)
    expect(seen).toEqual([expect.objectContaining({ path: "/ok", body: '{"a":1}', headers: expect.objectContaining({ "x-service-signature": "ab" }) })])
    expect(await post(Outbound.network, { url: `${base}/fail` })).toMatchObject({ kind: "answered", status: 500 })
  })

  it("does not follow redirects: a 3xx is the answer", async () => {
    seen.length = 0
    expect(await post(Outbound.network, { url: `${base}/redirect` })).toMatchObject({ kind: "answered", status: 302 })
    expect(seen.map((s) => s.path)).toEqual(["/redirect"])
  })

  it("reports a closed port as unreachable and a slow answer as a timeout", async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    expect(await post(Outbound.network, { url: `http://127.0.0.1:${port}/x` })).toMatchObject({ kind: "unreachable" })
    expect(await post(Outbound.network, { url: `${base}/hang`, timeoutMs: 50 })).toEqual({ kind: "timeout" })
  })
})

describe("Outbound.simulated", () => {
  const clock = EngineClock.layer("manual", 1_000)
  it("answers the script in order, then otherwise; latency >= timeout is a timeout; unscripted is unreachable", async () => {
    const receivers = new SimReceivers()
    receivers.script("https://a.test/", [{ status: 500 }, { latencyMs: 8_000 }, { latencyMs: 7_999, status: 201 }, { unreachable: true }], { status: 202 })
    const layer = Layer.provide(Outbound.simulated(receivers), clock)
    const results = []
    for (let i = 0; i < 5; i++) results.push(await post(layer, { url: "https://a.test/" }))
    expect(results).toEqual([
      { kind: "answered", status: 500, latencyMs: 0 },
      { kind: "timeout" },
      { kind: "answered", status: 201, latencyMs: 7_999 },
      { kind: "unreachable", reason: "connection refused" },
      { kind: "answered", status: 202, latencyMs: 0 }
    ])
    expect(await post(layer, { url: "https://b.test/" })).toEqual({ kind: "unreachable", reason: "connection refused" })
    const got = receivers.take()
    expect(got).toHaveLength(6)
    expect(got[0]).toMatchObject({ url: "https://a.test/", at: 1_000, body: "{}" })
    expect(receivers.take()).toEqual([])
    receivers.script("https://c.test/")
    expect(await post(layer, { url: "https://c.test/" })).toEqual({ kind: "answered", status: 200, latencyMs: 0 })
  })
})

describe("Outbound.routed", () => {
  const clock = EngineClock.layer("manual", 2_000)
  it("answers scripted URLs from the script (per partner first) and sends every other URL to the network", async () => {
    const receivers = new SimReceivers()
    const layer = Layer.provide(Outbound.routed, Layer.merge(clock, Receivers.layer(receivers)))
    receivers.script(`${base}/fail`, [{ status: 201 }], { status: 202 }, { partnerId: "ptn_a" })
    receivers.script("https://only-simulated.test/x", [], { latencyMs: 9_000 })
    // ptn_a's own script; ptn_b has none for that URL, so its request goes to the real server (which answers 500).
    expect(await post(layer, { url: `${base}/fail`, partnerId: "ptn_a" })).toEqual({ kind: "answered", status: 201, latencyMs: 0 })
    // Counted by path: an earlier test's request to /hang, given up after 50 ms, may reach the server only now.
    const fails = () => seen.filter((s) => s.path === "/fail").length
    const before = fails()
    expect(await post(layer, { url: `${base}/fail`, partnerId: "ptn_b" })).toMatchObject({ kind: "answered", status: 500 })
    expect(fails()).toBe(before + 1)
    // A script for every partner answers anyone, at once: a 9 s latency is a timeout without waiting.
    expect(await post(layer, { url: "https://only-simulated.test/x", partnerId: "ptn_b" })).toEqual({ kind: "timeout" })
    const simulates = await Effect.runPromise(
      Effect.provide(
        Outbound.use((o) => Effect.succeed(o.simulates)),
        layer
      )
    )
    expect([simulates?.(`${base}/fail`, "ptn_a"), simulates?.(`${base}/fail`, "ptn_b"), simulates?.("https://only-simulated.test/x", undefined)]).toEqual([
      true,
      false,
      true
    ])
    // Only the simulated ones are kept, each with its partner; take(partner) leaves the others.
    expect(receivers.take("ptn_b").map((r) => [r.url, r.at, r.result.kind])).toEqual([["https://only-simulated.test/x", 2_000, "timeout"]])
    expect(receivers.take().map((r) => [r.partnerId, r.result])).toEqual([["ptn_a", { kind: "answered", status: 201, latencyMs: 0 }]])
  })
})
