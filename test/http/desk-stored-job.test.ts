/**
 * A `desk.fill` job stored by an engine from before the desk's policies (E-170: the desk now plans `desk.step` jobs,
 * and a database may still hold the earlier kind) is still run: it fills its order in full at the quoted price, and
 * does nothing to an order decided meanwhile (no failed job). The jobs are written straight into the store, as such a database holds
 * them; the engine's manual desk plans nothing of its own.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { EngineClock } from "../../engine/sim/clock.ts"
import { DESK_FILL_JOB } from "../../engine/sim/desk.ts"
import { Scheduler } from "../../engine/sim/scheduler.ts"
import { Store } from "../../engine/store/port.ts"
import { partnerOf, storeDocs, tradingAccount } from "./accounts-kit.ts"
import { startEngine } from "./harness.ts"

const engines: Array<{ dispose: () => Promise<void> }> = []
afterEach(async () => {
  for (const e of engines.splice(0)) await e.dispose()
})

const setup = async () => {
  const engine = startEngine()
  engines.push(engine)
  const p = await partnerOf(engine)
  const { id, trade } = await tradingAccount(p, "stored-job", 500)
  /** Stores a desk.fill job for `orderId`, due `seconds` from now on the engine's clock. */
  const storeFillJob = (orderId: string, seconds: number) =>
    engine.runtime.runPromise(
      Effect.gen(function* () {
        const now = yield* (yield* EngineClock).now
        const scheduler = yield* Scheduler
        yield* (yield* Store).transact((tx) => scheduler.schedule(tx, DESK_FILL_JOB, now + seconds * 1000, { orderId }))
      })
    )
  const advance = async (seconds: number) => expect((await engine.admin("POST", "/_sim/clock/advance", { seconds })).status).toBe(200)
  /** The order as the sub-account's order list shows it (GET /orders/{id} is production-only). */
  const order = async (orderId: string) => {
    const r = await p.sb("GET", `/users/${id}/orders`)
    expect(r.status).toBe(200)
    return (r.body.orders as Array<{ orderId: string; [k: string]: unknown }>).find((o) => o.orderId === orderId)
  }
  return { engine, p, id, trade, storeFillJob, advance, order }
}

describe("a stored desk.fill job (E-170)", () => {
  it("fills its order in full at the quoted price when it comes due, not before", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 5)
    await s.storeFillJob(placed.orderId, 10)
    await s.advance(5)
    expect((await s.order(placed.orderId))?.status).toBe("PENDING")
    await s.advance(5)
    const filled = await s.order(placed.orderId)
    expect([filled?.status, filled?.filledQuantity, filled?.averageFillPrice]).toEqual(["FILLED", 5, placed.priceAtOrder])
  })

  it("leaves an order the desk rejected meanwhile as it is, and ends without a failed job", async () => {
    const s = await setup()
    const placed = await s.trade("BUY", 5)
    await s.storeFillJob(placed.orderId, 10)
    expect(
      (await s.engine.admin("POST", `/_sim/desk/orders/${placed.orderId}/reject`, { rejectionCode: "LIQUIDITY_UNAVAILABLE", rejectionReason: "no liquidity" }))
        .status
    ).toBe(200)
    await s.advance(10)
    const after = await s.order(placed.orderId)
    expect([after?.status, after?.filledQuantity]).toEqual(["REJECTED", 0])
    // a fill of a decided order would fail and leave the job among the dead ones, with a warning in the log
    expect(await storeDocs(s.engine, "deadJobs", "global")).toEqual([])
  })
})
