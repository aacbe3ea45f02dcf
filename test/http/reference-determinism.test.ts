/**
 * The reference families are a function of the run's identity: two engines with the same seed and start answer the
 * same bytes, a different seed changes what is seeded (ids, schedules, articles, profiles) and nothing else (FX).
 * Also which of them a data key may read (the contract's dataKey security, D-084).
 */
import { afterEach, describe, expect, it } from "vitest"
import { ApiKeys, timeSortKey } from "../../engine/app/docs.ts"
import { hashKey } from "../../engine/app/partners/credentials.ts"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { Store } from "../../engine/store/port.ts"
import { ADMIN, contractProblems, MONDAY_OPEN } from "./harness.ts"
import { type PartnerEngine, PROD, partnerEngine } from "./reference-support.ts"

const PATHS = [
  "/stocks/SCOM.KE",
  "/etfs",
  "/companies?limit=200",
  "/companies/tickers",
  "/companies/SCOM.KE/news?limit=100",
  "/fx",
  "/dividends?limit=200",
  "/dividends/calendar?all=true&limit=200",
  "/dividends/SCOM.KE/history?limit=100",
  "/corporate-actions?limit=200",
  "/market-intel?limit=100",
  "/bonds?limit=200",
  "/funds?limit=200",
  "/opportunities?limit=200",
  "/assets?limit=200"
]

const snapshot = async (t: PartnerEngine) => {
  const out: Record<string, unknown> = {}
  for (const path of PATHS) {
    const r = await t.get(path)
    expect(r.status, path).toBe(200)
    // The cursors carry the caller's partition, which differs between engines; everything else must not.
    out[path] = JSON.parse(JSON.stringify(r.body).replace(/"nextCursor":"[^"]+"/g, '"nextCursor":"…"'))
  }
  return out
}

describe("reference data determinism", () => {
  const engines: Array<PartnerEngine> = []
  afterEach(async () => {
    for (const e of engines.splice(0)) await e.dispose()
  })
  const start = async (seed: number) => {
    const t = await partnerEngine({ seed })
    engines.push(t)
    await t.advance(26 * 3600)
    return snapshot(t)
  }

  it("answers the same for the same seed, and differs where seeded for another", async () => {
    const [a, b, c] = [await start(1), await start(1), await start(2)]
    expect(b).toEqual(a)
    expect(c["/fx"]).toEqual(a["/fx"])
    for (const path of [
      "/companies?limit=200",
      "/dividends?limit=200",
      "/corporate-actions?limit=200",
      "/market-intel?limit=100",
      "/bonds?limit=200",
      "/funds?limit=200"
    ]) {
      expect(c[path], path).not.toEqual(a[path])
    }
  })
})

describe("data keys on the reference families", () => {
  it("read every market-data family and are refused /assets and /corporate-actions", async () => {
    const engine = makeInProcessEngine({ store: "memory", clock: "manual", start: MONDAY_OPEN, seed: 1, desk: "manual", adminToken: ADMIN })
    const call = async (path: string, headers: Record<string, string>, body?: unknown) => {
      const r = await engine.fetch(
        new Request(`http://sokoni.test${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: { "content-type": "application/json", ...headers },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        })
      )
      const reply = { status: r.status, headers: r.headers, body: await r.json() }
      expect(contractProblems(body === undefined ? "GET" : "POST", path, headers, reply)).toEqual([])
      return reply
    }
    const partner = (await call("/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: "Data Partner", email: "d@p.test" })).body
    const raw = "pk_data_reference_0123456789abcdef"
    await engine.runtime.runPromise(
      Store.use((store) =>
        store.transact((tx) =>
          ApiKeys.put(tx, hashKey(raw), "global", timeSortKey(MONDAY_OPEN, hashKey(raw)), {
            keyHash: hashKey(raw),
            partnerId: partner.partnerId,
            environment: "production",
            kind: "data",
            status: "active",
            last4: raw.slice(-4),
            createdAt: MONDAY_OPEN
          })
        )
      )
    )
    const key = { "x-api-key": raw }
    for (const path of [
      "/stocks/SCOM.KE",
      "/etfs",
      "/companies",
      "/companies/tickers",
      "/fx/rates",
      "/dividends/calendar",
      "/market-intel",
      "/bonds",
      "/funds",
      "/opportunities"
    ]) {
      expect((await call(`${PROD}${path}`, key)).status, path).toBe(200)
    }
    for (const path of ["/assets", "/corporate-actions"]) {
      const r = await call(`${PROD}${path}`, key)
      expect(r.status, path).toBe(403)
      expect(r.body.error.code).toBe("FORBIDDEN")
    }
    await engine.dispose()
  })
})
