/**
 * Issue 9's done-when for the stream, over a real socket, on the memory store and (DATABASE_URL set) on PostgreSQL:
 * 2,000 events committed by concurrent writers while a client built on the npm `eventsource` package (not our code)
 * reads `GET /stream`; the network under it drops the connection at 50 seeded random points, each in the middle of
 * a message, and the package reconnects by itself sending `Last-Event-ID`. The ids it delivers equal the committed
 * positions, strictly increasing, none repeated, none missing. The seed is printed; SOKONI_STREAM_SEED replays one.
 */
import { EventSource, type FetchLike, type FetchLikeResponse } from "eventsource"
import { afterEach, describe, expect, it, onTestFailed } from "vitest"
import { EVENT_NAMES } from "../../engine/contract/catalogue.gen.ts"
import { type RunningServer, startServer } from "../../engine/http/node-server.ts"
import { adminUrl, config, withDatabase } from "./node-server-kit.ts"
import { tagsFor } from "../support/stores.ts"
import { mulberry32 } from "../support/mulberry32.ts"

const EVENTS = 2_000
const DROPS = 50
const WRITERS = 8
const SANDBOX = "/api/sandbox/v1/partner"

const stopping: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const stop of stopping.splice(0).reverse()) await stop()
})

const generator = mulberry32

interface Drop {
  /** Drop inside the message that follows this many complete messages received. */
  readonly after: number
  /** Where inside that message: this fraction of its bytes is delivered, never all of it. */
  readonly fraction: number
}

const dropPoints = (seed: number): Array<Drop> => {
  const random = generator(seed)
  const chosen = new Set<number>()
  while (chosen.size < DROPS) chosen.add(Math.floor(random() * EVENTS))
  return [...chosen].sort((a, b) => a - b).map((after) => ({ after, fraction: random() }))
}

/**
 * The network between the server and the client: a `fetch` for EventSource that hands the body on one SSE block at
 * a time and, at each drop point, delivers only part of the message and then fails the connection (the socket is
 * aborted, so the server sees the client go away). It records the Last-Event-ID each connection was opened with.
 */
const droppingNetwork = (drops: ReadonlyArray<Drop>) => {
  const encoder = new TextEncoder()
  const decoder = new TextDecoder()
  let received = 0
  let next = 0
  const opened: Array<string | undefined> = []
  const fetchLike: FetchLike = async (url, init) => {
    opened.push(init.headers["Last-Event-ID"])
    const controller = new AbortController()
    init.signal?.addEventListener?.("abort", () => controller.abort())
    const response = await fetch(url, { headers: init.headers, signal: controller.signal, cache: "no-store" })
    if (response.body === null) return response as unknown as FetchLikeResponse
    const network = response.body.getReader()
    let buffer = ""
    let failed = false
    const reader = {
      async read(): Promise<{ done: false; value: Uint8Array } | { done: true; value?: undefined }> {
        if (failed) {
          controller.abort()
          throw new Error("the network dropped the connection")
        }
        let end = buffer.indexOf("\n\n")
        while (end === -1) {
          const chunk = await network.read()
          if (chunk.done) return { done: true }
          buffer += decoder.decode(chunk.value, { stream: true })
          end = buffer.indexOf("\n\n")
        }
        const block = buffer.slice(0, end + 2)
        buffer = buffer.slice(end + 2)
        if (!block.startsWith("id: ")) return { done: false, value: encoder.encode(block) }
        const drop = drops[next]
        if (drop !== undefined && drop.after === received) {
          next++
          failed = true
          return { done: false, value: encoder.encode(block.slice(0, Math.floor(drop.fraction * (block.length - 1)))) }
        }
        received++
        return { done: false, value: encoder.encode(block) }
      },
      cancel: async () => {
        controller.abort()
      }
    }
    return { status: response.status, url: response.url, redirected: response.redirected, headers: response.headers, body: { getReader: () => reader } }
  }
  return { fetch: fetchLike, opened, dropsDone: () => next }
}

const stores = (): Array<{ readonly store: string; readonly admin: string | undefined }> => {
  const memory = { store: "memory", admin: undefined }
  return adminUrl === undefined || adminUrl === "" ? [memory] : [memory, { store: "postgres", admin: adminUrl }]
}

const run = async (databaseUrl: string | undefined) => {
  const seed = Number(process.env.SOKONI_STREAM_SEED ?? Math.floor(Math.random() * 2 ** 31))
  // The seed replays a failure (a timeout included); a passing run has no use for it.
  onTestFailed(() =>
    console.log(`stream resume test (${databaseUrl === undefined ? "memory" : "postgres"}): seed ${seed} (SOKONI_STREAM_SEED=${seed} replays it)`)
  )
  const running: RunningServer = await startServer(
    {
      ...config,
      ...(databaseUrl === undefined ? {} : { store: "postgres" as const, databaseUrl }),
      adminToken: "t",
      rateLimit: "off",
      streamRetryMs: 5
    },
    0
  )
  stopping.push(() => running.stop())
  const call = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const r = await fetch(`${running.url}${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await r.text()
    return { status: r.status, body: text === "" ? null : JSON.parse(text.split("\n")[0] ?? "null"), text }
  }
  const partner = (await call("POST", "/_sim/partners", { authorization: "Bearer t" }, { businessName: "Stream Co", email: "s@stream.test", tier: "starter" }))
    .body as { partnerId: string; sandboxKey: string }
  const key = { "x-api-key": partner.sandboxKey }
  const users: Array<string> = []
  for (let w = 0; w < WRITERS; w++) {
    const r = await call("POST", `${SANDBOX}/users`, { ...key, "idempotency-key": `stream-user-${w}` }, { externalId: `writer-${w}` })
    expect(r.status).toBe(201)
    users.push(r.body.subAccountId)
  }

  const network = droppingNetwork(dropPoints(seed))
  const received: Array<number> = []
  const source = new EventSource(`${running.url}${SANDBOX}/stream?since=0`, {
    fetch: (url, init) => network.fetch(url, { ...init, headers: { ...init.headers, "x-api-key": partner.sandboxKey } })
  })
  for (const name of EVENT_NAMES) source.addEventListener(name, (message) => received.push(Number(message.lastEventId)))
  const opened = new Promise<void>((resolve) => source.addEventListener("open", () => resolve(), { once: true }))
  await opened

  // Concurrent writers: each deposits into its own sub-account, all at once, 2,000 events in all.
  await Promise.all(
    users.map(async (user, w) => {
      for (let i = 0; i < EVENTS / WRITERS; i++) {
        const r = await call("POST", `${SANDBOX}/users/${user}/deposit`, { ...key, "idempotency-key": `stream-dep-${w}-${i}` }, { amount: 1 })
        expect(r.status).toBe(200)
      }
    })
  )
  const trace = (await call("GET", "/_sim/trace", { authorization: "Bearer t" })).text
  const committed = trace
    .split("\n")
    .filter((l) => l.includes('"kind":"event"'))
    .map((l) => JSON.parse(l) as { partition: string; position: number })
    .filter((e) => e.partition === `${partner.partnerId}:sandbox`)
    .map((e) => e.position)
  expect(committed.length).toBeGreaterThanOrEqual(EVENTS)
  const last = committed.at(-1) ?? 0
  await expect.poll(() => received.at(-1), { timeout: 60_000, interval: 20 }).toBe(last)
  source.close()

  expect(network.dropsDone()).toBe(DROPS)
  expect(received).toEqual(committed)
  for (let i = 1; i < received.length; i++) expect(received[i]).toBeGreaterThan(received[i - 1] ?? 0)
  expect(new Set(received).size).toBe(received.length)
  // The package reconnected by itself each time, sending the last id it had delivered.
  expect(network.opened.length).toBe(DROPS + 1)
  expect(network.opened.filter((id) => id !== undefined).length).toBeGreaterThanOrEqual(DROPS - 1)
}

for (const { store, admin } of stores())
  describe(`stream resume under 50 drops (store ${store})`, tagsFor(store), () => {
    // A failure bound only (2,000 deposits): on PostgreSQL at load 27 the run took over 180 s.
    it("delivers exactly the committed ids, in order, once each, to an eventsource client dropped at 50 random points", { timeout: 480_000 }, async () => {
      if (admin === undefined) await run(undefined)
      else await withDatabase(admin, (url) => run(url))
    })
  })
