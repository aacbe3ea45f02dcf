/**
 * `GET /stream` through the in-process engine (D-058), on the memory store and (DATABASE_URL set) on PostgreSQL:
 * the wire form (`retry:`, then `id:` = log position, `event:`, one-line JSON envelope), replay then live with no gap
 * and no repeat, `Last-Event-ID` over `since`, the `events=` filter, 400s for bad positions and names, keep-alives on
 * the engine clock, and the production cap per tier (429 with activeConnections and limit, Retry-After and the
 * rate-limit headers; a closed stream's slot free at once, a stream whose process died freed when its 45 s lease
 * lapses; open streams keep theirs). Every answer is checked against the contract.
 */
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { SLOTS, StreamService } from "../../engine/app/stream.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { Store } from "../../engine/store/port.ts"
import { EventLog } from "../../engine/events/event-log.ts"
import { eventsOf } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"
import { eventMessages, openStream, parseSse } from "./stream-kit.ts"
import { onPostgres } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const LIVE = "/api/v1/partner"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const databases = (): Array<{ readonly store: string; readonly admin: string | undefined }> => {
  const admin = process.env.DATABASE_URL
  const memory = { store: "memory", admin: undefined }
  return admin === undefined || admin === "" ? [memory] : [memory, { store: "postgres", admin }]
}

const setup = async (admin: string | undefined) => {
  let databaseUrl: string | undefined
  if (admin !== undefined) {
    const scope = Effect.runSync(Scope.make())
    databaseUrl = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(admin), Scope.Scope, scope))
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
  }
  const engine = startEngine(databaseUrl === undefined ? {} : { databaseUrl })
  cleanups.push(() => engine.dispose())
  const partner = await engine.newPartner()
  const streams: Array<{ close: () => Promise<void> }> = []
  cleanups.push(async () => {
    for (const s of streams) await s.close()
  })
  const open = async (env: "sandbox" | "production", query = "", headers: Record<string, string> = {}) => {
    const base = env === "sandbox" ? SANDBOX : LIVE
    const key = env === "sandbox" ? partner.sandboxKey : partner.liveKey
    const s = await openStream(engine, `${base}/stream${query}`, { "x-api-key": key, ...headers })
    streams.push(s)
    return s
  }
  const credit = async (env: "sandbox" | "production" = "sandbox", amount = 10) => {
    const r = await engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: env, amount })
    expect(r.status).toBe(200)
  }
  const advance = async (ms: number) => {
    const now = Date.parse((await engine.admin("GET", "/_sim/clock")).body.now)
    const r = await engine.admin("POST", "/_sim/clock/advance", { to: new Date(now + ms).toISOString() })
    expect(r.status).toBe(200)
  }
  /** Committed events of a partition, from the trace. */
  const committed = async (env: "sandbox" | "production" = "sandbox") => (await eventsOf(engine)).filter((e) => e.partition === `${partner.partnerId}:${env}`)
  const ids = (text: string) => eventMessages(text).map((m) => Number(m.id))
  const hasId = (id: number) => (text: string) => ids(text).includes(id)
  return { engine, partner, open, credit, advance, committed, ids, hasId }
}

describe.each(databases())("GET /stream (store $store)", ({ admin }) => {
  it("opens with retry: 3000, replays after since=0 in log order with the envelope, then goes on live", async () => {
    const t = await setup(admin)
    await t.credit()
    await t.credit()
    const s = await t.open("sandbox", "?since=0")
    expect(s.headers.get("content-type")).toBe("text/event-stream")
    expect(s.headers.get("cache-control")).toBe("no-cache")
    expect(s.headers.get("x-ratelimit-limit")).toBe("300")
    await s.until(t.hasId(2))
    expect(s.text().startsWith("retry: 3000\n\n")).toBe(true)
    await t.credit()
    const text = await s.until(t.hasId(3))
    const log = await t.committed()
    expect(log.map((e) => e.position)).toEqual([1, 2, 3])
    const messages = eventMessages(text)
    expect(messages.map((m) => m.id)).toEqual(["1", "2", "3"])
    for (const [i, m] of messages.entries()) {
      const e = log[i] as (typeof log)[number] & { eventId: string; timestamp: string }
      expect(m.event).toBe("wallet.credited")
      // the data line is the envelope, on one line, exactly as a webhook carries it
      expect(JSON.parse(m.data ?? "")).toEqual({ eventId: e.eventId, event: "wallet.credited", timestamp: e.timestamp, data: e.data, isSandbox: true })
    }
    expect(text).toContain(`id: 1\nevent: wallet.credited\ndata: {"eventId":`)
  })

  it("replays a log longer than one page (200 events) to the end without waiting for another commit", async () => {
    const t = await setup(admin)
    const partition = `${t.partner.partnerId}:sandbox`
    await t.engine.runtime.runPromise(
      Effect.gen(function* () {
        const store = yield* Store
        const log = yield* EventLog
        // 401 events, 50 per transaction (as several writers would leave them): three pages and one more
        for (let batch = 0; batch < 9; batch++)
          yield* store.transact((tx) => Effect.forEach(Array.from({ length: batch < 8 ? 50 : 1 }), () => log.append(tx, partition, "test.event", { n: batch })))
      })
    )
    const s = await t.open("sandbox", "?since=0")
    const ids = t.ids(await s.until(t.hasId(401)))
    expect(ids).toEqual(Array.from({ length: 401 }, (_, i) => i + 1))
  })

  it("starts live without a resume position, and resumes after Last-Event-ID, which wins over since", async () => {
    const t = await setup(admin)
    for (let i = 0; i < 4; i++) await t.credit()
    const live = await t.open("sandbox")
    const resumed = await t.open("sandbox", "?since=0", { "last-event-id": "2" })
    const fromSince = await t.open("sandbox", "?since=3")
    await t.credit()
    expect(t.ids(await live.until(t.hasId(5)))).toEqual([5])
    expect(t.ids(await resumed.until(t.hasId(5)))).toEqual([3, 4, 5])
    expect(t.ids(await fromSince.until(t.hasId(5)))).toEqual([4, 5])
  })

  it("starts live after the log's end however long the log, and after a sandbox reset wiped the log's rows", async () => {
    const t = await setup(admin)
    for (let i = 0; i < 37; i++) await t.credit()
    const live = await t.open("sandbox")
    await t.credit()
    expect(t.ids(await live.until(t.hasId(38)))).toEqual([38])
    const reset = await t.engine.call("POST", "/api/sandbox/v1/reset", { headers: { "x-api-key": t.partner.sandboxKey } })
    expect(reset.status).toBe(200)
    const afterReset = await t.open("sandbox")
    const replay = await t.open("sandbox", "?since=0")
    await t.credit()
    const last = (await t.committed()).at(-1)?.position ?? 0
    expect(last).toBeGreaterThan(38)
    expect(t.ids(await afterReset.until(t.hasId(last)))).toEqual([last])
    // since=0 replays from the oldest retained event: what the reset left, never a position twice
    const replayed = t.ids(await replay.until(t.hasId(last)))
    expect(replayed.at(-1)).toBe(last)
    expect(replayed.every((id) => id > 38)).toBe(true)
  })

  it("filters by events= and still never repeats or skips a position it should send", async () => {
    const t = await setup(admin)
    const p = t.partner
    const key = { "x-api-key": p.sandboxKey }
    // Names are trimmed: "a, b" is a and b.
    const s = await t.open("sandbox", `?since=0&events=${encodeURIComponent(" deposit.confirmed, kyc.updated")}`)
    const all = await t.open("sandbox", "?since=0")
    await t.credit()
    const user = await t.engine.call("POST", `${SANDBOX}/users`, { headers: { ...key, "idempotency-key": "stream-user-1" }, body: { externalId: "s-1" } })
    expect(user.status).toBe(201)
    const deposit = await t.engine.call("POST", `${SANDBOX}/users/${user.body.subAccountId}/deposit`, {
      headers: { ...key, "idempotency-key": "stream-dep-1" },
      body: { amount: 5 }
    })
    expect(deposit.status).toBe(200)
    await t.credit()
    const log = await t.committed()
    const last = log.at(-1)?.position ?? 0
    await all.until(t.hasId(last))
    const depositPosition = log.find((e) => e.event === "deposit.confirmed")?.position ?? -1
    const filtered = eventMessages(await s.until(t.hasId(depositPosition)))
    expect(filtered.map((m) => m.event)).toEqual(["deposit.confirmed"])
    expect(t.ids(all.text())).toEqual(log.map((e) => e.position))
  })

  it("answers 400 VALIDATION_ERROR for a non-numeric since or Last-Event-ID and an unknown event name", async () => {
    const t = await setup(admin)
    const since = await t.open("sandbox", "?since=abc")
    expect(since.status).toBe(400)
    expect(since.body.error).toMatchObject({
      code: "VALIDATION_ERROR",
      param: "since",
      message: 'since must be text matching the pattern ^[0-9]+$, got "abc"'
    })
    const header = await t.open("sandbox", "", { "last-event-id": "12a" })
    expect(header.status).toBe(400)
    expect(header.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "Last-Event-ID" })
    const names = await t.open("sandbox", "?events=order.filled,order.exploded")
    expect(names.status).toBe(400)
    expect(names.body.error).toMatchObject({ code: "VALIDATION_ERROR", param: "events", invalid: ["order.exploded"] })
    const two = await t.open("sandbox", "?events=order.imploded,order.filled,order.exploded")
    expect(two.body.error.message).toBe("events: unknown event name(s) order.imploded, order.exploded")
    expect((await t.open("sandbox", "?since=-1")).status).toBe(400)
  })

  it("treats an empty Last-Event-ID as none (since applies), and refuses a data key with 403", async () => {
    const t = await setup(admin)
    await t.credit()
    await t.credit()
    const s = await t.open("sandbox", "?since=1", { "last-event-id": "" })
    expect(t.ids(await s.until(t.hasId(2)))).toEqual([2])
    const issued = await t.engine.call("POST", `${LIVE}/api-keys/data-key`, {
      headers: { "x-api-key": t.partner.liveKey, "idempotency-key": "stream-data-key-1" }
    })
    expect(issued.status).toBe(201)
    const refused = await openStream(t.engine, `${LIVE}/stream`, { "x-api-key": issued.body.dataKey })
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("FORBIDDEN")
  })

  it("sends a keep-alive comment every 15 s of engine time, not before", async () => {
    const t = await setup(admin)
    const s = await t.open("sandbox")
    await t.advance(14_999)
    await t.credit()
    const before = await s.until(t.hasId(1))
    expect(before).not.toContain(": keep-alive")
    await t.advance(1)
    await s.until((text) => text.includes(": keep-alive"))
    await t.advance(45_000)
    await t.credit()
    const text = await s.until(t.hasId(2))
    // one at 15 s, then at 30, 45 and 60 s: each beat sends its own comment, though the three of this advance fired
    // while nobody read the stream (E-281)
    expect(parseSse(text).filter((m) => m.comment === "keep-alive").length).toBe(4)
  })

  it("caps concurrent production streams per tier: the third starter stream gets 429 with activeConnections and limit", async () => {
    const t = await setup(admin)
    const first = await t.open("production")
    const second = await t.open("production")
    expect([first.status, second.status]).toEqual([200, 200])
    const third = await t.open("production")
    expect(third.status).toBe(429)
    expect(third.body).toEqual({ error: { code: "RATE_LIMITED", message: "Concurrent stream limit reached for tier starter", activeConnections: 2, limit: 2 } })
    expect(third.headers.get("retry-after")).toBe("45")
    expect(third.headers.get("x-ratelimit-limit")).toBe("100")
    const openHere = () => t.engine.runtime.runPromise(StreamService.use((service) => service.openCount(`${t.partner.partnerId}:production`)))
    expect(await openHere()).toBe(2)
    // a stream the client closes frees its slot at once, and leaves nothing behind in the process
    await first.close()
    expect(await openHere()).toBe(1)
    const again = await t.open("production")
    expect(again.status).toBe(200)
    // the sandbox enforces no cap
    const sandbox = await Promise.all([1, 2, 3, 4, 5].map(() => t.open("sandbox")))
    expect(sandbox.map((s) => s.status)).toEqual([200, 200, 200, 200, 200])
  })

  it("keeps an open stream's slot past 45 s (each keep-alive renews it), and frees a dead process's slot within 45 s", async () => {
    const t = await setup(admin)
    const a = await t.open("production")
    const b = await t.open("production")
    expect([a.status, b.status]).toEqual([200, 200])
    await t.advance(120_000)
    const refused = await t.open("production")
    expect(refused.status).toBe(429)
    expect(refused.body.error.activeConnections).toBe(2)
    await a.close()
    await b.close()
    // Slots left held by a process that died (no close, no renewal): counted until their lease lapses, 45 s later.
    const partition = `${t.partner.partnerId}:production`
    const now = Date.parse((await t.engine.admin("GET", "/_sim/clock")).body.now)
    await t.engine.runtime.runPromise(
      Store.use((store) =>
        store.transact((tx) =>
          Effect.forEach([0, 1], (i) =>
            tx.put(SLOTS, { id: `${partition}#${i}`, partition, sortKey: `${partition}#${i}`, body: { holder: `stm_dead${i}`, expiresAt: now + 45_000 } })
          )
        )
      )
    )
    const during = await t.open("production")
    expect(during.status).toBe(429)
    await t.advance(44_000)
    const late = await t.open("production")
    expect(late.status).toBe(429)
    expect(late.headers.get("retry-after")).toBe("1")
    await t.advance(1_000)
    expect((await t.open("production")).status).toBe(200)
  })
})

describe.skipIf(process.env.DATABASE_URL === undefined || process.env.DATABASE_URL === "")(
  "GET /stream with two engine processes on one PostgreSQL (skipped: set DATABASE_URL to run)",
  onPostgres,
  () => {
    it("shares the production cap, and a stream sees the other process's events at its next keep-alive", async () => {
      const scope = Effect.runSync(Scope.make())
      const databaseUrl = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(process.env.DATABASE_URL ?? ""), Scope.Scope, scope))
      cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
      const a = startEngine({ databaseUrl })
      cleanups.push(() => a.dispose())
      const partner = await a.newPartner()
      const b = startEngine({ databaseUrl, seed: 2 })
      cleanups.push(() => b.dispose())
      const opened: Array<{ close: () => Promise<void> }> = []
      cleanups.push(async () => {
        for (const s of opened) await s.close()
      })
      const open = async (engine: typeof a, base: string, key: string, query = "") => {
        const s = await openStream(engine, `${base}/stream${query}`, { "x-api-key": key })
        opened.push(s)
        return s
      }
      expect((await open(a, LIVE, partner.liveKey)).status).toBe(200)
      expect((await open(a, LIVE, partner.liveKey)).status).toBe(200)
      const refused = await open(b, LIVE, partner.liveKey)
      expect(refused.status).toBe(429)
      expect(refused.body.error).toMatchObject({ activeConnections: 2, limit: 2 })

      const s = await open(a, SANDBOX, partner.sandboxKey, "?since=0")
      const live = await open(a, SANDBOX, partner.sandboxKey)
      expect((await b.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 3 })).status).toBe(200)
      const now = Date.parse((await a.admin("GET", "/_sim/clock")).body.now)
      expect((await a.admin("POST", "/_sim/clock/advance", { to: new Date(now + 15_000).toISOString() })).status).toBe(200)
      const text = await s.until((t) => eventMessages(t).length === 1)
      expect(eventMessages(text).map((m) => [m.id, m.event])).toEqual([["1", "wallet.credited"]])
      expect(eventMessages(await live.until((t) => eventMessages(t).length === 1)).map((m) => m.id)).toEqual(["1"])
    })
  }
)

describe("the test harness and GET /stream", () => {
  it("takes a stream's head through `call` and lets it go, so no test hangs on it", async () => {
    const engine = startEngine()
    cleanups.push(() => engine.dispose())
    const partner = await engine.newPartner()
    const r = await engine.call("GET", `${SANDBOX}/stream`, { headers: { "x-api-key": partner.sandboxKey } })
    expect(r.status).toBe(200)
    expect(r.body).toBe("")
    expect(await engine.runtime.runPromise(StreamService.use((s) => s.openCount(`${partner.partnerId}:sandbox`)))).toBe(0)
  })
})
