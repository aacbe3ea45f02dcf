/**
 * Ids and secrets that never repeat (issue #22 item 2, E-291): each engine start takes the next epoch of the store and
 * draws from the stream of (seed, epoch). On a fresh store the first start is the seed's own stream (a replay gives
 * the same ids); a restart with the same seed on the same database, and a second engine beside the first, draw other
 * streams, so no partnerId, key or event id is handed out twice and the first partner keeps its own data.
 */
import { describe, expect, it } from "vitest"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { streamSeed } from "../../engine/sim/random.ts"
import { withDatabase } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

const ADMIN = "epoch-admin"
const START = Date.parse("2026-11-23T08:00:00.000Z")
const adminUrl = process.env.DATABASE_URL

type Engine = ReturnType<typeof makeInProcessEngine>

const engineOn = (databaseUrl: string | undefined, seed = 1): Engine =>
  makeInProcessEngine({
    store: databaseUrl === undefined ? "memory" : "postgres",
    databaseUrl,
    clock: "manual",
    start: START,
    seed,
    desk: "manual",
    adminToken: ADMIN
  })

const call = async (engine: Engine, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
  const init = { method, headers: { "content-type": "application/json", ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) }
  const r = await engine.fetch(new Request(`http://sokoni.test${path}`, init))
  return { status: r.status, body: await r.json() }
}

/** A partner and one sub-account of it: every id and key the start handed out. */
const newPartner = async (engine: Engine, name: string) => {
  const made = await call(engine, "POST", "/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: name, email: `${name}@epoch.test` })
  if (made.status !== 201) throw new Error(`partner ${name}: ${made.status} ${JSON.stringify(made.body)}`)
  const partner = made.body
  const user = await call(
    engine,
    "POST",
    "/api/sandbox/v1/partner/users",
    { "x-api-key": partner.sandboxKey, "idempotency-key": `user-of-${name}` },
    { externalId: `ext-${name}` }
  )
  return {
    partnerId: partner.partnerId as string,
    sandboxKey: partner.sandboxKey as string,
    liveKey: partner.liveKey as string,
    userId: user.body.subAccountId as string
  }
}

const handedOut = (p: Awaited<ReturnType<typeof newPartner>>) => [p.partnerId, p.sandboxKey, p.liveKey, p.userId]

describe("the streams of a seed", () => {
  it("epoch 1 is the seed's own stream; every later epoch is another, and epochs differ from each other", () => {
    expect(streamSeed(42, 1)).toBe(42)
    const later = [2, 3, 4, 5].map((epoch) => streamSeed(42, epoch))
    expect(new Set([42, ...later]).size).toBe(5)
    expect(streamSeed(43, 2)).not.toBe(streamSeed(42, 2))
  })

  it("a fresh memory store replays the seed: the same ids on every first start", async () => {
    const runs: Array<Array<string>> = []
    for (let i = 0; i < 2; i++) {
      const engine = engineOn(undefined)
      runs.push(handedOut(await newPartner(engine, "fresh")))
      await engine.dispose()
    }
    expect(runs[1]).toEqual(runs[0])
  })
})

describe.skipIf(adminUrl === undefined)("the same seed on one PostgreSQL database", onPostgres, () => {
  it("restarted: nothing handed out again, and the first partner keeps its own data", async () => {
    await withDatabase(adminUrl ?? "", async (url) => {
      const first = engineOn(url)
      const before = await newPartner(first, "before")
      await first.dispose()
      const second = engineOn(url)
      const after = await newPartner(second, "after")
      expect(handedOut(after).filter((id) => handedOut(before).includes(id))).toEqual([])
      const mine = await call(second, "GET", "/api/sandbox/v1/partner/users", { "x-api-key": before.sandboxKey })
      expect(mine.body.users.map((u: { externalId: string }) => u.externalId)).toEqual(["ext-before"])
      await second.dispose()
    })
  }, 120_000)

  it("two engines at once: each hands out its own ids", async () => {
    await withDatabase(adminUrl ?? "", async (url) => {
      const a = engineOn(url)
      const b = engineOn(url)
      const [pa, pb] = await Promise.all([newPartner(a, "first"), newPartner(b, "second")])
      expect(handedOut(pa).filter((id) => handedOut(pb).includes(id))).toEqual([])
      await Promise.all([a.dispose(), b.dispose()])
    })
  }, 120_000)
})
