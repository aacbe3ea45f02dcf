/**
 * Round trips of quote->trade on the PostgreSQL store (issue 22: E-317, E-405, E-435, E-436, E-472, E-521), counted by
 * a proxy between the engine and the server, for pairs made one after another in process (statements sent together,
 * before the first answer, are one round trip). A change that adds a
 * statement to the money path fails here, not only in the bench (`node scripts/bench/pg-roundtrips.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect, Exit, Scope } from "effect"
import { makeEngineHost } from "../../engine/http/engine-host.ts"
import { withTemporaryDatabase } from "../../engine/store/pg-temp-db.ts"
import { ID_BLOCK_SIZE } from "../../engine/store/pg-id-blocks.ts"
import { benchHostConfig, benchPartner, callerOf, json, SANDBOX } from "../../scripts/bench/in-process.ts"
import { type CountingProxy, countingProxy } from "../support/pg-counting-proxy.ts"
import { onPostgres } from "../support/stores.ts"

const adminUrl = process.env.DATABASE_URL

describe.skipIf(adminUrl === undefined)("quote->trade round trips on postgres", onPostgres, () => {
  let scope: Scope.Closeable
  let proxy: CountingProxy
  let host: Awaited<ReturnType<typeof makeEngineHost>>

  beforeAll(async () => {
    scope = Effect.runSync(Scope.make())
    const databaseUrl = await Effect.runPromise(Scope.provide(withTemporaryDatabase(adminUrl as string), scope))
    proxy = await countingProxy(databaseUrl)
    const url = new URL(databaseUrl)
    url.host = `127.0.0.1:${proxy.port}`
    host = await makeEngineHost(benchHostConfig({ store: "postgres", databaseUrl: url.toString() }))
  }, 60_000)

  afterAll(async () => {
    await host?.stop()
    await proxy?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  it("a quote takes 2 round trips and a keyed MARKET trade 2 (the lock with its reads; the batch and COMMIT together)", async () => {
    const call = callerOf(host)
    const { key, symbol } = await benchPartner(call)
    const pair = async (i: number) => {
      let before = proxy.trips()
      const quote = await call("GET", `${SANDBOX}/quote/${symbol}?side=BUY&quantity=1`, key)
      const quoteTrips = proxy.trips() - before
      before = proxy.trips()
      const body = { symbol, type: "BUY", quantity: 1, quoteId: json(quote).quoteId }
      const trade = await call("POST", `${SANDBOX}/trade`, { ...key, "idempotency-key": `rt-test-${String(i).padStart(8, "0")}` }, body)
      expect(trade.status).toBe(202)
      return { quote: quoteTrips, trade: proxy.trips() - before }
    }
    // Warm: statements prepared, connections kept in their chain of transactions (E-436).
    for (let i = 0; i < 5; i++) await pair(i)
    const pairs = 20
    const counts = []
    for (let i = 0; i < pairs; i++) counts.push(await pair(100 + i))
    // A block of ids is drawn every ID_BLOCK_SIZE values (E-435): at most one extra round trip per block used.
    const slack = Math.ceil((pairs * 8) / ID_BLOCK_SIZE)
    expect(counts.filter((c) => c.quote > 2 || c.trade > 2).length).toBeLessThanOrEqual(slack)
    expect(counts.reduce((sum, c) => sum + c.quote + c.trade, 0)).toBeLessThanOrEqual(pairs * 4 + slack)
    // The least any pair took: exactly the statements named above.
    expect(Math.min(...counts.map((c) => c.trade))).toBe(2)
    expect(Math.min(...counts.map((c) => c.quote))).toBe(2)
  }, 120_000)
})
