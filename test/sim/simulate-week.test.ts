/**
 * `sokoni simulate`: a seeded trading week, run in-process on the virtual clock (engine/sim/week). A small week is
 * deterministic (same seed, same summary and trace hash), exercises what it claims (orders placed, events, webhook
 * retries from the flaky receivers, history entries) and passes its own verdict (history rules, money conserved);
 * the plan is a pure function of its options. The command itself: simulate-week.process.test.ts.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Balances, balanceId } from "../../engine/app/docs.ts"
import { makeInProcessEngine } from "../../engine/runtime.ts"
import { checkConservation } from "../../engine/sim/week/verdict.ts"
import { Store } from "../../engine/store/port.ts"
import { planWeek, WEEK_START } from "../../engine/sim/week/plan.ts"
import { runWeek } from "../../engine/sim/week/run.ts"
import { adminUrl } from "../http/node-server-kit.ts"
import { onPostgres } from "../support/stores.ts"

const SMALL = { partners: 3, subAccounts: 12, orders: 120, days: 2 }

describe("a simulated week", () => {
  it("is planned from its seed alone: same options, same actions; another seed, others", () => {
    const a = planWeek({ seed: 11, ...SMALL })
    expect(planWeek({ seed: 11, ...SMALL })).toEqual(a)
    expect(planWeek({ seed: 12, ...SMALL }).actions).not.toEqual(a.actions)
    expect(a.actions.filter((x) => x.kind === "order")).toHaveLength(SMALL.orders)
    expect(a.actions.map((x) => x.at)).toEqual([...a.actions.map((x) => x.at)].sort((x, y) => x - y))
  })

  it("runs alike twice from one seed, places its orders, retries deliveries and passes its verdict", async () => {
    const first = await runWeek({ seed: 11, ...SMALL, store: "memory" })
    const again = await runWeek({ seed: 11, ...SMALL, store: "memory" })
    expect(again.summary).toEqual(first.summary)
    const s = first.summary
    expect({ problems: s.problems, violations: s.violations, conservation: s.conservation.problems }).toEqual({
      problems: [],
      violations: [],
      conservation: []
    })
    expect(first.passed).toBe(true)
    expect(s.ordersPlaced + s.ordersRefused).toBe(SMALL.orders)
    expect(s.ordersPlaced).toBeGreaterThan(SMALL.orders / 2)
    expect(s.deliveries).toBeGreaterThan(s.ordersPlaced)
    expect(s.retries).toBeGreaterThan(0)
    expect(s.events).toBeGreaterThan(s.ordersPlaced)
    expect(s.traceHash).toMatch(/^[0-9a-f]{64}$/)
    const other = await runWeek({ seed: 12, ...SMALL, store: "memory" })
    expect(other.summary.traceHash).not.toBe(s.traceHash)
  })

  it("names a ledger whose balances do not sum to zero, and a wallet below zero", async () => {
    const engine = makeInProcessEngine({ store: "memory", clock: "manual", start: WEEK_START, seed: 1, desk: "manual" })
    try {
      const partition = "ptn_broken:sandbox"
      const conservation = await engine.runtime.runPromise(
        Effect.gen(function* () {
          const store = yield* Store
          const wallet = { account: "wallet:usr_1", cents: -5, updatedAt: WEEK_START }
          yield* store.transact((tx) => Balances.put(tx, balanceId(partition, wallet.account), partition, wallet.account, wallet))
          return yield* checkConservation(["ptn_broken"])
        })
      )
      expect(conservation.problems).toEqual([`${partition}: the ledger's balances sum to -5 cents, not 0`, `${partition}: wallet:usr_1 is at -5 cents`])
    } finally {
      await engine.dispose()
    }
  })

  it.skipIf(adminUrl === undefined)("runs the same week on postgres: the memory store's summary and trace hash", onPostgres, async () => {
    const options = { seed: 4, partners: 2, subAccounts: 6, orders: 40, days: 1 }
    const [memory, postgres] = await Promise.all([runWeek({ ...options, store: "memory" }), runWeek({ ...options, store: "postgres", databaseUrl: adminUrl })])
    expect(postgres.passed).toBe(true)
    expect({ ...postgres.summary, store: "memory" }).toEqual(memory.summary)
  })
})
