/**
 * The trading commands as the routes hand them over (already checked against the contract's request schemas).
 * Owns: the command types. Does not own their rules (decide-*.ts, order-fields.ts).
 */
import type { OrderStatusFilter, Side, TimeInForce } from "../order.ts"

export interface TradeInput {
  readonly symbol: string
  readonly exchange?: string | undefined
  readonly type: Side
  readonly orderType?: string | undefined
  readonly quantity?: number | undefined
  readonly cashValue?: number | undefined
  readonly quoteId?: string | undefined
  readonly limitPrice?: number | undefined
  readonly stopPrice?: number | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: string | undefined
  readonly clientOrderId?: string | undefined
}

export interface ReplaceRequest {
  readonly quantity?: number | undefined
  readonly limitPrice?: number | undefined
  readonly stopPrice?: number | undefined
  readonly timeInForce?: TimeInForce | undefined
  readonly expiresAt?: string | undefined
}

export interface FillRequest {
  readonly price?: number | undefined
  readonly quantity?: number | undefined
}

export interface OrderListQuery {
  readonly status?: OrderStatusFilter | undefined
  /** Only this order (`GET /test-tools/orders?orderId=`). */
  readonly orderId?: string | undefined
  readonly symbol?: string | undefined
  /** Epoch millis, inclusive (decoded by the route: dates cover the whole UTC day). */
  readonly from?: number | undefined
  readonly to?: number | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}
