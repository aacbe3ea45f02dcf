/**
 * Generates long scenario files (issue 25): `ordersScenario(n)` is a YAML scenario of n orders through quotes on one
 * sandbox partner, with a random desk (fills, partial fills, rejections), a receiver that fails now and then (so
 * deliveries are retried) and the clock moving 20 s between orders (1,000 orders stay within one NSE session). Too long to commit; the scenario-runner
 * test and the bench write it where they need it. Pure: the same n, the same text.
 */
import { stringify } from "yaml"
import type { Scenario, ScenarioStep } from "./format.ts"

const HOOK = "https://hooks.generated.test/orders"
const SECRET = "whsec_generated_0123456789abcdef"
const SYMBOLS = ["SCOM.KE", "EQTY.KE", "KCB.KE", "COOP.KE"]

/** Every 25th order, the receiver fails its next three attempts (500, 503, then no answer within 8 s). */
const FAILING_EVERY = 25

const orderSteps = (n: number): Array<ScenarioStep> => {
  const symbol = SYMBOLS[n % SYMBOLS.length] ?? "SCOM.KE"
  const quantity = 1 + ((n * 7) % 40)
  const steps: Array<ScenarioStep> = []
  if (n % FAILING_EVERY === 0)
    steps.push({ receiver: { url: HOOK, answers: [{ status: 500 }, { status: 503 }, { status: 200, latencyMs: 9_000 }] } } as ScenarioStep)
  steps.push(
    {
      request: `GET /api/sandbox/v1/partner/quote/${symbol}?side=BUY&quantity=${quantity}`,
      expect: { status: 200 },
      save: { quoteId: "body.quoteId" }
    } as ScenarioStep,
    {
      request: "POST /api/sandbox/v1/partner/trade",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a scenario variable, substituted by the runner
      body: { symbol, type: "BUY", quantity, quoteId: "${quoteId}" },
      expect: { status: 202, body: { status: "PENDING" } }
    } as ScenarioStep,
    { advance: { seconds: 20 } } as ScenarioStep
  )
  return steps
}

export const ordersScenario = (orders: number): string => {
  const scenario: Scenario = {
    name: `${orders} orders through quotes, a random desk and a flaky receiver`,
    start: "2026-11-23T06:00:00.000Z",
    desk: "manual",
    partner: { businessName: "Generated Orders", email: "ops@generated.test", tier: "enterprise" },
    steps: [
      { receiver: { url: HOOK, secret: SECRET } } as ScenarioStep,
      {
        request: "POST /api/sandbox/v1/partner/webhooks",
        body: { url: HOOK, events: ["order.pending", "order.filled", "order.rejected", "trade.settled"], secret: SECRET },
        expect: { status: 201 }
      } as ScenarioStep,
      {
        desk: { policy: { mode: "random", seed: 7, delaySeconds: 5, rejectionRate: 0.05, partialFillRate: 0.1 } },
        expect: { status: 200 }
      } as ScenarioStep,
      ...Array.from({ length: orders }, (_, n) => orderSteps(n)).flat()
    ]
  }
  return stringify(scenario)
}
