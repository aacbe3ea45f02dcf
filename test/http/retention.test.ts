/**
 * What the engine keeps, by what the API can still return (E-400), on both stores. A used or expired quote answers
 * STALE_QUOTE until one TTL after its expiry, then QUOTE_NOT_FOUND ("expired and collected") once a later quote of the
 * partner has collected it. An Idempotency-Key's answer replays for 24 h on the engine clock; after that the same key
 * runs as a new request, and the old answer is gone from the store.
 */
import { Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { IdempotencyRecords, Quotes } from "../../engine/app/docs.ts"
import { Store } from "../../engine/store/port.ts"
import { tagsFor } from "../support/stores.ts"
import { engineOn, type Reply, type startEngine } from "./harness.ts"

const SANDBOX = "/api/sandbox/v1/partner"
const expectError = (r: Reply, status: number, code: string) => expect([r.status, r.body?.error?.code], JSON.stringify(r.body)).toEqual([status, code])

for (const store of ["memory", "postgres"] as const) {
  describe.skipIf(store === "postgres" && process.env.DATABASE_URL === undefined)(`retention (${store})`, tagsFor(store), () => {
    let engine: ReturnType<typeof startEngine>
    let dispose: () => Promise<void>
    let partition = ""
    let key = ""
    beforeEach(async () => {
      ;({ engine, dispose } = await engineOn(store))
      const partner = await engine.newPartner()
      key = partner.sandboxKey
      partition = `${partner.partnerId}:sandbox`
    })
    afterEach(() => dispose())

    const quote = async () => {
      const r = await engine.call("GET", `${SANDBOX}/quote/SCOM?side=BUY&quantity=1`, { headers: { "x-api-key": key } })
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      return r.body.quoteId as string
    }
    const trade = (quoteId: string, idempotencyKey: string) =>
      engine.call("POST", `${SANDBOX}/trade`, {
        headers: { "x-api-key": key, "idempotency-key": idempotencyKey },
        body: { symbol: "SCOM", type: "BUY", quantity: 1, quoteId }
      })
    const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
    const quoteKept = (quoteId: string) => engine.runtime.runPromise(Store.use((s) => s.read((tx) => Quotes.get(tx, quoteId)))).then(Option.isSome)
    const answerKept = (idempotencyKey: string) =>
      engine.runtime.runPromise(Store.use((s) => s.read((tx) => IdempotencyRecords.get(tx, `${partition}|${idempotencyKey}`)))).then(Option.isSome)

    it("a used quote answers STALE_QUOTE until one TTL after its expiry, then QUOTE_NOT_FOUND once collected", async () => {
      const used = await quote()
      expect((await trade(used, "retention-use-1")).status).toBe(202)
      expectError(await trade(used, "retention-use-2"), 409, "STALE_QUOTE")
      // 119 s after its issue (its TTL is 60 s): still kept, whatever later quotes collect
      await advance(119)
      await quote()
      expectError(await trade(used, "retention-use-3"), 409, "STALE_QUOTE")
      await advance(2)
      expect(await quoteKept(used)).toBe(true)
      await quote()
      expect(await quoteKept(used)).toBe(false)
      expectError(await trade(used, "retention-use-4"), 404, "QUOTE_NOT_FOUND")
    })

    it("an unused quote is marked expired by its job, answers STALE_QUOTE, and QUOTE_NOT_FOUND once collected", async () => {
      const unused = await quote()
      await advance(61)
      expectError(await trade(unused, "retention-exp-1"), 409, "STALE_QUOTE")
      await advance(60)
      await quote()
      expectError(await trade(unused, "retention-exp-2"), 404, "QUOTE_NOT_FOUND")
    })

    it("a retry within 24 h replays; after 24 h on the engine clock the key runs as new, and the old answer is dropped", async () => {
      const first = await trade(await quote(), "retention-key-1")
      expect(first.status).toBe(202)
      const replay = await trade(first.body.quoteId, "retention-key-1")
      expect([replay.status, replay.headers.get("idempotent-replayed"), replay.body.orderId]).toEqual([202, "true", first.body.orderId])
      await advance(24 * 3600)
      // The same key with another request: within 24 h a 422 IDEMPOTENCY_KEY_REUSED, now a new order.
      const again = await trade(await quote(), "retention-key-1")
      expect(again.status, JSON.stringify(again.body)).toBe(202)
      expect(again.headers.get("idempotent-replayed")).toBeNull()
      expect(again.body.orderId).not.toBe(first.body.orderId)
      // Another key's command collects the answers past their 24 h in its partition.
      const second = await trade(await quote(), "retention-key-2")
      expect(second.status).toBe(202)
      await advance(24 * 3600)
      expect(await answerKept("retention-key-2")).toBe(true)
      expect((await trade(await quote(), "retention-key-3")).status).toBe(202)
      expect(await answerKept("retention-key-2")).toBe(false)
    })
  })
}
