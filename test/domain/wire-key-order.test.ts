/**
 * The key order of three values a trade builds around an optional key: an order on the wire, the `order.pending`
 * event and a journal entry. Their JSON, and so every answer's bytes, every webhook body and the trace hashes, depends
 * on it; a rewrite of their literals (E-511 tried assignments instead of spreads) must keep it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Journal } from "../../engine/app/docs.ts"
import { postEntry } from "../../engine/app/ledger.ts"
import { placeMarket } from "../../engine/domain/order.ts"
import { orderToWire } from "../../engine/domain/order-wire.ts"
import { pendingEvent } from "../../engine/domain/trading/order-events.ts"
import { makeMemoryStore } from "../../engine/store/memory.ts"
import { marketInput, T0 } from "../support/order-input.ts"

const input = marketInput

const ORDER_HEAD = [
  "orderId",
  "symbol",
  "name",
  "exchange",
  "orderType",
  "limitPrice",
  "stopPrice",
  "cancelable",
  "replaceable",
  "type",
  "status",
  "canonicalStatus",
  "settlementStatus",
  "quoteId",
  "quoteExpiresAt",
  "quoteUsdPrice",
  "clientOrderId",
  "omsStatus",
  "timeInForce"
]
const ORDER_TAIL = [
  "filledQuantity",
  "remainingQuantity",
  "averageFillPrice",
  "executionVenue",
  "lastExecutionReportId",
  "executionSla",
  "quantity",
  "priceAtOrder",
  "usdPriceAtOrder",
  "fxRateAtOrder",
  "fxSource",
  "fxRateAsOf",
  "fxConversion",
  "fee",
  "baseFee",
  "partnerMarkupFee",
  "totalAmount",
  "currency",
  "localCurrency",
  "rejectionCode",
  "rejectionReason",
  "cancelledAt",
  "settledAt",
  "createdAt",
  "orderLifecycle",
  "cancelReason"
]

describe("keys written in the contract's order", () => {
  it("an order on the wire, with expiresAt between timeInForce and filledQuantity only when it has one", () => {
    const order = placeMarket(input())
    assert.deepStrictEqual(Object.keys(orderToWire(order, T0)), [...ORDER_HEAD, ...ORDER_TAIL])
    const gtd = orderToWire({ ...order, timeInForce: "GTD", expiresAt: T0 + 86_400_000 }, T0)
    assert.deepStrictEqual(Object.keys(gtd), [...ORDER_HEAD, "expiresAt", ...ORDER_TAIL])
    assert.strictEqual(gtd.expiresAt, "2026-11-24T08:00:00.000Z")
    assert.deepStrictEqual(Object.keys(orderToWire({ ...order, expiresAt: null }, T0)), [...ORDER_HEAD, ...ORDER_TAIL])
  })

  it("order.pending: the account's key second, totalCost only on a BUY, status last", () => {
    const buy = pendingEvent(placeMarket(input()))
    const fees = ["priceAtOrder", "usdPriceAtOrder", "gross", "baseFee", "partnerMarkupFee", "fee"]
    assert.deepStrictEqual(Object.keys(buy.data), ["orderId", "accountType", "externalId", "type", "symbol", "quantity", ...fees, "totalCost", "status"])
    assert.strictEqual(buy.data.accountType, "MASTER")
    const sell = pendingEvent(placeMarket(input({ side: "SELL", account: "sub_1" })))
    assert.deepStrictEqual(Object.keys(sell.data), ["orderId", "subAccountId", "externalId", "type", "symbol", "quantity", ...fees, "status"])
    assert.strictEqual(sell.data.subAccountId, "sub_1")
  })

  it.effect("a journal entry: subscriptionId between orderId and side only when given", () =>
    Effect.gen(function* () {
      const store = yield* makeMemoryStore
      const P = "ptn_k:sandbox"
      const postings = [
        { account: "market", cents: -10 },
        { account: "fees", cents: 10 }
      ]
      yield* store.transact((tx) => postEntry(tx, P, { kind: "ORDER_FILLED", postings, at: 1, description: "x" }))
      yield* store.transact((tx) => postEntry(tx, P, { kind: "ORDER_FILLED", postings, at: 2, description: "y", subscriptionId: "sub_9" }))
      const [plain, billed] = yield* store.read((tx) => Journal.list(tx, P, { limit: 10, order: "asc" }))
      const head = ["entryId", "partition", "seq", "at", "kind", "postings", "orderId"]
      const tail = ["side", "reference", "note", "description"]
      assert.deepStrictEqual(Object.keys(plain ?? {}), [...head, ...tail])
      assert.deepStrictEqual(Object.keys(billed ?? {}), [...head, "subscriptionId", ...tail])
    })
  )
})
