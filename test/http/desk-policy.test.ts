/**
 * The desk's policies (`GET`/`PUT /_sim/desk/policy`, D-291) and settlement failures (D-290), through the control
 * and partner APIs on the virtual clock, on both stores: each policy's decisions at their instants, a random
 * policy replayed from its seed, validation in the envelope, and the money of an unwound trade. Every answer is
 * checked against the contracts by the harness.
 */
import { describe, expect, it } from "vitest"
import { type Reply, startEngine } from "./harness.ts"
import { adminUrl, withDatabase } from "./node-server-kit.ts"
import { tagsFor } from "../support/stores.ts"

const SANDBOX = "/api/sandbox/v1/partner"

type Engine = ReturnType<typeof startEngine>

/** A partner on `engine` with the calls these tests make. */
const deskWorld = async (engine: Engine) => {
  const keys = await engine.newPartner()
  let n = 0
  const sb = (method: string, path: string, body?: unknown) =>
    engine.call(method, `${SANDBOX}${path}`, { headers: { "x-api-key": keys.sandboxKey, "idempotency-key": `desk-policy-key-${++n}` }, body })
  const place = async (side: "BUY" | "SELL", quantity: number) => {
    const q = await sb("GET", `/quote/SCOM?side=${side}&quantity=${quantity}`)
    expect(q.status).toBe(200)
    const r = await sb("POST", "/trade", { symbol: "SCOM", type: side, quantity, quoteId: q.body.quoteId })
    expect(r.status, JSON.stringify(r.body)).toBe(202)
    return r.body as { orderId: string; totalAmount: number; priceAtOrder: number }
  }
  const order = async (orderId: string) => {
    const r = await sb("GET", `/orders?limit=200`)
    expect(r.status).toBe(200)
    const found = (r.body.orders as Array<any>).find((o) => o.orderId === orderId)
    expect(found).toBeDefined()
    return found
  }
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  const setPolicy = (body: unknown) => engine.admin("PUT", "/_sim/desk/policy", body)
  const walletCents = async () => Math.round((await sb("GET", "/wallet")).body.available * 100)
  const holding = async () => {
    const h = ((await sb("GET", "/portfolio")).body.holdings as Array<any>).find((x) => x.symbol === "SCOM.KE")
    return h === undefined ? { quantity: 0, availableQuantity: 0 } : { quantity: h.quantity as number, availableQuantity: h.availableQuantity as number }
  }
  const events = async () =>
    String((await engine.admin("GET", "/_sim/trace")).body)
      .split("\n")
      .filter((l) => l.includes('"kind":"event"'))
      .map((l) => JSON.parse(l))
  return { keys, sb, place, order, advance, setPolicy, walletCents, holding, events }
}

/** The same tests on memory and, with DATABASE_URL, on a fresh postgres database per test. */
const stores: ReadonlyArray<readonly [string, (use: (engine: Engine) => Promise<void>) => Promise<void>]> = [
  [
    "memory",
    async (use) => {
      const engine = startEngine()
      try {
        await use(engine)
      } finally {
        await engine.dispose()
      }
    }
  ],
  ...(adminUrl === undefined
    ? []
    : [
        [
          "postgres",
          (use: (engine: Engine) => Promise<void>) =>
            withDatabase(adminUrl ?? "", async (databaseUrl) => {
              const engine = startEngine({ databaseUrl })
              try {
                await use(engine)
              } finally {
                await engine.dispose()
              }
            })
        ] as const
      ])
]

for (const [store, withEngine] of stores)
  describe(`desk policies on ${store}`, tagsFor(store), () => {
    it("starts manual; auto fills orders queued after it, at +delaySeconds and not before, and leaves earlier ones waiting", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        expect((await engine.admin("GET", "/_sim/desk/policy")).body).toEqual({ mode: "manual" })
        const before = await w.place("BUY", 10)
        const set = await w.setPolicy({ mode: "auto", delaySeconds: 3 })
        expect([set.status, set.body]).toEqual([200, { mode: "auto", delaySeconds: 3, price: "quote" }])
        expect((await engine.admin("GET", "/_sim/desk/policy")).body).toEqual(set.body)
        const after = await w.place("BUY", 10)
        await w.advance(2.999)
        expect((await w.order(after.orderId)).status).toBe("PENDING")
        await w.advance(0.001)
        const filled = await w.order(after.orderId)
        expect([filled.status, filled.settlementStatus, filled.filledQuantity, filled.averageFillPrice]).toEqual(["FILLED", "SETTLED", 10, after.priceAtOrder])
        await w.advance(600)
        expect((await w.order(before.orderId)).status).toBe("PENDING")
      })
    }, 60_000)

    it("auto at the market price: a SELL fills at the price shown then; a BUY above its quote is PRICE_OUT_OF_TOLERANCE", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const bought = await w.place("BUY", 10)
        expect((await engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})).status).toBe(200)
        expect((await w.setPolicy({ mode: "auto", delaySeconds: 1800, price: "market" })).status).toBe(200)
        const sell = await w.place("SELL", 4)
        const buy = await w.place("BUY", 4)
        const pinned = Math.round(sell.priceAtOrder * 1.2 * 100) / 100
        expect((await engine.admin("PUT", "/_sim/market/prices/SCOM", { price: pinned })).status).toBe(200)
        await w.advance(1800)
        const shown = (await w.sb("GET", "/quote/SCOM")).body.price
        expect(shown).toBe(pinned)
        const sold = await w.order(sell.orderId)
        expect([sold.status, sold.averageFillPrice]).toEqual(["FILLED", pinned])
        const declined = await w.order(buy.orderId)
        expect([declined.status, declined.rejectionCode, declined.settlementStatus]).toEqual(["REJECTED", "PRICE_OUT_OF_TOLERANCE", "FAILED"])
      })
    }, 60_000)

    it("random: rate 1 rejects every order with a listed code; partialFillRate 1 fills part at +delay, the rest at +2 delay", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        expect(
          (await w.setPolicy({ mode: "random", seed: 9, delaySeconds: 2, rejectionRate: 1, rejectionCodes: ["RISK_CHECK_FAILED", "DESK_DECLINED"] })).status
        ).toBe(200)
        const rejected = [await w.place("BUY", 5), await w.place("BUY", 5), await w.place("BUY", 5), await w.place("BUY", 5)]
        await w.advance(2)
        const codes = await Promise.all(rejected.map(async (o) => (await w.order(o.orderId)).rejectionCode))
        for (const code of codes) expect(["RISK_CHECK_FAILED", "DESK_DECLINED"]).toContain(code)
        expect((await w.setPolicy({ mode: "random", delaySeconds: 2, partialFillRate: 1 })).body).toMatchObject({
          seed: 1,
          rejectionRate: 0,
          partialFillRate: 1
        })
        const split = await w.place("BUY", 10)
        await w.advance(2)
        const part = await w.order(split.orderId)
        expect(part.status).toBe("PARTIALLY_FILLED")
        expect(part.filledQuantity).toBeGreaterThanOrEqual(1)
        expect(part.filledQuantity).toBeLessThanOrEqual(9)
        await w.advance(2)
        expect((await w.order(split.orderId)).status).toBe("FILLED")
      })
    }, 60_000)

    it("a scripted step list: fill 40% at +2 s, then reject the rest with a code; later orders wait for the desk", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const wallet0 = await w.walletCents()
        const set = await w.setPolicy({
          mode: "scripted",
          scripts: [
            {
              steps: [
                { afterSeconds: 2, action: "fill", percent: 40 },
                { afterSeconds: 2, action: "reject", rejectionCode: "LIQUIDITY_UNAVAILABLE", rejectionReason: "thin book" }
              ]
            }
          ]
        })
        expect(set.status).toBe(200)
        expect(set.body.scripts[0].orderId).toBeNull()
        const o = await w.place("BUY", 10)
        const unscripted = await w.place("BUY", 10)
        await w.advance(1.999)
        expect((await w.order(o.orderId)).status).toBe("PENDING")
        await w.advance(0.001)
        const done = await w.order(o.orderId)
        expect([done.status, done.filledQuantity, done.settlementStatus, done.rejectionCode, done.rejectionReason]).toEqual([
          "REJECTED",
          4,
          "SETTLED",
          "LIQUIDITY_UNAVAILABLE",
          "thin book"
        ])
        expect((await w.events()).find((e) => e.event === "order.rejected").data.rejectionCode).toBe("LIQUIDITY_UNAVAILABLE")
        // the wallet paid for 4 units only (about 40% of the escrow): the unfilled 60% came back
        const spent = wallet0 - (await w.walletCents()) - Math.round(unscripted.totalAmount * 100)
        expect(spent).toBeGreaterThan(Math.floor(o.totalAmount * 100 * 0.39))
        expect(spent).toBeLessThan(Math.ceil(o.totalAmount * 100 * 0.41))
        expect((await w.holding()).quantity).toBe(4)
        await w.advance(600)
        expect((await w.order(unscripted.orderId)).status).toBe("PENDING")
      })
    }, 60_000)

    it("a script naming an order already queued is scheduled for it at once, its steps counted from now", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const queued = await w.place("BUY", 10)
        const other = await w.place("BUY", 10)
        await w.advance(60)
        const set = await w.setPolicy({ mode: "scripted", scripts: [{ orderId: queued.orderId, steps: [{ afterSeconds: 3, action: "fill", quantity: 6 }] }] })
        expect(set.body.scripts[0].orderId).toBe(queued.orderId)
        await w.advance(2.999)
        expect((await w.order(queued.orderId)).filledQuantity).toBe(0)
        await w.advance(0.001)
        expect((await w.order(queued.orderId)).filledQuantity).toBe(6)
        expect((await w.order(other.orderId)).status).toBe("PENDING")
      })
    }, 60_000)

    it("answers a random policy whole, its rejection codes as set or the default one, and reads it back the same", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const coded = await w.setPolicy({ mode: "random", seed: 9, rejectionRate: 0.25, rejectionCodes: ["RISK_CHECK_FAILED", "DESK_DECLINED"] })
        expect([coded.status, coded.body]).toEqual([
          200,
          {
            mode: "random",
            seed: 9,
            delaySeconds: 5,
            price: "quote",
            rejectionRate: 0.25,
            rejectionCodes: ["RISK_CHECK_FAILED", "DESK_DECLINED"],
            partialFillRate: 0,
            settlementFailureRate: 0
          }
        ])
        expect((await engine.admin("GET", "/_sim/desk/policy")).body).toEqual(coded.body)
        const plain = await w.setPolicy({ mode: "random" })
        expect(plain.body.rejectionCodes).toEqual(["LIQUIDITY_UNAVAILABLE"])
        expect((await engine.admin("GET", "/_sim/desk/policy")).body.rejectionCodes).toEqual(["LIQUIDITY_UNAVAILABLE"])
      })
    }, 60_000)

    it("refuses a bad policy in the envelope and keeps the one in force", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        expect((await w.setPolicy({ mode: "auto", delaySeconds: 7 })).status).toBe(200)
        const bad: ReadonlyArray<readonly [unknown, string, string]> = [
          [{ mode: "fast" }, "VALIDATION_ERROR", "mode"],
          [{ mode: "auto", rejectionRate: 0.1 }, "VALIDATION_ERROR", "rejectionRate"],
          [{ mode: "random", rejectionRate: 1.5 }, "VALIDATION_ERROR", "rejectionRate"],
          [{ mode: "random", partialFillRate: 0.00001 }, "VALIDATION_ERROR", "partialFillRate"],
          [{ mode: "random", rejectionRate: 0.6, settlementFailureRate: 0.5 }, "VALIDATION_ERROR", "rejectionRate"],
          [{ mode: "random", rejectionCodes: [] }, "VALIDATION_ERROR", "rejectionCodes"],
          [{ mode: "auto", delaySeconds: -1 }, "VALIDATION_ERROR", "delaySeconds"],
          [{ mode: "scripted" }, "MISSING_PARAM", "scripts"],
          [{ mode: "scripted", scripts: [{ steps: [{ afterSeconds: 1, action: "reject" }] }] }, "VALIDATION_ERROR", "scripts[0].steps[0].rejectionCode"],
          [
            {
              mode: "scripted",
              scripts: [
                {
                  steps: [
                    { afterSeconds: 1, action: "reject", rejectionCode: "X" },
                    { afterSeconds: 2, action: "fill" }
                  ]
                }
              ]
            },
            "VALIDATION_ERROR",
            "scripts[0].steps[0].action"
          ],
          [
            { mode: "scripted", scripts: [{ steps: [{ afterSeconds: 1, action: "fill", percent: 10, quantity: 1 }] }] },
            "VALIDATION_ERROR",
            "scripts[0].steps[0].percent"
          ]
        ]
        for (const [body, code, param] of bad) {
          const r = await w.setPolicy(body)
          expect([r.status, r.body.error.code], JSON.stringify(body)).toEqual([400, code])
          expect(JSON.stringify(r.body.error), JSON.stringify(body)).toContain(param)
        }
        expect((await engine.admin("GET", "/_sim/desk/policy")).body).toEqual({ mode: "auto", delaySeconds: 7, price: "quote" })
      })
    }, 60_000)
  })

/** What a random policy decided for `count` orders, by order (status, code, filled units at +delay and at the end). */
const randomRun = async (seed: number, count: number) => {
  const engine = startEngine()
  try {
    const w = await deskWorld(engine)
    expect(
      (await w.setPolicy({ mode: "random", seed, delaySeconds: 5, rejectionRate: 0.3, rejectionCodes: ["A_CODE", "B_CODE"], partialFillRate: 0.5 })).status
    ).toBe(200)
    const orders: Array<{ orderId: string }> = []
    for (let i = 0; i < count; i++) orders.push(await w.place("BUY", 20))
    await w.advance(5)
    const mid = await Promise.all(orders.map((o) => w.order(o.orderId)))
    await w.advance(5)
    const end = await Promise.all(orders.map((o) => w.order(o.orderId)))
    return end.map((o, i) => `${o.status}/${o.rejectionCode}/${mid[i].filledQuantity}/${o.filledQuantity}`)
  } finally {
    await engine.dispose()
  }
}

describe("random desk policy replays", () => {
  it("the same seed decides the same orders the same way; another seed differently; every outcome is one the policy allows", async () => {
    const a = await randomRun(42, 12)
    expect(await randomRun(42, 12)).toEqual(a)
    expect(await randomRun(43, 12)).not.toEqual(a)
    for (const outcome of a) expect(outcome).toMatch(/^(REJECTED\/(A_CODE|B_CODE)\/0\/0|FILLED\/null\/([1-9]|1[0-9]|20)\/20)$/)
    // with these rates, twelve orders see each kind of decision: rejected, split in two, filled at once
    expect(a.some((o) => o.startsWith("REJECTED"))).toBe(true)
    expect(a.some((o) => /^FILLED\/null\/([1-9]|1[0-9])\/20$/.test(o))).toBe(true)
    expect(a).toContain("FILLED/null/20/20")
  }, 60_000)
})

for (const [store, withEngine] of stores)
  describe(`settlement failure on ${store}`, tagsFor(store), () => {
    it("unwinds a partly filled BUY: shares out, the whole debit back, REJECTED SETTLEMENT_FAILED, settlement FAILED, order.rejected", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const wallet0 = await w.walletCents()
        const o = await w.place("BUY", 10)
        const pending = await w.order(o.orderId)
        expect(pending.executionSla).toMatchObject({ elapsedSeconds: 0, breached: false })
        expect((await engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fill`, { quantity: 4 })).status).toBe(200)
        expect((await w.holding()).quantity).toBe(4)
        await w.advance(30)
        const failed: Reply = await engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fail-settlement`)
        expect(failed.status).toBe(200)
        expect(failed.body).toMatchObject({
          status: "REJECTED",
          settlementStatus: "FAILED",
          rejectionCode: "SETTLEMENT_FAILED",
          filledQuantity: 0,
          remainingQuantity: 10,
          executionSla: null,
          settledAt: "2026-11-23T08:00:30.000Z"
        })
        expect(await w.walletCents()).toBe(wallet0)
        expect(await w.holding()).toEqual({ quantity: 0, availableQuantity: 0 })
        const names = (await w.events()).map((e) => e.event)
        expect(names.filter((n) => n === "order.rejected" || n === "trade.rejected")).toEqual(["order.rejected", "trade.rejected"])
        expect(names).not.toContain("order.filled")
        const again = await engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fail-settlement`, {})
        expect([again.status, again.body.error.code]).toEqual([409, "CONFLICT"])
        const missing = await engine.admin("POST", "/_sim/desk/orders/ord_missing/fail-settlement", {})
        expect(missing.status).toBe(404)
      })
    }, 60_000)

    it("reverses a partly filled SELL's proceeds and gives its shares back, free to sell", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const bought = await w.place("BUY", 10)
        expect((await engine.admin("POST", `/_sim/desk/orders/${bought.orderId}/fill`, {})).status).toBe(200)
        const wallet0 = await w.walletCents()
        const sell = await w.place("SELL", 6)
        expect(await w.holding()).toEqual({ quantity: 10, availableQuantity: 4 })
        expect((await engine.admin("POST", `/_sim/desk/orders/${sell.orderId}/fill`, { quantity: 2 })).status).toBe(200)
        expect(await w.walletCents()).toBeGreaterThan(wallet0)
        const failed = await engine.admin("POST", `/_sim/desk/orders/${sell.orderId}/fail-settlement`, { rejectionReason: "custodian offline" })
        expect([failed.body.status, failed.body.settlementStatus, failed.body.rejectionReason]).toEqual(["REJECTED", "FAILED", "custodian offline"])
        expect(await w.walletCents()).toBe(wallet0)
        expect(await w.holding()).toEqual({ quantity: 10, availableQuantity: 10 })
      })
    }, 60_000)

    it("a FILLED order has settled: its settlement can no longer fail (409), and a BUY whose shares were sold cannot unwind", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const o = await w.place("BUY", 10)
        expect((await engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fill`, {})).status).toBe(200)
        const r = await engine.admin("POST", `/_sim/desk/orders/${o.orderId}/fail-settlement`, {})
        expect([r.status, r.body.error.code]).toEqual([409, "CONFLICT"])
        const part = await w.place("BUY", 10)
        expect((await engine.admin("POST", `/_sim/desk/orders/${part.orderId}/fill`, { quantity: 5 })).status).toBe(200)
        const sell = await w.place("SELL", 15)
        expect((await engine.admin("POST", `/_sim/desk/orders/${sell.orderId}/fill`, {})).status).toBe(200)
        const stuck = await engine.admin("POST", `/_sim/desk/orders/${part.orderId}/fail-settlement`, {})
        expect([stuck.status, stuck.body.error.code]).toEqual([409, "CONFLICT"])
        expect((await w.order(part.orderId)).status).toBe("PARTIALLY_FILLED")
      })
    }, 60_000)

    it("a random settlementFailureRate of 1 and a scripted failSettlement step both unwind on the clock", async () => {
      await withEngine(async (engine) => {
        const w = await deskWorld(engine)
        const wallet0 = await w.walletCents()
        expect((await w.setPolicy({ mode: "random", delaySeconds: 4, settlementFailureRate: 1 })).status).toBe(200)
        const a = await w.place("BUY", 3)
        await w.advance(4)
        expect((await w.order(a.orderId)).rejectionCode).toBe("SETTLEMENT_FAILED")
        expect(
          (
            await w.setPolicy({
              mode: "scripted",
              scripts: [
                {
                  steps: [
                    { afterSeconds: 1, action: "fill", quantity: 2 },
                    { afterSeconds: 3, action: "failSettlement" }
                  ]
                }
              ]
            })
          ).status
        ).toBe(200)
        const b = await w.place("BUY", 5)
        await w.advance(1)
        expect((await w.order(b.orderId)).filledQuantity).toBe(2)
        await w.advance(2)
        expect((await w.order(b.orderId)).settlementStatus).toBe("FAILED")
        expect(await w.walletCents()).toBe(wallet0)
        expect((await w.holding()).quantity).toBe(0)
      })
    }, 60_000)
  })
