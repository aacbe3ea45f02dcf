/** Orders in a table of their own (pg-tables.ts ORDERS): prices in 1/10000 of the local currency, amounts in USD cents. */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { addCheck, GENERIC_COLUMNS, listIndex, moveRows } from "./typed-table.ts"

export default Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE orders (${GENERIC_COLUMNS},
    account text,
    symbol text,
    side text,
    order_type text,
    status text,
    settlement_status text,
    quantity numeric,
    limit_price_e4 bigint,
    stop_price_e4 bigint,
    gross_cents bigint,
    fee_cents bigint,
    total_cents bigint,
    escrow_cents bigint,
    client_order_id text,
    quote_id text,
    created_at bigint,
    filled_at bigint,
    cancelled_at bigint,
    version integer
  )`)
  yield* listIndex("orders")
  yield* sql.unsafe(`CREATE INDEX orders_partner_status_idx ON orders (partner_id, environment, status)`)
  yield* moveRows("orders", "orders", {
    account: "sokoni_json_text(b, 'account')",
    symbol: "sokoni_json_text(b, 'symbol')",
    side: "sokoni_json_text(b, 'side')",
    order_type: "sokoni_json_text(b, 'orderType')",
    status: "sokoni_json_text(b, 'status')",
    settlement_status: "sokoni_json_text(b, 'settlementStatus')",
    quantity: "sokoni_json_number(b, 'quantity')",
    limit_price_e4: "sokoni_json_int(b, 'limitPrice')",
    stop_price_e4: "sokoni_json_int(b, 'stopPrice')",
    gross_cents: "sokoni_json_int(b, 'gross')",
    fee_cents: "sokoni_json_int(b, 'fee')",
    total_cents: "sokoni_json_int(b, 'totalAmount')",
    escrow_cents: "sokoni_json_int(b, 'escrow')",
    client_order_id: "sokoni_json_text(b, 'clientOrderId')",
    quote_id: "sokoni_json_text(b, 'quoteId')",
    created_at: "sokoni_json_int(b, 'createdAt')",
    filled_at: "sokoni_json_int(b, 'filledAt')",
    cancelled_at: "sokoni_json_int(b, 'cancelledAt')",
    version: "sokoni_json_int(b, 'version')::integer"
  })
  // What an order still holds in escrow is money someone holds: never below zero.
  yield* addCheck("orders", "orders_escrow_not_negative", "escrow_cents >= 0")
})
