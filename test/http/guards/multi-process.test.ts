/**
 * The guards across engine processes on one PostgreSQL (issue 9, items 5 and 6): two in-process engines, each with
 * its own ManagedRuntime, layers and pool, so they share nothing in memory, only the database (a fresh one per test,
 * dropped afterwards). Each has its own manual clock at the same start, as two servers would read one wall clock.
 * - 50 concurrent identical POST /trade with one Idempotency-Key split across both: one order, one debit, one event;
 *   every answer a 409 CONFLICT or a byte-identical replay of the one 202.
 * - A starter partner's 150 requests in one second over its full key and a data key, split across both: exactly 100
 *   admitted.
 * Without DATABASE_URL the suite is reported as skipped. Every answer is checked against the contract.
 */
import { Effect, Exit, Scope } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ApiKeys, Orders, timeSortKey } from "../../../engine/app/docs.ts"
import { hashKey } from "../../../engine/app/partners/credentials.ts"
import { walletBalance } from "../../../engine/app/ledger.ts"
import { makeInProcessEngine } from "../../../engine/runtime.ts"
import { withTemporaryDatabase } from "../../../engine/store/pg-temp-db.ts"
import { Store } from "../../../engine/store/port.ts"
import { ADMIN, contractProblems, MONDAY_OPEN, type Reply } from "../harness.ts"
import { onPostgres } from "../../support/stores.ts"

const adminUrl = process.env.DATABASE_URL
const SANDBOX = "/api/sandbox/v1/partner"
const PROD = "/api/v1/partner"

type Engine = ReturnType<typeof makeInProcessEngine>

const call = async (engine: Engine, method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Reply & { text: string }> => {
  const response = await engine.fetch(
    new Request(`http://sokoni.test${path}`, {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )
  const text = await response.text()
  const reply = { status: response.status, headers: response.headers, body: text === "" ? null : JSON.parse(text), text }
  const problems = contractProblems(method, path, headers, reply)
  if (problems.length > 0) throw new Error(`response breaks the contract:\n  ${problems.join("\n  ")}`)
  return reply
}

describe.skipIf(adminUrl === undefined)(
  adminUrl === undefined ? "guards across processes (skipped: set DATABASE_URL)" : "guards across processes",
  onPostgres,
  () => {
    let scope: Scope.Closeable
    let a: Engine
    let b: Engine
    let partner: { partnerId: string; sandboxKey: string; liveKey: string }

    beforeEach(async () => {
      scope = Effect.runSync(Scope.make())
      const url = await Effect.runPromise(Scope.provide(withTemporaryDatabase(adminUrl ?? ""), scope))
      // Different seeds: two processes must not draw the same ids (a deployment runs each with its own seed or entropy).
      const config = { store: "postgres", databaseUrl: url, clock: "manual", start: MONDAY_OPEN, desk: "manual", adminToken: ADMIN } as const
      a = makeInProcessEngine({ ...config, seed: 1 })
      // A first, so the two do not race on the migrations of a brand-new database.
      const created = await call(a, "POST", "/_sim/partners", { authorization: `Bearer ${ADMIN}` }, { businessName: "Two Procs", email: "two@procs.test" })
      expect(created.status).toBe(201)
      partner = created.body
      b = makeInProcessEngine({ ...config, seed: 2 })
      expect((await call(b, "GET", "/_sim/clock", { authorization: `Bearer ${ADMIN}` })).status).toBe(200)
    }, 60_000)

    afterEach(async () => {
      await a.dispose()
      await b.dispose()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }, 60_000)

    it("50 concurrent identical POST /trade with one key across 2 processes: one order, one debit, one event; 409s or byte-identical replays", async () => {
      const key = { "x-api-key": partner.sandboxKey }
      const partition = `${partner.partnerId}:sandbox`
      const quote = await call(a, "GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=3`, key)
      expect(quote.status).toBe(200)
      const balance = () => a.runtime.runPromise(Store.use((s) => s.transact((tx) => walletBalance(tx, partition, "master"))))
      const before = await balance()
      const body = { symbol: "SCOM", type: "BUY", quantity: 3, quoteId: quote.body.quoteId }
      const headers = { ...key, "idempotency-key": "two-procs-trade-0001" }
      const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => call(i % 2 === 0 ? a : b, "POST", `${SANDBOX}/trade`, headers, body)))

      const accepted = replies.filter((r) => r.status === 202)
      const conflicts = replies.filter((r) => r.status === 409)
      expect(accepted.length).toBeGreaterThanOrEqual(1)
      expect(accepted.length + conflicts.length).toBe(50)
      const original = accepted.find((r) => r.headers.get("idempotent-replayed") === null)
      expect(original).toBeDefined()
      expect(accepted.filter((r) => r.headers.get("idempotent-replayed") === null)).toHaveLength(1)
      for (const r of accepted) {
        expect(r.text).toBe(original?.text)
        expect(r.headers.get("content-type")).toBe(original?.headers.get("content-type"))
      }
      for (const r of conflicts) expect(r.body.error).toEqual({ code: "CONFLICT", message: "a request with this Idempotency-Key is still in flight" })

      const orders = await a.runtime.runPromise(Store.use((s) => s.read((tx) => Orders.list(tx, partition, { limit: 100, order: "asc" }))))
      expect(orders.map((o) => o.orderId)).toEqual([original?.body.orderId])
      const events = await a.runtime.runPromise(Store.use((s) => s.read((tx) => tx.readEvents(partition, 0, 1000))))
      expect(events.filter((e) => e.name === "order.pending")).toHaveLength(1)
      const after = await balance()
      // One debit: the escrow of the one order (its order.pending totalCost, wire dollars), in cents.
      const pending = events.find((e) => e.name === "order.pending")?.payload as { totalCost: number }
      expect(before - after).toBe(Math.round(pending.totalCost * 100))
      expect(before - after).toBeGreaterThan(0)
      // A late repeat on the other process replays and moves nothing.
      const replay = await call(b, "POST", `${SANDBOX}/trade`, headers, body)
      expect(replay.text).toBe(original?.text)
      expect(await balance()).toBe(after)
    }, 60_000)

    it("a starter partner's 150 requests in 1 s over a full key and a data key, split across 2 processes: exactly 100 admitted", async () => {
      // The data key is inserted as the portal would issue it (POST /api-keys/data-key belongs to the keys work).
      const dataKey = "pk_data_twoprocs0000000000000000000000"
      await a.runtime.runPromise(
        Store.use((s) =>
          s.transact((tx) =>
            ApiKeys.put(tx, hashKey(dataKey), "global", timeSortKey(MONDAY_OPEN, "data"), {
              keyHash: hashKey(dataKey),
              partnerId: partner.partnerId,
              environment: "production",
              kind: "data",
              status: "active",
              last4: dataKey.slice(-4),
              createdAt: MONDAY_OPEN
            })
          )
        )
      )
      const replies = await Promise.all(
        Array.from({ length: 150 }, (_, i) => {
          const engine = i % 2 === 0 ? a : b
          const credential = i % 3 === 0 ? dataKey : partner.liveKey
          return call(engine, "GET", `${PROD}/stocks?limit=1`, { authorization: `Bearer ${credential}` })
        })
      )
      expect(replies.filter((r) => r.status === 200)).toHaveLength(100)
      const refused = replies.filter((r) => r.status === 429)
      expect(refused).toHaveLength(50)
      for (const r of refused) {
        expect(r.body.error.code).toBe("RATE_LIMITED")
        expect(r.body.error.message).toBe("rate limit exceeded: tier starter, 100 requests per minute, resets in 60 s")
        expect(r.headers.get("retry-after")).toBe("60")
        expect(r.headers.get("x-ratelimit-remaining")).toBe("0")
      }
      const remaining = replies.filter((r) => r.status === 200).map((r) => Number(r.headers.get("x-ratelimit-remaining")))
      expect([...remaining].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i))
      // The window slides on each process's own clock: 60 s later on both, the bucket is free again.
      for (const engine of [a, b]) await call(engine, "POST", "/_sim/clock/advance", { authorization: `Bearer ${ADMIN}` }, { seconds: 60 })
      const later = await call(b, "GET", `${PROD}/stocks?limit=1`, { authorization: `Bearer ${dataKey}` })
      expect(later.status).toBe(200)
      expect(later.headers.get("x-ratelimit-remaining")).toBe("99")
    }, 60_000)
  }
)
