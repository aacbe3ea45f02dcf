/**
 * The deliveries `sokoni webhooks check` sends, built from the seed: envelopes `{eventId, event, timestamp, data,
 * isSandbox}` as the engine sends them (events/event-log.ts envelopeOf), payloads shaped like the contract's
 * examples (spec/openapi.yaml components/examples, e.g. OrderPendingEvent) with ids, symbol and amounts drawn from
 * the seed, money computed in integer units (domain/money.ts). Same seed and same start: same bytes.
 * Owns the payloads of the events it can send. Does not own signing or sending (conform/webhook-receiver-check.ts).
 */
import type { EVENT_NAMES } from "../contract/catalogue.gen.ts"
import { centsToWire, fees, grossCents, price4ToWire, usdPrice4 } from "../domain/money.ts"
import { isoAt } from "../sim/clock.ts"
import { makeGenerator } from "../sim/random.ts"

/** The events the checker can build, and so the names `--events` accepts. */
export const CHECKABLE_EVENTS = [
  "order.pending",
  "order.filled",
  "order.rejected",
  "deposit.confirmed",
  "kyc.updated",
  "test.event"
] as const satisfies ReadonlyArray<(typeof EVENT_NAMES)[number]>
export type CheckableEvent = (typeof CHECKABLE_EVENTS)[number]

export const isCheckableEvent = (name: string): name is CheckableEvent => (CHECKABLE_EVENTS as ReadonlyArray<string>).includes(name)

export interface Envelope {
  readonly eventId: string
  readonly event: CheckableEvent
  readonly timestamp: string
  readonly data: Readonly<Record<string, unknown>>
  readonly isSandbox: true
}

/** A delivery: its envelope and the exact bytes that are signed and sent (compact JSON, as the engine sends). */
export interface Delivery {
  readonly envelope: Envelope
  readonly body: string
}

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
/** Symbol, exchange, local price (1/10000) and KES-like rate (1/1e6 local per USD). */
const LISTINGS: ReadonlyArray<readonly [string, string, number, number]> = [
  ["SCOM.KE", "NSE", 285_000, 129_200_000],
  ["EQTY.KE", "NSE", 412_500, 129_200_000],
  ["KCB.KE", "NSE", 338_000, 129_200_000],
  ["NPN.ZA", "JSE", 31_450_000, 18_250_000],
  ["DANGCEM.NG", "NGX", 4_850_000, 1_530_000_000]
]

/** One order's facts, shared by its pending, filled and rejected events (the reordering check needs one order). */
interface OrderFacts {
  readonly orderId: string
  readonly subAccountId: string
  readonly externalId: string
  readonly symbol: string
  readonly exchange: string
  readonly quantity: number
  readonly priceAtOrder: number
  readonly usdPriceAtOrder: number
  readonly gross: number
  readonly baseFee: number
  readonly fee: number
  readonly totalCost: number
}

export interface EventFactory {
  /** A new delivery of `event` (fresh eventId) stamped `atMs`; order events are about order number `order` (0 first). */
  readonly next: (event: CheckableEvent, atMs: number, order?: number) => Delivery
  /** The facts of order number `n`, drawn when first asked for. */
  readonly order: (n: number) => OrderFacts
}

/** Every value follows from `seed`, drawn in call order; the only time in a delivery is the `atMs` its caller gives. */
export const makeEventFactory = (seed: number): EventFactory => {
  const draw = makeGenerator(seed)
  const id = (prefix: string) => {
    let out = `${prefix}_`
    for (let i = 0; i < 16; i++) out += ALPHABET[draw() % 32]
    return out
  }
  const subAccountId = id("usr")
  const externalId = `cust-${1000 + (draw() % 9000)}`
  const orders: Array<OrderFacts> = []
  const orderOf = (n: number): OrderFacts => {
    while (orders.length <= n) {
      const [symbol, exchange, price4, rate6] = LISTINGS[draw() % LISTINGS.length] ?? LISTINGS[0]!
      const quantity = 10 * (1 + (draw() % 50))
      const gross = grossCents(quantity, price4, rate6)
      const fee = fees(gross, 0)
      orders.push({
        orderId: id("ord"),
        subAccountId,
        externalId,
        symbol,
        exchange,
        quantity,
        priceAtOrder: price4ToWire(price4),
        usdPriceAtOrder: price4ToWire(usdPrice4(price4, rate6)),
        gross: centsToWire(gross),
        baseFee: centsToWire(fee.baseFee),
        fee: centsToWire(fee.fee),
        totalCost: centsToWire(gross + fee.fee)
      })
    }
    return orders[n]!
  }
  const depositCents = 100 * (50 + (draw() % 950))
  const webhookId = id("wh")

  const dataOf = (event: CheckableEvent, at: string, n: number): Record<string, unknown> => {
    const who = { subAccountId, externalId }
    if (event === "deposit.confirmed") return { ...who, amount: centsToWire(depositCents), currency: "USD", newBalance: centsToWire(depositCents) }
    if (event === "kyc.updated") {
      return { ...who, kycStatus: "VERIFIED", kycLevel: "BASIC", reference: `kyc-ref-${draw() % 100_000}`, kycRejectionCode: null, kycRejectionReason: null }
    }
    if (event === "test.event") return { webhookId, message: "This is a test event", test: true }
    const order = orderOf(n)
    const settled = {
      orderId: order.orderId,
      ...who,
      type: "BUY",
      symbol: order.symbol,
      exchange: order.exchange,
      quantity: order.quantity,
      priceAtOrder: order.priceAtOrder,
      usdPriceAtOrder: order.usdPriceAtOrder,
      feeAmount: order.fee
    }
    switch (event) {
      case "order.pending":
        return {
          orderId: order.orderId,
          ...who,
          type: "BUY",
          symbol: order.symbol,
          quantity: order.quantity,
          priceAtOrder: order.priceAtOrder,
          usdPriceAtOrder: order.usdPriceAtOrder,
          gross: order.gross,
          baseFee: order.baseFee,
          partnerMarkupFee: 0,
          fee: order.fee,
          totalCost: order.totalCost,
          status: "PENDING"
        }
      case "order.filled":
        return { ...settled, status: "FILLED", settledAt: at, settlementUsdPrice: order.usdPriceAtOrder, totalCost: order.totalCost }
      case "order.rejected":
        return {
          ...settled,
          status: "REJECTED",
          settledAt: at,
          rejectionCode: "LIQUIDITY_UNAVAILABLE",
          rejectionReason: "Insufficient liquidity at the quoted price"
        }
    }
  }

  return {
    order: orderOf,
    next: (event, atMs, order = 0) => {
      const timestamp = isoAt(atMs)
      const envelope: Envelope = { eventId: id("evt"), event, timestamp, data: dataOf(event, timestamp, order), isSandbox: true }
      return { envelope, body: JSON.stringify(envelope) }
    }
  }
}
