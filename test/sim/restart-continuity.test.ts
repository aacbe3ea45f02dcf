/**
 * A restarted engine continues the world it left (E-298): its clock does not go back to `--start` (a manual clock
 * stands where the last advance left it; a follow clock is never behind it), and its market keeps the price history it
 * served, the operator's pins included. Shown on the memory store (the committed state handed to the next engine, as
 * the crash simulation does) and on PostgreSQL (two engines, one after the other, on one database).
 */
import { describe, expect, it } from "vitest"
import { type EngineConfig, makeInProcessEngine } from "../../engine/runtime.ts"
import { makeMemoryState } from "../../engine/store/memory.ts"
import { withDatabase } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

const ADMIN = "restart-admin"
const START = Date.parse("2026-11-23T06:00:00.000Z")
const adminUrl = process.env.DATABASE_URL
const admin = { authorization: `Bearer ${ADMIN}` }

type Engine = ReturnType<typeof makeInProcessEngine>
type Where = Pick<EngineConfig, "store" | "databaseUrl" | "memory">

const engineOn = (where: Where, clock: "manual" | "follow" = "manual"): Engine =>
  makeInProcessEngine({ ...where, clock, start: START, seed: 5, desk: "manual", adminToken: ADMIN, rateLimit: "off" })

const call = async (engine: Engine, method: string, path: string, body?: unknown) => {
  const init = { method, headers: { "content-type": "application/json", ...admin }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }
  const r = await engine.fetch(new Request(`http://sokoni.test${path}`, init))
  const answer = { status: r.status, body: await r.json() }
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(answer.body)}`)
  return answer.body
}

/** What a partner reads of SCOM and the clock: the world a restart must not change. */
const worldSeenBy = async (engine: Engine) => {
  const made = await call(engine, "POST", "/_sim/partners", { businessName: "Reader", email: "reader@restart.test" })
  const read = async (path: string) => {
    const r = await engine.fetch(new Request(`http://sokoni.test/api/sandbox/v1/partner${path}`, { headers: { "x-api-key": made.sandboxKey } }))
    return { status: r.status, body: await r.json() }
  }
  return {
    now: (await call(engine, "GET", "/_sim/clock")).now,
    stock: await read("/stocks/SCOM"),
    history: await read("/stocks/SCOM/history?period=1M")
  }
}

/** Pins SCOM, moves the clock past the pin's showing, reads the world; then a second engine on the same store reads it. */
const restartAfterAdvance = async (first: Engine, second: () => Engine) => {
  await call(first, "PUT", "/_sim/market/prices/SCOM.KE", { price: 21.5 })
  await call(first, "POST", "/_sim/clock/advance", { seconds: 2 * 86_400 + 3_600 })
  const before = await worldSeenBy(first)
  await first.dispose()
  const next = second()
  try {
    const after = await worldSeenBy(next)
    return { before, after }
  } finally {
    await next.dispose()
  }
}

const expectContinued = ({ before, after }: Awaited<ReturnType<typeof restartAfterAdvance>>) => {
  expect(Date.parse(after.now), "the restarted clock").toBe(Date.parse(before.now))
  expect(before.stock.status).toBe(200)
  expect(before.stock.body.price, "the pin shows").toBe(21.5)
  expect(after.stock, "the listing").toEqual(before.stock)
  expect(after.history, "the price history").toEqual(before.history)
}

describe("an engine restarted on its memory store", () => {
  it("keeps the manual clock where the last advance left it, the pin and the price history", async () => {
    const state = makeMemoryState()
    const where: Where = { store: "memory", memory: { state } }
    expectContinued(await restartAfterAdvance(engineOn(where), () => engineOn(where)))
  })

  it("does not put a follow clock back behind an advance", async () => {
    const state = makeMemoryState()
    const where: Where = { store: "memory", memory: { state } }
    const first = engineOn(where, "follow")
    const advanced = await call(first, "POST", "/_sim/clock/advance", { seconds: 86_400 })
    await first.dispose()
    const second = engineOn(where, "follow")
    const now = (await call(second, "GET", "/_sim/clock")).now
    await second.dispose()
    // Real time ran on meanwhile (a follow clock counts it); it never goes back to `start`.
    expect(Date.parse(now)).toBeGreaterThanOrEqual(Date.parse(advanced.now))
  })

  it("starts a fresh store at `start`, as before", async () => {
    const engine = engineOn({ store: "memory" })
    const now = (await call(engine, "GET", "/_sim/clock")).now
    await engine.dispose()
    expect(Date.parse(now)).toBe(START)
  })
})

describe.skipIf(adminUrl === undefined)("an engine restarted on PostgreSQL", onPostgres, () => {
  it("keeps the manual clock, the pin and the price history", async () => {
    await withDatabase(adminUrl ?? "", async (url) => {
      const where: Where = { store: "postgres", databaseUrl: url }
      expectContinued(await restartAfterAdvance(engineOn(where), () => engineOn(where)))
    })
  })
})
