/**
 * A market order's input for the domain's tests (engine/domain/order.ts `placeMarket`): 100 SCOM.KE bought at 18 KES
 * with 129.25 KES per USD, a quote valid 30 s, at T0 (Monday 2026-11-23 08:00Z); `over` changes any field.
 */
import type { PlaceMarketInput } from "../../engine/domain/order.ts"

export const T0 = Date.UTC(2026, 10, 23, 8, 0, 0)

export const marketInput = (over: Partial<PlaceMarketInput> = {}): PlaceMarketInput => ({
  orderId: "ord_1",
  partition: "p1",
  account: "master",
  externalId: null,
  instrument: { symbol: "SCOM.KE", name: "Safaricom PLC", exchange: "NSE" },
  side: "BUY",
  quantity: 100,
  price: 180_000, // 18 KES
  rate: 129_250_000, // 129.25 KES/USD
  rateAsOf: T0 - 60_000,
  fxSource: "sokoni-sim-reference",
  localCurrency: "KES",
  markupBps: 0,
  quote: { quoteId: "q_1", expiresAt: T0 + 30_000 },
  clientOrderId: null,
  timeInForce: null,
  now: T0,
  ...over
})
