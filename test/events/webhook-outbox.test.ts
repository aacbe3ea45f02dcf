/**
 * The webhook outbox: an attempt is counted (and the next one scheduled) before any byte is sent, so a crash
 * between sending and recording neither loses the delivery nor re-sends the counted attempt; a restart on the same
 * PostgreSQL database picks up deliveries committed before it.
 */
import { Effect, Exit, Layer, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { Outbound, type OutboundRequest, SimReceivers } from "../../engine/sim/outbound.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { MONDAY_OPEN, startEngine } from "../http/harness.ts"
import { onPostgres } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const URL_OK = "https://hooks.acme.test/outbox"
const SECRET = "whsec_0123456789abcdef"

/** Lets forked sends (network mode) run: a few turns of the event loop, no timers. */
const turns = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r))
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Receivers whose sender "crashes" (a defect, nothing recorded) on the calls whose numbers are in `crashOn`. */
const crashing = (receivers: SimReceivers, crashOn: ReadonlySet<number>) => {
  let calls = 0
  const sent: Array<number> = []
  const layer = Layer.succeed(
    Outbound,
    Outbound.of({
      mode: "simulated",
      post: (request: OutboundRequest) =>
        Effect.suspend(() => {
          calls++
          sent.push(calls)
          const result = receivers.answer(request, 0)
          return crashOn.has(calls) ? Effect.die(new Error("process died before the outcome was written")) : Effect.succeed(result)
        })
    })
  )
  return { layer, sent }
}

const flow = async (engine: ReturnType<typeof startEngine>) => {
  const partner = await engine.newPartner()
  const headers = { "x-api-key": partner.sandboxKey }
  const created = await engine.call("POST", `${SANDBOX}/webhooks`, {
    headers: { ...headers, "idempotency-key": "outbox-register" },
    body: { url: URL_OK, events: ["wallet.credited"], secret: SECRET }
  })
  expect(created.status).toBe(201)
  const credit = () => engine.admin("POST", `/_sim/partners/${partner.partnerId}/wallet/credit`, { environment: "sandbox", amount: 1 })
  const advanceTo = (ms: number) => engine.admin("POST", "/_sim/clock/advance", { to: new Date(MONDAY_OPEN + ms).toISOString() })
  const deliveries = async () => (await engine.call("GET", `${SANDBOX}/webhooks/${created.body.id}/deliveries`, { headers })).body.deliveries
  return { credit, advanceTo, deliveries }
}

describe("webhook outbox", () => {
  it("a crash after attempt 1 was counted: attempt 2 still goes at +5 s, attempt 1 is not sent again", async () => {
    const receivers = new SimReceivers()
    receivers.script(URL_OK)
    const { layer, sent } = crashing(receivers, new Set([1]))
    const local = startEngine({ outbound: layer })
    cleanups.push(() => local.dispose())
    const f = await flow(local)
    await f.credit()
    const { lines } = await local.log.during(() => f.advanceTo(0))
    // the crash is logged as a warning, and the delivery goes on
    expect(lines.map((l) => l.text)).toEqual([
      expect.stringMatching(/^WARN delivery dlv_\w+ attempt 1: outcome not recorded; the next job goes on Error: process died before the outcome was written/)
    ])
    expect(await f.deliveries()).toEqual([
      expect.objectContaining({ attempts: 1, success: false, statusCode: null, nextAttemptAt: new Date(MONDAY_OPEN + 5000).toISOString() })
    ])
    await f.advanceTo(4_999)
    expect(sent).toEqual([1])
    await f.advanceTo(5_000)
    expect(sent).toEqual([1, 2])
    expect(await f.deliveries()).toEqual([expect.objectContaining({ attempts: 2, success: true, statusCode: 200, nextAttemptAt: null })])
    await f.advanceTo(86_400_000)
    expect(sent).toEqual([1, 2])
  })

  it("a crash during the sixth attempt: the settle job records the delivery as failed", async () => {
    const receivers = new SimReceivers()
    receivers.script(URL_OK, [], { status: 500 })
    const { layer, sent } = crashing(receivers, new Set([6]))
    const local = startEngine({ outbound: layer })
    cleanups.push(() => local.dispose())
    const f = await flow(local)
    await f.credit()
    const { lines } = await local.log.during(() => f.advanceTo(9_335_000))
    expect(lines.map((l) => l.text)).toEqual([
      expect.stringMatching(/^WARN delivery dlv_\w+ attempt 6: outcome not recorded; the next job goes on Error: process died before the outcome was written/)
    ])
    expect(sent).toEqual([1, 2, 3, 4, 5, 6])
    expect(await f.deliveries()).toEqual([expect.objectContaining({ attempts: 6, success: false, statusCode: 500, nextAttemptAt: null })])
    await f.advanceTo(9_343_999)
    expect((await f.deliveries())[0].statusCode).toBe(500)
    await f.advanceTo(9_344_000)
    expect(await f.deliveries()).toEqual([expect.objectContaining({ attempts: 6, success: false, statusCode: null, latencyMs: null, nextAttemptAt: null })])
    expect(sent).toHaveLength(6)
  })

  it("a real endpoint still answering attempt 1 when attempt 2 falls due: attempt 2 waits until attempt 1 is surely over (9 s)", async () => {
    const receivers = new SimReceivers()
    receivers.script(URL_OK)
    let calls = 0
    const hanging = Layer.succeed(
      Outbound,
      Outbound.of({
        mode: "network",
        post: (request: OutboundRequest) => Effect.suspend(() => (++calls === 1 ? Effect.never : Effect.succeed(receivers.answer(request, 0))))
      })
    )
    const local = startEngine({ outbound: hanging })
    cleanups.push(() => local.dispose())
    const f = await flow(local)
    await f.credit()
    await f.advanceTo(0)
    await turns()
    await f.advanceTo(5_000)
    await turns()
    expect(calls).toBe(1)
    expect(await f.deliveries()).toEqual([expect.objectContaining({ attempts: 1, nextAttemptAt: new Date(MONDAY_OPEN + 9_000).toISOString() })])
    await f.advanceTo(8_999)
    await turns()
    expect(calls).toBe(1)
    await f.advanceTo(9_000)
    await turns()
    expect(calls).toBe(2)
    // The send runs on its own fiber (a real endpoint may take 8 s): wait for its outcome to be written.
    for (let i = 0; i < 100 && (await f.deliveries())[0].success !== true; i++) await new Promise((r) => setImmediate(r))
    expect(await f.deliveries()).toEqual([expect.objectContaining({ attempts: 2, success: true, nextAttemptAt: null })])
  })

  const admin = process.env.DATABASE_URL
  it.skipIf(admin === undefined || admin === "")("postgres: a delivery committed before a restart is sent by the next process", onPostgres, async () => {
    const scope = Effect.runSync(Scope.make())
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const databaseUrl = await Effect.runPromise(Effect.provideService(withTemporaryDatabase(admin ?? ""), Scope.Scope, scope))
    const first = startEngine({ receivers: new SimReceivers(), databaseUrl })
    const f = await flow(first)
    await f.credit()
    await first.dispose()
    const receivers = new SimReceivers()
    receivers.script(URL_OK)
    const second = startEngine({ receivers, databaseUrl, seed: 2 })
    cleanups.push(() => second.dispose())
    await second.admin("POST", "/_sim/clock/advance", { seconds: 1 })
    const got = receivers.take()
    expect(got).toHaveLength(1)
    expect(JSON.parse(got[0]?.body ?? "{}")).toMatchObject({ event: "wallet.credited", isSandbox: true })
  })
})
